"""The audit engine: bring the findings history up to date, then read findings, states and
waivers from it.

Every snapshot is judged once per version of each check (:mod:`toolkit.audit.judge`) and
kept in the store's findings history; an audit judges what the history lacks (a new
snapshot, a changed check), appends it, and computes the lifecycle
(:mod:`toolkit.audit.lifecycle`) and the waivers (:mod:`toolkit.audit.waivers`) over the
history's rows. Example::

    from toolkit.audit import AuditRequest, run_audit
    from toolkit.snapshot import Store

    result = run_audit(Store.open("data/store"))              # newest vs the one before
    result = run_audit(store, snapshot="0193...", compare_to="0192...")
    result = run_audit(store, AuditRequest(options=settings.audit_options(), latest_only=True))
    result.findings, result.summary(), result.mttr(), result.waiver_report
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, TypedDict, Unpack

import pyarrow as pa

from toolkit.audit.catalogue import Catalogue
from toolkit.audit.check_file import OUTPUT_COLUMNS, SEVERITIES
from toolkit.audit.check_run import confine, ensure_views, install_views, set_production
from toolkit.audit.findings import AuditResult, SnapshotRef
from toolkit.audit.history import History, store_reads
from toolkit.audit.lifecycle import (
    build_marks,
    build_names,
    build_positions,
    build_summary,
    build_text,
    build_unobserved,
    findings_table,
    keep_marks,
    kept_of,
    marks_to_keep,
    mean_time_to_resolve,
    query_frame,
    read_rows,
)
from toolkit.audit.snapshots_chosen import (
    blind_checks,
    committed_snapshots,
    not_collected_tables,
    reach,
    select_snapshots,
)
from toolkit.audit.waivers import apply_waivers, require_known_checks, waivers_from
from toolkit.snapshot import Store

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    import duckdb

    from toolkit.audit.catalogue import AuditOptions
    from toolkit.audit.check_file import CheckSpec
    from toolkit.audit.waivers import Waiver

__all__ = ["AuditFields", "AuditRequest", "run_audit"]

_BLIND_SCHEMA = pa.schema([("check_id", pa.string()), ("snapshot_id", pa.string())])


class AuditFields(TypedDict, total=False):
    """The fields of :class:`AuditRequest`, as keyword arguments."""

    options: AuditOptions | None
    checks: Catalogue | Sequence[CheckSpec] | None
    snapshot: str | None
    compare_to: str | None
    waivers: Path | Sequence[Waiver] | None
    latest_only: bool
    today: date | None


@dataclass(frozen=True)
class AuditRequest:
    """What an audit is asked: one value that commands, reports, diffs and the scheduled
    job pass on whole.

    ``snapshot`` (an id or unique prefix; default: the newest, partial or not) is judged
    against ``compare_to`` (default: the complete snapshot before it). ``checks`` defaults
    to the built-in ones plus the folders ``options`` name, with the thresholds they set;
    ``waivers`` (a file or parsed waivers) to the configured file; ``today`` (which waivers
    have expired) to today, UTC. ``latest_only``: see :func:`run_audit`.
    """

    options: AuditOptions | None = None
    checks: Catalogue | Sequence[CheckSpec] | None = None
    snapshot: str | None = None
    compare_to: str | None = None
    waivers: Path | Sequence[Waiver] | None = None
    latest_only: bool = False
    today: date | None = None

    def but(self, **changes: Unpack[AuditFields]) -> AuditRequest:
        """This request with ``changes``."""
        return replace(self, **changes)


def run_audit(
    source: Store | duckdb.DuckDBPyConnection,
    request: AuditRequest | None = None,
    /,
    **changes: Unpack[AuditFields],
) -> AuditResult:
    """Judge ``request.snapshot`` (see :class:`AuditRequest`; keyword arguments change its
    fields) from the findings history.

    On a store, every committed snapshot that the current version of a check has not judged
    is judged and appended to the store's findings history first (a whole store written by
    an older toolkit on first use, with a progress bar on a terminal); on a connection
    (``store.duckdb()``, a fixture's) what its history lacks is judged in memory. In a
    partial snapshot, what its failed calls may have left out is ``unobserved`` (its last
    state kept, never resolved), and ``result.not_collected`` names the tables they left
    without a row. ``latest_only`` judges only the judged and compared snapshots and the one
    before each (back to the complete snapshot before a partial compared one), reading and
    writing no findings history: it needs no write access to the store, and ``first_seen``,
    ``regressed`` and resolve times see only those snapshots.
    """
    asked = (request or AuditRequest()).but(**changes)
    catalogue = _catalogue(asked.checks, asked.options)
    waiving = _chosen_waivers(asked.waivers, catalogue, asked.options)
    production = asked.options.production_pattern if asked.options else None
    started = time.perf_counter()
    timings: dict[str, float] = {}
    with store_reads():
        history = History.open(
            source, production, asked.latest_only, asked.snapshot, asked.compare_to
        )
        con = history.con
        _prepare(con, source, catalogue, production, asked.latest_only)
        committed = committed_snapshots(con)
        target, compare = select_snapshots(committed, asked.snapshot, asked.compare_to)
        read = reach(committed, target, compare) if asked.latest_only else None
        timings["connect"] = time.perf_counter() - started
        started = time.perf_counter()
        history.bring_up_to_date(catalogue, committed, read)
        timings["checks"] = time.perf_counter() - started
        started = time.perf_counter()
        store = source if isinstance(source, Store) and read is None else None
        result = _lifecycle(con, history, store, catalogue, (target, compare), read, waiving, asked)
    timings["lifecycle"] = time.perf_counter() - started
    return replace(result, timings={**timings, **result.timings})


def _lifecycle(
    con: duckdb.DuckDBPyConnection,
    history: History,
    store: Store | None,
    catalogue: Catalogue,
    pair: tuple[SnapshotRef, SnapshotRef | None],
    read: Sequence[SnapshotRef] | None,
    waivers: Sequence[Waiver],
    asked: AuditRequest,
) -> AuditResult:
    """The findings with their states and waivers, the waiver report and the mean time to
    resolve, from ``audit_results`` (:mod:`toolkit.audit.lifecycle`); a full-history audit
    of a ``store`` reads and keeps its findings' marks (:mod:`toolkit.audit.lifecycle.marks`)."""
    target, compare = pair
    committed = read or committed_snapshots(con)
    partial = [s.snapshot_id for s in committed if s.status == "partial" and s.seq <= target.seq]
    blind = _blind(con, catalogue.specs, partial)
    kept = [target.snapshot_id] + ([compare.snapshot_id] if compare else [])
    read_ids = [s.snapshot_id for s in read] if read is not None else None
    con.register("audit_checks", _checks_table(catalogue.specs))
    con.register("audit_blind", blind)
    last_observed = sorted(set(_last_observed(blind, committed, compare).values()))
    observed, described = [*kept, *partial], [*kept, *partial, *last_observed]
    build_positions(con, read_ids, target.seq)
    build_text(con, described)
    marks = build_marks(con, described, kept_of(store) if store else None)
    if store and marks.stale and target == committed[-1]:
        warned = keep_marks(store, marks_to_keep(con))
        history.warnings.extend([warned] if warned else [])
    build_summary(con, target.seq, compare.seq if compare else None)
    build_unobserved(con, observed)
    build_names(con, [*kept, *last_observed])
    findings_table(con, target.seq, compare.seq if compare else None)
    findings, report = apply_waivers(con, waivers, asked.today or datetime.now(UTC).date())
    times = query_frame(
        con, "select snapshot_id, snapshot_at, seq, status as snapshot_status from snapshots"
    )
    positions = query_frame(con, "select snapshot_id from audit_positions order by pos")
    return AuditResult(
        target=target,
        compare=compare,
        checks=catalogue.specs,
        findings=findings,
        waiver_report=report,
        load_rows=_rows_reader(con, observed, described, own=history.own),
        details=_details(con, kept),
        snapshot_times=times,
        mttr_table=mean_time_to_resolve(con),
        timings=dict(history.timings),
        latest_only=asked.latest_only,
        read=tuple(positions.snapshot_id),
        blind=blind.to_pandas(),
        not_collected=not_collected_tables(con, (target, compare)),
        configured=catalogue.configured(asked.options),
        judged=dict(history.judged),
        warnings=tuple(history.warnings),
    )


def _rows_reader(
    con: duckdb.DuckDBPyConnection,
    observed: Sequence[str],
    described: Sequence[str],
    own: bool,
) -> Callable[[], pa.Table]:
    """What reads the result's rows (every alarm of the history: :func:`read_rows`): on the
    audit's own connection when first asked; a caller's connection may run other audits
    after this one, so its rows are read now."""
    if own:
        return lambda: read_rows(con, observed, described)
    rows = read_rows(con, observed, described)
    return lambda: rows


def _details(con: duckdb.DuckDBPyConnection, kept: Sequence[str]) -> pa.Table:
    """The full rows of the judged and compared snapshots, as text."""
    columns = ", ".join(["check_id", *OUTPUT_COLUMNS])
    table = con.sql(
        f"select {columns} from audit_text where list_contains($kept, snapshot_id)",  # noqa: S608 - declared names
        params={"kept": list(kept)},
    ).to_arrow_table()
    schema = pa.schema([(name, pa.string()) for name in table.column_names])
    return table.cast(schema)


def _chosen_waivers(
    waivers: Path | Sequence[Waiver] | None, catalogue: Catalogue, options: AuditOptions | None
) -> Sequence[Waiver]:
    """The waivers given, or the configured file's, read before any check runs; one naming
    no check an audit with ``options`` could run is refused (a typo would waive nothing)."""
    default = options.waivers_file if options else None
    chosen = waivers_from(waivers, default)
    ran = {spec.id for spec in catalogue.specs}
    if any(w.check not in ran for w in chosen):  # a skipped check's, or a typo
        where = waivers if isinstance(waivers, PurePath) else default
        require_known_checks(chosen, _known_ids(catalogue, options), str(where or "waivers"))
    return chosen


def _prepare(
    con: duckdb.DuckDBPyConnection,
    source: Store | duckdb.DuckDBPyConnection,
    catalogue: Catalogue,
    production: str | None,
    latest_only: bool,
) -> None:
    """Set the production pattern and give the connection the derived views the checks
    read; confine a connection of ours to the store's files, and leave a caller's
    connection otherwise as it is. A store's full-history audit makes its views as it
    judges (:func:`toolkit.audit.judge.judge`): only the checks that run on it need them."""
    if isinstance(source, Store):
        set_production(con, production)
        confine(con, source.url)
        if latest_only:
            install_views(con, checks=catalogue.specs)
    else:
        ensure_views(con, production=production, checks=catalogue.specs)


def _last_observed(
    blind: pa.Table, read: Sequence[SnapshotRef], compare: SnapshotRef | None
) -> dict[str, str]:
    """For each check blind in the compared snapshot, the newest snapshot read before it in
    which the check is not blind: a finding that neither the judged nor the compared
    snapshot observed is described by its alarm there."""
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
    ``partial`` snapshot left short there (:func:`blind_checks`)."""
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


def _catalogue(
    checks: Catalogue | Sequence[CheckSpec] | None, options: AuditOptions | None
) -> Catalogue:
    if isinstance(checks, Catalogue):
        return checks
    if checks is None:
        return Catalogue.from_options(options)
    specs = tuple(checks)
    chosen = {s.id for s in specs}
    overrides = options.check_params if options else {}
    return Catalogue(specs, {k: v for k, v in overrides.items() if k in chosen})


def _known_ids(catalogue: Catalogue, options: AuditOptions | None) -> set[str]:
    """Every check id an audit with ``options`` could run (skipped ones too), and
    ``catalogue``'s."""
    folders = options.check_folders if options else ()
    builtin = options.builtin_checks if options else True
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
