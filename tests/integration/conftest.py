"""One simulator served on loopback for the client's integration tests, and a client factory.

Tests that change the world or its faults get a fresh small world (`fresh_sim`), so the
shared one stays as generated.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from toolkit.api import ClientConfig, PlatformClient
from toolkit.sim import Simulator, SimulatorServer

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator


def _factory(sim: Simulator, base_url: str, opened: list[PlatformClient]) -> Any:
    def make(key: str = "admin", **config: Any) -> PlatformClient:
        settings: dict[str, Any] = {"backoff_base_s": 0.01, "backoff_cap_s": 0.05, **config}
        token = sim.keys.get(key, key)
        client = PlatformClient(ClientConfig(base_url=base_url, token=token, **settings))
        opened.append(client)
        return client

    return make


@pytest.fixture(scope="session")
def shared_sim() -> Simulator:
    return Simulator(seed=11, services=30)


@pytest.fixture(scope="session")
def shared_server(shared_sim: Simulator) -> Iterator[SimulatorServer]:
    with SimulatorServer(shared_sim) as server:
        yield server


@pytest.fixture(scope="session")
def client_for(shared_sim: Simulator, shared_server: SimulatorServer) -> Iterator[Any]:
    """`client_for("viewer")`: a blocking client for a named key of the shared world."""
    opened: list[PlatformClient] = []
    yield _factory(shared_sim, shared_server.base_url, opened)
    for client in opened:
        client.close()


class Fresh:
    """A small world of its own, served, with a client factory for it."""

    def __init__(self, sim: Simulator, server: SimulatorServer, make: Callable[..., Any]):
        self.sim, self.server, self.client = sim, server, make


@pytest.fixture
def fresh_sim() -> Iterator[Fresh]:
    sim = Simulator(seed=5, services=8)
    opened: list[PlatformClient] = []
    with SimulatorServer(sim) as server:
        yield Fresh(sim, server, _factory(sim, server.base_url, opened))
        for client in opened:
            client.close()
