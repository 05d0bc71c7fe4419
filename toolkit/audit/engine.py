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

import functools
import time
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import PurePath
from typing import TYPE_CHECKING

import pyarrow as pa

from toolkit.audit.catalogue import Catalogue
from toolkit.audit.check_file import SEVERITIES
from toolkit.audit.check_rows import run_checks
from toolkit.audit.check_run import confine, ensure_views, production_pattern, set_production
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
from toolkit.audit.scope import FRESH_SCHEMA, blind_checks, plan_scope, scoped
from toolkit.audit.snapshots_chosen import (
    committed_snapshots,
    not_collected_tables,
    reach,
    select_snapshots,
    split_window,
)
from toolkit.audit.store_connections import (
    EarlyConnection,
    audit_connection,
    files_opener,
    row_counts,
    store_reads,
    table_readers,
    window_scope,
    windowed,
)
from toolkit.audit.waivers import apply_waivers, require_known_checks, waivers_from
from toolkit.snapshot import Store

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

    import duckdb
    import pandas as pd

    from toolkit.audit.check_file import CheckSpec
    from toolkit.audit.check_rows import CheckRows
    from toolkit.audit.status_cache import AuditCache, StatusCache
    from toolkit.audit.waivers import Waiver
    from toolkit.config import Settings

__all__ = ["run_audit"]

_BLIND_SCHEMA = pa.schema([("check_id", pa.string()), ("snapshot_id", pa.string())])


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
    cache: StatusCache | None = None,
) -> AuditResult:
    """Run the checks and judge ``snapshot`` (default: the newest one, partial or not).

    ``compare_to`` defaults to the complete snapshot before it. In a partial snapshot, what
    its failed calls may have left out is ``unobserved`` (its last state kept, never
    resolved), and ``result.not_collected`` names the tables they left without a row.
    ``source`` is a store or a DuckDB connection that has the store's views
    (``store.duckdb()``, or a fixture's);
    ``checks`` defaults to the built-in ones plus the folders ``settings`` name, with the
    thresholds it sets. ``waivers`` (a file or parsed waivers) defaults to the configured
    file. ``latest_only`` reads only the judged and compared snapshots and the one before
    each (back to the complete snapshot before a partial compared one: :func:`reach`), so
    ``first_seen``, ``regressed`` and resolve times see only those, and a check that says
    ``-- history: all`` judges from those snapshots alone (see docs/checks.md).
    Derived views that several checks read are computed once for the run (see
    :mod:`toolkit.audit.scope`); ``result.timings`` says where the time went.
    ``today`` decides which waivers have expired (default: today, UTC). ``cache`` keeps
    what ``history: snapshot`` and ``previous`` checks said of each snapshot for the next
    full audit of the same store (:mod:`toolkit.audit.status_cache`); ``result.reused`` says
    what came from it. A latest-only audit does not use it; an audit of a connection needs
    it bound to the store (``cache.bound(store.url)``).
    """
    catalogue = _catalogue(checks, settings)
    cache = _bound(cache, source)
    waiving = _chosen_waivers(waivers, catalogue, settings)
    started = time.perf_counter()
    # A data file gone, or S3 failing: the store, not a check (store_reads).
    with store_reads(), ExitStack() as stack:
        con, snapshot_rows = audit_connection(source, latest_only, snapshot, compare_to)
        _prepare(con, source, catalogue, settings)
        chosen = _Snapshots.chosen(con, snapshot, compare_to, latest_only)
        opener = files_opener(source, snapshot_rows, chosen.committed, production_pattern(con))
        # The window's connection opens while the outer scope is built (reading Delta logs
        # and footers leaves the cores to DuckDB's work there).
        window = chosen.split if windowed(catalogue.specs) else None
        early = stack.enter_context(EarlyConnection(opener, window))
        timings: dict[str, float] = {"connect": time.perf_counter() - started}
        started = time.perf_counter()
        checked = _check_in_scopes(con, source, catalogue, chosen, cache, opener, early, timings)
    timings["checks"] = time.perf_counter() - started
    started = time.perf_counter()
    findings, report, mttr = _lifecycle(
        con, checked, catalogue, chosen, waiving, today or datetime.now(UTC).date()
    )
    timings["lifecycle"] = time.perf_counter() - started
    times = query_frame(
        con, "select snapshot_id, snapshot_at, seq, status as snapshot_status from snapshots"
    )
    read = query_frame(con, "select snapshot_id from audit_positions order by pos")
    uncollected = not_collected_tables(con, (chosen.target, chosen.compare))
    memo = checked.cache
    return AuditResult(
        target=chosen.target,
        compare=chosen.compare,
        checks=catalogue.specs,
        findings=findings,
        waiver_report=report,
        rows=checked.rows.status,
        details=checked.rows.details,
        snapshot_times=times,
        mttr_table=mttr,
        timings=timings,
        latest_only=latest_only,
        read=tuple(read.snapshot_id),
        blind=checked.blind.to_pandas(),
        not_collected=uncollected,
        configured=catalogue.configured(settings),
        reused=dict(memo.reused) if memo else {},
        warnings=tuple(memo.warnings) if memo else (),
    )


@dataclass(frozen=True)
class _Snapshots:
    """The snapshots an audit judges (``target``), compares it with, and reads: ``read``,
    the few of a latest-only audit (:func:`reach`; None: every committed one), and
    ``split``, the window a full audit builds the full rows in (:func:`split_window`; None
    in a latest-only audit, or when the window is the whole history)."""

    committed: list[SnapshotRef]
    target: SnapshotRef
    compare: SnapshotRef | None
    read: list[SnapshotRef] | None
    split: list[str] | None

    @classmethod
    def chosen(
        cls,
        con: duckdb.DuckDBPyConnection,
        snapshot: str | None,
        compare_to: str | None,
        latest_only: bool,
    ) -> _Snapshots:
        committed = committed_snapshots(con)
        target, compare = select_snapshots(committed, snapshot, compare_to)
        if latest_only:
            return cls(committed, target, compare, reach(committed, target, compare), None)
        return cls(committed, target, compare, None, split_window(committed, target, compare))

    @property
    def read_ids(self) -> list[str] | None:
        """The ids of :attr:`read` (None: every committed snapshot)."""
        return None if self.read is None else [s.snapshot_id for s in self.read]

    @property
    def keep(self) -> list[str]:
        """The judged snapshot's id, then the compared one's: the full rows kept."""
        return [self.target.snapshot_id] + ([self.compare.snapshot_id] if self.compare else [])

    @property
    def partial(self) -> list[str]:
        """The partial snapshots read up to the judged one."""
        return [
            s.snapshot_id
            for s in (self.read or self.committed)
            if s.status == "partial" and s.seq <= self.target.seq
        ]


@dataclass(frozen=True)
class _Checked:
    """What the checks said (:func:`run_checks`), where they were blind, and the status
    cache the audit used (None: none)."""

    rows: CheckRows
    blind: pa.Table
    cache: AuditCache | None


def _chosen_waivers(
    waivers: Path | Sequence[Waiver] | None, catalogue: Catalogue, settings: Settings | None
) -> Sequence[Waiver]:
    """The waivers given, or the configured file's, read before any check runs; one naming
    no check an audit with ``settings`` could run is refused (a typo would waive nothing)."""
    default = settings.waivers_file if settings else None
    chosen = waivers_from(waivers, default)
    ran = {spec.id for spec in catalogue.specs}
    if any(w.check not in ran for w in chosen):  # a skipped check's, or a typo
        where = waivers if isinstance(waivers, PurePath) else default
        require_known_checks(chosen, _known_ids(catalogue, settings), str(where or "waivers"))
    return chosen


def _prepare(
    con: duckdb.DuckDBPyConnection,
    source: Store | duckdb.DuckDBPyConnection,
    catalogue: Catalogue,
    settings: Settings | None,
) -> None:
    """Set the production pattern; confine a connection of ours to the store's files (its
    derived views are bound in each scope: :func:`scoped`), and give a caller's connection,
    left otherwise as it is, the views the checks read."""
    production = settings.production_pattern if settings else None
    if isinstance(source, Store):
        set_production(con, production)
        confine(con, source.url)
    else:
        ensure_views(con, production=production, checks=catalogue.specs)


def _check_in_scopes(
    con: duckdb.DuckDBPyConnection,
    source: Store | duckdb.DuckDBPyConnection,
    catalogue: Catalogue,
    chosen: _Snapshots,
    cache: StatusCache | None,
    opener: Callable[[Sequence[str]], duckdb.DuckDBPyConnection] | None,
    early: EarlyConnection,
    timings: dict[str, float],
) -> _Checked:
    """Every check, in the scopes the audit needs (see :func:`run_checks`): the snapshots
    read, the window of a full audit on ``early``'s connection, and the snapshots a status
    cache lacks; then the owners' names of the snapshots that describe findings."""
    started = time.perf_counter()
    partial, keep = chosen.partial, chosen.keep
    blind = _blind(con, catalogue.specs, partial)
    last_observed = _last_observed(blind, chosen.read or chosen.committed, chosen.compare)
    ids = chosen.read_ids
    plan = plan_scope(catalogue.specs, row_counts(con, ids), table_readers(con))
    # A store's latest-only connection already shows only those snapshots (audit_connection).
    with scoped(con, ids, plan, tables_limited=isinstance(source, Store)):
        memo = fresh = None
        if cache is not None and chosen.split is not None:  # else every check reads it all
            memo = cache.for_audit(con, production_pattern(con))
            memo.forget_unused()
            memo.load(catalogue.specs, catalogue.overrides)
            fresh = memo.fresh([s.snapshot_id for s in chosen.committed], keep)
        later = None
        if fresh is not None and opener is not None:
            later = functools.partial(opener, fresh.read)
        with (
            window_scope(con, catalogue.specs, chosen.split, own=early.take) as in_window,
            window_scope(
                con, catalogue.specs, fresh.read if fresh else None, FRESH_SCHEMA, later
            ) as new,
        ):
            timings["scope"] = time.perf_counter() - started
            rows = run_checks(
                con,
                catalogue,
                keep,
                timings,
                window=in_window,
                observe=partial,
                last_observed=last_observed,
                cache=memo,
                fresh=(new, fresh) if new is not None and fresh is not None else None,
            )
        build_names(con, [*keep, *sorted(set(last_observed.values()))])
    return _Checked(rows, blind, memo)


def _lifecycle(
    con: duckdb.DuckDBPyConnection,
    checked: _Checked,
    catalogue: Catalogue,
    chosen: _Snapshots,
    waivers: Sequence[Waiver],
    today: date,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The findings with their states and waivers, the waiver report, and the mean time to
    resolve, from the checks' rows (:mod:`toolkit.audit.lifecycle`)."""
    register_rows(con, checked.rows.status)
    con.register("audit_details", checked.rows.details)
    con.register("audit_checks", _checks_table(catalogue.specs))
    con.register("audit_blind", checked.blind)
    build_positions(con, chosen.read_ids, chosen.target.seq)
    build_judged(con)
    build_unobserved(con)
    findings_table(con, chosen.target.seq, chosen.compare.seq if chosen.compare else None)
    findings, report = apply_waivers(con, waivers, today)
    return findings, report, mean_time_to_resolve(con)


def _bound(
    cache: StatusCache | None, source: Store | duckdb.DuckDBPyConnection
) -> StatusCache | None:
    """``cache`` bound to the audited store; a connection's must be bound by the caller."""
    if cache is None or not isinstance(source, Store):
        if cache is not None and cache.store_url is None:
            raise ValueError(
                "run_audit(connection, cache=...) needs the cache bound to the connection's "
                "store: cache.bound(store.url)"
            )
        return cache
    if cache.store_url not in (None, source.url):
        raise ValueError(f"the status cache is bound to {cache.store_url}, not to {source.url}")
    return cache.bound(source.url)


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
