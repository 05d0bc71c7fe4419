"""Running the checks for an audit: each check once over the history, its rows filtered to
what the lifecycle needs, side by side on a connection's cursors (:func:`run_checks`).

An alarm row of any snapshot is kept as identity and status only; the judged and compared
snapshots' rows (ok ones too) also get their reason and evidence, built only for them. A
check whose header says ``-- history: snapshot`` or ``previous`` runs twice, for statuses
over the history and for full rows in a window of a few snapshots, and must judge those
snapshots alike. Rows that break the output contract (columns, types, status values,
snapshot ids) are refused with the check's file named. :func:`~toolkit.audit.run_audit`
calls this; a notebook may too::

    rows = run_checks(con, Catalogue.load(), keep=[judged_id, compared_id])
    rows.status, rows.details
"""

from __future__ import annotations

import queue
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from toolkit.audit.check_output import (
    ROW_SCHEMA,
    STATUS_SCHEMA,
    identity,
    require_same_judgement,
    require_values,
    status_rows,
    text_rows,
)
from toolkit.audit.check_run import (
    nested_arrow,
    production_pattern,
    require_shape,
    require_text_columns,
    run_sql,
    set_production,
)
from toolkit.audit.scope import Scope, search_path, set_search_path, snapshot_filter
from toolkit.errors import CheckDefinitionError

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable, Mapping, Sequence

    import duckdb

    from toolkit.audit.catalogue import Catalogue
    from toolkit.audit.check_cache import CheckCache
    from toolkit.audit.check_file import CheckSpec
    from toolkit.audit.status_cache import AuditCache, Fresh

__all__ = ["CHECK_WORKERS", "ROW_SCHEMA", "STATUS_SCHEMA", "CheckRows", "run_checks"]

CHECK_WORKERS = 2
"""Checks run side by side (each DuckDB query also uses DuckDB's own threads)."""
_KEPT_TABLE = "main.audit_kept_snapshots"
"""The kept snapshot ids, when they are not written out (in main: both scopes read it)."""
_OBSERVED_TABLE = "main.audit_observed_snapshots"
"""The kept and partial snapshot ids (every status row kept), when not written out."""
_JUDGED_TABLE = "main.audit_judged_snapshot"
"""The judged snapshot's id, when it is not written out."""
_FRESH_TABLE = "main.audit_fresh_snapshots"
"""The snapshots judged in the fresh scope (see ``AuditCache.fresh``), when not written out."""
_LAST_OBSERVED_TABLE = "main.audit_last_observed"
"""Prefix of the tables of snapshots that last observed a blind check's findings."""


@dataclass(frozen=True)
class CheckRows:
    """What the checks returned, as the lifecycle needs it.

    ``status`` (:data:`STATUS_SCHEMA`, dictionary-encoded) has every alarm row of every
    snapshot and every row (ok too) of the kept snapshots: an ok row elsewhere changes no
    state, first or last seen, or resolve time, so a long history stays small. ``details``
    (:data:`ROW_SCHEMA`) has the full rows (reason, evidence) of the kept snapshots only.
    """

    status: pa.Table
    details: pa.Table


def run_checks(
    con: duckdb.DuckDBPyConnection,
    catalogue: Catalogue,
    keep: Sequence[str],
    timings: dict[str, float] | None = None,
    workers: int = CHECK_WORKERS,
    window: Scope | None = None,
    observe: Collection[str] = (),
    last_observed: Mapping[str, str] | None = None,
    cache: AuditCache | None = None,
    fresh: tuple[Scope, Fresh] | None = None,
) -> CheckRows:
    """Every check of ``catalogue`` on ``con``; full rows kept for the ``keep`` snapshot ids
    (the judged one first, then the compared one).

    Each check runs once, as a subquery whose rows are filtered to the alarms and the
    ``keep`` snapshots: DuckDB pushes that filter below the check's last projection, so
    reason and evidence text is built only for the rows that are kept, and fetched only for
    the judged snapshot's rows and the compared one's alarms (an older alarm needs only its
    identity; a finding's text is its judged row's, or the compared alarm's when it is
    gone, so an ok row of the compared snapshot keeps its owners and name, not its text).
    ``workers`` checks run side by side, each on its own cursor of ``con`` (same database,
    same search path): one check's single-threaded stretches (a sort's merge, the Arrow
    conversion) leave a core to the other. Results come back in catalogue order.

    ``window`` is a scope holding the ``keep`` snapshots and the one before each
    (``scoped(..., schema=WINDOW_SCHEMA)``, on ``con`` or on a connection of those
    snapshots' files: its queries then plan no other file): a check whose header says
    ``-- history: snapshot`` or ``previous`` then runs twice, for the statuses of every
    snapshot (identity and status only, so no text is built) and in the window for the
    full rows of ``keep``, which must judge those snapshots exactly as the first run did.

    The status rows of the ``observe`` snapshots (the partial ones) are kept whole too, ok
    ones included: there a finding with no row at all may not have been observed. A check
    named in ``last_observed`` (blind in the compared snapshot) also gets the text of its
    alarms in the snapshot it names, the last that observed them, and runs over the whole
    history (that snapshot may lie outside the window).

    ``cache`` (a full audit of a store: see :mod:`toolkit.audit.status_cache`) holds what
    such a check said of snapshots judged before (:meth:`AuditCache.load` read them): the
    check then runs in the window, and over the snapshots it holds no entry for in the
    scope ``fresh`` names (the scope, and those snapshots: ``AuditCache.fresh``),
    not over the whole history; what it said of the snapshots judged there is filed for
    the next audit.
    """
    where = _Kept.of(con, keep, observe, (last_observed or {}).values())
    new = None
    if fresh is not None:  # its search path, the predicate of its snapshots, and their ids
        predicate = snapshot_filter(con, fresh[1].judged, _FRESH_TABLE)
        new = (fresh[0], predicate, frozenset(fresh[1].judged))
    last = dict(last_observed or {})
    history = Scope(con, search_path(con))
    scopes = [history, *(s for s in (window, new[0] if new else None) if s is not None)]
    cursors: queue.SimpleQueue[_Cursors] = queue.SimpleQueue()
    for _ in range(max(1, workers)):
        cursors.put(_Cursors(scopes, production_pattern(con)))
    known = {str(row[0]) for row in con.execute("select snapshot_id from snapshots").fetchall()}

    def one(spec: CheckSpec) -> tuple[pa.Table, pa.Table, float]:
        worker = cursors.get()
        overrides = catalogue.overrides.get(spec.id)
        try:
            if spec.id in last:
                seen = last[spec.id]
                done = _check_rows(
                    worker.on(history), spec, overrides, [*where.ids, seen], where.filters(seen)
                )
            elif window is not None and spec.history != "all":
                entries = cache.checks.get(spec.id) if cache is not None else None
                done = _split_check_rows(
                    worker.on, spec, overrides, where.ids, where.filters(), (history, window),
                    entries, where.observed_ids, new,
                )  # fmt: skip
            else:
                done = _check_rows(worker.on(history), spec, overrides, where.ids, where.filters())
        finally:
            cursors.put(worker)
        require_values(spec, done[0], known)
        return done

    specs = catalogue.specs
    with ThreadPoolExecutor(max(1, workers), thread_name_prefix="audit-check") as pool:
        # The checks that read the whole history start first: in a cached audit they are
        # the long ones, and started in catalogue order (VAR008 among the last) they left
        # one worker idle while the other finished them.
        started = {i: pool.submit(one, specs[i]) for i in _longest_first(specs, last)}
        done = [started[i].result() for i in range(len(specs))]
    where.drop(con)
    if timings is not None:
        timings.update(
            (spec.id, seconds) for spec, (_, _, seconds) in zip(specs, done, strict=True)
        )
    status = [STATUS_SCHEMA.empty_table(), *(rows for rows, _, _ in done)]
    details = [ROW_SCHEMA.empty_table(), *(rows for _, rows, _ in done)]
    return CheckRows(pa.concat_tables(status), pa.concat_tables(details))


@dataclass(frozen=True)
class _Kept:
    """Which check rows :func:`run_checks` keeps, as predicates on ``snapshot_id``
    (:func:`snapshot_filter`): the rows of the kept snapshots (``ids``), every status row
    of those and the partial ones (``observed_ids``), the text of the judged snapshot's
    rows and of the kept alarms, and for a check blind in the compared snapshot the alarms
    of the snapshot that last observed its findings (``earlier``, by its id)."""

    ids: list[str]
    observed_ids: list[str]
    kept: str
    observed: str
    judged: str
    earlier: dict[str, str]

    @classmethod
    def of(
        cls,
        con: duckdb.DuckDBPyConnection,
        keep: Sequence[str],
        observe: Collection[str],
        last_observed: Iterable[str],
    ) -> _Kept:
        ids = sorted(keep)
        kept = snapshot_filter(con, ids, _KEPT_TABLE)
        extra = sorted(set(observe) - set(ids))
        observed = snapshot_filter(con, [*ids, *extra], _OBSERVED_TABLE) if extra else kept
        judged = snapshot_filter(con, list(keep[:1]), _JUDGED_TABLE)
        earlier = {
            snapshot_id: snapshot_filter(con, [snapshot_id], f"{_LAST_OBSERVED_TABLE}_{n}")
            for n, snapshot_id in enumerate(sorted(set(last_observed)))
        }
        return cls(ids, [*ids, *extra], kept, observed, judged, earlier)

    def filters(self, last_observed: str | None = None) -> tuple[str, str, str]:
        """The predicates a check's rows go through (kept, observed, described); with
        ``last_observed`` (a snapshot id of ``earlier``), its alarms get their text too."""
        alarms = self.kept
        if last_observed is not None:
            alarms = f"({self.kept} or {self.earlier[last_observed]})"
        return self.kept, self.observed, _described(self.judged, alarms)

    def drop(self, con: duckdb.DuckDBPyConnection) -> None:
        """Drop the tables of ids made for any of the predicates (and the fresh scope's)."""
        made = [f"{_LAST_OBSERVED_TABLE}_{n}" for n in range(len(self.earlier))]
        for table in (_KEPT_TABLE, _OBSERVED_TABLE, _JUDGED_TABLE, _FRESH_TABLE, *made):
            con.execute(f"drop table if exists {table}")


def _longest_first(specs: Sequence[CheckSpec], whole: Collection[str]) -> list[int]:
    """The places of ``specs`` in the order they start: those that read the whole history
    (``history: all``, or named in ``whole``) first, each group in catalogue order."""
    return sorted(
        range(len(specs)), key=lambda i: not (specs[i].history == "all" or specs[i].id in whole)
    )


class _Cursors:
    """A check worker's cursors, one for each connection its scopes are on (a cursor is a
    connection of its own: the production pattern is set again); :meth:`on` gives a
    scope's cursor with the scope's search path set."""

    def __init__(self, scopes: Iterable[Scope], production: str | None) -> None:
        self._cursors: dict[int, tuple[duckdb.DuckDBPyConnection, list[str]]] = {}
        for scope in scopes:
            if id(scope.con) not in self._cursors:
                cursor = scope.con.cursor()
                set_production(cursor, production)
                self._cursors[id(scope.con)] = (cursor, [""])  # its path: none set yet

    def on(self, scope: Scope) -> duckdb.DuckDBPyConnection:
        cursor, path = self._cursors[id(scope.con)]
        if path[0] != scope.path:
            set_search_path(cursor, scope.path)
            path[0] = scope.path
        return cursor


def _described(judged: str, alarms_of: str) -> str:
    """The predicate for the check rows whose reason and evidence are built: every row of
    the ``judged`` snapshot, and the alarms of the snapshots ``alarms_of`` selects."""
    return f"({judged} or (status = 'alarm' and {alarms_of}))"


def _check_rows(
    con: duckdb.DuckDBPyConnection,
    spec: CheckSpec,
    overrides: Mapping[str, object] | None,
    ids: Sequence[str],
    filters: tuple[str, str, str],
) -> tuple[pa.Table, pa.Table, float]:
    """One check's status rows, its full rows of the ``ids`` snapshots, and its seconds.
    ``filters``: the predicates for the ``ids`` snapshots, for those whose every status row
    is kept, and for the rows whose text is built (see :func:`run_checks`)."""
    started = time.perf_counter()
    _, observed, described = filters
    params = spec.bind(overrides)
    # The check's SQL is code from a check file, never a value; values are parameters.
    # Reason and evidence of the alarms of other snapshots are not needed (nor fetched).
    sql = (
        f"select * replace (case when {described} then reason end as reason, "
        f"case when {described} then evidence end as evidence)\n"
        f"from (\n{spec.sql}\n) as check_rows where status <> 'ok' or {observed}"
    )
    try:
        result = run_sql(con, spec, sql, params)
    except CheckDefinitionError:
        require_text_columns(con, spec, params)  # a wrong shape gets the precise message
        raise
    require_shape(spec, result.column_names, [nested_arrow(f.type) for f in result.schema])
    return (
        status_rows(result, spec.id),
        text_rows(_rows_of(result, ids), spec.id),
        time.perf_counter() - started,
    )


def _rows_of(result: pa.Table, ids: Sequence[str]) -> pa.Table:
    """The rows of the ``ids`` snapshots: ``result`` itself when it holds no other (as in a
    latest-only audit, where a copy would be hundreds of megabytes of fresh memory)."""
    mask = pc.fill_null(pc.is_in(result.column("snapshot_id"), pa.array(ids, pa.string())), False)
    return result if pc.all(mask).as_py() else result.filter(mask)


def _split_check_rows(
    on: Callable[[Scope], duckdb.DuckDBPyConnection],
    spec: CheckSpec,
    overrides: Mapping[str, object] | None,
    ids: Sequence[str],
    filters: tuple[str, str, str],
    scopes: tuple[Scope, Scope],
    entries: CheckCache | None = None,
    observed_ids: Collection[str] = (),
    fresh: tuple[Scope, str, frozenset[str]] | None = None,
) -> tuple[pa.Table, pa.Table, float]:
    """:func:`_check_rows` for a check judging a snapshot from it and the one before at
    most: statuses over the history (``scopes[0]``), full rows in the window (``scopes[1]``),
    each query on the cursor ``on`` gives for its scope. With cached ``entries`` for every
    snapshot but the ``ids`` ones and those the scope ``fresh`` (the scope, the predicate
    of the snapshots it judges, their ids) holds, and agreeing with the window on those it
    holds, the history is not judged again."""
    started = time.perf_counter()
    params = spec.bind(overrides)
    history, window = scopes
    kept, observed, described = filters
    # The check's SQL is code from a check file, never a value; values are parameters.
    statuses_sql = (
        "select snapshot_id, resource_id, status "  # noqa: S608 - see above
        f"from (\n{spec.sql}\n) as check_rows where (status <> 'ok' or {observed})"
    )
    rows_sql = (
        f"select * replace (case when {described} then reason end as reason, "
        f"case when {described} then evidence end as evidence)\n"
        f"from (\n{spec.sql}\n) as check_rows where {kept}"
    )
    reused = judged = None
    missing: set[str] = set()
    try:
        rows = run_sql(on(window), spec, rows_sql, params)
        require_shape(spec, rows.column_names, [nested_arrow(f.type) for f in rows.schema])
        judged_here = identity(rows)
        if entries is not None:
            missing = entries.missing(ids)
            if missing and fresh is not None and missing <= fresh[2]:
                sql = f"{statuses_sql} and {fresh[1]}"
                found = identity(run_sql(on(fresh[0]), spec, sql, params))
                wanted = pa.array(sorted(missing), pa.string())
                judged = found.filter(pc.is_in(found.column("snapshot_id"), wanted))
            if not missing or judged is not None:
                reused = entries.statuses(judged_here, ids, observed_ids, judged)
        statuses = (
            reused if reused is not None else run_sql(on(history), spec, statuses_sql, params)
        )
    except CheckDefinitionError:
        require_text_columns(on(history), spec, params)  # the precise message for a wrong shape
        raise
    if reused is None:
        require_same_judgement(spec, statuses, rows, ids)
    if entries is not None:  # what was judged, for the next audit
        if reused is None:
            everything = entries.audit.shown
            entries.save(identity(statuses), everything, observed_ids, replace=True)
        else:
            filed = pa.concat_tables([judged_here, *([judged] if judged is not None else [])])
            entries.save(filed, [*missing, *ids], observed_ids, replace=False)
    return status_rows(statuses, spec.id), text_rows(rows, spec.id), time.perf_counter() - started
