"""`SimulatorServer`: uvicorn in a background thread on loopback, as a context manager.

The socket is bound before uvicorn starts, so `port=0` picks a free port and `base_url`
is known at once:

    with SimulatorServer(Simulator(seed=7, services=40), prefix="/api/go") as server:
        httpx.get(f"{server.base_url}/users/me", headers={"Authorization": f"Bearer {token}"})
"""

from __future__ import annotations

import socket
import threading
import time
from typing import TYPE_CHECKING

import uvicorn

if TYPE_CHECKING:
    from types import TracebackType

    from toolkit.sim.simulator import Simulator

__all__ = ["SimulatorServer"]

_START_TIMEOUT_S = 10.0


class SimulatorServer:
    """Serve `sim` over real HTTP until `stop()` (or the end of the `with` block)."""

    def __init__(
        self, sim: Simulator, host: str = "127.0.0.1", port: int = 0, prefix: str = ""
    ) -> None:
        self.sim = sim
        self.host = host
        self.prefix = "/" + prefix.strip("/") if prefix.strip("/") else ""
        self._requested_port = port
        self._socket: socket.socket | None = None
        self._port = 0
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The real port (known once started)."""
        if not self._port:
            raise RuntimeError("the server is not running; call start() or use 'with'")
        return self._port

    @property
    def base_url(self) -> str:
        """`http://HOST:PORT` plus the prefix: what a client configures as its base URL."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{self.prefix}"

    def start(self) -> SimulatorServer:
        """Bind, start uvicorn in a daemon thread and wait until it accepts connections."""
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on sockets that say so, and
        # without it every response waits ~40 ms for a delayed ACK (Nagle).
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self._requested_port))
        self._socket, self._port = sock, int(sock.getsockname()[1])
        config = uvicorn.Config(
            self.sim.asgi_app(self.prefix),
            lifespan="off",
            log_level="warning",
            access_log=False,
            timeout_graceful_shutdown=2,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name="sim-server", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + _START_TIMEOUT_S
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the simulator did not start on {self.host}")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        """Ask uvicorn to exit, wait for the thread, close the socket. Safe to call twice."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self._socket is not None:
            self._socket.close()
        self._server, self._thread, self._socket = None, None, None

    def __enter__(self) -> SimulatorServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
