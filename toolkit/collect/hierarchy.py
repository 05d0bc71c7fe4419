"""Teams, projects and environments: the hierarchy every other collector hangs from.

Their record shapes are not shown by the specification (docs/spec/api-facts.md assumes `id`, `name`,
`description`, `created_at` and the parent ids); everything else is kept in `extra`.

>>> from toolkit.api import PlatformClient                     # doctest: +SKIP
>>> rows = map_teams(client.list_teams())                       # doctest: +SKIP
>>> rows["teams"][0]["name"]                                    # doctest: +SKIP
'Core'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolkit.collect.conform import Conformer, Owner, extra_json, unknown_fields

if TYPE_CHECKING:
    from collections.abc import Sequence

    from toolkit.collect.conform import Rows

__all__ = ["map_environments", "map_projects", "map_teams"]

_COMMON = ("id", "name", "description", "created_at")


def map_teams(payload: Sequence[dict[str, Any]]) -> Rows:
    """`/teams/list` -> `teams` rows."""
    conformer = Conformer("teams.list", Owner())
    rows = conformer.rows("teams", (_values(item, {}) for item in payload))
    return {"teams": rows, "collection_errors": conformer.drift_rows()}


def map_projects(payload: Sequence[dict[str, Any]], *, team_id: str) -> Rows:
    """`/projects/list?team_id=` -> `projects` rows."""
    conformer = Conformer("projects.list", Owner(team_id=team_id))
    rows = conformer.rows("projects", (_values(item, {"team_id": team_id}) for item in payload))
    return {"projects": rows, "collection_errors": conformer.drift_rows()}


def map_environments(payload: Sequence[dict[str, Any]], *, team_id: str, project_id: str) -> Rows:
    """`/environments/list?team_id=&project_id=` -> `environments` rows."""
    owner = Owner(team_id=team_id, project_id=project_id)
    conformer = Conformer("environments.list", owner)
    parents = {"team_id": team_id, "project_id": project_id}
    rows = conformer.rows("environments", (_values(item, parents) for item in payload))
    return {"environments": rows, "collection_errors": conformer.drift_rows()}


def _values(item: dict[str, Any], parents: dict[str, str]) -> dict[str, Any]:
    """Known members as columns; the parent ids asked for win over any in the record."""
    values = {key: item.get(key) for key in _COMMON}
    values.update(parents)
    values["extra"] = extra_json(unknown_fields(item, (*_COMMON, *parents)))
    return values
