"""Handlers of the reading endpoints (spec part 4 and docs/spec/api-facts.md).

Each handler takes a `Ctx`, validates its query (422 with rule-2 details), finds what it
names inside the caller's scope (404 otherwise) and returns the `data` payload; the app
wraps it in `{data}`. `ROUTES` maps path and method to handler.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from toolkit.sim.errors import not_found, session_only
from toolkit.sim.history import deployments
from toolkit.sim.lookup import (
    Ctx,
    find_environment,
    find_project,
    find_service,
    find_team,
    read_target,
    services_under,
)
from toolkit.sim.resource_shapes import (
    bucket_json,
    environment_json,
    group_json,
    key_json,
    me_json,
    project_json,
    team_json,
    template_json,
    volume_json,
    webhook_json,
)
from toolkit.sim.service_shapes import (
    deployment_json,
    replica_health_json,
    replica_items,
    service_json,
)
from toolkit.sim.variables import variables_payload
from toolkit.sim.world import iso

if TYPE_CHECKING:
    from toolkit.sim.world import Volume

__all__ = ["ROUTES"]

Handler = Callable[[Ctx], Any]


def me(ctx: Ctx) -> Any:
    return me_json(ctx.world, ctx.caller.key)


def api_keys(ctx: Ctx) -> Any:
    """Extension (docs/contracts.md): browser sessions only."""
    if not ctx.caller.key.session:
        raise session_only()
    return [
        key_json(k, ctx.world, with_state=True) for k in ctx.world.keys.values() if not k.session
    ]


def teams(ctx: Ctx) -> Any:
    return [team_json(t) for t in ctx.world.teams.values() if ctx.caller.navigates((t.id,))]


def projects(ctx: Ctx) -> Any:
    team_id = ctx.query.uuid("team_id")
    ctx.query.done()
    find_team(ctx, team_id)
    found = (ctx.world.projects[p] for p in ctx.world.projects_of[team_id])
    return [project_json(p) for p in found if ctx.caller.navigates((p.id, team_id))]


def environments(ctx: Ctx) -> Any:
    team_id, project_id = ctx.query.uuid("team_id"), ctx.query.uuid("project_id")
    ctx.query.done()
    find_project(ctx, team_id, project_id)
    found = (ctx.world.environments[e] for e in ctx.world.environments_of[project_id])
    chain = (project_id, team_id)
    return [environment_json(e) for e in found if ctx.caller.navigates((e.id, *chain))]


def _env_ids(ctx: Ctx) -> tuple[str, str, str]:
    ids = (ctx.query.uuid("team_id"), ctx.query.uuid("project_id"))
    env_id = ctx.query.uuid("environment_id")
    return ids[0], ids[1], env_id


def services(ctx: Ctx) -> Any:
    team_id, project_id, env_id = _env_ids(ctx)
    ctx.query.done()
    find_environment(ctx, team_id, project_id, env_id)
    chain = (env_id, project_id, team_id)
    found = (ctx.world.services[s] for s in ctx.world.services_of[env_id])
    role = ctx.caller.key.role
    return [service_json(ctx.world, s, role) for s in found if ctx.caller.sees((s.id, *chain))]


def _service_from_query(ctx: Ctx) -> Any:
    team_id, project_id, env_id = _env_ids(ctx)
    service_id = ctx.query.uuid("service_id")
    return team_id, project_id, env_id, service_id


def deployment_list(ctx: Ctx) -> Any:
    """Cursor pagination, newest first: `cursor` is the created_at of the last item seen."""
    ids = _service_from_query(ctx)
    per_page = ctx.query.integer("per_page", 1, 100, 50)
    cursor = ctx.query.timestamp("cursor")
    ctx.query.done()
    service = find_service(ctx, *ids)
    history = deployments(service)
    older = [d for d in history if cursor is None or d.created_at < cursor]
    page, has_next = older[:per_page], len(older) > per_page
    live = next((d for d in history if d.status in {"active", "crashing"}), None)
    return {
        "deployments": [deployment_json(service, d, live=d is live) for d in page],
        "current_deployment": deployment_json(service, live, live=True) if live else None,
        "metadata": {
            "has_next": has_next,
            "next": iso(page[-1].created_at) if has_next else None,
            "previous": iso(cursor),
        },
    }


def replica_health(ctx: Ctx) -> Any:
    ids = _service_from_query(ctx)
    ctx.query.done()
    return replica_health_json(find_service(ctx, *ids))


def replica_list(ctx: Ctx) -> Any:
    target = read_target(ctx, ctx.query)
    found = services_under(ctx.world, target)
    visible = (s for s in found if ctx.caller.sees(ctx.world.owner_chain("service", s.id)))
    return [pod for s in visible for pod in replica_items(s)]


def volume_list(ctx: Ctx) -> Any:
    target = read_target(ctx, ctx.query, ("team", "project", "environment"))
    world = ctx.world
    if target.level == "environment":
        env_ids = [target.owner_id]
    else:
        project_ids = (
            [target.owner_id]
            if target.level == "project"
            else list(world.projects_of.get(target.owner_id, {}))
        )
        env_ids = [e for p in project_ids for e in world.environments_of.get(p, {})]
    found = (world.volumes[v] for e in env_ids for v in world.volumes_of.get(e, {}))
    return [volume_json(v) for v in found if ctx.caller.sees(_volume_chain(v))]


def _volume_chain(volume: Volume) -> tuple[str, ...]:
    """A volume is seen through its environment, or through the service it is mounted on."""
    owners = (volume.service_id, volume.environment_id, volume.project_id, volume.team_id)
    return tuple(owner for owner in owners if owner)


def variable_list(ctx: Ctx) -> Any:
    target = read_target(ctx, ctx.query)
    values = ctx.caller.sees_values
    if not ctx.caller.sees(target.chain):  # navigable only: its own objects stay hidden
        raise not_found(target.level)
    return variables_payload(ctx.world, target.level, target.owner_id, values)


def bucket_list(ctx: Ctx) -> Any:
    team_id = ctx.query.uuid("team_id")
    ctx.query.done()
    find_team(ctx, team_id)
    if not ctx.caller.sees((team_id,)):
        raise not_found("team")
    return [bucket_json(ctx.world.buckets[b]) for b in ctx.world.buckets_of[team_id]]


def bucket_get(ctx: Ctx) -> Any:
    bucket_id, team_id = ctx.query.uuid("id"), ctx.query.uuid("team_id")
    ctx.query.done()
    find_team(ctx, team_id)
    bucket = ctx.world.buckets.get(bucket_id)
    if bucket is None or bucket.team_id != team_id or not ctx.caller.sees((team_id,)):
        raise not_found("bucket")
    return bucket_json(bucket)


def webhook_list(ctx: Ctx) -> Any:
    level = ctx.query.choice("type", ("team", "project"))
    team_id = ctx.query.uuid("team_id")
    project_id = ctx.query.uuid("project_id", required=level == "project")
    ctx.query.done()
    find_team(ctx, team_id)
    chain: tuple[str, ...] = (team_id,)
    owner = team_id
    if level == "project":
        find_project(ctx, team_id, project_id)
        owner, chain = project_id, (project_id, team_id)
    if not ctx.caller.sees(chain):
        raise not_found(level)
    hooks = (ctx.world.webhooks[h] for h in ctx.world.webhooks_of[owner])
    return [webhook_json(h) for h in hooks if h.type == level]


def template_list(ctx: Ctx) -> Any:
    ordered = sorted(ctx.world.templates.values(), key=lambda t: t.display_rank)
    return [template_json(t) for t in ordered]


def group_list(ctx: Ctx) -> Any:
    team_id, project_id, env_id = _env_ids(ctx)
    ctx.query.done()
    find_environment(ctx, team_id, project_id, env_id)
    if not ctx.caller.sees((env_id, project_id, team_id)):
        raise not_found("environment")
    return [group_json(ctx.world.groups[g]) for g in ctx.world.groups_of[env_id]]


ROUTES: dict[str, dict[str, Handler]] = {
    "/users/me": {"GET": me},
    "/api_keys/list": {"GET": api_keys},
    "/teams/list": {"GET": teams},
    "/projects/list": {"GET": projects},
    "/environments/list": {"GET": environments},
    "/services/list": {"GET": services},
    "/deployments/list": {"GET": deployment_list},
    "/replicas/health": {"GET": replica_health},
    "/replicas/list": {"GET": replica_list},
    "/volumes/list": {"GET": volume_list},
    "/variables/list": {"GET": variable_list},
    "/storage/s3/list": {"GET": bucket_list},
    "/storage/s3/get": {"GET": bucket_get},
    "/webhooks/list": {"GET": webhook_list},
    "/templates/list": {"GET": template_list},
    "/service_groups/list": {"GET": group_list},
}
