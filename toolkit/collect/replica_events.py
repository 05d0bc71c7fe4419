"""Replica events (OOM kills, crash loops, image pulls...) wherever the API shows them.

They come inside deployments (`replica_events`, `source = deployment`) and inside replicas
of `/replicas/list` and `/replicas/health` (`events`, `source = replica`). The same event
seen twice merges on the table's key in the crawl.

>>> rows = event_rows(conformer, deployment["replica_events"], owner,      # doctest: +SKIP
...                   source="deployment", deployment_id=deployment["id"])
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence

    from toolkit.collect.conform import Conformer, Owner, Row

__all__ = ["event_rows"]

_FIELDS = ("type", "reason", "message", "count", "first_seen", "last_seen", "timestamp")


def event_rows(
    conformer: Conformer,
    events: Sequence[dict[str, Any]],
    owner: Owner,
    *,
    source: str,
    deployment_id: str | None = None,
    replica_name: str | None = None,
) -> list[Row]:
    """`replica_events` rows for the events of one deployment or one replica."""
    base = {
        **owner.columns(),
        "source": source,
        "deployment_id": deployment_id,
        "replica_name": replica_name,
    }
    return conformer.rows(
        "replica_events", ({**base, **{k: e.get(k) for k in _FIELDS}} for e in events)
    )
