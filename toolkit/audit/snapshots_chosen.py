"""Which snapshots an audit judges, compares and reads: the ids or prefixes a user gives, and
what a latest-only audit reads around them, and the checks a partial snapshot left blind.

:func:`~toolkit.audit.run_audit` and :func:`~toolkit.report.snapshot_diff.diff_snapshots` share
these, so ``--snapshot``, ``--compare-to``, ``--from`` and ``--to`` read ids alike::

    committed = committed_snapshots(con)
    target, compare = select_snapshots(committed, "0193", None)   # a unique id prefix
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolkit.audit.check_run import VIEWS, DerivedViews
from toolkit.audit.findings import SnapshotRef
from toolkit.errors import AuditError
from toolkit.snapshot import SNAPSHOT_TABLES
from toolkit.snapshot.coverage import ENDPOINT_TABLES, not_collected, tables_short

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from pathlib import Path

    import duckdb

    from toolkit.audit.check_file import CheckSpec

__all__ = [
    "ENDPOINT_TABLES",
    "blind_checks",
    "committed_snapshots",
    "not_collected_tables",
    "reach",
    "select_snapshots",
]


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
    ``options`` names the two in messages as the command line that gave them does.

    The judged snapshot defaults to the newest one, partial or not: a fix or a new problem
    in it is never skipped in silence, and what its failed calls did not collect is
    ``unobserved`` there (its last state kept), never resolved. It is compared by default
    with the newest complete snapshot before it."""
    if snapshot is None:
        if not committed:
            raise AuditError("the store has no snapshot yet: run `platform-audit snapshot` first")
        target = committed[-1]
    else:
        target = _find(committed, snapshot, options[0])
    if compare_to is not None:
        compare = _find(committed, compare_to, options[1])
        if compare.seq >= target.seq:
            judged = (
                f"the newest snapshot {target.snapshot_id}"
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


def reach(
    committed: Sequence[SnapshotRef], target: SnapshotRef, compare: SnapshotRef | None
) -> list[SnapshotRef]:
    """The snapshots a latest-only audit reads: :func:`_window`, and when the compared
    snapshot is partial, every snapshot back to the complete one before it (and the one
    before that, for lag checks). A check blind in the compared snapshot describes its open
    findings by their alarm in the last snapshot that observed them (the engine finds it),
    which may lie several partial snapshots back; at the latest a complete one observed it."""
    window = _window(committed, target, compare)
    if compare is None or compare.status != "partial":
        return window
    earlier = [s for s in committed if s.seq < compare.seq]
    complete = [i for i, s in enumerate(earlier) if s.status == "complete"]
    start = max(complete[-1] - 1, 0) if complete else 0
    chosen = {s.snapshot_id: s for s in [*window, *earlier[start:]]}
    return sorted(chosen.values(), key=lambda s: s.seq)


def not_collected_tables(
    con: duckdb.DuckDBPyConnection, refs: Sequence[SnapshotRef | None]
) -> dict[str, tuple[str, ...]]:
    """Per partial snapshot of ``refs``, the tables its failed calls left without a row
    (:func:`toolkit.snapshot.coverage.not_collected`): outputs say "not collected" for
    them, never 0. Complete snapshots have no failed call, so none is listed."""
    found: dict[str, tuple[str, ...]] = {}
    for ref in refs:
        if ref is None or ref.status != "partial" or ref.snapshot_id in found:
            continue
        params = {"id": ref.snapshot_id}
        failures = con.execute(
            "select distinct endpoint, table_name from collection_errors "
            "where snapshot_id = $id and not coalesce(not_visible, false)",
            params,
        ).fetchall()
        short = {t for e, n in failures for t in tables_short(str(e), n)}
        counts = {  # table names from the declared schema only, never input
            t: con.execute(
                f"select count(*) from {t} where snapshot_id = $id",  # noqa: S608
                params,
            ).fetchall()[0][0]
            for t in sorted(short & set(SNAPSHOT_TABLES))
        }
        found[ref.snapshot_id] = tuple(not_collected(failures, counts))
    return found


def blind_checks(
    specs: Iterable[CheckSpec],
    failures: Iterable[tuple[str, str, str | None]],
    views: Path = VIEWS,
) -> list[tuple[str, str]]:
    """``(check_id, snapshot_id)`` for each check that reads a table left short in a
    snapshot: ``failures`` are ``(snapshot_id, endpoint, table_name)`` of the
    ``collection_errors`` rows that made snapshots partial (a schema drift names its table;
    any other failure its endpoint, see :data:`ENDPOINT_TABLES`).

    A finding of such a check with no row in that snapshot was not observed: the data that
    would show it may not have been collected.
    """
    derived = DerivedViews(views)
    known = {*SNAPSHOT_TABLES, *derived.names}
    reads = {spec.id: derived.names_read([spec.sql]) & known for spec in specs}
    short: dict[str, set[str]] = {}
    for snapshot_id, endpoint, table in failures:
        short.setdefault(snapshot_id, set()).update(tables_short(endpoint, table))
    return [
        (check_id, snapshot_id)
        for check_id, read in reads.items()
        for snapshot_id, tables in sorted(short.items())
        if read & tables
    ]
