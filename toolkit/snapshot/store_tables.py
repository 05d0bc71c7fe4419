"""The store's tables as files: where each Delta table lives, how it is opened, read,
appended to and rewritten. :class:`StoreTables` is what the writer, the views,
verification, maintenance and retention work on; :class:`~toolkit.snapshot.store.Store`,
the facade users open, adds the commands over them (begin, duckdb, verify, gc, compact,
vacuum, retention), so the parts never import the facade that imports them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.compute as pc
from deltalake import CommitProperties, DeltaTable, WriterProperties, write_deltalake
from deltalake.exceptions import DeltaError, TableNotFoundError

from toolkit.errors import StoreUnavailable, storage_message
from toolkit.snapshot.schema_tables import DECLARED, FINDINGS_TABLES
from toolkit.snapshot.snapshot_ids import require_id
from toolkit.snapshot.snapshot_info import SnapshotInfo

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Mapping, Sequence

    import pyarrow.dataset as ds

__all__ = ["HISTORY_WRITTEN", "REWRITTEN", "ParquetFiles", "StoreTables", "written_as"]

# A checkpoint every 10 commits (Delta's default is 100): a snapshot is a commit per table,
# and opening a table replays every JSON commit since the last checkpoint.
_TABLE_PROPERTIES = {"delta.checkpointInterval": "10"}
# The Delta log keeps a minimum and a maximum per file of these columns only
# (Table.statistics_columns: snapshot columns, numbers, booleans, timestamps). Delta's
# default, the first 32 columns, copied names, messages and URLs into the log as plain
# JSON, where they outlive the rows that gc and retention remove.
_STATISTICS_COLUMNS = "delta.dataSkippingStatsColumns"
_ROW_GROUP = 122_880
REWRITTEN = WriterProperties(max_row_group_size=_ROW_GROUP, compression="SNAPPY")
"""How files that hold many snapshots are written (compaction, and the rewrite that deletes
snapshots): in row groups of DuckDB's own size, compressed as appends are (a
WriterProperties that names no codec writes the Parquet uncompressed: three times the
size). A query of a few snapshots (a latest-only audit, the ``_latest`` views) skips each
row group whose snapshot_id statistics cannot hold them; with Delta's default of 1,048,576
rows a group held ten snapshots of a 10,000-service world, and a latest-only audit read them
all (3.0-3.2 s against 2.4-2.5 s)."""
HISTORY_WRITTEN = WriterProperties(max_row_group_size=_ROW_GROUP, compression="ZSTD")
"""How the findings history's files are written, appended or rewritten: a judgement of a
whole store holds every snapshot, so its row groups are of DuckDB's size too, and the rows
go snapshot by snapshot (:func:`~toolkit.snapshot.findings_history.append_judgement`), so
the lifecycle's read of the judged and compared snapshots skips the others. Zstandard: in
that order a row group repeats each check's text only a few times, and Snappy left the
history of 90 snapshots of 1,000 services twice its size (54 MB against 29)."""


@dataclass(frozen=True)
class ParquetFiles:
    """A table's rows as plain Parquet files, and the columns those files have."""

    paths: Sequence[str]
    columns: frozenset[str]


class StoreTables:
    """The Delta tables under one root (a folder or an S3 prefix)."""

    def __init__(self, root: str, storage_options: Mapping[str, str]) -> None:
        self._root = root.rstrip("/")
        self._options = dict(storage_options)
        self._prepared: set[str] = set()  # tables known to carry _table_properties

    @property
    def url(self) -> str:
        """Where the store lives (never includes credentials)."""
        return self._root

    def __repr__(self) -> str:
        return f"Store({self._root!r})"

    def table_uri(self, name: str) -> str:
        """Location of table ``name``'s Delta table."""
        if name not in DECLARED:
            raise KeyError(f"no table named {name!r}")
        return f"{self._root}/{name}"

    def snapshots(self) -> list[SnapshotInfo]:
        """Every snapshot row (complete, partial and pruned), oldest first (chain order)."""
        rows = self._snapshot_rows().sort_by("seq").to_pylist()
        return [SnapshotInfo.from_row(r) for r in rows]

    # --- shared by the writer, views, verification and maintenance ------------------------
    def _delta(self, name: str) -> DeltaTable | None:
        # Not DeltaTable.is_deltatable(): it holds the GIL during its S3 calls, which
        # deadlocks against an in-process S3 server (moto in the tests).
        try:
            return DeltaTable(self.table_uri(name), storage_options=self._options or None)
        except TableNotFoundError:
            return None
        except (OSError, DeltaError) as exc:  # no route, no credentials, no permission
            raise StoreUnavailable(
                f"cannot open {self.table_uri(name)}: {storage_message(exc)}; check the store "
                "URL and its credentials (for S3: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, "
                "AWS_REGION, AWS_ENDPOINT_URL) or the folder's permissions"
            ) from exc

    def _dataset(self, name: str) -> ds.Dataset | None:
        delta = self._delta(name)
        if delta is None:
            return None
        if self._plain_files(delta):  # its files as they are: no Delta partition expressions
            import pyarrow.dataset as pads

            schema = DECLARED[name].arrow_schema  # see _as_dataset
            return pads.dataset(list(delta.file_uris()), schema=schema, format="parquet")
        return _as_dataset(delta, name)

    def _plain_files(self, delta: DeltaTable) -> bool:
        """Whether the table's active files, read as they are, are its rows: a local,
        unpartitioned table using no Delta reader feature (deletion vectors, column
        mapping). S3 would need DuckDB's httpfs extension (downloaded at run time: never
        here), so S3 tables are read through Delta's own reader."""
        return (
            "://" not in self._root
            and delta.protocol().min_reader_version <= 1
            and not delta.metadata().partition_columns
        )

    def _source(
        self,
        name: str,
        snapshot_ids: Collection[str] | None = None,
        opened: Mapping[str, DeltaTable | None] | None = None,
    ) -> ParquetFiles | ds.Dataset | None:
        """What the views read table ``name`` from: its plain Parquet files when DuckDB can
        read them itself (a local table using no Delta reader feature), else its dataset.

        With ``snapshot_ids``, files whose statistics show they hold none of them are left
        out (a file without statistics is kept). ``opened``: tables already opened (their
        log read, a missing one None), by name; a table it does not name is opened here.
        """
        delta = opened[name] if opened is not None and name in opened else self._delta(name)
        if delta is None:
            return None
        if not self._plain_files(delta):
            return _as_dataset(delta, name)
        columns = frozenset(field.name for field in delta.schema().fields)
        if snapshot_ids is None:
            return ParquetFiles(tuple(delta.file_uris()), columns)
        return ParquetFiles(_files_holding(delta, self.table_uri(name), snapshot_ids), columns)

    def _ensure_properties(self, name: str, delta: DeltaTable | None = None) -> None:
        """Give table ``name`` (opened as ``delta``, when the caller has it) this toolkit's
        properties if it was created without them: a checkpoint every 10 commits, and
        statistics on no column of strings. Files written from then on follow them."""
        if name in self._prepared:
            return
        delta = delta or self._delta(name)
        if delta is None:
            return  # the first append creates it, with the properties
        wanted = _table_properties(name)
        if not wanted.items() <= delta.metadata().configuration.items():
            delta.alter.set_table_properties(wanted)
        self._prepared.add(name)

    def _read(self, name: str, **kwargs: Any) -> pa.Table:
        dataset = self._dataset(name)
        if dataset is None:
            return DECLARED[name].arrow_schema.empty_table()
        return dataset.to_table(**kwargs)

    def _append(self, name: str, data: pa.Table, snapshot_id: str) -> None:
        self._ensure_properties(name)
        # a snapshot's files hold one snapshot each: Delta's defaults
        written: dict[str, Any] = {"writer_properties": HISTORY_WRITTEN}
        write_deltalake(
            self.table_uri(name),
            data,
            mode="append",
            schema_mode="merge",
            configuration=_table_properties(name),  # used when the append creates the table
            storage_options=self._options or None,
            commit_properties=CommitProperties(
                custom_metadata={"platform_audit.snapshot_id": snapshot_id}
            ),
            **(written if name in FINDINGS_TABLES else {}),
        )

    def _overwrite(self, name: str, data: pa.Table | pa.RecordBatchReader) -> None:
        """Replace table ``name``'s content in one atomic Delta commit."""
        self._ensure_properties(name)
        write_deltalake(
            self.table_uri(name),
            data,
            mode="overwrite",
            storage_options=self._options or None,
            writer_properties=written_as(name),
            commit_properties=CommitProperties(custom_metadata={"platform_audit.op": "rewrite"}),
        )

    def _delete_rows(self, name: str, column: str, ids: Iterable[str]) -> int:
        """Remove every row of table ``name`` whose ``column`` (a snapshot or run id) is one
        of ``ids`` (each a well-formed id), in one atomic rewrite; returns the rows removed."""
        wanted = sorted({require_id(sid) for sid in ids})
        dataset = self._dataset(name)
        if dataset is None or not wanted:
            return 0
        doomed = pc.field(column).isin(wanted)
        count = int(dataset.count_rows(filter=doomed))
        if count:
            self._overwrite(name, dataset.scanner(filter=~doomed).to_reader())
        return count

    def _snapshot_rows(self) -> pa.Table:
        return self._read("snapshots")

    def _last_link(self) -> tuple[int, str] | None:
        """(seq, chain_hash) of the newest snapshot row, or None for an empty store."""
        rows = self._read("snapshots", columns=["seq", "chain_hash"])
        if rows.num_rows == 0:
            return None
        last = rows.sort_by([("seq", "descending")]).slice(0, 1).to_pylist()[0]
        return int(last["seq"]), str(last["chain_hash"])


def written_as(name: str) -> WriterProperties:
    """How a rewrite (compaction, deletion) writes table ``name``'s files."""
    return HISTORY_WRITTEN if name in FINDINGS_TABLES else REWRITTEN


def _table_properties(name: str) -> dict[str, str]:
    """The Delta table properties of table ``name``."""
    columns = ",".join(DECLARED[name].statistics_columns)
    return {**_TABLE_PROPERTIES, _STATISTICS_COLUMNS: columns}


def _as_dataset(delta: DeltaTable, name: str) -> ds.Dataset:
    # Read with the declared schema: files rewritten by Delta deletes and updates store
    # strings as string_view, which breaks DuckDB's filter pushdown into the dataset;
    # columns a newer declaration added read as null from older files.
    return delta.to_pyarrow_dataset(schema=DECLARED[name].arrow_schema)


def _files_holding(delta: DeltaTable, root: str, snapshot_ids: Collection[str]) -> tuple[str, ...]:
    """Paths of the files of ``delta`` (a local table at ``root``) that may hold rows of
    ``snapshot_ids``, by the snapshot_id minimum and maximum the Delta log keeps per file."""
    actions = pa.table(delta.get_add_actions(flatten=True))
    wanted = sorted(set(snapshot_ids))
    chosen = []
    names = actions.column_names
    low = actions.column("min.snapshot_id").to_pylist() if "min.snapshot_id" in names else None
    high = actions.column("max.snapshot_id").to_pylist() if "max.snapshot_id" in names else None
    for i, path in enumerate(actions.column("path").to_pylist()):
        lo = low[i] if low is not None else None
        hi = high[i] if high is not None else None
        if lo is None or hi is None or any(lo <= sid <= hi for sid in wanted):
            chosen.append(f"{root}/{unquote(path)}")
    return tuple(chosen)
