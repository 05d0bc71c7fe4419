"""`Simulator`: a seeded world, its clock, its keys and its fault profile, behind one lock.

sim = Simulator(seed=7, services=40)
sim.keys["admin"]          # "plat_..." (the world keeps only its SHA-256)
sim.planted["service_crashing"]
sim.advance(hours=24)      # evolve; safe while a server answers requests
sim.set_faults("flaky")    # or a FaultProfile
app = sim.asgi_app(prefix="/api/go")
Simulator(seed=7, services=20, variant="real")   # as the real platform serves it
"""

from __future__ import annotations

import random
import threading
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from toolkit.sim.evolve import advance_world
from toolkit.sim.faults import FaultProfile, resolve_profile
from toolkit.sim.generate import build_world
from toolkit.sim.planted import CONTRACT_KEYS
from toolkit.sim.variant import VARIANTS

if TYPE_CHECKING:
    from starlette.types import ASGIApp

    from toolkit.sim.world import World

__all__ = ["DEFAULT_START", "Simulator"]

DEFAULT_START = datetime(2026, 1, 1, tzinfo=UTC)


class Simulator:
    """The platform's state; serve it with `SimulatorServer` or mount `asgi_app()`.

    `keys` holds the seven tokens of docs/contracts.md; `extra_keys` two more scopes
    (`viewer_env`: a viewer limited to the staging environment of the first project,
    `ci_deploy`: an editor limited to one service). `planted` names the ids of every planted
    problem (see `toolkit.sim.planted`). `variant` is how it is served: `spec` (as the
    specification says) or `real` (as the real platform's source does; `toolkit.sim.variant`).
    """

    def __init__(
        self,
        seed: int = 7,
        services: int = 40,
        start: datetime = DEFAULT_START,
        faults: str | FaultProfile = "none",
        variant: str = "spec",
    ) -> None:
        if variant not in VARIANTS:
            raise ValueError(
                f"unknown simulator variant {variant!r}: choose one of {', '.join(VARIANTS)}"
            )
        self.variant = variant
        generated = build_world(seed, services, start)
        self.seed = seed
        self.world: World = generated.world
        self._planted = generated.planted
        tokens = generated.planted.tokens
        self.keys: dict[str, str] = {name: tokens[name] for name in CONTRACT_KEYS}
        self.extra_keys: dict[str, str] = {
            name: token for name, token in tokens.items() if name not in CONTRACT_KEYS
        }
        self.planted: dict[str, str] = dict(generated.planted.ids)
        self.lock = threading.RLock()
        self._rng = random.Random(seed * 7919 + 1)
        self._faults = resolve_profile(faults)

    @property
    def now(self) -> datetime:
        """The simulated clock."""
        return self.world.now

    @property
    def faults(self) -> FaultProfile:
        """The fault profile the middleware applies to the next request."""
        return self._faults

    def set_faults(self, profile: str | FaultProfile) -> None:
        """Switch fault injection at runtime: a `FaultProfile`, a name or the CLI form."""
        self._faults = resolve_profile(profile)

    def advance(self, hours: float) -> None:
        """Move the clock forward by `hours`, evolving the world (see `toolkit.sim.evolve`)."""
        with self.lock:
            advance_world(self.world, self._rng, self._planted, hours)

    def canaries(self) -> frozenset[str]:
        """Every secret the world ever held: `CANARY<hex>` markers and all key tokens.

        The markers are embedded in every variable value, webhook credential and bucket
        secret key, so a leak of any of them shows as a marker in the leaked bytes.
        """
        with self.lock:
            return frozenset(self.world.canaries) | frozenset(self._planted.tokens.values())

    def asgi_app(self, prefix: str = "") -> ASGIApp:
        """The ASGI app serving this world under `prefix`, faults included."""
        from toolkit.sim.app import build_app

        return build_app(self, prefix)
