"""Handlers of the changing endpoints: variables, replica restarts, environment deletion.

Order of checks, the same everywhere: role (403 read only for viewers, 403 forbidden for
an editor's delete), then the body's fields (422), then scope and existence (404), then
the rules of the resource (403 protected variable, 409 last environment).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolkit.sim.errors import conflict, not_found
from toolkit.sim.lookup import Ctx, find_environment, find_service, read_target
from toolkit.sim.variables import delete_variables, upsert_variables, variables_payload

if TYPE_CHECKING:
    from toolkit.sim.routes_read import Handler

__all__ = ["ROUTES"]


def update_variables(ctx: Ctx) -> Any:
    """Upsert `[{name, value}]` at the level named by `type` (docs/spec/api-facts.md)."""
    ctx.caller.require_change()
    pairs = ctx.body.variable_items("variables", with_value=True)
    target = read_target(ctx, ctx.body)
    if not ctx.caller.sees(target.chain):
        raise not_found(target.level)
    upsert_variables(ctx.world, target.level, target.owner_id, pairs, ctx.now)
    return variables_payload(ctx.world, target.level, target.owner_id, ctx.caller.sees_values)


def remove_variables(ctx: Ctx) -> Any:
    """Delete `[{name}]` at the level named by `type` (spec part 4)."""
    ctx.caller.require_delete()
    names = [name for name, _ in ctx.body.variable_items("variables", with_value=False)]
    target = read_target(ctx, ctx.body)
    if not ctx.caller.sees(target.chain):
        raise not_found(target.level)
    delete_variables(ctx.world, target.level, target.owner_id, names)
    return variables_payload(ctx.world, target.level, target.owner_id, ctx.caller.sees_values)


def restart_replicas(ctx: Ctx) -> Any:
    """Roll a service's pods: new creation time, restart counters back to zero."""
    ctx.caller.require_change()
    ids = [ctx.body.uuid(f"{level}_id") for level in ("team", "project", "environment")]
    service_id = ctx.body.uuid("service_id")
    ctx.body.done()
    service = find_service(ctx, ids[0], ids[1], ids[2], service_id)
    service.pods_started_at = ctx.now
    service.restart_count = 0
    return {"restarted": True}


def delete_environment(ctx: Ctx) -> Any:
    """Delete an environment with its services and volumes, never a project's last one."""
    ctx.caller.require_delete()
    env_id = ctx.body.uuid("environment_id")
    project_id, team_id = ctx.body.uuid("project_id"), ctx.body.uuid("team_id")
    ctx.body.done()
    env = find_environment(ctx, team_id, project_id, env_id)
    if not ctx.caller.sees((env_id, project_id, team_id)):
        raise not_found("environment")
    if len(ctx.world.environments_of[project_id]) <= 1:
        raise conflict(
            f"Environment {env.name!r} is the last one of its project; a project keeps at "
            "least one environment, so create another before deleting this one"
        )
    ctx.world.remove_environment(env_id)
    return {"deleted": True, "id": env_id}


ROUTES: dict[str, dict[str, Handler]] = {
    "/variables/update": {"POST": update_variables},
    "/variables/delete": {"DELETE": remove_variables},
    "/replicas/restart": {"PUT": restart_replicas},
    "/environments/delete": {"DELETE": delete_environment},
}
