"""The client's httpx client (`toolkit.api._http_client`) and its connection pool
(`toolkit.api._connection_pool`): no cookies; a pool that is fair, cheap, and in place.

The pool replaces httpx's through private attributes and overrides a private method of
httpcore, so the last tests here are the alarm for a changed httpx or httpcore.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from importlib.metadata import version
from typing import TYPE_CHECKING, Any

import httpcore
import httpx
import pytest
from httpcore._async.connection_pool import AsyncPoolRequest

from toolkit.api import AsyncPlatformClient, ClientConfig, Secret
from toolkit.api._asyncio_stream import AsyncioBackend
from toolkit.api._connection_pool import FairConnectionPool, install
from toolkit.api._http_client import _FAST_QUERY, Requests, http_client, join_url, with_query
from toolkit.sim import Simulator, SimulatorServer

if TYPE_CHECKING:
    from collections.abc import Iterator

ORIGIN = httpcore.URL("http://platform.test/").origin


@pytest.mark.anyio
async def test_a_cookie_set_by_an_answer_is_not_sent_back(make_client: Any) -> None:
    sent: list[str | None] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request.headers.get("cookie"))
        headers = {"set-cookie": "session=s3cr3t; Path=/"}
        return httpx.Response(200, json={"data": {"id": "u1"}}, headers=headers)

    async with make_client(handler) as client:
        await client.me()
        await client.me()

    assert sent == [None, None]


class FakeConnection:
    """An HTTP/1.1 connection as the pool sees it: idle until a request starts on it."""

    def __init__(self) -> None:
        self.closed = False

    def can_handle_request(self, origin: httpcore.Origin) -> bool:
        return origin == ORIGIN

    def is_available(self) -> bool:
        return not self.closed

    def is_idle(self) -> bool:
        return not self.closed

    def is_closed(self) -> bool:
        return self.closed

    def has_expired(self) -> bool:
        return False

    async def aclose(self) -> None:
        self.closed = True


def queued(count: int) -> list[AsyncPoolRequest]:
    return [
        AsyncPoolRequest(httpcore.Request("GET", "http://platform.test/x")) for _ in range(count)
    ]


@pytest.mark.anyio
async def test_an_idle_connection_goes_to_one_queued_request() -> None:
    pool = FairConnectionPool(max_connections=1)
    idle = FakeConnection()
    pool._connections = [idle]  # type: ignore[list-item]
    first, second = queued(2)
    pool._requests = [first, second]

    assert pool._assign_requests_to_connections() == []

    assert first.connection is idle
    assert second.is_queued(), "the second request would fail on a connection now busy"


@pytest.mark.anyio
async def test_a_connection_handed_to_a_request_is_not_closed_as_surplus() -> None:
    pool = FairConnectionPool(max_connections=2, max_keepalive_connections=0)
    handed, spare = FakeConnection(), FakeConnection()
    pool._connections = [handed, spare]  # type: ignore[list-item]
    (waiting,) = queued(1)
    waiting.assign_to_connection(handed)  # type: ignore[arg-type]
    pool._requests = [waiting]

    closing = pool._assign_requests_to_connections()

    assert closing == [spare], "only the idle connection nobody holds is surplus"
    assert pool._connections == [handed]


@pytest.mark.anyio
async def test_at_the_limit_an_idle_connection_to_another_origin_makes_room() -> None:
    pool = FairConnectionPool(max_connections=1)
    other = FakeConnection()
    other.can_handle_request = lambda origin: False  # type: ignore[method-assign]
    pool._connections = [other]  # type: ignore[list-item]
    (request,) = queued(1)
    pool._requests = [request]

    assert pool._assign_requests_to_connections() == [other]

    assert request.connection is not None and request.connection is not other


class AgeingConnection(FakeConnection):
    """A connection that counts how often the pool asks whether it expired."""

    def __init__(self, *, expired: bool = False) -> None:
        super().__init__()
        self.expired = expired
        self.asked = 0

    def has_expired(self) -> bool:
        self.asked += 1
        return self.expired


@pytest.mark.anyio
async def test_between_sweeps_only_the_connection_handed_out_is_asked_whether_it_expired() -> None:
    """Asking is a poll of the socket: once per idle connection per pass was most of the
    pool's CPU."""
    pool = FairConnectionPool(max_connections=10)
    idle = [AgeingConnection() for _ in range(8)]
    pool._connections = list(idle)  # type: ignore[arg-type]
    pool._requests = queued(1)
    pool._assign_requests_to_connections()  # the first pass sweeps: every one is asked
    assert all(c.asked for c in idle)
    before = [c.asked for c in idle]
    pool._requests += queued(1)  # the next request, within SWEEP_S: the one it gets is asked

    pool._assign_requests_to_connections()

    assert pool._requests[1].connection is idle[1]
    assert [c.asked - b for c, b in zip(idle, before, strict=True)] == [0, 1, 0, 0, 0, 0, 0, 0]


@pytest.mark.anyio
async def test_an_expired_connection_is_closed_instead_of_handed_out() -> None:
    pool = FairConnectionPool(max_connections=2)
    gone, fresh = AgeingConnection(expired=True), AgeingConnection()
    pool._connections = [gone, fresh]  # type: ignore[list-item]
    pool._next_sweep = float("inf")  # between sweeps
    (request,) = queued(1)
    pool._requests = [request]

    assert pool._assign_requests_to_connections() == [gone]

    assert request.connection is fresh and pool._connections == [fresh]


async def _server(handle: Any) -> tuple[asyncio.Server, int]:
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


def test_a_stream_round_trips_and_sees_the_server_close_without_polling() -> None:
    """Idle, a connection is reusable until the server closes it or sends unasked bytes;
    the stream knows from its protocol, with no system call."""

    async def run() -> tuple[bytes, list[bool], bytes]:
        closing = asyncio.Event()

        async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            writer.write(await reader.read(100))
            await closing.wait()
            writer.close()

        server, port = await _server(echo)
        async with server:
            stream = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5)
            await stream.write(b"ping", timeout=5)
            echoed = await stream.read(100, timeout=5)
            idle = [stream.get_extra_info("is_readable") for _ in range(3)]
            closing.set()
            end = await stream.read(100, timeout=5)  # b"": the server closed
            idle.append(stream.get_extra_info("is_readable"))
            await stream.aclose()
        return echoed, idle, end

    echoed, idle, end = asyncio.run(run())

    assert echoed == b"ping" and end == b""
    assert idle == [False, False, False, True]


def test_a_read_past_its_timeout_is_a_read_timeout_and_a_cancel_stays_a_cancel() -> None:
    async def run() -> tuple[type[BaseException], type[BaseException]]:
        async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await reader.read(100)

        server, port = await _server(silent)
        async with server:
            stream = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5)
            await stream.write(b"GET", timeout=5)
            with pytest.raises(httpcore.ReadTimeout) as timed_out:
                await stream.read(100, timeout=0.05)
            with pytest.raises(TimeoutError) as deadline:  # the caller's deadline, not ours
                async with asyncio.timeout(0.05):
                    await stream.read(100, timeout=30)
            await stream.aclose()
        return timed_out.type, deadline.type

    assert asyncio.run(run()) == (httpcore.ReadTimeout, TimeoutError)


def test_a_refused_connection_is_a_connect_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, never listening: refused
        with pytest.raises(httpcore.ConnectError):
            asyncio.run(AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5))


def test_a_request_on_a_warm_connection_never_waits_behind_other_tasks() -> None:
    """A crawl's answers queue on one event loop: a request that let every other ready task
    run before it was written, and again before its answer was returned (httpcore's anyio
    locks did, three times per request), waited behind their parsing each time."""
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n"

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
            while await reader.readuntil(b"\r\n\r\n"):
                writer.write(head + b"{}")  # in one write: the body arrives with the head

    async def run() -> tuple[list[bool], bool]:
        server, port = await _server(serve)
        config = ClientConfig(base_url=f"http://127.0.0.1:{port}", token=Secret("t"))
        async with server, http_client(config) as client:
            requests = Requests(client, config.base_url)
            await (await requests.send(requests.build("GET", "/", {}, timeout_s=5))).aread()
            connection = client._transport._pool.connections[0]  # type: ignore[attr-defined]
            stream = connection._connection._network_stream
            others: list[str] = []  # what other tasks did meanwhile
            written: list[bool] = []
            write = stream.write

            async def watched(buffer: bytes, timeout: float | None = None) -> None:  # noqa: ASYNC109
                written.append("before writing" in others)
                await write(buffer, timeout)

            stream.write = watched
            loop = asyncio.get_running_loop()
            loop.call_soon(others.append, "before writing")
            response = await requests.send(requests.build("GET", "/", {}, timeout_s=5))
            assert connection._connection._h11_state.trailing_data[0] == b"{}"  # all arrived
            loop.call_soon(others.append, "before returning")
            await response.aread()
            return written, "before returning" in others

    written, returned_late = asyncio.run(run())
    # the request was written before any other task ran, and its answer, all there, came
    # back at once
    assert written and (any(written), returned_late) == (False, False)


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[Simulator, SimulatorServer]]:
    world = Simulator(seed=3, services=5)
    with SimulatorServer(world) as running:
        yield world, running


def test_the_client_crawls_through_the_fair_pool(
    served: tuple[Simulator, SimulatorServer],
) -> None:
    """The alarm for httpx: its client must still keep the pool where `install` puts it."""
    world, server = served
    config = ClientConfig(
        base_url=server.base_url,
        token=Secret(world.keys["admin"]),
        rate_per_minute=None,
        concurrency=4,
    )

    async def crawl() -> tuple[list[Any], Any, int]:
        async with AsyncPlatformClient(config) as client:
            answers = await asyncio.gather(*(client.me() for _ in range(24)))
            pool = client._runner._http._transport._pool  # type: ignore[attr-defined]
            return answers, pool, len(pool.connections)

    answers, pool, connections = asyncio.run(crawl())

    assert len(answers) == 24 and all(answer == answers[0] for answer in answers)
    assert type(pool) is FairConnectionPool
    assert isinstance(pool._network_backend, AsyncioBackend)
    assert 1 <= connections <= config.concurrency


def test_a_client_on_a_test_transport_keeps_it() -> None:
    client = httpx.AsyncClient(transport=httpx.MockTransport(lambda request: httpx.Response(204)))
    assert install(client, httpx.Limits(), httpx.create_ssl_context()) is False


def test_httpcore_is_the_version_the_pool_override_was_written_for() -> None:
    """`FairConnectionPool` replaces httpcore 1.0.9's private `_assign_requests_to_connections`
    and reads its `_connections`, `_requests` and limits. Before raising the pin, compare the
    new version's pass with this one (or drop the override if httpcore fixed its pass)."""
    assert version("httpcore") == "1.0.9"
    assert callable(httpcore.AsyncConnectionPool._assign_requests_to_connections)


_IDS = {"team_id": "8a4e8f5c-0000-4000-8000-000000000001", "per_page": 50}


@pytest.mark.parametrize(
    "base_url",
    ["http://127.0.0.1:8080", "https://platform.example/api/go/", "http://[::1]:9000/p"],
)
@pytest.mark.parametrize(
    "params",
    [{}, _IDS, {**_IDS, "cursor": "a b/c?d=e&f+g%2F#h"}, {"type": "team", "name": "café ü"}],
)
def test_requests_carry_the_url_and_headers_httpx_would_build(
    base_url: str, params: dict[str, Any]
) -> None:
    """`Requests` builds URLs without parsing them again: they must be httpx's own."""
    config = ClientConfig(base_url=base_url, token=Secret("t0k3n"))
    client = http_client(config)
    built = Requests(client, base_url).build("GET", "/deployments/list", params, timeout_s=7.0)
    expected = client.build_request(
        "GET", join_url(base_url, "/deployments/list"), params=params, timeout=7.0
    )
    assert built.url == expected.url and str(built.url) == str(expected.url)
    assert built.headers.multi_items() == expected.headers.multi_items()
    assert built.extensions == expected.extensions
    body = Requests(client, base_url).build("POST", "/variables/update", params, timeout_s=7.0)
    posted = client.build_request(
        "POST", join_url(base_url, "/variables/update"), json=params, timeout=7.0
    )
    assert (body.url, body.content, body.headers) == (posted.url, posted.content, posted.headers)


def test_the_query_is_added_without_parsing_the_url_again() -> None:
    """The alarm for httpx: `with_query` relies on where httpx 0.28 keeps a URL's parts."""
    assert _FAST_QUERY
    url = httpx.URL("http://127.0.0.1:8080/teams/list")
    assert with_query(url, "a=1") == httpx.URL("http://127.0.0.1:8080/teams/list?a=1")


@pytest.mark.anyio
async def test_requests_go_to_the_transport_httpx_would_choose() -> None:
    """A proxy mount (as `HTTP_PROXY` makes) still carries the request, not the client's own
    transport."""
    seen: list[str] = []

    def proxy(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(200, json={"data": []})

    direct = httpx.MockTransport(lambda request: httpx.Response(500))
    mounts = {"all://platform.test": httpx.MockTransport(proxy)}
    async with httpx.AsyncClient(transport=direct, mounts=mounts) as client:
        requests = Requests(client, "http://platform.test")
        response = await requests.send(requests.build("GET", "/teams/list", {}, timeout_s=1))
        assert response.status_code == 200 and response.request.url.path == "/teams/list"
        await response.aclose()
    assert seen == ["http://platform.test/teams/list"]
