"""The snapshot store: declared Arrow schemas, an atomic writer, DuckDB views, verification.

>>> from toolkit.snapshot import Store
>>> store = Store.open("data/store")
>>> writer = store.begin(meta={"base_url": "https://api.example", "credential_name": "default"})
>>> writer.write("services", rows)
>>> writer.commit(status="complete")
>>> store.duckdb().sql("select count(*) from services_latest")
>>> store.verify().summary()
"""

from __future__ import annotations

from toolkit.errors import SchemaMismatchError, StoreError, UnsafeIdError, WriterStateError
from toolkit.snapshot.content_hash import canonical_rows, chain_hash, content_hash
from toolkit.snapshot.maintenance import CompactReport, GcReport, VacuumReport
from toolkit.snapshot.retention import RetentionPolicy, RetentionReport, select_pruned
from toolkit.snapshot.schema import (
    SCHEMA_VERSION,
    SNAPSHOT_AT,
    SNAPSHOT_ID,
    Column,
    Table,
    UnknownTableError,
)
from toolkit.snapshot.schema_tables import SNAPSHOT_TABLES, TABLES, table
from toolkit.snapshot.snapshot_ids import is_snapshot_id, new_snapshot_id
from toolkit.snapshot.snapshot_info import SnapshotInfo
from toolkit.snapshot.snapshot_writer import FaultHook, SnapshotMeta, SnapshotWriter
from toolkit.snapshot.store import DEFAULT_STORE, Store
from toolkit.snapshot.verify import ChainBreak, VerifyReport

__all__ = [
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
    "Table",
    "UnknownTableError",
    "UnsafeIdError",
    "VacuumReport",
    "VerifyReport",
    "WriterStateError",
    "canonical_rows",
    "chain_hash",
    "content_hash",
    "is_snapshot_id",
    "new_snapshot_id",
    "select_pruned",
    "table",
]
