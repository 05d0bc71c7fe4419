"""S3-compatible buckets of each team. The API never returns the secret key; the access key
ID is stored as `access_key_id`, and an unknown field named like a secret keeps its name
only (see `extra_json`).

>>> rows = map_buckets(client.list_buckets(t), team_id=t)        # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolkit.collect.conform import Conformer, Owner, extra_json, unknown_fields

if TYPE_CHECKING:
    from collections.abc import Sequence

    from toolkit.collect.conform import Rows

__all__ = ["ENDPOINT", "map_buckets"]

ENDPOINT = "buckets.list"
_COLUMNS = ("id", "name", "endpoint", "region", "bucket", "created_at", "updated_at")


def map_buckets(payload: Sequence[dict[str, Any]], *, team_id: str) -> Rows:
    """`/storage/s3/list?team_id=` -> `s3_buckets` rows."""
    conformer = Conformer(ENDPOINT, Owner(team_id=team_id))
    records = (
        {
            **{k: item.get(k) for k in _COLUMNS},
            "team_id": team_id,
            "access_key_id": item.get("access_key"),
            "extra": extra_json(unknown_fields(item, (*_COLUMNS, "access_key", "team_id"))),
        }
        for item in payload
    )
    return {
        "s3_buckets": conformer.rows("s3_buckets", records),
        "collection_errors": conformer.drift_rows(),
    }
