"""The connections an audit opens on a store, and the scopes of a few snapshots on them.

A full audit of a store reads the whole history on one connection; the window (the judged
and compared snapshots and the one before each) and the snapshots a status cache lacks are
read on connections of their own, which open only those snapshots' files (a query over a
few snapshots on the whole store's connection still plans every table over every file). A
latest-only audit's one connection opens only the files it reads. :func:`run_audit
<toolkit.audit.engine.run_audit>` uses these::

    con, rows = audit_connection(store, latest_only=False, snapshot=None, compare_to=None)
    opener = files_opener(store, rows, committed, production_pattern(con))
    with EarlyConnection(opener, window) as early, window_scope(
        con, specs, window, own=early.take
    ) as scope:
        ...  # scope.con, scope.path: where the window's queries run
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import TYPE_CHECKING

import duckdb

from toolkit.audit.check_run import confine, set_production
from toolkit.audit.findings import SnapshotRef
from toolkit.audit.scope import (
    WINDOW_SCHEMA,
    Scope,
    plan_scope,
    scoped,
    search_path,
    set_search_path,
)
from toolkit.audit.snapshots_chosen import reach, select_snapshots
from toolkit.snapshot import Store, id_list_literal
from toolkit.snapshot.views import (
    VISIBLE_STATUSES,
    connect,
    store_read_failure,
    store_unreadable,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    import pyarrow as pa

    from toolkit.audit.check_file import CheckSpec

__all__ = [
    "EarlyConnection",
    "audit_connection",
    "files_opener",
    "row_counts",
    "store_reads",
    "table_readers",
    "window_scope",
    "windowed",
]


@contextmanager
def store_reads() -> Iterator[None]:
    """Reading the store (opening views, copying scoped tables, counting rows): a DuckDB
    error that is the store's files failing becomes :class:`StoreUnavailable`."""
    try:
        yield
    except duckdb.Error as exc:
        if store_read_failure(exc):
            raise store_unreadable("the audit", exc) from exc
        raise


def files_opener(
    source: Store | duckdb.DuckDBPyConnection,
    rows: pa.Table | None,
    committed: Sequence[SnapshotRef],
    production: str | None,
) -> Callable[[Sequence[str]], duckdb.DuckDBPyConnection] | None:
    """For a store, what opens a connection of some snapshots' files alone (its views,
    production pattern and confinement as the audit's); None for a caller's connection, or
    when some id cannot be written out (the check_rows predicates then read tables of ids
    that only the audit's connection has)."""
    literal = id_list_literal([s.snapshot_id for s in committed]) is not None
    if not isinstance(source, Store) or rows is None or not literal:
        return None
    store = source

    def opened(ids: Sequence[str]) -> duckdb.DuckDBPyConnection:
        own = connect(store, ids, rows)
        try:
            set_production(own, production)  # its views: in its scope (window_scope)
            confine(own, store.url)
        except BaseException:
            own.close()
            raise
        return own

    return opened


class EarlyConnection:
    """The window's connection, opened in a thread from when the audit knows the window
    (with ``opener`` and a ``window``; else :attr:`take` is None); :meth:`take` hands it
    over. Leaving the block closes a connection nobody took (an error came first)."""

    def __init__(
        self,
        opener: Callable[[Sequence[str]], duckdb.DuckDBPyConnection] | None,
        window: Sequence[str] | None,
    ) -> None:
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="audit-window")
        self._future = None
        if opener is not None and window:
            self._future = self._pool.submit(opener, window)
        self._taken = False

    def __enter__(self) -> EarlyConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self._pool.shutdown(wait=True)
        if self._future is not None and not self._taken and self._future.exception() is None:
            self._future.result().close()

    @property
    def take(self) -> Callable[[], duckdb.DuckDBPyConnection] | None:
        """What hands the connection over (its opening's error raised here), or None."""
        return None if self._future is None else self._take

    def _take(self) -> duckdb.DuckDBPyConnection:
        if self._future is None:  # take is None then: never called
            raise RuntimeError("no window connection was opened")
        self._taken = True
        return self._future.result()


@contextmanager
def window_scope(
    con: duckdb.DuckDBPyConnection,
    specs: Sequence[CheckSpec],
    window: Sequence[str] | None,
    schema: str = WINDOW_SCHEMA,
    own: Callable[[], duckdb.DuckDBPyConnection] | None = None,
) -> Iterator[Scope | None]:
    """A second scope, of the ``window`` snapshots, when some check can use it (see
    :func:`~toolkit.audit.check_rows.run_checks`); yields it, or None. With
    ``schema=FRESH_SCHEMA``, the third: the snapshots a status cache lacks.

    With ``own`` (what gives a connection that opens only those snapshots' files, as a
    latest-only audit's does: :func:`files_opener`), the scope is on that connection,
    closed after the block: on ``con``, each query over a few snapshots still plans every
    table over all of the history's files (40 window queries of a 90-snapshot store: 2.9 s
    against 1.1-1.5 s). Else it is on ``con``, which keeps its search path."""
    chosen = windowed(specs)
    if window is None or not chosen:
        yield None
        return
    if own is not None:
        files = own()
        try:
            plan = plan_scope(chosen, row_counts(files, window), table_readers(files))
            with scoped(files, window, plan, schema=schema, tables_limited=True) as path:
                yield Scope(files, path)
        finally:
            files.close()
        return
    path = search_path(con)
    plan = plan_scope(chosen, row_counts(con, window), table_readers(con))
    with scoped(con, window, plan, schema=schema) as window_path:
        set_search_path(con, path)
        yield Scope(con, window_path)


def audit_connection(
    source: Store | duckdb.DuckDBPyConnection,
    latest_only: bool,
    snapshot: str | None,
    compare_to: str | None,
) -> tuple[duckdb.DuckDBPyConnection, pa.Table | None]:
    """The source's connection, and a store's snapshots rows; for a latest-only audit of a
    store, one that opens only the files of the snapshots the audit reads."""
    if not isinstance(source, Store):
        return source, None
    rows = source._snapshot_rows()  # read once: every connection gets the same table
    if not latest_only:
        return connect(source, None, rows), rows
    committed = [
        SnapshotRef(str(r["snapshot_id"]), int(r["seq"]), r["snapshot_at"], str(r["status"]))
        for r in rows.select(["snapshot_id", "seq", "snapshot_at", "status"]).to_pylist()
        if r["status"] in VISIBLE_STATUSES
    ]
    committed.sort(key=lambda s: s.seq)
    target, compare = select_snapshots(committed, snapshot, compare_to)
    window = [s.snapshot_id for s in reach(committed, target, compare)]
    return connect(source, window, rows), rows


def row_counts(con: duckdb.DuckDBPyConnection, ids: Sequence[str] | None) -> dict[str, int]:
    """Rows per table over the committed snapshots (or ``ids``), from the snapshots rows."""
    rows = con.execute(
        "select unnest(map_keys(row_counts)) as name, unnest(map_values(row_counts)) as n, "
        "snapshot_id from snapshots where status in ('complete', 'partial')"
    ).fetchall()
    wanted = set(ids) if ids is not None else None
    totals: dict[str, int] = {}
    for name, count, snapshot_id in rows:
        if wanted is None or snapshot_id in wanted:
            totals[str(name)] = totals.get(str(name), 0) + int(count or 0)
    return totals


def table_readers(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """How the connection reads each table (``toolkit.snapshot.views``), when it says."""
    try:
        rows = con.execute("select table_name, reader from _tabletable_readers").fetchall()
    except duckdb.CatalogException:  # a connection not made by toolkit.snapshot.views
        return {}
    return {str(name): str(reader) for name, reader in rows}


def windowed(specs: Sequence[CheckSpec]) -> list[CheckSpec]:
    """The checks that judge a snapshot from it and the one before at most: those that read
    a window (:func:`window_scope`), which is opened only when there are some."""
    return [s for s in specs if s.history != "all"]
