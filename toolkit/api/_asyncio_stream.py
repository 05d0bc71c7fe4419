"""httpcore's network streams on asyncio's own protocol and transport, without anyio.

httpcore's anyio backend wraps every read and write in a cancel scope with a deadline,
yields to the event loop once more after each write, and stops and restarts reading the
socket around each read (two `epoll_ctl` calls); an idle connection is asked whether the
server closed it by polling its socket. For a crawl of small answers on loopback that was a
tenth of the client's CPU. Here a connection's protocol keeps reading into a buffer (up to
`_HIGH_WATER` bytes, then the socket waits), a read takes what is buffered or waits for
more, a write hands its bytes to the transport and waits only when the transport says its
buffer is full, and a deadline is a timer armed only when a read or write has to wait.
Errors are httpcore's (`ConnectError`, `ReadTimeout`, `WriteError`...), as its backends
raise them.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import httpcore

if TYPE_CHECKING:
    import socket
    import ssl
    from collections.abc import Iterable

__all__ = ["AsyncioBackend"]

_HIGH_WATER = 256 * 1024  # bytes buffered before the socket is left to wait


class _Protocol(asyncio.Protocol):
    """A connection's state as the event loop reports it: bytes received, end, error."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.ended = False  # the server closed its side, or the connection is lost
        self.error: BaseException | None = None
        self.waiter: asyncio.Future[None] | None = None  # a read or a write waiting
        self.writable = True
        self.reading = True

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if len(self.buffer) > _HIGH_WATER and self.transport is not None:
            self.transport.pause_reading()
            self.reading = False
        self._wake()

    def eof_received(self) -> bool:
        self.ended = True
        self._wake()
        return False  # the transport closes itself

    def connection_lost(self, exc: Exception | None) -> None:
        self.ended = True
        self.error = exc
        self.writable = True
        self._wake()

    def pause_writing(self) -> None:
        self.writable = False

    def resume_writing(self) -> None:
        self.writable = True
        self._wake()

    def _wake(self) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    async def wait(self, timeout: float | None, expired: type[Exception]) -> None:  # noqa: ASYNC109 - httpcore's interface
        """Wait for the next event on the connection, at most `timeout` seconds."""
        loop = asyncio.get_running_loop()
        self.waiter = waiter = loop.create_future()
        timer = None if timeout is None else loop.call_later(timeout, waiter.cancel)
        try:
            await waiter
        except asyncio.CancelledError:
            if timer is not None and waiter.cancelled() and not _cancelling():
                raise expired(f"no progress within {timeout:g} s") from None
            raise
        finally:
            self.waiter = None
            if timer is not None:
                timer.cancel()


def _cancelling() -> bool:
    """Whether the running task itself was asked to stop (not our timer's cancel)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


class AsyncioStream(httpcore.AsyncNetworkStream):
    """One connection (see the module)."""

    def __init__(self, transport: asyncio.Transport, protocol: _Protocol) -> None:
        self._transport = transport
        self._protocol = protocol

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:  # noqa: ASYNC109 - httpcore's interface
        protocol = self._protocol
        while not protocol.buffer:
            if protocol.ended:
                if protocol.error is not None:
                    raise httpcore.ReadError(str(protocol.error) or type(protocol.error).__name__)
                return b""
            await protocol.wait(timeout, httpcore.ReadTimeout)
        chunk = bytes(protocol.buffer[:max_bytes])
        del protocol.buffer[:max_bytes]
        if not protocol.reading and len(protocol.buffer) <= _HIGH_WATER // 2:
            protocol.reading = True
            self._transport.resume_reading()
        return chunk

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:  # noqa: ASYNC109 - httpcore's interface
        if not buffer:
            return
        protocol = self._protocol
        if protocol.ended or self._transport.is_closing():
            raise httpcore.WriteError("the connection is closed")
        self._transport.write(buffer)
        while not protocol.writable:
            await protocol.wait(timeout, httpcore.WriteTimeout)
        if protocol.error is not None:
            raise httpcore.WriteError(str(protocol.error) or type(protocol.error).__name__)

    async def aclose(self) -> None:
        self._transport.abort()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                tls = await loop.start_tls(
                    self._transport, self._protocol, ssl_context, server_hostname=server_hostname
                )
        except TimeoutError:
            self._transport.abort()
            raise httpcore.ConnectTimeout("the TLS handshake timed out") from None
        except (OSError, ValueError) as exc:  # ssl.SSLError is an OSError
            self._transport.abort()
            raise httpcore.ConnectError(str(exc)) from exc
        if tls is None:  # pragma: no cover - only when the transport closed meanwhile
            raise httpcore.ConnectError("the connection closed during the TLS handshake")
        return AsyncioStream(tls, self._protocol)

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":
            # idle: anything received, or the end, means the connection cannot be reused
            return bool(self._protocol.buffer) or self._protocol.ended
        if info == "ssl_object":
            return self._transport.get_extra_info("ssl_object")
        if info == "client_addr":
            return self._transport.get_extra_info("sockname")
        if info == "server_addr":
            return self._transport.get_extra_info("peername")
        if info == "socket":
            return self._transport.get_extra_info("socket")
        return None


class AsyncioBackend(httpcore.AsyncNetworkBackend):
    """Connects TCP streams on the running asyncio loop (see the module); Unix sockets, which
    the client does not use, go through httpcore's anyio backend."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        local = None if local_address is None else (local_address, 0)
        try:
            async with asyncio.timeout(timeout):
                transport, protocol = await loop.create_connection(
                    _Protocol, host, port, local_addr=local
                )
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"connecting to {host}:{port} timed out") from None
        except OSError as exc:
            raise httpcore.ConnectError(str(exc)) from exc
        sock: socket.socket | None = transport.get_extra_info("socket")
        for option in socket_options or ():
            if sock is not None:
                sock.setsockopt(*option)
        return AsyncioStream(transport, protocol)

    async def connect_unix_socket(  # pragma: no cover - the client connects over TCP
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        return await httpcore.AnyIOBackend().connect_unix_socket(path, timeout, socket_options)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)
