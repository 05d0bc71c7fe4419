"""The findings history an audit reads: the store's, brought up to date first.

:meth:`History.bring_up_to_date` judges every committed snapshot that the current version
of a check has not judged (:mod:`toolkit.audit.judge`), appends the rows to the store's
findings history (:func:`~toolkit.snapshot.findings_history.append_judgement`), and
registers ``audit_results``: the history's rows of the audit's check versions, which the
lifecycle reads. A connection that is not a store's (a fixture's, a notebook's
``store.duckdb()``) gets what its history lacks judged in memory; a latest-only audit
judges its few snapshots in memory and reads no history. A store the audit cannot write to
(read-only credentials) is audited all the same, the new rows in memory, and
``warnings`` says so.

Many snapshots (a store written by an older toolkit, a changed check's history) are judged
in batches (:class:`Batches`) of about :data:`JUDGE_BATCH_ROWS` rows: each is appended as
a run of its own and released before the next, and the lifecycle reads them from the
store's files, so the judging's memory does not grow with the history, and a judging that
stops keeps what it appended. The checks that read the whole history (``history: all``)
are sized on their own: they give few rows a snapshot but read everything at each batch,
so they take as many snapshots as the budget allows, and the others fill the rest. Example::

    history = History.open(store, production=None, latest_only=False)
    history.bring_up_to_date(catalogue, committed_snapshots(history.con), None)
    history.con.sql("select count(*) from audit_results")
"""

from __future__ import annotations

import sys
from contextlib import contextmanager, nullcontext
from typing import TYPE_CHECKING

import duckdb
import pyarrow as pa
from deltalake.exceptions import DeltaError

from toolkit.audit.check_run import confine, install_views, production_pattern, set_production
from toolkit.audit.findings import SnapshotRef
from toolkit.audit.judge import judge, judged_pairs, unjudged, versioned
from toolkit.audit.snapshots_chosen import reach, select_snapshots
from toolkit.errors import StoreUnavailable
from toolkit.snapshot import Store
from toolkit.snapshot.findings_history import append_judgement
from toolkit.snapshot.views import (
    VISIBLE_STATUSES,
    attach_findings,
    connect,
    open_tables,
    store_read_failure,
    store_unreadable,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterator, Mapping, Sequence

    from deltalake import DeltaTable

    from toolkit.audit.catalogue import Catalogue
    from toolkit.audit.check_file import CheckSpec
    from toolkit.audit.judge import Versioned

__all__ = ["JUDGE_BATCH_ROWS", "Batches", "History", "store_reads"]

JUDGE_BATCH_ROWS = 500_000
"""About how many ``check_results`` rows a batch holds (a batch is never less than one
snapshot of each check). A row is about 0.5 KB in Arrow (reason and evidence are text);
judging and appending a batch take a few times that (``benchmarks/audit.py`` reports the
first judgement's peak memory)."""


@contextmanager
def store_reads() -> Iterator[None]:
    """Reading the store: a DuckDB error that is the store's files failing becomes
    :class:`StoreUnavailable`."""
    try:
        yield
    except duckdb.Error as exc:
        if store_read_failure(exc):
            raise store_unreadable("the audit", exc) from exc
        raise


class History:
    """An audit's connection and the findings history it reads (:meth:`open`)."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        store: Store | None = None,
        rows: pa.Table | None = None,
        production: str | None = None,
        tables: Mapping[str, DeltaTable | None] | None = None,
    ) -> None:
        self.con = con
        self._store, self._rows, self._production = store, rows, production
        self._tables = tables
        self.own = rows is not None  # the connection is the audit's, used by nothing else
        self.timings: dict[str, float] = {}
        self.judged: dict[str, int] = {}
        """Per check id, how many snapshots this audit judged (the rest it read)."""
        self.warnings: list[str] = []

    @classmethod
    def open(
        cls,
        source: Store | duckdb.DuckDBPyConnection,
        production: str | None,
        latest_only: bool,
        snapshot: str | None = None,
        compare_to: str | None = None,
    ) -> History:
        """The audit's connection: a caller's as it is; a store's over every snapshot, or
        for a latest-only audit over the files of the snapshots it reads. Its tables are
        opened once: :meth:`_opener` picks files from them, reading no Delta log again."""
        if not isinstance(source, Store):
            return cls(source)
        rows = source._snapshot_rows()  # read once: every connection gets the same table
        if not latest_only:
            tables = open_tables(source)
            return cls(connect(source, None, rows, tables), source, rows, production, tables)
        committed = sorted(
            (
                SnapshotRef(
                    str(r["snapshot_id"]), int(r["seq"]), r["snapshot_at"], str(r["status"])
                )
                for r in rows.select(["snapshot_id", "seq", "snapshot_at", "status"]).to_pylist()
                if r["status"] in VISIBLE_STATUSES
            ),
            key=lambda s: s.seq,
        )
        target, compare = select_snapshots(committed, snapshot, compare_to)
        ids = [s.snapshot_id for s in reach(committed, target, compare)]
        return cls(connect(source, ids, rows), None, rows, production)

    def bring_up_to_date(
        self,
        catalogue: Catalogue,
        committed: Sequence[SnapshotRef],
        read: Sequence[SnapshotRef] | None,
    ) -> None:
        """Judge what the history lacks of ``committed`` (only ``read``, kept nowhere, in a
        latest-only audit) and register ``audit_results``."""
        checks = versioned(catalogue, production_pattern(self.con))
        self.con.register(
            "audit_versions",
            pa.table(
                {
                    "check_id": [c.spec.id for c in checks],
                    "check_version": [c.version for c in checks],
                }
            ),
        )
        if read is not None:
            ids = [s.snapshot_id for s in read]
            fresh = judge(self.con, checks, {c.spec.id: ids for c in checks}, committed)
            self._register(fresh, with_history=False)
            return
        wanted = unjudged(checks, [s.snapshot_id for s in committed], judged_pairs(self.con))
        self.judged = {check: len(ids) for check, ids in wanted.items()}
        store = self._store
        whole = [c.spec.id for c in checks if c.spec.history == "all"]
        rates = self._rows_per_snapshot(wanted)
        batches = Batches(wanted, committed, whole, rates, appendable=store is not None)
        with _progress(wanted) as advance:
            for batch in batches:
                tick = None if advance is None else (lambda c, b=batch: advance(len(b[c])))
                fresh = judge(self.con, checks, batch, committed, self._opener(), tick)
                refused = batches.refused or self._kept(fresh, batch, checks, committed)
                batches.judged(fresh, batch, refused)
                del fresh  # released before the next batch is judged
        if batches.refused:
            self.warnings.append(
                f"the findings history could not be written ({batches.refused}); this audit "
                f"judged {batches.held_pairs} check-snapshot pair(s) in memory and the next "
                "one judges them again"
            )
        if store is not None and batches.appended and batches.first is None:
            attach_findings(self.con, store)  # the batches appended, read from its files
        # the rows of a judging in one batch (a new snapshot) are read from memory, not from
        # the files they went to: the connection's history is the one read before it
        self._register(batches.in_memory(), with_history=True)

    def _rows_per_snapshot(self, wanted: Mapping[str, Sequence[str]]) -> dict[str, float]:
        """Per check ``wanted`` names, the rows a snapshot gave it (any version) in the
        history; nothing when one snapshot is wanted (one batch whatever the figures)."""
        if self._store is None or not any(len(ids) > 1 for ids in wanted.values()):
            return {}
        found = self.con.execute(
            "select check_id, avg(row_count) from check_runs "
            "where list_contains($checks, check_id) group by check_id",
            {"checks": list(wanted)},
        ).fetchall()
        return {str(check): float(rows) for check, rows in found}

    def _kept(
        self,
        fresh: pa.Table,
        wanted: Mapping[str, Sequence[str]],
        checks: Sequence[Versioned],
        committed: Sequence[SnapshotRef],
    ) -> str | None:
        """Append ``fresh`` to the store's findings history as a run of its own; why not,
        when the store cannot be written."""
        store = self._store
        if store is None:
            return None
        version = {c.spec.id: c.version for c in checks}
        at = {s.snapshot_id: s.snapshot_at for s in committed}
        judged = pa.Table.from_pylist(
            [
                {"check_id": c, "check_version": version[c], "snapshot_id": i, "snapshot_at": at[i]}
                for c, ids in wanted.items()
                for i in ids
            ]
        )
        try:
            append_judgement(store, fresh, judged)
        except (StoreUnavailable, OSError, DeltaError) as exc:
            return str(exc)
        return None

    def _register(self, fresh: pa.Table | None, *, with_history: bool) -> None:
        """``audit_results``: the history's rows of the audit's check versions, and
        ``fresh`` rows the history does not hold."""
        parts = []
        if with_history and _has_history(self.con):
            parts.append(
                "select * exclude (run_id) from check_results "
                "semi join audit_versions using (check_id, check_version)"
            )
        if fresh is not None:
            self.con.register("audit_fresh", fresh)
            parts.append("select * from audit_fresh")
        if not parts:
            from toolkit.audit.judge import RESULTS

            self.con.register("audit_fresh", RESULTS.empty_table())
            parts.append("select * from audit_fresh")
        self.con.execute(
            "create or replace temp view audit_results as " + " union all by name ".join(parts)
        )

    def _opener(
        self,
    ) -> Callable[[Sequence[str], Sequence[CheckSpec]], duckdb.DuckDBPyConnection] | None:
        """What opens a connection of some snapshots' files alone, prepared as the
        audit's with the derived views of the checks given (None for a caller's
        connection), from the tables :meth:`open` opened (its findings history is the
        one before this audit appended: no check judged there reads it)."""
        store, rows, production = self._store, self._rows, self._production
        if store is None or rows is None:
            return None
        tables = self._tables

        def opened(ids: Sequence[str], specs: Sequence[CheckSpec]) -> duckdb.DuckDBPyConnection:
            own = connect(store, ids, rows, tables)
            try:
                set_production(own, production)
                confine(own, store.url)
                install_views(own, checks=specs)
            except BaseException:
                own.close()
                raise
            return own

        return opened


class Batches:
    """The snapshots ``wanted`` names (per check id), in committed order, in batches (see
    the module docstring), and what became of them. ``whole``: the ids of the checks that
    read the whole history; ``rates``: rows a snapshot per check id, from the history.
    ``appendable`` False (a caller's connection: nowhere to append) makes one batch."""

    def __init__(
        self,
        wanted: Mapping[str, Sequence[str]],
        committed: Sequence[SnapshotRef],
        whole: Collection[str],
        rates: Mapping[str, float],
        *,
        appendable: bool,
    ) -> None:
        named = {i for ids in wanted.values() for i in ids}
        self._order = [s.snapshot_id for s in committed if s.snapshot_id in named]
        self._wanted, self._rates, self._appendable = wanted, rates, appendable
        # the checks reading the whole history first: the others fill the room they leave
        self._lanes = [
            lane
            for lane in ([c for c in wanted if c in whole], [c for c in wanted if c not in whole])
            if lane
        ]
        self._next = [0 for _ in self._lanes]
        self._rows: dict[str, int] = {}
        self._seen: dict[str, int] = {}
        self.count, self.appended = 0, 0
        """Batches given so far, and those appended to the store."""
        self.first: pa.Table | None = None
        """The first batch's rows until a second starts (the lifecycle then reads them from
        the store's files, or, if the store refused them, from :attr:`held`)."""
        self.held: list[pa.Table] = []
        """The rows of the later batches that the store refused."""
        self.held_pairs = 0  # check-snapshot pairs judged and not appended
        self.refused: str | None = None  # why the store refused a batch (then offered no more)

    def __iter__(self) -> Iterator[dict[str, list[str]]]:
        while any(n < len(self._order) for n in self._next):
            if self.first is not None:  # a second batch: release the first
                if not self.appended:
                    self.held.append(self.first)
                self.first = None
            room = float(JUDGE_BATCH_ROWS)
            batch: dict[str, list[str]] = {}
            for k, lane in enumerate(self._lanes):
                start = self._next[k]
                if start >= len(self._order):
                    continue
                rate = self._rate(lane)
                size = self._size(rate, room)
                chosen = set(self._order[start : start + size])
                self._next[k] = start + size
                room = max(0.0, room - (rate or 0.0) * len(chosen))
                for check in lane:
                    ids = [i for i in self._wanted[check] if i in chosen]
                    if ids:
                        batch[check] = ids
            self.count += 1
            yield batch

    def _size(self, rate: float | None, room: float) -> int:
        if not self._appendable:
            return len(self._order)
        return 1 if rate is None else max(1, int(room // max(rate, 1.0)))

    def _rate(self, lane: Sequence[str]) -> float | None:
        """Rows a snapshot of the checks ``lane`` names: as judged so far, else as the
        history says; None when some check has neither."""
        total = 0.0
        for check in lane:
            if self._seen.get(check):
                total += self._rows.get(check, 0) / self._seen[check]
            elif check in self._rates:
                total += self._rates[check]
            else:
                return None
        return total

    def judged(
        self, rows: pa.Table, batch: Mapping[str, Sequence[str]], refused: str | None
    ) -> None:
        """The ``rows`` of ``batch``: appended to the store unless it ``refused`` them (or
        there is no store to append to)."""
        counts = rows.group_by("check_id").aggregate([([], "count_all")]).to_pylist()
        for row in counts:
            self._rows[row["check_id"]] = self._rows.get(row["check_id"], 0) + row["count_all"]
        for check, ids in batch.items():
            self._seen[check] = self._seen.get(check, 0) + len(ids)
        if refused is not None:
            self.refused = self.refused or refused
            self.held_pairs += sum(len(ids) for ids in batch.values())
        elif self._appendable:
            self.appended += 1
        if self.count == 1:
            self.first = rows
        elif refused is not None:
            self.held.append(rows)

    def in_memory(self) -> pa.Table | None:
        """The rows the lifecycle reads from memory (None: none)."""
        tables = ([] if self.first is None else [self.first]) + self.held
        return pa.concat_tables(tables) if tables else None


def _has_history(con: duckdb.DuckDBPyConnection) -> bool:
    try:
        con.execute("select 1 from check_results limit 0")
    except duckdb.CatalogException:
        return False
    return True


@contextmanager
def _progress(wanted: Mapping[str, Sequence[str]]) -> Iterator[Callable[[int], None] | None]:
    """A progress bar on standard error, when it is a terminal and the history lacks more
    than one snapshot of some check (a store written by an older toolkit, a changed check);
    yields what advances it by a number of check-snapshot pairs judged, across batches
    (None: no bar)."""
    if not sys.stderr.isatty() or not any(len(ids) > 1 for ids in wanted.values()):
        with nullcontext():
            yield None
        return
    from rich.console import Console
    from rich.progress import Progress

    snapshots = max(len(ids) for ids in wanted.values())
    with Progress(console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(
            f"judging {snapshots} snapshot(s) into the findings history",
            total=sum(len(ids) for ids in wanted.values()),
        )
        yield lambda pairs: bar.advance(task, pairs)
