"""The connection pool under the client's `httpx.AsyncClient`, fitted to a crawl.

A crawl keeps `concurrency` requests in flight on loopback-fast answers, so the pool's
bookkeeping runs for every request and response. httpcore 1.0.9's pool did more of it than
the requests themselves (about half of a crawl's CPU):

- each pass over the pool asks every idle connection whether the server closed it, and the
  anyio stream answers by building a dict of socket attributes (one `getpeername()` system
  call) before it polls the socket. `FairConnectionPool` asks only the connection it hands
  out (and every one once a second), and its streams (`toolkit.api._asyncio_stream`) answer
  from what their protocol has seen, without a system call;
- a pass hands an idle HTTP/1.1 connection to every queued request (its state changes only
  when a request starts on it), so all but one of them fail with `ConnectionNotAvailable`
  and run the pass again, and each pass counts idle connections once per connection.
  `FairConnectionPool` gives each idle connection to one request, counts once, and never
  closes a connection already handed to a request (encode/httpcore#1035, #1110; httpx2
  merged the same fix).

- a connection takes an anyio lock twice per request before sending it and once after its
  answer (httpcore's `AsyncLock` under asyncio), and an anyio lock, even a free one, passes
  its turn to every other ready task before it is taken. A crawl's request then waited
  behind the other answers' parsing twice before it was sent, and its answer once more
  before it was returned. The pool's connections (`PromptConnection`) take asyncio locks,
  which a free lock grants at once.

httpx 0.28 takes neither a pool nor a network backend, so `install` swaps the pool of the
client's own transport (the one for URLs no proxy mount takes; proxies from the environment
keep httpx's pools). That reads two private attributes, and `FairConnectionPool` overrides
a private method of httpcore, pinned for that reason: `tests/api/test_api_connection_pool.py`
fails when either library moves them, and `install` keeps httpx's own pool when they are
not as expected, so a changed library costs CPU, never requests.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any

import httpcore
import httpx
from httpcore._synchronization import AsyncLock

from toolkit.api._asyncio_stream import AsyncioBackend

if TYPE_CHECKING:
    import ssl

    from httpcore._async.connection_pool import AsyncPoolRequest

__all__ = ["FairConnectionPool", "PromptConnection", "install"]

logger = logging.getLogger("toolkit.api")


class FairConnectionPool(httpcore.AsyncConnectionPool):
    """httpcore's pool, HTTP/1.1 only, whose assignment pass gives each idle connection to
    one request and does it in one walk over the connections (see the module).

    Whether an idle connection expired (its keep-alive time passed, or the server closed
    it: a poll of its socket) is asked of the connection about to be handed to a request,
    and of every connection at most once per `SWEEP_S`, not of every idle connection on
    every pass: at `concurrency` 16 that was 30 polls per request.
    """

    SWEEP_S = 1.0

    _next_sweep = 0.0

    def _assign_requests_to_connections(self) -> list[httpcore.AsyncConnectionInterface]:
        # Called, as upstream, under the pool's lock whenever a request joins or leaves.
        closing: list[httpcore.AsyncConnectionInterface] = []
        held = {id(r.connection) for r in self._requests if r.connection is not None}
        now = time.monotonic()
        sweep = now >= self._next_sweep
        if sweep:
            self._next_sweep = now + self.SWEEP_S
        for connection in list(self._connections):
            if connection.is_closed():
                self._connections.remove(connection)
            elif sweep and connection.has_expired():
                # a holder of this connection gets ConnectionNotAvailable and is re-queued
                self._connections.remove(connection)
                closing.append(connection)
        free = [c for c in self._connections if id(c) not in held and c.is_idle()]
        while free and len(free) > self._max_keepalive_connections:
            surplus = free.pop()
            self._connections.remove(surplus)
            closing.append(surplus)
        for request in self._requests:
            if request.is_queued() and not self._assign(request, free, closing):
                break  # every connection is busy: the rest stay queued
        return closing

    def create_connection(self, origin: httpcore.Origin) -> httpcore.AsyncConnectionInterface:
        """A `PromptConnection`; through a proxy, httpcore's own kind."""
        if self._proxy is not None:
            return super().create_connection(origin)
        return PromptConnection(
            origin=origin,
            ssl_context=self._ssl_context,
            keepalive_expiry=self._keepalive_expiry,
            http1=self._http1,
            http2=self._http2,
            retries=self._retries,
            local_address=self._local_address,
            uds=self._uds,
            network_backend=self._network_backend,
            socket_options=self._socket_options,
        )

    def _assign(
        self,
        request: AsyncPoolRequest,
        free: list[httpcore.AsyncConnectionInterface],
        closing: list[httpcore.AsyncConnectionInterface],
    ) -> bool:
        """Hand `request` a free connection that has not expired, or a new one; False when
        the pool is full and nothing is free."""
        origin = request.request.url.origin
        for connection in [c for c in free if c.can_handle_request(origin) and c.is_available()]:
            free.remove(connection)
            if not connection.has_expired():
                request.assign_to_connection(connection)
                return True
            self._connections.remove(connection)
            closing.append(connection)
        if len(self._connections) >= self._max_connections:
            if not free:
                return False
            stale = free.pop(0)  # make room: close an idle one to another origin
            self._connections.remove(stale)
            closing.append(stale)
        connection = self.create_connection(origin)
        self._connections.append(connection)
        request.assign_to_connection(connection)
        return True


class _PromptLock(AsyncLock):
    """httpcore's lock interface on an `asyncio.Lock`: a free lock is taken at once, where
    anyio's first lets every other ready task run."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = asyncio.Lock()

    async def __aenter__(self) -> _PromptLock:
        await self._lock.acquire()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self._lock.release()


class PromptConnection(httpcore.AsyncHTTPConnection):
    """httpcore's connection, whose locks (its own, and its HTTP/1.1 connection's, made on
    the first request) are `_PromptLock`s: see the module."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._request_lock = _PromptLock()

    @property
    def _connection(self) -> httpcore.AsyncConnectionInterface | None:
        return self._made

    @_connection.setter
    def _connection(self, made: httpcore.AsyncConnectionInterface | None) -> None:
        if isinstance(made, httpcore.AsyncHTTP11Connection):
            made._state_lock = _PromptLock()
        self._made = made


def install(client: httpx.AsyncClient, limits: httpx.Limits, ssl_context: ssl.SSLContext) -> bool:
    """Give `client`'s own transport a `FairConnectionPool` over an `AsyncioBackend`.

    `limits` and `ssl_context` (its `verify`) must be those the client was made with.
    Returns False, leaving httpx's pool in place, when the client's transport is not
    httpx's (a test's mock transport) or when httpx no longer keeps its pool where this
    expects it.
    """
    transport = getattr(client, "_transport", None)
    if type(transport) is not httpx.AsyncHTTPTransport:
        return False
    if type(getattr(transport, "_pool", None)) is not httpcore.AsyncConnectionPool:
        logger.debug("httpx's transport has no plain httpcore pool: keeping it")
        return False
    # httpx takes no pool nor network backend (see the module)
    transport._pool = FairConnectionPool(
        ssl_context=ssl_context,
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        http1=True,
        http2=False,
        network_backend=AsyncioBackend(),
    )
    return True
