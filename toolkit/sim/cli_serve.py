"""`serve`: run the simulator in the foreground until SIGINT or SIGTERM (`sim serve`).

Writes the keys file (optional) that a developer or a test points the toolkit at, prints the
base URL as the first line on stdout (flushed, so a parent process can wait for it and then
read the file), then blocks:

    serve("127.0.0.1", 0, seed=7, services=200, faults="none", keys_out=Path("keys.json"),
          prefix="", variant="real")
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from toolkit.sim.server import SimulatorServer
from toolkit.sim.simulator import Simulator

if TYPE_CHECKING:
    from pathlib import Path
    from types import FrameType

__all__ = ["KEYS_FILE_NAMES", "serve", "today_utc", "write_keys_file"]

KEYS_FILE_NAMES = ("admin", "editor", "viewer", "limited", "revoked", "expired")


def serve(
    host: str,
    port: int,
    seed: int,
    services: int,
    faults: str,
    keys_out: Path | None,
    prefix: str,
    start: datetime | None = None,
    variant: str = "spec",
) -> None:
    """Build the world, serve it and block until SIGINT or SIGTERM; then shut down cleanly.

    ``start`` is the simulated clock's start (default: today, 00:00 UTC, so key expiry and
    last use read naturally against the real clock). ``variant`` is ``spec`` or ``real``
    (see :mod:`toolkit.sim.variant`).
    """
    sim = Simulator(
        seed=seed,
        services=services,
        faults=faults,
        start=start or today_utc(),
        variant=variant,
    )
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        with SimulatorServer(sim, host=host, port=port, prefix=prefix) as server:
            if keys_out is not None:  # before the URL: whoever reads the URL finds the file
                write_keys_file(keys_out, server.base_url, sim.keys)
            print(server.base_url, flush=True)
            while not stop.wait(0.5):
                pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    print("simulator stopped", file=sys.stderr, flush=True)


def today_utc() -> datetime:
    """Midnight UTC of the current day: the default start of a served world."""
    return datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def write_keys_file(path: Path, base_url: str, keys: dict[str, str]) -> None:
    """Write `{"base_url", "keys": {...}}` readable by the owner only (mode 0600)."""
    document = {"base_url": base_url, "keys": {name: keys[name] for name in KEYS_FILE_NAMES}}
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(descriptor, 0o600)  # an existing file keeps its old mode otherwise
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=2)
        handle.write("\n")
