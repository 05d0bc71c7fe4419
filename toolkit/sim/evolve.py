"""The simulated clock: `advance(hours)` moves the world forward so snapshots show change.

Per call, at rates proportional to the world's size and the hours passed (and at least
once each, so even a five-service world changes): new deployments (some failing or
crashing), crashes and recoveries, OOM kills, rising restart counts, volume growth,
secret rotation, new and deleted services, a key's scope change and last use, and now and
then a new template version. Planted services are never repaired or deleted.

Every draw comes from the simulator's evolution RNG in a fixed order, so the same seed,
size and sequence of calls (and requests that change things) give the same world.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from toolkit.sim.history import make_deployment
from toolkit.sim.service_factory import add_service_variables, add_volume, make_service
from toolkit.sim.vocabulary import CRASH_REASONS, new_canary, secret_value

if TYPE_CHECKING:
    import random

    from toolkit.sim.planted import Planted
    from toolkit.sim.world import Service, World

__all__ = ["advance_world"]

_IN_PROGRESS = ("build-pending", "build-queued", "build-running")
_Moment = Callable[[], datetime]  # a random instant inside the advanced window


def advance_world(world: World, rng: random.Random, planted: Planted, hours: float) -> None:
    """Evolve `world` by `hours` (> 0) of simulated time."""
    if hours <= 0:
        raise ValueError(f"hours={hours}: give a positive number of hours")
    start, seconds = world.now, max(1, int(hours * 3600))
    services = list(world.services.values())
    size = len(services)

    def moment() -> datetime:
        return start + timedelta(seconds=rng.randrange(seconds))

    _deploy(rng, services, _count(rng, size * hours / 48), moment)
    _crashes(rng, services, _count(rng, size * hours / 500), hours)
    _oom_kills(rng, services, _count(rng, size * hours / 1000), moment)
    _grow_volumes(world, rng, hours)
    _rotate_secrets(world, rng, services, _count(rng, size * hours / 200), moment)
    world.now = start + timedelta(seconds=seconds)
    _new_services(world, rng, _count(rng, size * hours / 2400))
    _delete_services(world, rng, services, int(size * hours / 4800))
    _change_keys(world, rng, planted, moment)
    if rng.random() < min(1.0, hours / 240):
        template = rng.choice(list(world.templates.values()))
        template.version += 1


def _count(rng: random.Random, expected: float) -> int:
    """At least one; the fractional part rounds up with its own probability."""
    whole = math.floor(expected)
    return max(1, whole + (1 if rng.random() < expected - whole else 0))


def _deploy(rng: random.Random, services: list[Service], count: int, moment: _Moment) -> None:
    picks = sorted((moment(), rng.randrange(len(services))) for _ in range(count))
    for at, index in picks:
        service = services[index]
        latest = service.new_deployments[-1].created_at if service.new_deployments else None
        latest = latest or service.history_until or service.created_at
        at = max(at.replace(microsecond=0), latest + timedelta(seconds=1))
        deployment = make_deployment(rng, service.id, at)
        roll = rng.random()
        if roll < 0.10:
            deployment.status, deployment.error = "build-failed", "Build exited with code 1"
        elif roll < 0.15:
            deployment.status = rng.choice(_IN_PROGRESS)
        elif roll < 0.20 and not service.pinned:
            service.crashing, service.crash_reasons = True, (rng.choice(CRASH_REASONS),)
        elif not service.pinned:
            service.crashing, service.crash_reasons = False, ()
        if deployment.status == "active":
            service.pods_started_at = at
        service.new_deployments.append(deployment)
        service.updated_at = at


def _crashes(rng: random.Random, services: list[Service], count: int, hours: float) -> None:
    """Toggle some services between healthy and crashing; crashing ones keep restarting."""
    for _ in range(count):
        service = services[rng.randrange(len(services))]
        if service.pinned:
            continue
        service.crashing = not service.crashing
        service.crash_reasons = (rng.choice(CRASH_REASONS),) if service.crashing else ()
    for service in services:
        if service.crashing:
            service.restart_count += max(1, int(hours * rng.uniform(0.5, 3)))


def _oom_kills(rng: random.Random, services: list[Service], count: int, moment: _Moment) -> None:
    targets = [services[rng.randrange(len(services))] for _ in range(count)]
    targets += [s for s in services if s.pinned and s.oom_kills]
    for service in targets:
        service.oom_kills += 1
        service.restart_count += 1
        service.last_oom_at = max(moment(), service.last_oom_at or service.created_at)


def _grow_volumes(world: World, rng: random.Random, hours: float) -> None:
    """Mounted volumes fill up (never past 99%); some pending resizes complete."""
    for volume in world.volumes.values():
        if volume.service_id is None:
            continue
        growth = max(0.01, volume.capacity_gb * 0.002 * hours * rng.random())
        volume.used_gb = round(min(volume.capacity_gb * 0.99, volume.used_gb + growth), 2)
        service = world.services.get(volume.service_id)
        resizable = volume.pending_resize and service is not None and not service.pinned
        if resizable and rng.random() < 0.3:
            volume.capacity_gb, volume.pending_resize = volume.requested_gb, False


def _rotate_secrets(
    world: World, rng: random.Random, services: list[Service], count: int, moment: _Moment
) -> None:
    """Give literal, unprotected service variables new values (new canaries)."""
    rotated, attempts = 0, 0
    while rotated < count and attempts < count * 20:
        attempts += 1
        service = services[rng.randrange(len(services))]
        owned = world.variables.get(("service", service.id), {})
        names = [n for n, v in owned.items() if "${{" not in v.value and n not in service.protected]
        if not names:
            continue
        variable = owned[rng.choice(names)]
        host = f"{service.name}.internal"
        variable.value = secret_value(variable.name, new_canary(rng, world.canaries), host)
        variable.updates.append(max(moment(), variable.updates[-1]))
        rotated += 1


def _new_services(world: World, rng: random.Random, count: int) -> None:
    envs = list(world.environments.values())
    for _ in range(count):
        env = rng.choice(envs)
        created = world.now - timedelta(minutes=rng.randint(5, 120))
        service = make_service(world, rng, env, created)
        service.history_depth = rng.randint(1, 3)
        world.add_service(service)
        if service.kind == "database":
            add_volume(world, rng, service)
        in_env = (world.services[s] for s in world.services_of[env.id])
        databases = [s for s in in_env if s.kind == "database" and s is not service]
        add_service_variables(world, rng, service, databases)


def _delete_services(world: World, rng: random.Random, services: list[Service], count: int) -> None:
    candidates = [s for s in services if not s.pinned and s.id in world.services]
    for service in rng.sample(candidates, min(count, len(candidates))):
        world.remove_service(service.id)


def _change_keys(world: World, rng: random.Random, planted: Planted, moment: _Moment) -> None:
    """The environment-limited viewer moves between environments; pipeline keys get used."""
    by_id = {key.id: key for key in world.keys.values()}
    viewer = by_id.get(planted.ids.get("key_viewer_env", ""))
    project_envs = list(world.environments_of.get(planted.ids.get("project", ""), {}))
    if viewer is not None and project_envs:
        current = viewer.resources[0][1] if viewer.resources else ""
        others = [e for e in project_envs if e != current] or project_envs
        viewer.resources = [("environment", rng.choice(others))]
    for name in ("ci_deploy", "limited"):
        key = by_id.get(planted.ids.get(f"key_{name}", ""))
        if key is not None and key.revoked_at is None:
            key.last_used_at = moment()
