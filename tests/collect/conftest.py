"""Crawls of small simulated worlds over loopback, shared by the collect tests.

Session fixtures crawl the shared world once per key; tests that inject faults use a fresh
world of their own (`fresh`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from collect_world import Crawled, crawl_world

from toolkit.sim import Simulator, SimulatorServer

if TYPE_CHECKING:
    from collections.abc import Iterator

SERVICES = 30


@pytest.fixture(scope="session")
def sim() -> Simulator:
    return Simulator(seed=7, services=SERVICES)


@pytest.fixture(scope="session")
def server(sim: Simulator) -> Iterator[SimulatorServer]:
    with SimulatorServer(sim) as running:
        yield running


@pytest.fixture(scope="session")
def admin_crawl(sim: Simulator, server: SimulatorServer) -> Crawled:
    """The admin key's crawl, auditing the limited and the revoked keys."""
    audited = {"limited": sim.keys["limited"], "revoked": sim.keys["revoked"]}
    return crawl_world(server, sim.keys["admin"], audited=audited)


@pytest.fixture(scope="session")
def editor_crawl(sim: Simulator, server: SimulatorServer) -> Crawled:
    return crawl_world(server, sim.keys["editor"])


@pytest.fixture(scope="session")
def viewer_crawl(sim: Simulator, server: SimulatorServer) -> Crawled:
    return crawl_world(server, sim.keys["viewer"])


@pytest.fixture(scope="session")
def limited_crawl(sim: Simulator, server: SimulatorServer) -> Crawled:
    return crawl_world(server, sim.keys["limited"])


@pytest.fixture
def fresh() -> Iterator[tuple[Simulator, SimulatorServer]]:
    """A small world of its own, for tests that inject faults."""
    world = Simulator(seed=5, services=10)
    with SimulatorServer(world) as running:
        yield world, running
