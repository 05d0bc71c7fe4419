"""One request's context and the lookups that find named resources inside the caller's scope.

Every lookup checks three things at once, and answers 404 `not_found` for any of them, so
a limited key cannot tell "absent" from "hidden" (spec part 5, rule 6): the id exists, its
parent ids match the ones sent, and the caller may see (or at least navigate) it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from toolkit.sim.errors import not_found
from toolkit.sim.validation import LEVELS, Fields

if TYPE_CHECKING:
    from datetime import datetime

    from toolkit.sim.auth import Caller
    from toolkit.sim.world import Environment, Project, Service, Team, World

__all__ = ["Ctx", "Target", "find_environment", "find_project", "find_service", "find_team"]


@dataclass
class Ctx:
    """What a handler gets: the world, the caller, and the fields of query and body."""

    world: World
    caller: Caller
    query: Fields
    body: Fields

    @property
    def now(self) -> datetime:
        return self.world.now


@dataclass(frozen=True)
class Target:
    """A level (`team` .. `service`) and the id of the resource at that level."""

    level: str
    owner_id: str
    chain: tuple[str, ...]


def find_team(ctx: Ctx, team_id: str) -> Team:
    team = ctx.world.teams.get(team_id)
    if team is None or not ctx.caller.navigates((team_id,)):
        raise not_found("team")
    return team


def find_project(ctx: Ctx, team_id: str, project_id: str) -> Project:
    project = ctx.world.projects.get(project_id)
    chain = (project_id, team_id)
    if project is None or project.team_id != team_id or not ctx.caller.navigates(chain):
        raise not_found("project")
    return project


def find_environment(ctx: Ctx, team_id: str, project_id: str, env_id: str) -> Environment:
    env = ctx.world.environments.get(env_id)
    chain = (env_id, project_id, team_id)
    if (
        env is None
        or (env.team_id, env.project_id) != (team_id, project_id)
        or not ctx.caller.navigates(chain)
    ):
        raise not_found("environment")
    return env


def find_service(ctx: Ctx, team_id: str, project_id: str, env_id: str, service_id: str) -> Service:
    service = ctx.world.services.get(service_id)
    parents = (env_id, project_id, team_id)
    if (
        service is None
        or (service.environment_id, service.project_id, service.team_id) != parents
        or not ctx.caller.sees((service_id, *parents))
    ):
        raise not_found("service")
    return service


def read_target(ctx: Ctx, fields: Fields, levels: tuple[str, ...] = LEVELS) -> Target:
    """Read `type` and the ids of that level and every level above, then find it.

    Raises 422 for missing or malformed fields and 404 when the resource is absent or
    outside the caller's reach (navigable is enough here; callers check `sees` for owned
    objects).
    """
    level = fields.choice("type", levels)
    depth = LEVELS.index(level) + 1 if level else 1
    ids = [fields.uuid(f"{name}_id") for name in LEVELS[:depth]]
    fields.done()
    team_id = ids[0]
    if level == "team":
        find_team(ctx, team_id)
        return Target(level, team_id, (team_id,))
    if level == "project":
        find_project(ctx, team_id, ids[1])
        return Target(level, ids[1], (ids[1], team_id))
    if level == "environment":
        find_environment(ctx, team_id, ids[1], ids[2])
        return Target(level, ids[2], (ids[2], ids[1], team_id))
    find_service(ctx, team_id, ids[1], ids[2], ids[3])
    return Target(level, ids[3], (ids[3], ids[2], ids[1], team_id))


def services_under(world: World, target: Target) -> list[Service]:
    """Services at or below `target`, walking the parent indices (never the whole world)."""
    if target.level == "service":
        return [world.services[target.owner_id]]
    if target.level == "environment":
        env_ids = [target.owner_id]
    elif target.level == "project":
        env_ids = list(world.environments_of.get(target.owner_id, {}))
    else:
        projects = world.projects_of.get(target.owner_id, {})
        env_ids = [e for p in projects for e in world.environments_of.get(p, {})]
    return [world.services[s] for e in env_ids for s in world.services_of.get(e, {})]
