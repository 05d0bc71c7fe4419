"""Templates: a summary of each deployable blueprint.

The definition is summarised (required capabilities, number of services); its inputs and
services, with their variable values and generators, are not stored.

>>> rows = map_templates(client.list_templates())                # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolkit.collect.conform import Conformer, Owner, extra_json, unknown_fields

if TYPE_CHECKING:
    from collections.abc import Sequence

    from toolkit.collect.conform import Rows

__all__ = ["ENDPOINT", "map_templates"]

ENDPOINT = "templates.list"
_COLUMNS: tuple[str, ...] = ("id", "name", "description", "version", "immutable", "display_rank")
_COLUMNS += ("keywords", "created_at")
_KNOWN = (*_COLUMNS, "icon", "resource_recommendations", "definition")


def map_templates(payload: Sequence[dict[str, Any]]) -> Rows:
    """`/templates/list` -> `templates` rows."""
    conformer = Conformer(ENDPOINT, Owner())
    rows = []
    for item in payload:
        definition = conformer.obj(item, "definition", "templates")
        recommended = conformer.obj(item, "resource_recommendations", "templates")
        services = conformer.objs(definition, "services", "templates.definition")
        values = {
            **{k: item.get(k) for k in _COLUMNS},
            "required_capabilities": definition.get("required_capabilities"),
            "service_count": len(services) if "services" in definition else None,
            "minimum_recommended_cpu": recommended.get("minimum_recommended_cpu"),
            "minimum_recommended_ram_gb": recommended.get("minimum_recommended_ram_gb"),
            "extra": extra_json(unknown_fields(item, _KNOWN)),
        }
        rows.append(values)
    return {
        "templates": conformer.rows("templates", rows),
        "collection_errors": conformer.drift_rows(),
    }
