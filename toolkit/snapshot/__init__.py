"""The snapshot store: declared Arrow schemas, an atomic writer, DuckDB views, verification.

>>> from toolkit.snapshot import Store
>>> store = Store.open("data/store")
>>> writer = store.begin(meta={"base_url": "https://api.example", "credential_name": "default"})
>>> writer.write("services", rows)
>>> writer.commit(status="complete")
>>> store.duckdb().sql("select count(*) from services_latest")
>>> store.verify().summary()

The store, the writer, verification, maintenance and retention are imported on first use:
a crawl imports this package for its schemas and has no use for deltalake, and a snapshot
never needs DuckDB (some 35 MB).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from toolkit.errors import (
    SchemaMismatchError,
    StoreError,
    StoreNotFound,
    UnsafeIdError,
    WriterStateError,
)
from toolkit.snapshot.content_hash import (
    CONTENT_HASH_VERSION,
    canonical_rows,
    chain_hash,
    content_hash,
    content_hash_of_digests,
    row_digests,
)
from toolkit.snapshot.schema import (
    SCHEMA_VERSION,
    SNAPSHOT_AT,
    SNAPSHOT_ID,
    Column,
    Table,
    UnknownTableError,
)
from toolkit.snapshot.schema_tables import SNAPSHOT_TABLES, TABLES, table
from toolkit.snapshot.snapshot_ids import id_list_literal, is_snapshot_id, new_snapshot_id
from toolkit.snapshot.snapshot_info import SnapshotInfo

if TYPE_CHECKING:
    from toolkit.snapshot.maintenance import CompactReport, GcReport, VacuumReport
    from toolkit.snapshot.retention import RetentionPolicy, RetentionReport, select_pruned
    from toolkit.snapshot.snapshot_writer import FaultHook, SnapshotMeta, SnapshotWriter
    from toolkit.snapshot.store import DEFAULT_STORE, Store
    from toolkit.snapshot.verify import ChainBreak, VerifyReport

_LAZY = {
    "ChainBreak": "toolkit.snapshot.verify",
    "CompactReport": "toolkit.snapshot.maintenance",
    "DEFAULT_STORE": "toolkit.snapshot.store",
    "FaultHook": "toolkit.snapshot.snapshot_writer",
    "GcReport": "toolkit.snapshot.maintenance",
    "RetentionPolicy": "toolkit.snapshot.retention",
    "RetentionReport": "toolkit.snapshot.retention",
    "SnapshotMeta": "toolkit.snapshot.snapshot_writer",
    "SnapshotWriter": "toolkit.snapshot.snapshot_writer",
    "Store": "toolkit.snapshot.store",
    "VacuumReport": "toolkit.snapshot.maintenance",
    "VerifyReport": "toolkit.snapshot.verify",
    "select_pruned": "toolkit.snapshot.retention",
}

__all__ = [
    "CONTENT_HASH_VERSION",
    "DEFAULT_STORE",
    "SCHEMA_VERSION",
    "SNAPSHOT_AT",
    "SNAPSHOT_ID",
    "SNAPSHOT_TABLES",
    "TABLES",
    "ChainBreak",
    "Column",
    "CompactReport",
    "FaultHook",
    "GcReport",
    "RetentionPolicy",
    "RetentionReport",
    "SchemaMismatchError",
    "SnapshotInfo",
    "SnapshotMeta",
    "SnapshotWriter",
    "Store",
    "StoreError",
    "StoreNotFound",
    "Table",
    "UnknownTableError",
    "UnsafeIdError",
    "VacuumReport",
    "VerifyReport",
    "WriterStateError",
    "canonical_rows",
    "chain_hash",
    "content_hash",
    "content_hash_of_digests",
    "id_list_literal",
    "is_snapshot_id",
    "new_snapshot_id",
    "row_digests",
    "select_pruned",
    "table",
]


def __getattr__(name: str) -> Any:
    """Import the module of ``name`` on first use (PEP 562) and keep the value here."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
