"""The platform simulator: a seeded, evolving world served over real HTTP on loopback.

    from toolkit.sim import Simulator, SimulatorServer
    sim = Simulator(seed=7, services=40)
    with SimulatorServer(sim) as server:
        ...  # point the toolkit at server.base_url with sim.keys["admin"]
    sim.advance(hours=24)

See docs/contracts.md for the keys, roles and scope rules it implements.
"""

from __future__ import annotations

from toolkit.sim.cli_serve import serve
from toolkit.sim.faults import FaultProfile
from toolkit.sim.server import SimulatorServer
from toolkit.sim.simulator import Simulator

__all__ = ["FaultProfile", "Simulator", "SimulatorServer", "serve"]
