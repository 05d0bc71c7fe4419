"""Which tables a snapshot's collection left short, from its ``collection_errors`` rows.

A failed call (any error but the credential's "not visible" 404) may have left out the rows
of the tables its endpoint fills (:data:`ENDPOINT_TABLES`); a failed listing of the
hierarchy, everything below it. A table left short that holds no row at all was not
collected: its 0 says nothing about the platform, so every output says "not collected"
instead. Example::

    not_collected([("volumes.list", None)], {"volumes": 0, "services": 12})   # ['volumes']
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from toolkit.snapshot.schema_tables import SNAPSHOT_TABLES

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

__all__ = ["ENDPOINT_TABLES", "NOT_COLLECTED", "not_collected", "recorded_not_collected"]

ENDPOINT_TABLES: dict[str, tuple[str, ...]] = {
    "users.me": ("credentials", "credential_resources"),
    "templates.list": ("templates",),
    "buckets.list": ("s3_buckets",),
    "service_groups.list": ("service_groups",),
    "deployments.list": ("deployments", "replica_events"),
    "replicas.list": ("replicas", "replica_events"),
    "replicas.health": ("replica_health", "replicas", "replica_events"),
    "volumes.list": ("volumes",),
    "variables.list": ("variables", "variable_references"),
    "webhooks.list": ("webhooks", "webhook_events"),
}
"""The tables a failed call of each endpoint (``collection_errors.endpoint``) leaves short.
A listing of the hierarchy (teams, projects, environments, services) or an endpoint not
named here leaves every table short: what hangs below it was never asked for."""

NOT_COLLECTED = "not collected"
"""What outputs show instead of a row count of 0 for a table :func:`not_collected` names."""

# Not filled by the crawl's reads of the platform: the errors themselves, and the probes
# of verified mode (none in other snapshots).
_NOT_CRAWLED = frozenset({"collection_errors", "credential_probes"})


def tables_short(endpoint: str, table_name: str | None) -> tuple[str, ...]:
    """The tables one failed call left short (a schema drift names its own table)."""
    return (table_name,) if table_name else ENDPOINT_TABLES.get(endpoint, SNAPSHOT_TABLES)


def not_collected(
    failures: Iterable[tuple[str, str | None]], row_counts: Mapping[str, int]
) -> list[str]:
    """The tables with no row that a failed call left short, sorted.

    ``failures`` are ``(endpoint, table_name)`` of the ``collection_errors`` rows that are
    failures (``not_visible`` false); ``row_counts`` the snapshot's rows per table.
    """
    short: set[str] = set()
    for endpoint, table_name in failures:
        short.update(tables_short(endpoint, table_name))
    return sorted(t for t in short - _NOT_CRAWLED if not row_counts.get(t))


def recorded_not_collected(extra: str | Mapping[str, Any] | None) -> tuple[str, ...] | None:
    """The tables a ``snapshots`` row's ``extra`` records as not collected; None when the
    snapshot was taken before the toolkit recorded them."""
    if isinstance(extra, str):
        try:
            extra = json.loads(extra)
        except ValueError:
            return None
    found = extra.get("not_collected") if isinstance(extra, dict) else None
    return tuple(str(t) for t in found) if isinstance(found, list) else None
