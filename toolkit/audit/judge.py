"""Judging snapshots: what each version of each check says of each resource, once.

A check's *version* is a hash of what decides its rows: its SQL and header, its parameters
as bound, the production pattern, the derived views it reads and the store's schema
version. What a version said of a committed snapshot never changes, so it is judged once
and kept in the store's findings history (:mod:`toolkit.snapshot.findings_history`);
:func:`~toolkit.audit.run_audit` judges only what the history lacks (:func:`unjudged`).

A check whose header says ``-- history: snapshot`` judges a snapshot from it alone, and
one saying ``previous`` from it and the one before, so a few new snapshots are judged on a
connection that opens only their files (and, for ``previous``, the one before each's); a
``history: all`` check reads the whole history up to them, and its views compute rows for
the snapshots judged alone (the judge names them in the variable ``views/judging.sql``
reads). Rows that break the output contract, or of a snapshot the audit did not read, are
refused with the check's file named. Example::

    checks = versioned(catalogue, production_pattern(con))
    rows = judge(con, checks, unjudged(con, checks, ids), committed)
"""

from __future__ import annotations

import hashlib
import json
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from toolkit.audit.check_file import OUTPUT_COLUMNS, STATUSES
from toolkit.audit.check_run import (
    DerivedViews,
    install_views,
    nested_arrow,
    production_pattern,
    require_shape,
    require_text_columns,
    run_sql,
    set_production,
)
from toolkit.errors import CheckDefinitionError
from toolkit.snapshot import SCHEMA_VERSION
from toolkit.snapshot.schema_tables import DECLARED

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from toolkit.audit.catalogue import Catalogue
    from toolkit.audit.check_file import CheckSpec
    from toolkit.audit.findings import SnapshotRef

__all__ = ["RESULTS", "Versioned", "judge", "judged_pairs", "unjudged", "versioned"]

RESULTS = pa.schema([f for f in DECLARED["check_results"].arrow_schema if f.name != "run_id"])
"""What a judging returns: the ``check_results`` columns but the run's id."""
CHECK_WORKERS = 2
"""Checks judged side by side (each DuckDB query also uses DuckDB's own threads)."""
_IDS = "audit_judged_ids"
"""The query parameter, and the DuckDB variable the views' ``judging()`` reads, naming the
snapshots judged (no check parameter is named so)."""
_KNOWN = "audit_committed_ids"
"""The one naming every committed snapshot: a row of another is refused."""


@dataclass(frozen=True)
class Versioned:
    """A check of the audit, with its parameters as bound and its version."""

    spec: CheckSpec
    params: Mapping[str, object]
    version: str


def versioned(catalogue: Catalogue, production: str | None) -> tuple[Versioned, ...]:
    """The catalogue's checks with their versions (see the module docstring)."""
    derived = DerivedViews()
    found = []
    for spec in catalogue.specs:
        params = spec.bind(catalogue.overrides.get(spec.id))
        views = [(v.path.name, v.text) for v in derived.files_read([spec.sql])]
        header = [spec.id, spec.title, spec.severity, spec.area, spec.history]
        text = json.dumps(
            [SCHEMA_VERSION, header, spec.sql, params, production, views],
            default=str,
            sort_keys=True,
        )
        found.append(Versioned(spec, params, hashlib.sha256(text.encode()).hexdigest()))
    return tuple(found)


def judged_pairs(con: duckdb.DuckDBPyConnection) -> set[tuple[str, str, str]]:
    """``(check_id, check_version, snapshot_id)`` of every judgement the connection's
    findings history holds (none on a connection without one: a fixture's)."""
    try:
        rows = con.execute("select check_id, check_version, snapshot_id from check_runs").fetchall()
    except duckdb.CatalogException:
        return set()
    return {(str(c), str(v), str(s)) for c, v, s in rows}


def unjudged(
    checks: Iterable[Versioned], snapshot_ids: Sequence[str], judged: set[tuple[str, str, str]]
) -> dict[str, list[str]]:
    """Per check id, the ``snapshot_ids`` its version has not judged (``judged``:
    :func:`judged_pairs`); a check with none is left out."""
    found = {}
    for check in checks:
        missing = [i for i in snapshot_ids if (check.spec.id, check.version, i) not in judged]
        if missing:
            found[check.spec.id] = missing
    return found


def judge(
    con: duckdb.DuckDBPyConnection,
    checks: Sequence[Versioned],
    wanted: Mapping[str, Sequence[str]],
    committed: Sequence[SnapshotRef],
    opener: Callable[[Sequence[str], Sequence[CheckSpec]], duckdb.DuckDBPyConnection] | None = None,
    progress: Callable[[str], None] | None = None,
) -> pa.Table:
    """The rows (:data:`RESULTS`) of each check of ``checks`` for the snapshots ``wanted``
    names for it. A ``history: snapshot`` or ``previous`` check judging less than half of
    ``committed`` runs on a connection ``opener`` gives for those snapshots (and, for
    ``previous``, the one before each), closed at the end; everything else runs on
    ``con``. ``progress`` is called with each check's id when it is judged."""
    jobs = [(c, list(wanted[c.spec.id])) for c in checks if wanted.get(c.spec.id)]
    if not jobs:
        return RESULTS.empty_table()
    production = production_pattern(con)
    at = {s.snapshot_id: s.snapshot_at for s in committed}
    keys = [_files_read(check, ids, committed, opener) for check, ids in jobs]
    groups: dict[tuple[str, ...] | None, list[int]] = {}
    for n, key in enumerate(keys):
        groups.setdefault(key, []).append(n)
    futures: dict[int, Future[pa.Table]] = {}
    with (
        ExitStack() as stack,
        ThreadPoolExecutor(CHECK_WORKERS, thread_name_prefix="audit-check") as pool,
    ):
        # the checks on the audit's connection first: they run while the others' opens
        for key in sorted(groups, key=lambda k: k is not None):
            chosen = [jobs[n][0].spec for n in groups[key]]
            place = _place(con, key, chosen, opener, stack)
            for n in groups[key]:
                check, ids = jobs[n]
                futures[n] = pool.submit(_judge_one, place, check, ids, production, at)
        tables = []
        for n, (check, _) in enumerate(jobs):
            tables.append(futures[n].result())
            if progress is not None:
                progress(check.spec.id)
    return pa.concat_tables(tables)


def _place(
    con: duckdb.DuckDBPyConnection,
    key: tuple[str, ...] | None,
    specs: Sequence[CheckSpec],
    opener: Callable[[Sequence[str], Sequence[CheckSpec]], duckdb.DuckDBPyConnection] | None,
    stack: ExitStack,
) -> duckdb.DuckDBPyConnection:
    """Where the checks ``specs`` run: ``con`` (``key`` None), or the connection ``opener``
    gives of the ``key`` snapshots' files with their derived views (closed with ``stack``).
    With an ``opener`` (a store's), ``con`` is given the views of the checks that run on
    it here: an audit that judges one new snapshot makes the views of the few checks that
    read the whole history there, not of all of them."""
    if key is None:
        if opener is not None:
            install_views(con, checks=specs)
        return con
    assert opener is not None  # _files_read gives a key only with one
    own = opener(key, specs)
    stack.callback(own.close)
    return own


def _files_read(
    check: Versioned,
    ids: Sequence[str],
    committed: Sequence[SnapshotRef],
    opener: object | None,
) -> tuple[str, ...] | None:
    """The snapshots whose files a connection of its own would open for ``check`` judging
    ``ids`` (those, and the one before each for a ``history: previous`` check), or None
    when it runs on the audit's: a ``history: all`` check, or one judging half of
    ``committed`` or more. A ``snapshot`` check's connection opens no other snapshot's
    files: after a compaction the one before sits in a file that holds the whole history."""
    if opener is None or check.spec.history == "all":
        return None
    order = [s.snapshot_id for s in committed]
    place = {n: i for i, n in enumerate(order)}
    read = set(ids)
    if check.spec.history == "previous":
        read |= {order[place[i] - 1] for i in ids if place.get(i, 0) > 0}
    if 2 * len(read) >= len(order):
        return None
    return tuple(i for i in order if i in read)


def _judge_one(
    con: duckdb.DuckDBPyConnection,
    check: Versioned,
    ids: Sequence[str],
    production: str | None,
    at: Mapping[str, object],
) -> pa.Table:
    """One check's rows of the ``ids`` snapshots, on a cursor of ``con``."""
    spec = check.spec
    cursor = con.cursor()
    try:
        set_production(cursor, production)
        # the views' judging() (views/judging.sql): their rows of these snapshots alone
        cursor.execute(f"SET VARIABLE {_IDS} = ?", [list(ids)])
        # The check's SQL is code from a check file, never a value; values are parameters.
        sql = (
            f"select * from (\n{spec.sql}\n) as check_rows "  # noqa: S608
            f"where list_contains(${_IDS}, snapshot_id) "  # and rows to refuse:
            f"or not coalesce(list_contains(${_KNOWN}, snapshot_id), false)"
        )
        try:
            params = {**check.params, _IDS: list(ids), _KNOWN: list(at)}
            result = run_sql(cursor, spec, sql, params)
        except CheckDefinitionError:
            require_text_columns(cursor, spec, dict(check.params))  # the precise message
            raise
    finally:
        cursor.close()
    require_shape(spec, result.column_names, [nested_arrow(f.type) for f in result.schema])
    return _results(result, check, at)


def _results(result: pa.Table, check: Versioned, at: Mapping[str, object]) -> pa.Table:
    """A check's output as :data:`RESULTS`, its rows refused if the lifecycle would
    silently drop them."""
    texts = {name: _text(result.column(name)) for name in OUTPUT_COLUMNS}
    problems = []
    odd = set(pc.unique(texts["status"]).to_pylist()) - set(STATUSES)
    if odd:
        shown = ", ".join(sorted("null" if v is None else repr(v) for v in odd))
        problems.append(f"status {shown}, where a check returns 'alarm', 'ok' or 'unknown'")
    if texts["resource_id"].null_count:
        problems.append("rows with no resource_id, which identifies a finding")
    if odd := set(pc.unique(texts["snapshot_id"]).to_pylist()) - set(at):
        shown = ", ".join(sorted("null" if v is None else repr(v) for v in odd))
        problems.append(f"snapshot_id {shown}, not a snapshot the audit read")
    if problems:
        raise CheckDefinitionError(f"{check.spec.path}: returned {'; and '.join(problems)}")
    rows = result.num_rows
    known = pa.array(list(at), pa.string())
    times = pa.array(list(at.values()), RESULTS.field("snapshot_at").type)
    snapshot_at = pc.take(times, pc.index_in(texts["snapshot_id"], value_set=known))
    fixed = {
        "snapshot_at": snapshot_at,
        "check_id": pa.repeat(pa.scalar(check.spec.id), rows),
        "check_version": pa.repeat(pa.scalar(check.version), rows),
        "severity": pa.repeat(pa.scalar(check.spec.severity), rows),
    }
    columns = [fixed[f.name] if f.name in fixed else texts[f.name] for f in RESULTS]
    return pa.Table.from_arrays(columns, schema=RESULTS)


def _text(column: pa.ChunkedArray) -> pa.ChunkedArray:
    # require_shape refused nested types: everything else casts to text.
    return column if pa.types.is_string(column.type) else pc.cast(column, pa.string())
