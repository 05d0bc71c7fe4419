"""The audit engine: every check over the whole history, then findings, states and waivers.

Each check runs once over all committed snapshots (its SQL compares snapshots itself); the
Arrow results are registered in DuckDB (as codes: see ``register_rows``), and the lifecycle
(:mod:`toolkit.audit.lifecycle`) and the waivers (:mod:`toolkit.audit.waivers`) are SQL
over it. Example::

    from toolkit.audit import run_audit
    from toolkit.snapshot import Store

    result = run_audit(Store.open("data/store"))              # newest vs the one before
    result = run_audit(store, snapshot="0193...", compare_to="0192...")
    result = run_audit(store, latest_only=True)                # fast: two snapshots read
    result.findings, result.summary(), result.mttr(), result.waiver_report
"""

from __future__ import annotations

import queue
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import PurePath
from typing import TYPE_CHECKING

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from toolkit.audit.catalogue import Catalogue
from toolkit.audit.check_file import OUTPUT_COLUMNS, SEVERITIES, STATUSES
from toolkit.audit.check_run import confine, ensure_views, outside_the_store, run_sql
from toolkit.audit.findings import AuditResult, SnapshotRef
from toolkit.audit.lifecycle import (
    build_judged,
    build_names,
    build_positions,
    build_unobserved,
    findings_table,
    mean_time_to_resolve,
    query_frame,
    register_rows,
)
from toolkit.audit.scope import (
    WINDOW_SCHEMA,
    blind_checks,
    plan_scope,
    scoped,
    search_path,
    set_search_path,
    snapshot_filter,
)
from toolkit.audit.waivers import apply_waivers, require_known_checks, waivers_from
from toolkit.errors import AuditError, CheckDefinitionError
from toolkit.snapshot import Store
from toolkit.snapshot.views import store_read_failure, store_unreadable

if TYPE_CHECKING:
    from collections.abc import Collection, Iterator, Mapping, Sequence
    from pathlib import Path

    from toolkit.audit.check_file import CheckSpec
    from toolkit.audit.waivers import Waiver
    from toolkit.config import Settings

__all__ = [
    "CHECK_WORKERS",
    "ROW_SCHEMA",
    "STATUS_SCHEMA",
    "CheckRows",
    "committed_snapshots",
    "run_audit",
    "run_checks",
    "select_snapshots",
]

CHECK_WORKERS = 2
"""Checks run side by side (each DuckDB query also uses DuckDB's own threads)."""
_KEPT_TABLE = "main.audit_kept_snapshots"
"""The kept snapshot ids, when they are not written out (in main: both scopes read it)."""
_OBSERVED_TABLE = "main.audit_observed_snapshots"
"""The kept and partial snapshot ids (every status row kept), when not written out."""
_JUDGED_TABLE = "main.audit_judged_snapshot"
"""The judged snapshot's id, when it is not written out."""
_LAST_OBSERVED_TABLE = "main.audit_last_observed"
"""Prefix of the tables of snapshots that last observed a blind check's findings."""
_BLIND_SCHEMA = pa.schema([("check_id", pa.string()), ("snapshot_id", pa.string())])
ROW_SCHEMA = pa.schema([("check_id", pa.string()), *((c, pa.string()) for c in OUTPUT_COLUMNS)])
"""``audit_details``: a check's output columns as text, after the check's id."""
_TEXT = pa.dictionary(pa.int32(), pa.string())
STATUS_SCHEMA = pa.schema(
    [(name, _TEXT) for name in ("check_id", "snapshot_id", "resource_id", "status")]
)
"""Every check row's identity and status (``AuditResult.rows``)."""


@contextmanager
def _store_reads() -> Iterator[None]:
    """Reading the store (opening views, copying scoped tables, counting rows): a DuckDB
    error that is the store's files failing becomes :class:`StoreUnavailable`."""
    try:
        yield
    except duckdb.Error as exc:
        if store_read_failure(exc):
            raise store_unreadable("the audit", exc) from exc
        raise


def run_audit(
    source: Store | duckdb.DuckDBPyConnection,
    *,
    settings: Settings | None = None,
    checks: Catalogue | Sequence[CheckSpec] | None = None,
    snapshot: str | None = None,
    compare_to: str | None = None,
    waivers: Path | Sequence[Waiver] | None = None,
    latest_only: bool = False,
    today: date | None = None,
) -> AuditResult:
    """Run the checks and judge ``snapshot`` (default: the newest complete one).

    ``compare_to`` defaults to the complete snapshot before it. ``source`` is a store or a
    DuckDB connection that has the store's views (``store.duckdb()``, or a fixture's);
    ``checks`` defaults to the built-in ones plus the folders ``settings`` name, with the
    thresholds it sets. ``waivers`` (a file or parsed waivers) defaults to the configured
    file. ``latest_only`` reads only the judged and compared snapshots and the one before
    each (back to the complete snapshot before a partial compared one: :func:`_reach`), so
    ``first_seen``, ``regressed`` and resolve times see only those, and a check that says
    ``-- history: all`` judges from those snapshots alone (see docs/checks.md).
    Derived views that several checks read are computed once for the run (see
    :mod:`toolkit.audit.scope`); ``result.timings`` says where the time went.
    ``today`` decides which waivers have expired (default: today, UTC).
    """
    catalogue = _catalogue(checks, settings)
    default_waivers = settings.waivers_file if settings else None
    chosen = waivers_from(waivers, default_waivers)  # fail early
    ran = {spec.id for spec in catalogue.specs}
    if any(w.check not in ran for w in chosen):  # a skipped check's, or a typo
        where = waivers if isinstance(waivers, PurePath) else default_waivers
        require_known_checks(chosen, _known_ids(catalogue, settings), str(where or "waivers"))
    started = time.perf_counter()
    with _store_reads():  # a data file gone, or S3 failing: the store, not a check
        con = _connection(source, latest_only, snapshot, compare_to)
        ensure_views(con)
        if isinstance(source, Store):  # a connection of ours: a caller's is left as it is
            confine(con, source.url)
        committed = committed_snapshots(con)
        target, compare = select_snapshots(committed, snapshot, compare_to)
        timings: dict[str, float] = {"connect": time.perf_counter() - started}
        started = time.perf_counter()
        window = _reach(committed, target, compare) if latest_only else None
        ids = [s.snapshot_id for s in window] if window is not None else None
        partial = [
            s.snapshot_id
            for s in (window or committed)
            if s.status == "partial" and s.seq <= target.seq
        ]
        blind = _blind(con, catalogue.specs, partial)
        last_observed = _last_observed(blind, window or committed, compare)
        plan = plan_scope(catalogue.specs, _row_counts(con, ids), _readers(con))
        # A store's latest-only connection already shows only those snapshots (_connection).
        with scoped(con, ids, plan, tables_limited=isinstance(source, Store)):
            keep = [target.snapshot_id] + ([compare.snapshot_id] if compare else [])
            split = None if latest_only else _split_window(committed, target, compare)
            with _window_scope(con, catalogue.specs, split) as window_path:
                timings["scope"] = time.perf_counter() - started
                rows = run_checks(
                    con,
                    catalogue,
                    keep,
                    timings,
                    window=window_path,
                    observe=partial,
                    last_observed=last_observed,
                )
            described = [*keep, *sorted(set(last_observed.values()))]
            build_names(con, described)
    timings["checks"] = time.perf_counter() - started
    started = time.perf_counter()
    register_rows(con, rows.status)
    con.register("audit_details", rows.details)
    con.register("audit_checks", _checks_table(catalogue.specs))
    con.register("audit_blind", blind)
    build_positions(con, ids, target.seq)
    build_judged(con)
    build_unobserved(con)
    findings_table(con, target.seq, compare.seq if compare else None)
    findings, report = apply_waivers(con, chosen, today or datetime.now(UTC).date())
    mttr = mean_time_to_resolve(con)
    timings["lifecycle"] = time.perf_counter() - started
    times = query_frame(
        con, "select snapshot_id, snapshot_at, seq, status as snapshot_status from snapshots"
    )
    read = query_frame(con, "select snapshot_id from audit_positions order by pos")
    return AuditResult(
        target=target,
        compare=compare,
        checks=catalogue.specs,
        findings=findings,
        waiver_report=report,
        rows=rows.status,
        details=rows.details,
        snapshot_times=times,
        mttr_table=mttr,
        timings=timings,
        latest_only=latest_only,
        read=tuple(read.snapshot_id),
        blind=blind.to_pandas(),
    )


def _last_observed(
    blind: pa.Table, read: Sequence[SnapshotRef], compare: SnapshotRef | None
) -> dict[str, str]:
    """For each check blind in the compared snapshot, the newest snapshot read before it in
    which the check is not blind: a finding that neither the judged nor the compared
    snapshot observed is described by its alarm there (else it had no row to show)."""
    if compare is None or blind.num_rows == 0:
        return {}
    pairs = set(zip(blind["check_id"].to_pylist(), blind["snapshot_id"].to_pylist(), strict=True))
    earlier = sorted((s for s in read if s.seq < compare.seq), key=lambda s: -s.seq)
    found = {}
    for check_id in sorted({c for c, i in pairs if i == compare.snapshot_id}):
        seen = next((s for s in earlier if (check_id, s.snapshot_id) not in pairs), None)
        if seen is not None:
            found[check_id] = seen.snapshot_id
    return found


def _blind(
    con: duckdb.DuckDBPyConnection, specs: Sequence[CheckSpec], partial: Sequence[str]
) -> pa.Table:
    """``(check_id, snapshot_id)`` of each check reading a table that a failed call of a
    ``partial`` snapshot left short there (:func:`~toolkit.audit.scope.blind_checks`)."""
    if not partial:
        return _BLIND_SCHEMA.empty_table()
    failures = con.execute(
        "select distinct snapshot_id, endpoint, table_name from collection_errors "
        "where list_contains($ids, snapshot_id) and not coalesce(not_visible, false)",
        {"ids": list(partial)},
    ).fetchall()
    pairs = blind_checks(specs, [(str(i), str(e), t) for i, e, t in failures])
    return pa.Table.from_pylist(
        [{"check_id": c, "snapshot_id": i} for c, i in pairs], schema=_BLIND_SCHEMA
    )


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
    window: str | None = None,
    observe: Collection[str] = (),
    last_observed: Mapping[str, str] | None = None,
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

    ``window`` is the search path of a scope holding the ``keep`` snapshots and the one
    before each (``scoped(..., schema=WINDOW_SCHEMA)``): a check whose header says
    ``-- history: snapshot`` or ``previous`` then runs twice, for the statuses of every
    snapshot (identity and status only, so no text is built) and in the window for the
    full rows of ``keep``, which must judge those snapshots exactly as the first run did.

    The status rows of the ``observe`` snapshots (the partial ones) are kept whole too, ok
    ones included: there a finding with no row at all may not have been observed. A check
    named in ``last_observed`` (blind in the compared snapshot) also gets the text of its
    alarms in the snapshot it names, the last that observed them, and runs over the whole
    history (that snapshot may lie outside the window).
    """
    ids = sorted(keep)
    kept = snapshot_filter(con, ids, _KEPT_TABLE)
    extra = sorted(set(observe) - set(ids))
    observed = snapshot_filter(con, [*ids, *extra], _OBSERVED_TABLE) if extra else kept
    judged = snapshot_filter(con, list(keep[:1]), _JUDGED_TABLE)
    described = _described(judged, kept)
    last = dict(last_observed or {})
    earlier = {  # predicates for the snapshots that last observed a blind check's findings
        snapshot_id: snapshot_filter(con, [snapshot_id], f"{_LAST_OBSERVED_TABLE}_{n}")
        for n, snapshot_id in enumerate(sorted(set(last.values())))
    }
    path = search_path(con)
    cursors: queue.SimpleQueue[duckdb.DuckDBPyConnection] = queue.SimpleQueue()
    for _ in range(max(1, workers)):
        cursor = con.cursor()
        if path:
            set_search_path(cursor, path)
        cursors.put(cursor)

    known = {str(row[0]) for row in con.execute("select snapshot_id from snapshots").fetchall()}

    def one(spec: CheckSpec) -> tuple[pa.Table, pa.Table, float]:
        cursor = cursors.get()
        overrides = catalogue.overrides.get(spec.id)
        try:
            filters = (kept, observed, described)
            if spec.id in last:
                also = earlier[last[spec.id]]
                text = _described(judged, f"({kept} or {also})")
                done = _check_rows(
                    cursor, spec, overrides, [*ids, last[spec.id]], (kept, observed, text)
                )
            elif window is not None and spec.history != "all":
                done = _split_check_rows(cursor, spec, overrides, ids, filters, (path, window))
            else:
                done = _check_rows(cursor, spec, overrides, ids, filters)
        finally:
            cursors.put(cursor)
        _require_values(spec, done[0], known)
        return done

    with ThreadPoolExecutor(max(1, workers), thread_name_prefix="audit-check") as pool:
        done = list(pool.map(one, catalogue.specs))
    made = [f"{_LAST_OBSERVED_TABLE}_{n}" for n in range(len(earlier))]
    for table in (_KEPT_TABLE, _OBSERVED_TABLE, _JUDGED_TABLE, *made):  # only for odd ids
        con.execute(f"drop table if exists {table}")
    if timings is not None:
        timings.update(
            (spec.id, seconds) for spec, (_, _, seconds) in zip(catalogue.specs, done, strict=True)
        )
    status = [STATUS_SCHEMA.empty_table(), *(rows for rows, _, _ in done)]
    details = [ROW_SCHEMA.empty_table(), *(rows for _, rows, _ in done)]
    return CheckRows(pa.concat_tables(status), pa.concat_tables(details))


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
        _require_text_columns(con, spec, params)  # a wrong shape gets the precise message
        raise
    _require_shape(spec, result.column_names, [_nested_arrow(f.type) for f in result.schema])
    return (
        _status(result, spec.id),
        _as_text(_rows_of(result, ids), spec.id),
        time.perf_counter() - started,
    )


def _rows_of(result: pa.Table, ids: Sequence[str]) -> pa.Table:
    """The rows of the ``ids`` snapshots: ``result`` itself when it holds no other (as in a
    latest-only audit, where a copy would be hundreds of megabytes of fresh memory)."""
    mask = pc.fill_null(pc.is_in(result.column("snapshot_id"), pa.array(ids, pa.string())), False)
    return result if pc.all(mask).as_py() else result.filter(mask)


def _split_check_rows(
    con: duckdb.DuckDBPyConnection,
    spec: CheckSpec,
    overrides: Mapping[str, object] | None,
    ids: Sequence[str],
    filters: tuple[str, str, str],
    paths: tuple[str, str],
) -> tuple[pa.Table, pa.Table, float]:
    """:func:`_check_rows` for a check judging a snapshot from it and the one before at
    most: statuses over the history (``paths[0]``), full rows in the window (``paths[1]``)."""
    started = time.perf_counter()
    params = spec.bind(overrides)
    history, window = paths
    kept, observed, described = filters
    # The check's SQL is code from a check file, never a value; values are parameters.
    statuses_sql = (
        "select snapshot_id, resource_id, status "  # noqa: S608 - see above
        f"from (\n{spec.sql}\n) as check_rows where status <> 'ok' or {observed}"
    )
    rows_sql = (
        f"select * replace (case when {described} then reason end as reason, "
        f"case when {described} then evidence end as evidence)\n"
        f"from (\n{spec.sql}\n) as check_rows where {kept}"
    )
    try:
        statuses = run_sql(con, spec, statuses_sql, params)
        set_search_path(con, window)
        try:
            rows = run_sql(con, spec, rows_sql, params)
        finally:
            set_search_path(con, history)
    except CheckDefinitionError:
        _require_text_columns(con, spec, params)  # a wrong shape gets the precise message
        raise
    _require_shape(spec, rows.column_names, [_nested_arrow(f.type) for f in rows.schema])
    _require_same_judgement(spec, statuses, rows, ids)
    return _status(statuses, spec.id), _as_text(rows, spec.id), time.perf_counter() - started


def _require_same_judgement(
    spec: CheckSpec, statuses: pa.Table, rows: pa.Table, ids: Sequence[str]
) -> None:
    """Refuse a check whose window rows judge the ``ids`` snapshots otherwise than its run
    over the whole history: its ``history`` line claims less than it reads."""
    identity = ["snapshot_id", "resource_id", "status"]

    def judged(table: pa.Table) -> pa.Table:
        texts = pa.table([_text(table.column(c)) for c in identity], names=identity)
        texts = texts.filter(pc.is_in(texts.column("snapshot_id"), pa.array(ids, pa.string())))
        return texts.sort_by([(c, "ascending") for c in identity])

    if not judged(statuses).equals(judged(rows)):
        raise CheckDefinitionError(
            f"{spec.path}: says '-- history: {spec.history}', but it judges the snapshots "
            f"{', '.join(ids)} differently when it reads all earlier snapshots; "
            "remove the history line (it then reads the whole history)"
        )


def _require_values(spec: CheckSpec, status: pa.Table, known: Collection[str]) -> None:
    """Refuse rows the lifecycle would silently drop: a status other than 'alarm', 'ok' or
    'unknown', no resource id, or a snapshot id the audit does not know (read from the
    dictionaries of :func:`_status`: a few values a chunk, whatever the row count)."""

    def values(name: str) -> set[str | None]:
        column = status.column(name)
        found: set[str | None] = {None} if column.null_count else set()
        for chunk in column.chunks:
            found.update(chunk.dictionary.to_pylist())
        return found

    problems = []
    if odd := values("status") - set(STATUSES):
        problems.append(f"status {_listed(odd)}, where a check returns 'alarm', 'ok' or 'unknown'")
    if status.column("resource_id").null_count:
        problems.append("rows with no resource_id, which identifies a finding")
    if odd := values("snapshot_id") - set(known):
        problems.append(f"snapshot_id {_listed(odd)}, not a snapshot the audit read")
    if problems:
        raise CheckDefinitionError(f"{spec.path}: returned {'; and '.join(problems)}")


def _listed(values: set[str | None]) -> str:
    shown = sorted(repr(v) if v is not None else "null" for v in values)
    return ", ".join(shown[:5]) + (f" and {len(shown) - 5} more" if len(shown) > 5 else "")


def _status(result: pa.Table, check_id: str) -> pa.Table:
    """A check's rows as :data:`STATUS_SCHEMA` (dictionary-encoded: ids repeat a lot)."""
    check = pa.DictionaryArray.from_arrays(
        pa.array(np.zeros(result.num_rows, dtype=np.int32)), pa.array([check_id], pa.string())
    )
    columns = [_text(result.column(c)).dictionary_encode() for c in STATUS_SCHEMA.names[1:]]
    return pa.Table.from_arrays([check, *columns], schema=STATUS_SCHEMA)


def _as_text(result: pa.Table, check_id: str) -> pa.Table:
    """The check's columns as strings, after a ``check_id`` column."""
    check = pa.repeat(pa.scalar(check_id, pa.string()), result.num_rows)
    columns = [_text(result.column(name)) for name in OUTPUT_COLUMNS]
    return pa.Table.from_arrays([check, *columns], schema=ROW_SCHEMA)


def _text(column: pa.ChunkedArray) -> pa.ChunkedArray:
    # _require_shape refused nested types: everything else casts to text.
    return column if pa.types.is_string(column.type) else pc.cast(column, pa.string())


_NESTED = {"struct", "list", "map", "union", "array"}


def _nested_arrow(kind: pa.DataType) -> str | None:
    nested = pa.types.is_nested(kind) or pa.types.is_union(kind)
    return str(kind) if nested else None


def _require_text_columns(
    con: duckdb.DuckDBPyConnection, spec: CheckSpec, params: dict[str, object]
) -> None:
    """Refuse a check whose columns differ from the contract or do not read as text, from
    its bound query (nothing runs): used to explain a check that failed to run."""
    try:  # wrapped, as every run is: the file's own text could hold more than a query
        relation = con.sql(f"select * from (\n{spec.sql}\n) as check_rows", params=params)  # noqa: S608
    except duckdb.PermissionException as exc:
        raise outside_the_store(spec, exc) from exc
    except Exception as exc:  # DuckDB raises several types; name the file in every case
        raise CheckDefinitionError(f"{spec.path}: the check failed to run: {exc}") from exc
    if relation is None:
        raise CheckDefinitionError(f"{spec.path}: the check is not a query that returns rows")
    nested = [str(kind) if kind.id in _NESTED else None for kind in relation.types]
    _require_shape(spec, list(relation.columns), nested)


def _require_shape(spec: CheckSpec, columns: Sequence[str], nested: Sequence[str | None]) -> None:
    """Refuse output columns other than :data:`OUTPUT_COLUMNS`, or of a nested type."""
    if tuple(columns) != OUTPUT_COLUMNS:
        raise CheckDefinitionError(
            f"{spec.path}: returns columns {', '.join(columns)}; a check must "
            f"return exactly {', '.join(OUTPUT_COLUMNS)}, in that order"
        )
    for name, kind in zip(columns, nested, strict=True):
        if kind is not None:
            raise CheckDefinitionError(
                f"{spec.path}: column {name} is {kind}, which does not read as text; "
                "return JSON text for evidence (to_json(struct_pack(...)))"
            )


def committed_snapshots(con: duckdb.DuckDBPyConnection) -> list[SnapshotRef]:
    """The committed snapshots (complete or partial) of the connection, oldest first."""
    rows = con.sql(
        "select snapshot_id, seq, snapshot_at, status from snapshots "
        "where status in ('complete', 'partial') order by seq"
    ).fetchall()
    return [SnapshotRef(str(i), int(q), at, str(st)) for i, q, at, st in rows]


def select_snapshots(
    committed: Sequence[SnapshotRef],
    snapshot: str | None,
    compare_to: str | None,
    options: tuple[str, str] = ("--snapshot", "--compare-to"),
) -> tuple[SnapshotRef, SnapshotRef | None]:
    """The judged snapshot and the one it is compared with (ids or unique id prefixes).
    ``options`` names the two in messages as the command line that gave them does."""
    if snapshot is None:
        complete = [s for s in committed if s.status == "complete"]
        if not complete:
            raise AuditError(
                "the store has no complete snapshot yet: run `platform-audit snapshot` first"
            )
        target = complete[-1]
    else:
        target = _find(committed, snapshot, options[0])
    if compare_to is not None:
        compare = _find(committed, compare_to, options[1])
        if compare.seq >= target.seq:
            judged = (
                f"the newest complete snapshot {target.snapshot_id}"
                if snapshot is None
                else f"{options[0]} {target.snapshot_id}"
            )
            raise AuditError(
                f"{options[1]} {compare.snapshot_id} is not older than {judged}; pass an "
                f"earlier {options[1]} (`platform-audit store ls` lists them in order)"
            )
        return target, compare
    earlier = [s for s in committed if s.seq < target.seq and s.status == "complete"]
    return target, (earlier[-1] if earlier else None)


def _find(committed: Sequence[SnapshotRef], wanted: str, option: str) -> SnapshotRef:
    found = [s for s in committed if s.snapshot_id.startswith(wanted)] if wanted else []
    exact = [s for s in found if s.snapshot_id == wanted]
    if exact or len(found) == 1:
        return (exact or found)[0]
    if found:
        shown = ", ".join(s.snapshot_id for s in found[:3]) + (", ..." if len(found) > 3 else "")
        which = f"matches {len(found)} snapshots ({shown}): give more of the id"
    else:
        which = "is not a committed snapshot: list them with `platform-audit store ls`"
    raise AuditError(f"{option} {wanted!r} {which}")


def _window(
    committed: Sequence[SnapshotRef], target: SnapshotRef, compare: SnapshotRef | None
) -> list[SnapshotRef]:
    """The judged and compared snapshots and the one before each: what a ``history:
    snapshot`` or ``previous`` check (one using ``lag()``) needs to judge both as a run over
    the whole history does. Without the one before the compared snapshot, a lag check could
    not be in alarm there, and each of its open findings would look new."""
    chosen: dict[str, SnapshotRef] = {}
    for ref in (target, compare):
        if ref is None:
            continue
        chosen[ref.snapshot_id] = ref
        before = [s for s in committed if s.seq < ref.seq]
        if before:
            chosen[before[-1].snapshot_id] = before[-1]
    return sorted(chosen.values(), key=lambda s: s.seq)


def _reach(
    committed: Sequence[SnapshotRef], target: SnapshotRef, compare: SnapshotRef | None
) -> list[SnapshotRef]:
    """The snapshots a latest-only audit reads: :func:`_window`, and when the compared
    snapshot is partial, every snapshot back to the complete one before it (and the one
    before that, for lag checks). A check blind in the compared snapshot describes its open
    findings by their alarm in the last snapshot that observed them (:func:`_last_observed`),
    which may lie several partial snapshots back; at the latest a complete one observed it."""
    window = _window(committed, target, compare)
    if compare is None or compare.status != "partial":
        return window
    earlier = [s for s in committed if s.seq < compare.seq]
    complete = [i for i, s in enumerate(earlier) if s.status == "complete"]
    start = max(complete[-1] - 1, 0) if complete else 0
    chosen = {s.snapshot_id: s for s in [*window, *earlier[start:]]}
    return sorted(chosen.values(), key=lambda s: s.seq)


def _split_window(
    committed: Sequence[SnapshotRef], target: SnapshotRef, compare: SnapshotRef | None
) -> list[str] | None:
    """The snapshots the full rows of a ``history: previous`` check need (:func:`_window`);
    None when that is every snapshot."""
    window = _window(committed, target, compare)
    return [s.snapshot_id for s in window] if len(window) < len(committed) else None


@contextmanager
def _window_scope(
    con: duckdb.DuckDBPyConnection, specs: Sequence[CheckSpec], window: Sequence[str] | None
) -> Iterator[str | None]:
    """A second scope, of the ``window`` snapshots, when some check can use it (see
    :func:`run_checks`); yields its search path, or None. ``con`` keeps the outer path."""
    chosen = [s for s in specs if s.history != "all"]
    if window is None or not chosen:
        yield None
        return
    path = search_path(con)
    plan = plan_scope(chosen, _row_counts(con, window), _readers(con))
    with scoped(con, window, plan, schema=WINDOW_SCHEMA) as window_path:
        set_search_path(con, path)
        yield window_path


def _connection(
    source: Store | duckdb.DuckDBPyConnection,
    latest_only: bool,
    snapshot: str | None,
    compare_to: str | None,
) -> duckdb.DuckDBPyConnection:
    """The source's connection; for a latest-only audit of a store, one that opens only the
    files of the snapshots the audit reads."""
    if not isinstance(source, Store):
        return source
    if not latest_only:
        return source.duckdb()
    from toolkit.snapshot.views import VISIBLE_STATUSES, connect

    rows = source._snapshot_rows()  # read once: the connection gets the same table
    committed = [
        SnapshotRef(str(r["snapshot_id"]), int(r["seq"]), r["snapshot_at"], str(r["status"]))
        for r in rows.select(["snapshot_id", "seq", "snapshot_at", "status"]).to_pylist()
        if r["status"] in VISIBLE_STATUSES
    ]
    committed.sort(key=lambda s: s.seq)
    target, compare = select_snapshots(committed, snapshot, compare_to)
    window = [s.snapshot_id for s in _reach(committed, target, compare)]
    return connect(source, window, rows)


def _row_counts(con: duckdb.DuckDBPyConnection, ids: Sequence[str] | None) -> dict[str, int]:
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


def _readers(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """How the connection reads each table (``toolkit.snapshot.views``), when it says."""
    try:
        rows = con.execute("select table_name, reader from _table_readers").fetchall()
    except duckdb.CatalogException:  # a connection not made by toolkit.snapshot.views
        return {}
    return {str(name): str(reader) for name, reader in rows}


def _catalogue(
    checks: Catalogue | Sequence[CheckSpec] | None, settings: Settings | None
) -> Catalogue:
    if isinstance(checks, Catalogue):
        return checks
    if checks is None:
        return Catalogue.from_settings(settings)
    specs = tuple(checks)
    chosen = {s.id for s in specs}
    overrides = settings.check_params if settings else {}
    return Catalogue(specs, {k: v for k, v in overrides.items() if k in chosen})


def _known_ids(catalogue: Catalogue, settings: Settings | None) -> set[str]:
    """Every check id an audit with ``settings`` could run (skipped ones too), and
    ``catalogue``'s."""
    folders = settings.audit_checks if settings else ()
    builtin = settings.builtin_checks if settings else True
    return {s.id for s in (*catalogue.specs, *Catalogue.load(folders, builtin=builtin).specs)}


def _checks_table(specs: Sequence[CheckSpec]) -> pa.Table:
    return pa.table(
        {
            "check_id": [s.id for s in specs],
            "title": [s.title for s in specs],
            "severity": [s.severity for s in specs],
            "area": [s.area for s in specs],
            "severity_rank": [SEVERITIES.index(s.severity) for s in specs],
        },
        schema=pa.schema(
            [
                ("check_id", pa.string()),
                ("title", pa.string()),
                ("severity", pa.string()),
                ("area", pa.string()),
                ("severity_rank", pa.int64()),
            ]
        ),
    )
