"""The findings history an audit reads: the store's, brought up to date first.

:meth:`History.bring_up_to_date` judges every committed snapshot that the current version
of a check has not judged (:mod:`toolkit.audit.judge`), appends the rows to the store's
findings history (:func:`~toolkit.snapshot.findings_history.append_judgement`), and
registers ``audit_results``: the history's rows of the audit's check versions, which the
lifecycle reads. A connection that is not a store's (a fixture's, a notebook's
``store.duckdb()``) gets what its history lacks judged in memory; a latest-only audit
judges its few snapshots in memory and reads no history. A store the audit cannot write to
(read-only credentials) is audited all the same, the new rows in memory, and
``warnings`` says so. Example::

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
    connect,
    store_read_failure,
    store_unreadable,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence

    from toolkit.audit.catalogue import Catalogue
    from toolkit.audit.check_file import CheckSpec
    from toolkit.audit.judge import Versioned

__all__ = ["History", "store_reads"]


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
    ) -> None:
        self.con = con
        self._store, self._rows, self._production = store, rows, production
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
        for a latest-only audit over the files of the snapshots it reads."""
        if not isinstance(source, Store):
            return cls(source)
        rows = source._snapshot_rows()  # read once: every connection gets the same table
        if not latest_only:
            return cls(connect(source, None, rows), source, rows, production)
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
        with _progress(wanted) as tick:
            fresh = judge(self.con, checks, wanted, committed, self._opener(), tick)
        self.judged = {check: len(ids) for check, ids in wanted.items()}
        if wanted and self._store is not None:
            self._kept(fresh, wanted, checks, committed)
        # the connection's history is the one read before the judging, without the rows
        # just appended: they are read from memory, not from the files they went to
        self._register(fresh if wanted else None, with_history=True)

    def _kept(
        self,
        fresh: pa.Table,
        wanted: Mapping[str, Sequence[str]],
        checks: Sequence[Versioned],
        committed: Sequence[SnapshotRef],
    ) -> bool:
        """Append ``fresh`` to the store's findings history; False (and a warning) when the
        store cannot be written."""
        store = self._store
        if store is None:
            return False
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
            self.warnings.append(
                f"the findings history could not be written ({exc}); this audit judged "
                f"{len(judged)} check-snapshot pair(s) in memory and the next one judges them again"
            )
            return False
        return True

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
        connection)."""
        store, rows, production = self._store, self._rows, self._production
        if store is None or rows is None:
            return None

        def opened(ids: Sequence[str], specs: Sequence[CheckSpec]) -> duckdb.DuckDBPyConnection:
            own = connect(store, ids, rows)
            try:
                set_production(own, production)
                confine(own, store.url)
                install_views(own, checks=specs)
            except BaseException:
                own.close()
                raise
            return own

        return opened


def _has_history(con: duckdb.DuckDBPyConnection) -> bool:
    try:
        con.execute("select 1 from check_results limit 0")
    except duckdb.CatalogException:
        return False
    return True


@contextmanager
def _progress(wanted: Mapping[str, Sequence[str]]) -> Iterator[Callable[[str], None] | None]:
    """A progress bar on standard error, when it is a terminal and the history lacks more
    than one snapshot of some check (a store written by an older toolkit, a changed check);
    yields what advances it by one check (None: no bar)."""
    if not sys.stderr.isatty() or not any(len(ids) > 1 for ids in wanted.values()):
        with nullcontext():
            yield None
        return
    from rich.console import Console
    from rich.progress import Progress

    snapshots = max(len(ids) for ids in wanted.values())
    with Progress(console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(
            f"judging {snapshots} snapshot(s) into the findings history", total=len(wanted)
        )
        yield lambda _check_id: bar.advance(task)
