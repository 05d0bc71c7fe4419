"""Seeded creation of one realistic service with its variables and volumes.

Used by the generator for the initial world and by the clock for services created later,
so both draw from the same distributions. Rates of defects here are the background noise
of a real platform; the guaranteed problems are placed separately by `planted`.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from toolkit.sim.vocabulary import (
    APP_NAMES,
    DATABASES,
    IMAGES,
    new_canary,
    new_id,
    secret_value,
)
from toolkit.sim.world import Environment, Port, Service, Variable, Volume, World

if TYPE_CHECKING:
    import random

__all__ = ["add_service_variables", "add_volume", "make_service"]


def make_service(
    world: World, rng: random.Random, env: Environment, created_at: datetime, kind: str = ""
) -> Service:
    """A new service in `env` (not yet added to the world) with a random configuration."""
    kind = kind or rng.choices(("gitprovider", "container-image", "database"), (55, 25, 20))[0]
    service = Service(
        id=new_id(rng),
        team_id=env.team_id,
        project_id=env.project_id,
        environment_id=env.id,
        name=_unique_name(world, rng, env, kind),
        description="",
        kind=kind,
        created_at=created_at,
        updated_at=created_at,
        seed=rng.getrandbits(32),
        builder={"gitprovider": "buildpack", "database": "database"}.get(kind, "container"),
        history_depth=rng.randint(3, 30),
        history_until=world.now,
    )
    if kind == "database":
        _as_database(world, rng, service)
        # named after what it runs (a mongodb called mysql reads as a bug in a report); the
        # name drawn above is replaced, not skipped, so every later draw stays the same
        service.name = _free_name(world, env, service.database_type)
    elif kind == "gitprovider":
        service.git_owner = "acme"
        service.git_repository = f"acme/{service.name}"
        service.git_branch = rng.choice(("main", "main", "master", "release"))
        service.run_command = rng.choice(("npm start", "gunicorn app:app", "./server", ""))
    else:
        service.image = rng.choice(IMAGES)
    _random_runtime(rng, service, production=env.name == "production")
    if kind != "database" and world.templates and rng.random() < 0.15:
        template = rng.choice(list(world.templates.values()))
        service.template_id, service.template_instance_id = template.id, new_id(rng)
        service.template_version = max(1, template.version - rng.choice((0, 0, 1, 2)))
        service.image = template.image
    return service


def _unique_name(world: World, rng: random.Random, env: Environment, kind: str) -> str:
    base = rng.choice(("postgres", "mysql", "redis")) if kind == "database" else None
    return _free_name(world, env, base or rng.choice(APP_NAMES))


def _free_name(world: World, env: Environment, base: str) -> str:
    """``base``, or ``base-2``, ``base-3``... when a service of ``env`` has it already."""
    taken = {world.services[s].name for s in world.services_of.get(env.id, {})}
    name, suffix = base, 2
    while name in taken:
        name, suffix = f"{base}-{suffix}", suffix + 1
    return name


def _as_database(world: World, rng: random.Random, service: Service) -> None:
    db_type, version, image, protected = rng.choice(DATABASES)
    service.database_type, service.database_version = db_type, version
    service.image, service.protected = image, protected
    if rng.random() < 0.8:
        service.backup_schedule = rng.choice(("0 3 * * *", "0 */6 * * *", "30 1 * * 0"))
        service.backup_retention = rng.choice((7, 14, 30))
        buckets = list(world.buckets_of.get(service.team_id, {}))
        service.backup_bucket_id = buckets[0] if buckets else None


def _random_runtime(rng: random.Random, service: Service, production: bool) -> None:
    """Ports, hosts, sizes, security and health: mostly sane, sometimes not."""
    is_db = service.kind == "database"
    port = {"postgres": 5432, "mysql": 3306, "redis": 6379, "mongodb": 27017}.get(
        service.database_type, rng.choice((3000, 8000, 8080))
    )
    node_port = 30000 + rng.randrange(2767) if rng.random() < 0.03 else 0
    service.ports = (Port(port, "TCP", node_port),)
    service.is_public = not is_db and rng.random() < 0.45
    if service.is_public:
        service.hosts = (f"{service.name}-{rng.getrandbits(16):04x}.example.app",)
        service.health_path = "" if rng.random() < 0.2 else rng.choice(("/health", "/healthz"))
    service.replicas = rng.choice((1, 2, 2, 3)) if production and not is_db else 1
    cpu = rng.choice((100, 250, 500, 1000))
    mem = rng.choice((128, 256, 512, 1024, 2048))
    service.cpu, service.memory = (cpu, cpu * 2), (mem, mem * 2)
    roll = rng.random()
    if roll < 0.08:
        service.cpu, service.memory = (-1, -1), (-1, -1)
    elif roll < 0.13:
        service.memory = (mem * 2, mem)
    if rng.random() < 0.02:
        service.privileged = True
    if rng.random() < 0.03:
        service.capabilities = (rng.choice(("NET_ADMIN", "SYS_ADMIN", "SYS_PTRACE")),)
    if rng.random() < 0.04:
        service.crashing = True
        service.crash_reasons = ("Back-off restarting failed container",)
        service.restart_count = rng.randint(3, 40)
    if rng.random() < 0.03:
        service.oom_kills = rng.randint(1, 6)
        service.restart_count += service.oom_kills


def add_volume(
    world: World,
    rng: random.Random,
    service: Service,
    used_fraction: float | None = None,
    capacity_gb: float | None = None,
) -> Volume:
    """Mount a new volume on `service` and register it."""
    capacity = capacity_gb or float(rng.choice((5, 10, 20, 50)))
    fraction = rng.uniform(0.05, 0.75) if used_fraction is None else used_fraction
    volume = Volume(
        id=new_id(rng),
        team_id=service.team_id,
        project_id=service.project_id,
        environment_id=service.environment_id,
        service_id=service.id,
        name=f"{service.name}-data",
        mount_path="/var/lib/data" if service.kind == "database" else "/data",
        capacity_gb=capacity,
        used_gb=round(capacity * fraction, 2),
        created_at=service.created_at,
        is_database=service.kind == "database",
        requested_gb=capacity,
    )
    world.add_volume(volume)
    return volume


def add_service_variables(
    world: World, rng: random.Random, service: Service, databases: list[Service]
) -> None:
    """Give `service` its variables: protected credentials for databases, a mix for apps."""
    now = service.created_at
    host = f"{service.name}.internal"
    for name in service.protected:
        value = secret_value(name, new_canary(rng, world.canaries), host)
        world.set_variable("service", service.id, Variable(name, value, [now], provided=True))
    if service.kind == "database":
        return
    names = ["SECRET_KEY", "LOG_LEVEL"] + (["SMTP_PASSWORD"] if rng.random() < 0.3 else [])
    for name in names:
        value = secret_value(name, new_canary(rng, world.canaries), host)
        world.set_variable("service", service.id, Variable(name, value, [now]))
    if databases:
        db = rng.choice(databases)
        url = next((n for n in db.protected if n.endswith("_URL")), "DATABASE_URL")
        ref = f"${{{{service.{db.id}.{url}}}}}"
        world.set_variable("service", service.id, Variable(url, ref, [now]))
    if rng.random() < 0.5:
        ref = "${{environment.PUBLIC_URL}}"
        world.set_variable("service", service.id, Variable("APP_URL", ref, [now]))
    if rng.random() < 0.3:
        ref = "${{project.SENTRY_DSN}}"
        world.set_variable("service", service.id, Variable("SENTRY_DSN", ref, [now]))


def backdate(rng: random.Random, now: datetime, max_days: int) -> datetime:
    """A whole-second moment within the last `max_days` days."""
    return (now - timedelta(seconds=rng.randrange(max_days * 86400))).replace(microsecond=0)
