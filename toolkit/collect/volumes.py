"""Volumes, listed per environment (or per project or team: `/volumes/list` takes a level).

>>> rows = map_volumes(client.list_volumes("environment", team_id=t,       # doctest: +SKIP
...                    project_id=p, environment_id=e), owner=Owner(t, p, e))
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolkit.collect.conform import Conformer, Owner, extra_json, unknown_fields

if TYPE_CHECKING:
    from collections.abc import Sequence

    from toolkit.collect.conform import Rows

__all__ = ["ENDPOINT", "map_volumes"]

ENDPOINT = "volumes.list"
_COLUMNS: tuple[str, ...] = (
    "id",
    "name",
    "mount_path",
    "capacity_gb",
    "requested_gb",
    "used_gb",
    "type",
    "status",
    "mount_status",
    "is_database",
    "description",
    "mounted_on_service_id",
    "can_delete",
    "is_available",
    "is_deleting",
    "is_pending_resize",
    "created_at",
)
_IDS = ("team_id", "project_id", "environment_id")


def map_volumes(payload: Sequence[dict[str, Any]], *, owner: Owner) -> Rows:
    """`/volumes/list` -> `volumes` rows; ids a volume carries fill what `owner` leaves open."""
    conformer = Conformer(ENDPOINT, owner)
    asked = owner.columns()
    records = (
        {
            **{k: item.get(k) for k in _COLUMNS},
            **{k: asked[k] or item.get(k) for k in _IDS},
            "extra": extra_json(unknown_fields(item, (*_COLUMNS, *_IDS))),
        }
        for item in payload
    )
    return {
        "volumes": conformer.rows("volumes", records),
        "collection_errors": conformer.drift_rows(),
    }
