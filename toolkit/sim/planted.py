"""The problems every world carries, at every size, so each audit check has something to find.

`plant` places five services in the first two projects of the first team and attaches the
remaining defects (variables, volumes, webhooks, keys) around them. Their ids are returned
under stable names (`Planted.ids`, exposed as `Simulator.planted`), and the services are
`pinned` so the clock never repairs them:

- hierarchy: `team`, `project` (production/staging/development), `project_single_env` and
  `project_html` (one environment, a name with HTML and quotes), `env_production`,
  `env_staging`, `env_development`, `env_single`
- `web` in production: `service_no_limits`, `service_public_no_health`, `service_one_replica`,
  `service_nodeport`; it also holds the plain secret variable `ADMIN_PASSWORD` and
  `QUEUE_URL`, a password written beside a reference to production's `MQ_HOST`
- `worker`: `service_privileged` (SYS_ADMIN, NET_ADMIN), `service_requests_above_limits`,
  `service_crashing`, `service_oom`, `service_restarts`
- `postgres`: `service_database` = `service_no_backup` (protected `POSTGRES_PASSWORD`,
  `DATABASE_URL`), `volume_near_full`
- `automation` in staging: `service_template_outdated` (`template_outdated`),
  `service_unresolved_refs` (`BROKEN_REF`, `LEGACY_DB_URL` to a deleted service),
  `volume_pending_resize`; its `REPORTING_DATABASE_URL` references `postgres`'s protected
  `DATABASE_URL` in production
- `service_html`: a service named with HTML and quotes; `volume_unattached` in development
- environment variable `PAYMENT_API_SECRET`: the same value in production and staging
- production's environment variable `SEARCH_SETTINGS`: a JSON Web Token under a name no
  check calls a secret's
- webhooks: `webhook_http`, `webhook_userinfo`, `webhook_token`, `webhook_private`,
  `webhook_loopback`, `webhook_html`
- keys: `key_<name>` for admin (never expires), editor, viewer, limited, revoked, expired,
  session, viewer_env, ci_deploy
"""

from __future__ import annotations

import base64
import hashlib
import random
from dataclasses import dataclass, field
from datetime import timedelta

from toolkit.sim.service_factory import add_service_variables, add_volume, make_service
from toolkit.sim.vocabulary import CRASH_REASONS, HTML_NAME, HTML_PROJECT_NAME, new_canary, new_id
from toolkit.sim.world import ApiKey, Environment, Port, Service, Variable, Volume, Webhook, World

__all__ = ["CONTRACT_KEYS", "Planted", "plant"]

CONTRACT_KEYS = ("admin", "editor", "viewer", "limited", "revoked", "expired", "session")
# Names of planted variables, not secrets themselves.
REUSED_SECRET = "PAYMENT_API_SECRET"  # noqa: S105 - a variable name
PLAIN_SECRET = "ADMIN_PASSWORD"  # noqa: S105 - a variable name
WRITTEN_CREDENTIAL = "QUEUE_URL"
UNRESOLVED_REF = "BROKEN_REF"
DELETED_REF = "LEGACY_DB_URL"
CROSSING_REF = "REPORTING_DATABASE_URL"
VALUE_SECRET = "SEARCH_SETTINGS"  # noqa: S105 - a variable name: an innocent one for a JSON Web Token (VAR011)


@dataclass
class Planted:
    """Ids of planted problems by name, and tokens of the planted keys by name."""

    ids: dict[str, str] = field(default_factory=dict)
    tokens: dict[str, str] = field(default_factory=dict)


def plant(world: World, rng: random.Random) -> Planted:
    """Place every planted problem; needs the hierarchy of `generate` (projects 0 and 1)."""
    planted = Planted()
    ids = planted.ids
    team = next(iter(world.teams.values()))
    p0, p1 = list(world.projects_of[team.id])[:2]
    prod, staging, dev = (world.environments[e] for e in world.environments_of[p0])
    single = world.environments[next(iter(world.environments_of[p1]))]
    world.projects[p1].name = HTML_PROJECT_NAME
    ids.update(team=team.id, project=p0, project_single_env=p1, project_html=p1)
    ids.update(env_production=prod.id, env_staging=staging.id, env_development=dev.id)
    ids.update(env_single=single.id)
    web = _service(world, rng, prod, "gitprovider")
    worker = _service(world, rng, prod, "container-image")
    db = _service(world, rng, prod, "database")
    api = _service(world, rng, staging, "gitprovider")
    html = _service(world, rng, single, "container-image")
    _web(web, rng, ids)
    _worker(worker, rng, world, ids)
    _database(world, rng, db, ids)
    _api(world, rng, api, ids)
    html.name, html.description = HTML_NAME, "\"quoted\" & 'single' <script>x</script>"
    ids["service_html"] = html.id
    for service, databases in ((web, [db]), (worker, [db]), (db, []), (api, []), (html, [])):
        add_service_variables(world, rng, service, databases)
    _planted_variables(world, rng, (web, api, db), prod, staging)
    _unattached_volume(world, rng, dev, ids)
    _webhooks(world, rng, team.id, p0, p1, ids)
    _keys(world, rng, planted, p0, staging.id, web.id)
    return planted


def _service(world: World, rng: random.Random, env: Environment, kind: str) -> Service:
    service = make_service(world, rng, env, env.created_at + timedelta(days=3), kind)
    service.pinned, service.crashing, service.crash_reasons = True, False, ()
    service.restart_count = service.oom_kills = 0
    service.privileged, service.capabilities = False, ()
    service.cpu, service.memory = (250, 500), (256, 512)
    service.ports = tuple(Port(p.port, p.protocol) for p in service.ports)
    service.template_id = service.template_instance_id = None
    world.add_service(service)
    return service


def _web(web: Service, rng: random.Random, ids: dict[str, str]) -> None:
    web.name, web.is_public, web.health_path, web.replicas = "web", True, "", 1
    web.hosts = (f"shop-{rng.getrandbits(16):04x}.example.app",)
    web.cpu, web.memory = (-1, -1), (-1, -1)
    web.ports = (Port(8080, "TCP", 30080),)
    for name in ("no_limits", "public_no_health", "one_replica", "nodeport"):
        ids[f"service_{name}"] = web.id


def _worker(worker: Service, rng: random.Random, world: World, ids: dict[str, str]) -> None:
    worker.name, worker.replicas = "worker", 2
    worker.privileged, worker.capabilities = True, ("SYS_ADMIN", "NET_ADMIN")
    worker.cpu, worker.memory = (1000, 500), (1024, 512)
    # a crash message (also the crash event's, the latest) quoting a connection string and a
    # start command passing a password, canaries both: the collector must mask them. Drawn
    # from the worker's own generator, so the world's draws stay as they were
    own = random.Random(worker.id)
    leaked = new_canary(own, world.canaries)
    refused = f"connection to postgres://app:{leaked}@db.internal:5432/app refused"
    worker.crashing, worker.crash_reasons = True, (*CRASH_REASONS[:2], refused)
    worker.run_command = f"./worker --queue=jobs --redis-password={new_canary(own, world.canaries)}"
    worker.oom_kills, worker.restart_count = 4, 27
    worker.last_oom_at = world.now - timedelta(hours=rng.randint(1, 5))
    for name in ("privileged", "requests_above_limits", "crashing", "oom", "restarts"):
        ids[f"service_{name}"] = worker.id


def _database(world: World, rng: random.Random, db: Service, ids: dict[str, str]) -> None:
    db.name, db.database_type, db.database_version = "postgres", "postgres", "16"
    db.image, db.protected = "postgres:16", ("POSTGRES_PASSWORD", "DATABASE_URL")
    db.backup_schedule, db.backup_retention, db.backup_bucket_id = "", 0, None
    volume = add_volume(world, rng, db, used_fraction=0.93, capacity_gb=20.0)
    ids.update(service_database=db.id, service_no_backup=db.id, volume_near_full=volume.id)


def _api(world: World, rng: random.Random, api: Service, ids: dict[str, str]) -> None:
    template = next(t for t in world.templates.values() if t.name == "n8n")
    api.name, api.image = "automation", template.image
    api.template_id, api.template_instance_id = template.id, new_id(rng)
    api.template_version = template.version - 3
    api.is_public, api.health_path = True, "/healthz"
    api.hosts = (f"flows-{rng.getrandbits(16):04x}.example.app",)
    volume = add_volume(world, rng, api, used_fraction=0.4, capacity_gb=10.0)
    volume.pending_resize, volume.requested_gb = True, 25.0
    ids.update(service_template_outdated=api.id, template_outdated=template.id)
    ids.update(service_unresolved_refs=api.id, volume_pending_resize=volume.id)


def _planted_variables(
    world: World,
    rng: random.Random,
    services: tuple[Service, Service, Service],
    prod: Environment,
    staging: Environment,
) -> None:
    """Reused secret across prod and staging, plain and written secrets, broken references,
    and staging reading production's database credential through a reference."""
    web, api, db = services
    now = world.now - timedelta(days=30)
    reused = f"sk_live_{new_canary(rng, world.canaries)}"
    for env in (prod, staging):
        world.set_variable("environment", env.id, Variable(REUSED_SECRET, reused, [now]))
    plain = f"hunter2-{new_canary(rng, world.canaries)}"
    world.set_variable("service", web.id, Variable(PLAIN_SECRET, plain, [now]))
    # a password typed in beside a reference: a reference it is not (VAR010). Its canary comes
    # from a generator of its own: a draw from `rng` would change every world made after it
    side = random.Random(repr(rng.getstate()[1][:8]))  # no draw: its state, as text
    written = f"amqp://web:{new_canary(side, world.canaries)}@${{{{environment.MQ_HOST}}}}:5672/"
    world.set_variable("service", web.id, Variable(WRITTEN_CREDENTIAL, written, [now]))
    host = f"mq-{new_canary(side, world.canaries)}.internal"  # every literal value has one
    world.set_variable("environment", prod.id, Variable("MQ_HOST", host, [now]))
    missing = "${{environment.MISSING_KEY}}"
    world.set_variable("service", api.id, Variable(UNRESOLVED_REF, missing, [now]))
    gone = f"${{{{service.{new_id(rng)}.DATABASE_URL}}}}"
    world.set_variable("service", api.id, Variable(DELETED_REF, gone, [now]))
    crossing = f"${{{{service.{db.id}.DATABASE_URL}}}}"  # staging holds production's (VAR007)
    world.set_variable("service", api.id, Variable(CROSSING_REF, crossing, [now]))
    # a secret only its value gives away (VAR011): an environment's, so no rotation touches it
    token = _jwt(new_canary(random.Random(f"{prod.id}:value-kind"), world.canaries))
    world.set_variable("environment", prod.id, Variable(VALUE_SECRET, token, [now]))


def _jwt(signature: str) -> str:
    """A JSON Web Token whose signature is ``signature`` (a canary: base64url characters)."""

    def segment(data: str) -> str:
        return base64.urlsafe_b64encode(data.encode()).decode().rstrip("=")

    header, claims = '{"alg":"HS256","typ":"JWT"}', '{"sub":"search-indexer","role":"service"}'
    return f"{segment(header)}.{segment(claims)}.{signature}"


def _unattached_volume(
    world: World, rng: random.Random, env: Environment, ids: dict[str, str]
) -> None:
    volume = Volume(
        id=new_id(rng),
        team_id=env.team_id,
        project_id=env.project_id,
        environment_id=env.id,
        service_id=None,
        name="orphaned-uploads",
        mount_path="/uploads",
        capacity_gb=50.0,
        used_gb=12.5,
        created_at=env.created_at,
        requested_gb=50.0,
    )
    world.add_volume(volume)
    ids["volume_unattached"] = volume.id


def _webhooks(
    world: World, rng: random.Random, team_id: str, p0: str, p1: str, ids: dict[str, str]
) -> None:
    def canary() -> str:
        return new_canary(rng, world.canaries)

    hooks: tuple[tuple[str, str | None, str], ...] = (
        ("webhook_http", None, "http://hooks.example.com/platform/plain"),
        ("webhook_userinfo", None, f"https://deploy:{canary()}@hooks.example.net/notify"),
        ("webhook_token", p0, f"https://hooks.example.org/in?token={canary()}&channel=deploys"),
        ("webhook_private", p0, "http://10.0.12.7:8080/hook"),
        ("webhook_loopback", p0, "http://127.0.0.1:9000/hook"),
        ("webhook_html", p1, f"https://hooks.example.com/in/{HTML_NAME}?note=\"q\"&who='s'"),
    )
    # a chat webhook whose secret is its path (Slack's form), from a generator of its own so
    # the world's draws stay as they were
    own = random.Random(f"{team_id}:path-token")
    secret = new_canary(own, world.canaries)
    path_token = f"https://hooks.slack.example/services/T0123ABCD/B0456EFGH/{secret}"
    hooks = (*hooks, ("webhook_path_token", p1, path_token))
    for index, (name, project_id, url) in enumerate(hooks):
        draw = rng if index < len(hooks) - 1 else own
        hook = Webhook(
            id=new_id(draw),
            type="project" if project_id else "team",
            team_id=team_id,
            project_id=project_id,
            url=url,
            events=("deployment.failed", "service.updated"),
            created_at=world.now - timedelta(days=draw.randint(10, 200)),
        )
        world.add_webhook(hook)
        ids[name] = hook.id


def _keys(
    world: World, rng: random.Random, planted: Planted, p0: str, staging_id: str, web_id: str
) -> None:
    """Keys of every role and scope; tokens are drawn from the seed, only hashes kept."""
    now = world.now
    specs: tuple[tuple[str, str, list[tuple[str, str]], int | None], ...] = (
        ("admin", "admin", [], None),
        ("editor", "editor", [], 180),
        ("viewer", "viewer", [], 180),
        ("limited", "editor", [("project", p0)], 90),
        ("revoked", "editor", [], 90),
        ("expired", "viewer", [], -1),
        ("session", "admin", [], None),
        ("viewer_env", "viewer", [("environment", staging_id)], 30),
        ("ci_deploy", "editor", [("service", web_id)], 365),
    )
    for name, role, resources, days in specs:
        prefix = "plat_sess_" if name == "session" else "plat_"
        token = f"{prefix}{rng.getrandbits(160):040x}"
        key = ApiKey(
            id=new_id(rng),
            name=f"{name} key" if name != "session" else "browser session",
            role=role,
            access="limited" if resources else "all",
            resources=resources,
            token_sha256=hashlib.sha256(token.encode()).hexdigest(),
            created_at=now - timedelta(days=120 if name == "expired" else 20),
            expires_at=None if days is None else now + timedelta(days=days),
            session=name == "session",
        )
        if name == "revoked":
            key.revoked_at = now - timedelta(days=3)
        if name in {"revoked", "expired", "ci_deploy"}:
            key.last_used_at = now - timedelta(days=rng.randint(4, 9))
        world.keys[key.token_sha256] = key
        planted.tokens[name] = token
        planted.ids[f"key_{name}"] = key.id
