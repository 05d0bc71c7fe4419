"""Deployment history, rebuilt on demand from each service's own seed.

Keeping 50,000 services times up to 30 deployments in memory would cost gigabytes, so the
world stores only a seed and a depth per service; the base history is regenerated (and
cached for recently used services) when asked for. Deployments the clock adds later are
stored on the service. `deployments()` merges both, newest first, and settles statuses so
exactly the newest successful build is live (`active`, or `crashing`).
"""

from __future__ import annotations

import dataclasses
import random
from datetime import datetime, timedelta
from functools import lru_cache

from toolkit.sim.vocabulary import AUTHORS, COMMIT_MESSAGES, new_id
from toolkit.sim.world import Deployment, Service

__all__ = ["LIVE_STATUSES", "deployments", "make_deployment"]

# Statuses of a build that succeeded; only the newest of them is live.
LIVE_STATUSES = frozenset({"active", "crashing", "removed"})
_FAILED = ("build-failed", "build-cancelled", "launch-error")


def deployments(service: Service) -> list[Deployment]:
    """Every deployment of `service`, newest first, with settled statuses."""
    until = service.history_until or service.created_at + timedelta(days=1)
    base = _base_history(service.id, service.seed, service.history_depth, service.created_at, until)
    merged = [*reversed(service.new_deployments), *reversed(base)]
    settled: list[Deployment] = []
    live_seen = False
    for deployment in merged:
        if deployment.status in LIVE_STATUSES:
            status = "removed" if live_seen else ("crashing" if service.crashing else "active")
            live_seen = True
            if status != deployment.status:
                deployment = dataclasses.replace(deployment, status=status)
        settled.append(deployment)
    return settled


@lru_cache(maxsize=4096)
def _base_history(
    service_id: str, seed: int, depth: int, created_at: datetime, until: datetime
) -> tuple[Deployment, ...]:
    """`depth` deployments between creation and `until`, oldest first, unique seconds."""
    rng = random.Random(seed)
    span = max(int((until - created_at).total_seconds()) - 60, depth)
    offsets = sorted(rng.sample(range(span), depth))
    history = []
    for index, offset in enumerate(offsets):
        last = index == depth - 1
        status = "active" if last or rng.random() > 0.15 else rng.choice(_FAILED)
        history.append(make_deployment(rng, service_id, created_at + timedelta(seconds=offset)))
        history[-1].status = status
        if status in _FAILED:
            history[-1].error = "Build step 'install' exited with code 1"
    return tuple(history)


def make_deployment(rng: random.Random, service_id: str, at: datetime) -> Deployment:
    """One deployment at `at` (status `active`; callers change it)."""
    return Deployment(
        id=new_id(rng),
        service_id=service_id,
        created_at=at.replace(microsecond=0),
        status="active",
        commit_sha=f"{rng.getrandbits(160):040x}",
        commit_message=rng.choice(COMMIT_MESSAGES),
        author=rng.choice(AUTHORS),
        attempts=1 if rng.random() < 0.9 else 2,
    )
