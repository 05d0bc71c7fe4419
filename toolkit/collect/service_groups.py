"""Service groups of each environment.

>>> rows = map_service_groups(client.list_service_groups(t, p, e),       # doctest: +SKIP
...                           owner=Owner(t, p, e))
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolkit.collect.conform import Conformer, Owner, extra_json, unknown_fields

if TYPE_CHECKING:
    from collections.abc import Sequence

    from toolkit.collect.conform import Rows

__all__ = ["ENDPOINT", "map_service_groups"]

ENDPOINT = "service_groups.list"
_COLUMNS = ("id", "name", "description", "icon", "template_id", "created_at")


def map_service_groups(payload: Sequence[dict[str, Any]], *, owner: Owner) -> Rows:
    """`/service_groups/list` of one environment -> `service_groups` rows."""
    conformer = Conformer(ENDPOINT, owner)
    ids = {k: v for k, v in owner.columns().items() if k != "service_id"}
    records = (
        {
            **{k: item.get(k) for k in _COLUMNS},
            **ids,
            "extra": extra_json(unknown_fields(item, (*_COLUMNS, "environment_id"))),
        }
        for item in payload
    )
    return {
        "service_groups": conformer.rows("service_groups", records),
        "collection_errors": conformer.drift_rows(),
    }
