"""A hostile HTTP server on loopback for the tests: scripted bad answers, real sockets.

`HostileServer` listens on 127.0.0.1 in a thread of its own. A request whose path ends with
one of its routes gets that route's behaviour (for the route's first `times` requests);
any other request is relayed byte for byte to `upstream` (a served simulator), so a whole
crawl can run through it with a few of its answers made hostile:

    with HostileServer(upstream=server.base_url) as hostile:
        hostile.route("/services/list", deep_json(100_000))
        crawl_world_at(hostile.base_url, ...)

Behaviours are coroutines `(writer, stats) -> None` that write a raw response; every
response says `Connection: close`, so each request comes on a connection of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

Behaviour = Callable[[asyncio.StreamWriter, "Sent"], Awaitable[None]]


@dataclass
class Sent:
    """What the hostile routes did: requests answered and body bytes written."""

    requests: int = 0
    body_bytes: int = 0


@dataclass
class _Route:
    suffix: str
    behaviour: Behaviour
    times: int | None
    used: int = 0
    sent: Sent = field(default_factory=Sent)


def _head(status: int, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status} X"]
    lines += [f"{name}: {value}" for name, value in {**headers, "Connection": "close"}.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def whole(body: bytes, status: int = 200) -> Behaviour:
    """The body, whole, with its Content-Length."""

    async def behave(writer: asyncio.StreamWriter, sent: Sent) -> None:
        headers = {"Content-Type": "application/json", "Content-Length": str(len(body))}
        writer.write(_head(status, headers) + body)
        sent.body_bytes += len(body)
        await writer.drain()

    return behave


def deep_json(depth: int) -> Behaviour:
    """A valid JSON success nested `depth` lists deep: past any parser's recursion limit."""
    return whole(b'{"data": ' + b"[" * depth + b"]" * depth + b"}")


def drip(body: bytes, every_s: float) -> Behaviour:
    """The body with its Content-Length, one byte every `every_s` seconds."""

    async def behave(writer: asyncio.StreamWriter, sent: Sent) -> None:
        headers = {"Content-Type": "application/json", "Content-Length": str(len(body))}
        writer.write(_head(200, headers))
        for index in range(len(body)):
            await writer.drain()
            await asyncio.sleep(every_s)
            writer.write(body[index : index + 1])
            sent.body_bytes += 1

    return behave


def endless(chunk_bytes: int = 64 * 1024, limit_bytes: int = 256 * 1024 * 1024) -> Behaviour:
    """A chunked success that never ends (until the client leaves, or `limit_bytes`)."""

    async def behave(writer: asyncio.StreamWriter, sent: Sent) -> None:
        writer.write(
            _head(200, {"Content-Type": "application/json", "Transfer-Encoding": "chunked"})
        )
        chunk = b'{"data": [' + b"0," * (chunk_bytes // 2 - 6)
        while sent.body_bytes < limit_bytes:
            writer.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            sent.body_bytes += len(chunk)
            await writer.drain()
            chunk = b"0," * (chunk_bytes // 2)

    return behave


def cut_off(body: bytes, *, framed: bool = True) -> Behaviour:
    """Half the body, then the connection closes. `framed`: the Content-Length announces the
    whole body (the client can tell); else there is none and the end looks like any end."""

    async def behave(writer: asyncio.StreamWriter, sent: Sent) -> None:
        headers = {"Content-Type": "application/json"}
        if framed:
            headers["Content-Length"] = str(len(body))
        half = body[: len(body) // 2]
        writer.write(_head(200, headers) + half)
        sent.body_bytes += len(half)
        await writer.drain()

    return behave


class HostileServer:
    """Serve hostile routes on loopback, relaying everything else to `upstream`."""

    def __init__(self, upstream: str | None = None) -> None:
        self.upstream = urlsplit(upstream) if upstream else None
        self.routes: list[_Route] = []
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None

    @property
    def base_url(self) -> str:
        prefix = self.upstream.path.rstrip("/") if self.upstream else ""
        return f"http://127.0.0.1:{self.port}{prefix}"

    def route(self, suffix: str, behaviour: Behaviour, *, times: int | None = None) -> Sent:
        """Answer requests whose path ends with `suffix` with `behaviour` (the first `times`)."""
        made = _Route(suffix, behaviour, times)
        self.routes.append(made)
        return made.sent

    def __enter__(self) -> HostileServer:
        self._thread.start()
        future = asyncio.run_coroutine_threadsafe(self._start(), self._loop)
        future.result(timeout=10)
        return self

    def __exit__(self, *_: object) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _stop(self) -> None:
        assert self._server is not None
        self._server.close()
        current = asyncio.current_task()
        for task in asyncio.all_tasks():
            if task is not current:
                task.cancel()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._server.wait_closed(), 2)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            path = head.split(b" ", 2)[1].decode().split("?", 1)[0]
            for made in self.routes:
                if path.endswith(made.suffix) and (made.times is None or made.used < made.times):
                    made.used += 1
                    made.sent.requests += 1
                    await made.behaviour(writer, made.sent)
                    return
            await self._relay(head, reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the client left: what a hostile answer is for
        finally:
            writer.close()

    async def _relay(
        self, head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        assert self.upstream is not None, "no route matched and there is no upstream"
        lines = [
            line
            for line in head.split(b"\r\n")
            if line and not line.lower().startswith(b"connection:")
        ]
        length = next(
            (
                int(line.split(b":", 1)[1])
                for line in lines
                if line.lower().startswith(b"content-length:")
            ),
            0,
        )
        body = await reader.readexactly(length) if length else b""
        up_reader, up_writer = await asyncio.open_connection(
            self.upstream.hostname, self.upstream.port
        )
        up_writer.write(b"\r\n".join([*lines, b"Connection: close", b"", b""]) + body)
        await up_writer.drain()
        while chunk := await up_reader.read(65536):
            writer.write(chunk)
            await writer.drain()
        up_writer.close()
