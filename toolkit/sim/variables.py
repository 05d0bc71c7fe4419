"""Variables at the four levels: reference resolution, redaction, upsert and delete (spec 2.8).

A value may hold `${{team.KEY}}`, `${{project.KEY}}`, `${{environment.KEY}}` or
`${{service.<id>.KEY}}`; each is resolved against the owner's own ancestors (or the named
service) when listed. Viewers get the same shape with every value nulled and
`values_redacted: true`. A service's `protected` names refuse change and delete (403).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from toolkit.sim.errors import ApiError, forbidden
from toolkit.sim.world import Variable, World, iso

if TYPE_CHECKING:
    from datetime import datetime

__all__ = ["delete_variables", "upsert_variables", "variables_payload"]

_REFERENCE = re.compile(
    r"\$\{\{\s*(team|project|environment|service\.([0-9a-fA-F-]{36}))\.([A-Za-z0-9_.-]+)\s*\}\}"
)
_MAX_DEPTH = 3


def variables_payload(world: World, level: str, owner_id: str, values: bool) -> dict[str, Any]:
    """`{values_redacted, variables}` for one owner, sorted by name."""
    owned = world.variables.get((level, owner_id), {})
    items = [_variable_json(world, level, owner_id, v, values) for _, v in sorted(owned.items())]
    return {"values_redacted": not values, "variables": items}


def _context(world: World, level: str, owner_id: str) -> dict[str, str]:
    """Ids of the owner's ancestors by level, for resolving level references."""
    chain = world.owner_chain(level, owner_id)
    levels = ("service", "environment", "project", "team")
    start = levels.index(level)
    return dict(zip(levels[start:], chain, strict=False))


def _variable_json(
    world: World, level: str, owner_id: str, variable: Variable, values: bool
) -> dict[str, Any]:
    refs, resolved = _resolve(world, level, owner_id, variable.value, depth=0)
    if not values:
        for ref in refs:
            ref["resolved_value"] = None
    return {
        "name": variable.name,
        "type": level,
        "value": variable.value if values else None,
        "resolved_value": resolved if values else None,
        "provided": variable.provided,
        "updates": [iso(moment) for moment in variable.updates],
        "references": refs,
    }


def _resolve(
    world: World, level: str, owner_id: str, value: str, depth: int
) -> tuple[list[dict[str, Any]], str]:
    """References found in `value` and the value with resolved ones substituted."""
    context = _context(world, level, owner_id)
    refs: list[dict[str, Any]] = []

    def substitute(match: re.Match[str]) -> str:
        source_type = "service" if match.group(2) else match.group(1)
        source_id = (match.group(2) or context.get(source_type, "")).lower()
        target = world.variables.get((source_type, source_id), {}).get(match.group(3))
        resolved_value = None
        if target is not None and depth < _MAX_DEPTH:
            _, resolved_value = _resolve(world, source_type, source_id, target.value, depth + 1)
        refs.append(
            {
                "key": match.group(3),
                "resolved": resolved_value is not None,
                "resolved_value": resolved_value,
                "source_icon": "",
                "source_id": source_id or None,
                "source_name": _source_name(world, source_type, source_id),
                "source_type": source_type,
                "token": match.group(0),
            }
        )
        return match.group(0) if resolved_value is None else resolved_value

    return refs, _REFERENCE.sub(substitute, value)


def _source_name(world: World, level: str, source_id: str) -> str:
    records: dict[str, Any] = {
        "team": world.teams,
        "project": world.projects,
        "environment": world.environments,
        "service": world.services,
    }
    record = records[level].get(source_id)
    return str(record.name) if record is not None else ""


def _refuse_protected(world: World, level: str, owner_id: str, names: list[str], verb: str) -> None:
    if level != "service":
        return
    protected = set(world.services[owner_id].protected)
    hit = [name for name in names if name in protected]
    if hit:
        raise forbidden(
            f"Variable {', '.join(hit)} is protected: the service manages it, so it cannot be "
            f"{verb}"
        )


def upsert_variables(
    world: World, level: str, owner_id: str, pairs: list[tuple[str, str]], now: datetime
) -> None:
    """Create or change each (name, value); refuses the whole request on a protected name."""
    _refuse_protected(world, level, owner_id, [name for name, _ in pairs], "changed")
    owned = world.variables_at(level, owner_id)
    for name, value in pairs:
        existing = owned.get(name)
        if existing is None:
            owned[name] = Variable(name, value, [now])
        elif existing.value != value:
            existing.value = value
            existing.updates.append(now)


def delete_variables(world: World, level: str, owner_id: str, names: list[str]) -> None:
    """Delete by name; refuses the whole request on a protected or unknown name."""
    _refuse_protected(world, level, owner_id, names, "deleted")
    owned = world.variables_at(level, owner_id)
    unknown = [name for name in names if name not in owned]
    if unknown:
        raise ApiError(404, "not_found", f"Variable {', '.join(unknown)} does not exist")
    for name in dict.fromkeys(names):  # a name listed twice is deleted once
        del owned[name]
