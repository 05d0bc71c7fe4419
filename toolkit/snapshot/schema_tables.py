"""The declared tables of a snapshot, one ``declare(...)`` each, in Arrow types.

Records follow part 2 of the platform specification (``docs/spec/platform-api.md``) and the
assumed shapes of ``docs/spec/api-facts.md``. Nested lists that audits query are child tables
(ports, hosts, config volumes, events, references, credential resources, webhook events),
not JSON strings. ``extra`` holds a record's unknown fields as JSON, so nothing a server
sends is lost; ``variables`` has no ``extra`` on purpose, because an unknown field of a
variable could carry its value.

No table has a column for a secret: variable values, tokens and S3 secret keys never
reach the store (see docs/design.md, "Secrets never reach the disk").
"""

from __future__ import annotations

import pyarrow as pa

from toolkit.snapshot.schema import (
    EXTRA,
    INT,
    STR,
    TS,
    Kind,
    Table,
    UnknownTableError,
    col,
    declare,
    registry,
    required,
)
from toolkit.snapshot.schema_findings import (
    CHECK_RESULTS,
    CHECK_RUNS,
    FINDING_MARKS,
    FINDINGS_TABLES,
)
from toolkit.snapshot.schema_platform import (
    ENVIRONMENTS,
    PROJECTS,
    S3_BUCKETS,
    SERVICE_GROUPS,
    SERVICE_HOSTS,
    SERVICE_PORTS,
    SERVICE_VOLUMES,
    SERVICES,
    TEAMS,
    TEMPLATES,
    VOLUMES,
    WEBHOOK_EVENTS,
    WEBHOOKS,
)
from toolkit.snapshot.schema_runtime import (
    COLLECTION_ERRORS,
    CREDENTIAL_PROBES,
    CREDENTIAL_RESOURCES,
    CREDENTIALS,
    DEPLOYMENTS,
    REPLICA_EVENTS,
    REPLICA_HEALTH,
    REPLICAS,
    VARIABLE_REFERENCES,
    VARIABLES,
)

__all__ = ["DECLARED", "FINDINGS_TABLES", "SNAPSHOTS", "SNAPSHOT_TABLES", "TABLES", "table"]

SNAPSHOTS = declare(
    "snapshots",
    "One row per committed snapshot, appended LAST: a snapshot is visible once it is here.",
    [
        required("seq", INT, "1, 2, 3...: position in the hash chain"),
        required(
            "status",
            STR,
            "complete, partial, or pruned (data removed by retention)",
            kind=Kind.TOOLKIT,
        ),
        col("started_at", TS, "when collection began"),
        col("finished_at", TS, "when the snapshot was committed"),
        col("base_url", STR, "API base URL the snapshot was collected from", kind=Kind.URL),
        col("toolkit_version", STR, kind=Kind.TOOLKIT),
        col("schema_version", INT),
        col("credential_name", STR, "configured name of the collecting credential", kind=Kind.NAME),
        col("credential_role", STR, "its role (viewer, editor, admin) when known", kind=Kind.ENUM),
        col("row_counts", pa.map_(STR, INT), "rows per table in this snapshot", kind=Kind.TOOLKIT),
        col("request_stats", STR, "request statistics as a JSON object", kind=Kind.TOOLKIT),
        required(
            "content_hash", STR, "SHA-256 over the snapshot's canonical content", kind=Kind.TOOLKIT
        ),
        col(
            "content_hash_version",
            INT,
            "definition content_hash follows (see toolkit.snapshot.content_hash); null: 1",
        ),
        col(
            "prev_hash",
            STR,
            "chain_hash of the previous snapshot (null for the first)",
            kind=Kind.TOOLKIT,
        ),
        required("chain_hash", STR, "SHA-256(prev_hash + content_hash)", kind=Kind.TOOLKIT),
        col("pruned_at", TS, "when retention removed this snapshot's data rows"),
        EXTRA,
    ],
    keys=(),
)

TABLES: dict[str, Table] = dict(
    registry(
        [
            SNAPSHOTS,
            TEAMS,
            PROJECTS,
            ENVIRONMENTS,
            SERVICES,
            SERVICE_PORTS,
            SERVICE_HOSTS,
            SERVICE_VOLUMES,
            DEPLOYMENTS,
            REPLICA_EVENTS,
            REPLICA_HEALTH,
            REPLICAS,
            VOLUMES,
            VARIABLES,
            VARIABLE_REFERENCES,
            WEBHOOKS,
            WEBHOOK_EVENTS,
            S3_BUCKETS,
            TEMPLATES,
            SERVICE_GROUPS,
            CREDENTIALS,
            CREDENTIAL_RESOURCES,
            CREDENTIAL_PROBES,
            COLLECTION_ERRORS,
        ]
    )
)

# The tables a writer fills; ``snapshots`` is written by commit() only.
SNAPSHOT_TABLES: tuple[str, ...] = tuple(name for name in TABLES if name != "snapshots")
DECLARED: dict[str, Table] = {**TABLES, **registry([CHECK_RESULTS, CHECK_RUNS, FINDING_MARKS])}
"""Every table of the store: a snapshot's (:data:`TABLES`), the findings history's
(:data:`FINDINGS_TABLES`) and ``finding_marks`` (the audit's marks kept from it): the last
two written by the audit engine, never part of a snapshot."""


def table(name: str) -> Table:
    """Return the declaration of table ``name``; unknown names list the declared ones."""
    try:
        return TABLES[name]
    except KeyError:
        raise UnknownTableError(
            f"no table named {name!r}; declared tables: {', '.join(TABLES)}"
        ) from None
