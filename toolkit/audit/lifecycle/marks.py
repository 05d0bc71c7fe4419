"""Each finding's marks: what its check said of it in each snapshot read, a character each.

A finding (a check and a resource) is marked ``1`` in a snapshot where some row of it there
is in alarm, ``u`` where its rows there that are not ok are all ``unknown``, and ``0``
otherwise (ok, or no row). :func:`build_marks` registers ``audit_marks``: a row per finding
ever marked ``1`` or ``u``, its ``marks`` one character per snapshot read (by
``audit_positions.pos``), from which the lifecycle (:mod:`toolkit.audit.lifecycle`) reads
its summary. The judged, compared and partial snapshots' ok rows then refine ``u`` there:
a finding one of whose rows there is ok was judged.

Marks come from the rows that are not ok, so reading them from the findings history means
reading every alarm of it. A store therefore keeps them (``finding_marks``, rewritten whole
after each audit of its newest snapshot): a row per check version and finding, its marks
a character per snapshot sequence number from ``first_seq`` up to the newest snapshot then
(``-`` where no committed snapshot was), and a row per check version with no resource
whose marks say which numbers were committed snapshots (``0``) then. Snapshots commit in
sequence, so the kept marks still cover every snapshot up to that newest one that is
committed now; a pruned one is skipped. An audit reads the kept marks of the check
versions it runs and the rows of the snapshots they do not cover (a new snapshot; every
snapshot of a changed check): a new snapshot's cost no longer grows with the history.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from toolkit.snapshot.schema_tables import DECLARED

if TYPE_CHECKING:
    from collections.abc import Sequence

    import duckdb

__all__ = [
    "MARKS",
    "Marks",
    "as_matrix",
    "as_strings",
    "build_marks",
    "build_text",
    "read_rows",
    "resolved_episodes",
]

MARKS = DECLARED["finding_marks"].arrow_schema
"""The kept marks' columns (``finding_marks``)."""
_ALARM, _UNKNOWN, _NEITHER, _NONE = (ord(c) for c in "1u0-")
_EPISODES = pa.schema(
    [("check_id", pa.string()), ("started", pa.int64()), ("resolved", pa.int64())]
)
# Each finding ever in alarm numbered (its alarms a bit per snapshot read), and the
# snapshots that did not observe it.
_NUMBERED = """
create or replace temp table audit_numbered as
select check_id, resource_id, alarms::varchar as alarms,
    row_number() over (order by check_id, resource_id) - 1 as row
from audit_summary
"""

# The rows the lifecycle reads (audit_results: the findings history of the audit's check
# versions, or a judging of its own): every row of the snapshots whose rows describe
# findings ($described: the judged, compared and partial ones and those that last observed
# a finding), as audit_text. The result's rows, read when asked (_ROWS_SQL): every row not
# ok, and every row of the snapshots whose ok rows say something ($observed: the judged,
# compared and partial ones, where a finding with no row was not observed).
_TEXT_SQL = """
create or replace temp table audit_text as
select * from audit_results where list_contains($described, snapshot_id)
"""
_ROWS_SQL = """
select check_id, snapshot_id, resource_id, status from audit_results
where status <> 'ok' and not list_contains($described, snapshot_id)
union all
select check_id, snapshot_id, resource_id, status from audit_text
where status <> 'ok' or list_contains($observed, snapshot_id)
"""

# The marks of the (check, snapshot) pairs the kept marks do not cover, from the rows that
# are not ok: the described snapshots' from audit_text (read whole already), the others'
# from the findings history ({scanned}: a second branch only when there are some).
_TAIL_SQL = """
create or replace temp table audit_tail as
select check_id, resource_id, pos, bool_or(status = 'alarm') as alarm
from (
    select check_id, snapshot_id, resource_id, status from audit_text
    where status <> 'ok' and list_contains($text_ids, snapshot_id)
    {scanned}
) r
semi join audit_uncovered using (check_id, snapshot_id)
join audit_positions using (snapshot_id)
group by all
"""
_SCANNED = """
    union all
    select check_id, snapshot_id, resource_id, status from audit_results
    where status <> 'ok' and list_contains($scanned_ids, snapshot_id)
"""
# Every finding marked, numbered: the kept ones and those of the rows read.
_KEYS_SQL = """
create or replace temp table audit_marked as
select check_id, resource_id, (row_number() over (order by check_id, resource_id) - 1)::bigint
    as row
from (
    select check_id, resource_id from audit_kept_rows
    union
    select check_id, resource_id from audit_tail
)
"""


@dataclass(frozen=True)
class Marks:
    """What :func:`build_marks` read: ``kept`` how many snapshots read (the oldest) the
    kept marks covered, and whether they covered every check version of the audit."""

    read: int
    kept: int
    every_check: bool

    @property
    def stale(self) -> bool:
        """Whether a store's kept marks lack something this audit read."""
        return self.kept < self.read or not self.every_check


def build_text(con: duckdb.DuckDBPyConnection, described: Sequence[str]) -> None:
    """``audit_text``: every row of ``audit_results`` in the ``described`` snapshots (the
    judged, compared and partial ones, and those that last observed a finding), read once."""
    con.execute(_TEXT_SQL, {"described": sorted(set(described))})


def read_rows(
    con: duckdb.DuckDBPyConnection, observed: Sequence[str], described: Sequence[str]
) -> pa.Table:
    """The rows the result's ``rows`` hold: every row of ``audit_results`` that is not ok,
    and every row of the ``observed`` snapshots (judged, compared and partial), in Arrow,
    after :func:`build_text` of ``described``. This reads every alarm of the history."""
    params = {"observed": list(observed), "described": sorted(set(described))}
    return con.sql(_ROWS_SQL, params=params).to_arrow_table()


def build_marks(
    con: duckdb.DuckDBPyConnection, described: Sequence[str], kept: pa.Table | None
) -> Marks:
    """``audit_marks`` (see the module docstring) over ``audit_positions``, from ``kept``
    (a store's ``finding_marks``; None: none) and the rows of what it does not cover:
    ``audit_text`` (the ``described`` snapshots' rows) and ``audit_results``. Needs
    ``audit_versions`` (the audit's check versions)."""
    positions = con.execute("select snapshot_id, seq from audit_positions order by pos").fetchall()
    ids = [str(i) for i, _ in positions]
    seqs = np.array([int(s) for _, s in positions], dtype=np.int64)
    versions = dict(con.execute("select check_id, check_version from audit_versions").fetchall())
    covered, first_seq, old = _covering(kept, versions, seqs)
    con.register("audit_kept_rows", _kept_rows(kept, covered, versions))
    pairs = [(c, i) for c in versions for i in (ids[old:] if c in covered else ids)]
    con.register(
        "audit_uncovered",
        pa.Table.from_pylist(
            [{"check_id": c, "snapshot_id": i} for c, i in pairs],
            schema=pa.schema([("check_id", pa.string()), ("snapshot_id", pa.string())]),
        ),
    )
    uncovered = {i for _, i in pairs}
    text_ids = sorted(uncovered & set(described))
    scanned = sorted(uncovered - set(described))
    params: dict[str, object] = {"text_ids": text_ids}
    if scanned:
        params["scanned_ids"] = scanned
    con.execute(_TAIL_SQL.format(scanned=_SCANNED if scanned else ""), params)
    con.execute(_KEYS_SQL)
    ((count,),) = con.execute("select count(*) from audit_marked").fetchall()
    grid = np.full((count, len(ids)), _NEITHER, dtype=np.uint8)
    if old and count:
        rows, marks = _kept_marks(con)
        grid[rows, :old] = marks[:, seqs[:old] - first_seq]
    tail = con.sql(
        "select m.row, t.pos - 1 as col, t.alarm from audit_tail t join audit_marked m "
        "using (check_id, resource_id)"
    ).to_arrow_table()
    if tail.num_rows:
        alarm = tail["alarm"].to_numpy(zero_copy_only=False)
        grid[tail["row"].to_numpy(), tail["col"].to_numpy()] = np.where(alarm, _ALARM, _UNKNOWN)
    keys = con.sql("select check_id, resource_id from audit_marked order by row").to_arrow_table()
    con.register("audit_marks", keys.append_column("marks", as_strings(grid)))
    con.execute("drop table audit_tail; drop table audit_marked")
    con.unregister("audit_kept_rows")
    con.unregister("audit_uncovered")
    return Marks(len(ids), old, not (set(versions) - covered))


def resolved_episodes(con: duckdb.DuckDBPyConnection) -> pa.Table:
    """``check_id, started, resolved``: the positions (from 1) of the first alarm of each
    resolved episode of a finding ever in alarm (``audit_summary``) and of the snapshot
    that resolved it. An episode is a run of snapshots in alarm or not observing the
    finding (``audit_unobserved``: neither ends nor starts one) holding an alarm; it is
    resolved by the snapshot after it, which observed the finding not in alarm."""
    con.execute(_NUMBERED)
    summary = con.sql("select check_id, alarms from audit_numbered order by row").to_arrow_table()
    unobserved = con.sql(
        "select n.row, u.pos - 1 as col from audit_unobserved u "
        "join audit_numbered n using (check_id, resource_id)"
    ).to_arrow_table()
    con.execute("drop table audit_numbered")
    if summary.num_rows == 0:
        return _EPISODES.empty_table()
    width = len(summary["alarms"][0].as_py())
    marks = as_matrix(summary["alarms"], width).copy()
    marks[unobserved["row"].to_numpy(), unobserved["col"].to_numpy()] = _UNKNOWN
    # a run is the cells after a 0 up to the next; its alarms so far: all the row's alarms
    # up to a cell less those up to the run's 0 (no sort: one pass of cumulative sums)
    neither = marks == _NEITHER
    alarms = np.cumsum(marks == _ALARM, axis=1)
    in_run = alarms - np.maximum.accumulate(np.where(neither, alarms, 0), axis=1)
    rows, cols = np.nonzero((marks == _ALARM) & (in_run == 1))  # each run's first alarm
    runs = np.cumsum(neither, axis=1)
    resolved = runs[rows, cols] < runs[rows, -1]  # a 0 follows it in its row
    # the 0s that end a run holding an alarm, in the same order as those runs
    before = np.zeros_like(in_run)
    before[:, 1:] = in_run[:, :-1]
    _, ends = np.nonzero(neither & (before > 0))
    return pa.table(
        {
            "check_id": summary["check_id"].take(pa.array(rows[resolved])),
            "started": cols[resolved] + 1,
            "resolved": ends + 1,
        },
        schema=_EPISODES,
    )


def _covering(
    kept: pa.Table | None, versions: dict[str, str], seqs: np.ndarray
) -> tuple[set[str], int, int]:
    """The check ids whose current version ``kept`` covers, its ``first_seq``, and how
    many of the snapshots read (the oldest, by ``seqs``) it covers: none when its coverage
    rows disagree or name a snapshot read as not committed."""
    if kept is None or kept.num_rows == 0:
        return set(), 0, 0
    rows = kept.filter(pc.is_null(kept["resource_id"])).to_pylist()
    current = [r for r in rows if versions.get(r["check_id"]) == r["check_version"]]
    shapes = {(r["snapshot_id"], r["first_seq"], r["marks"]) for r in rows}
    if not current or len(shapes) != 1:
        return set(), 0, 0
    (_, first_seq, pattern) = shapes.pop()
    through = first_seq + len(pattern) - 1
    old = int(np.searchsorted(seqs, through, side="right"))
    spots = seqs[:old] - first_seq
    if (spots < 0).any() or any(pattern[int(s)] != "0" for s in spots):
        return set(), 0, 0
    return {r["check_id"] for r in current}, int(first_seq), old


def _kept_rows(kept: pa.Table | None, covered: set[str], versions: dict[str, str]) -> pa.Table:
    """The kept marks' finding rows of the ``covered`` check ids, at their ``versions``."""
    empty = pa.table(
        {"check_id": [], "resource_id": [], "marks": []},
        schema=pa.schema([(n, pa.string()) for n in ("check_id", "resource_id", "marks")]),
    )
    if kept is None or not covered:
        return empty
    rows = kept.filter(pc.is_valid(kept["resource_id"]))
    wanted = pc.is_in(
        pc.binary_join_element_wise(rows["check_id"], rows["check_version"], "\x00"),
        value_set=pa.array([f"{c}\x00{versions[c]}" for c in covered], pa.string()),
    )
    return rows.filter(wanted).select(empty.column_names).cast(empty.schema)


def _kept_marks(con: duckdb.DuckDBPyConnection) -> tuple[np.ndarray, np.ndarray]:
    """The kept finding rows' numbers in ``audit_marked`` and their marks as a matrix."""
    found = con.sql(
        "select m.row, k.marks from audit_kept_rows k join audit_marked m "
        "using (check_id, resource_id)"
    ).to_arrow_table()
    width = len(found["marks"][0].as_py()) if found.num_rows else 0
    return found["row"].to_numpy(), as_matrix(found["marks"], width)


def as_matrix(texts: pa.ChunkedArray | pa.Array, width: int) -> np.ndarray:
    """Strings all ``width`` characters long (ASCII), as a matrix of their bytes."""
    array = texts.combine_chunks() if isinstance(texts, pa.ChunkedArray) else texts
    array = array.cast(pa.string())
    ends = np.frombuffer(array.buffers()[1], dtype=np.int32)[
        array.offset : array.offset + len(array) + 1
    ]
    if array.null_count or (np.diff(ends) != width).any():
        raise ValueError(f"marks must all be {width} characters long")
    data = np.frombuffer(array.buffers()[2], dtype=np.uint8)[ends[0] : ends[-1]]
    return data.reshape(len(array), width)


def as_strings(grid: np.ndarray) -> pa.Array:
    """Each row of a matrix of ASCII bytes as a string."""
    rows, width = grid.shape
    data = np.ascontiguousarray(grid).tobytes()
    offsets = np.arange(0, rows * width + 1, width, dtype=np.int32)
    return pa.StringArray.from_buffers(rows, pa.py_buffer(offsets), pa.py_buffer(data))
