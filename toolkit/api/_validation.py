"""Local checks run before any request, so a bad call fails fast and names its field."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from toolkit.api._exceptions import InvalidRequest

LEVELS = ("team", "project", "environment", "service")
"""The hierarchy, top first: team > project > environment > service."""
WEBHOOK_LEVELS = ("team", "project")
VOLUME_LEVELS = ("team", "project", "environment")
_ID_FIELDS = ("team_id", "project_id", "environment_id", "service_id")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def require_uuid(field: str, value: object) -> str:
    """Return `value` if it is a UUID string, else raise `InvalidRequest` naming `field`."""
    if not isinstance(value, str) or not _UUID.fullmatch(value):
        raise InvalidRequest(field, f"must be a UUID (8-4-4-4-12 hex digits), got {_show(value)}")
    return value


@dataclass(frozen=True, slots=True)
class Scope:
    """A level of the hierarchy with the ids that locate it (the `type` + ids of part 4).

    Build it with `Scope.of(...)`, which applies the `/variables/delete` rules: `team_id`
    always; `project_id` for project, environment and service; `environment_id` for
    environment and service; `service_id` for service; no id below the level.

    >>> Scope.of("team", team_id="8a4e8f5c-0000-4000-8000-000000000001").params()
    {'type': 'team', 'team_id': '8a4e8f5c-0000-4000-8000-000000000001'}
    """

    level: str
    team_id: str
    project_id: str | None = None
    environment_id: str | None = None
    service_id: str | None = None

    @classmethod
    def of(
        cls,
        level: str,
        *,
        team_id: str,
        project_id: str | None = None,
        environment_id: str | None = None,
        service_id: str | None = None,
        allowed: Sequence[str] = LEVELS,
    ) -> Scope:
        """Validate and build a scope; `allowed` narrows the levels an endpoint accepts."""
        if level not in allowed:
            raise InvalidRequest(
                "level",
                f"must be one of {', '.join(allowed)} (the `type` value), got {_show(level)}",
            )
        ids = dict(zip(_ID_FIELDS, (team_id, project_id, environment_id, service_id), strict=True))
        depth = LEVELS.index(level)
        for index, name in enumerate(_ID_FIELDS):
            if index <= depth and ids[name] is None:
                raise InvalidRequest(name, f"is required for level {level!r}")
            if index > depth and ids[name] is not None:
                raise InvalidRequest(
                    name, f"is not allowed for level {level!r}: use level {LEVELS[index]!r}"
                )
            if ids[name] is not None:
                require_uuid(name, ids[name])
        return cls(level, team_id, project_id, environment_id, service_id)

    def ids(self) -> dict[str, str]:
        """The ids that are set, by field name."""
        values = (self.team_id, self.project_id, self.environment_id, self.service_id)
        return {name: v for name, v in zip(_ID_FIELDS, values, strict=True) if v is not None}

    def params(self) -> dict[str, str]:
        """The `type` and the ids, as sent in a query or a JSON body."""
        return {"type": self.level, **self.ids()}


def require_ids(**ids: str) -> dict[str, str]:
    """Check that every given id is a UUID; return them as a dict, in order."""
    return {name: require_uuid(name, value) for name, value in ids.items()}


def check_per_page(per_page: object) -> int:
    """`per_page` must be an int from 1 to 100 (docs/spec/api-facts.md)."""
    if isinstance(per_page, bool) or not isinstance(per_page, int) or not 1 <= per_page <= 100:
        raise InvalidRequest("per_page", f"must be an integer from 1 to 100, got {_show(per_page)}")
    return per_page


def check_limit(limit: object) -> int | None:
    """`limit` is None (no limit) or a positive int."""
    if limit is None:
        return None
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InvalidRequest("limit", f"must be a positive integer or None, got {_show(limit)}")
    return limit


def check_cursor(cursor: object) -> str | None:
    """A cursor is None or the non-empty string a previous page returned."""
    if cursor is None or (isinstance(cursor, str) and cursor):
        return cursor
    raise InvalidRequest("cursor", f"must be a non-empty string or None, got {_show(cursor)}")


def check_names(names: object) -> list[str]:
    """Variable names to delete: a non-empty list of non-empty strings."""
    if isinstance(names, str) or not isinstance(names, Sequence):
        raise InvalidRequest("names", "must be a list of variable names, not a single string")
    if not names:
        raise InvalidRequest("names", "must name at least one variable")
    for name in names:
        if not isinstance(name, str) or not name:
            raise InvalidRequest("names", f"must hold non-empty strings, got {_show(name)}")
    return list(names)


def check_variables(variables: object) -> list[dict[str, str]]:
    """Variables to upsert: a non-empty name -> value mapping. Values are never echoed."""
    if not isinstance(variables, Mapping) or not variables:
        raise InvalidRequest("variables", "must be a non-empty mapping of name to value")
    for name, value in variables.items():
        if not isinstance(name, str) or not name:
            raise InvalidRequest("variables", f"names must be non-empty strings, got {_show(name)}")
        if not isinstance(value, str):
            raise InvalidRequest("variables", f"the value of {name!r} must be a string")
    return [{"name": name, "value": value} for name, value in variables.items()]
