"""Shared fixtures: one read-only simulator served for the whole session, fresh ones to change.

Tests talk to the live server over loopback with plain httpx, as a real client would.
Tests that change the world (variables, restarts, deletions, the clock) use `fresh`, so
the session world stays as generated.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from live_api import ApiFactory, Fresh, make_factory

from toolkit.sim import Simulator, SimulatorServer

if TYPE_CHECKING:
    from collections.abc import Iterator

    import httpx

SEED = 7
SERVICES = 40


@pytest.fixture(scope="session")
def sim() -> Simulator:
    return Simulator(seed=SEED, services=SERVICES)


@pytest.fixture(scope="session")
def server(sim: Simulator) -> Iterator[SimulatorServer]:
    with SimulatorServer(sim) as running:
        yield running


@pytest.fixture(scope="session")
def api(sim: Simulator, server: SimulatorServer) -> Iterator[ApiFactory]:
    """`api("admin")`: a client for a named key (contract or extra) or a raw token."""
    clients: list[httpx.Client] = []
    yield make_factory(sim, server.base_url, clients)
    for client in clients:
        client.close()


@pytest.fixture
def fresh() -> Iterator[Fresh]:
    """A small world of its own, served, for tests that change things."""
    sim = Simulator(seed=3, services=5)
    clients: list[httpx.Client] = []
    with SimulatorServer(sim) as running:
        yield Fresh(sim, running, make_factory(sim, running.base_url, clients))
        for client in clients:
            client.close()
