"""What a store keeps of its findings' marks (``finding_marks``: see
:mod:`toolkit.audit.lifecycle.marks`): reading them, rewriting them after an audit of the
newest snapshot, and holding them to the findings history's rows (``store verify``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from deltalake.exceptions import DeltaError

from toolkit.audit.lifecycle.marks import MARKS, build_marks, build_text, matrix, strings
from toolkit.errors import StoreUnavailable

if TYPE_CHECKING:
    from collections.abc import Callable

    import duckdb

    from toolkit.snapshot import Store

__all__ = ["keep_marks", "kept_of", "marks_disagreeing", "marks_to_keep", "marks_verdict"]

_NONE, _NEITHER = ord("-"), ord("0")


def kept_of(store: Store) -> pa.Table:
    """The store's kept marks (none: an empty table)."""
    return store._read("finding_marks")


def keep_marks(store: Store, make: Callable[[], pa.Table]) -> str | None:
    """Rewrite the store's kept marks with ``make()``, in one commit; what to warn of when
    the store cannot be written (the old marks stay: the next audit reads the rows they
    lack again)."""
    try:
        store._overwrite("finding_marks", make())
    except (StoreUnavailable, OSError, DeltaError) as exc:
        return (
            f"the findings' marks could not be kept ({exc}); the next audit reads the alarms "
            "of the history again"
        )
    return None


def marks_to_keep(con: duckdb.DuckDBPyConnection) -> pa.Table:
    """What a store keeps (``finding_marks``) after :func:`build_marks` for an audit of its
    newest snapshot (the last read): its marks a character per sequence number from the
    oldest snapshot read to that one (``-`` where no snapshot was read), and a row per check
    version saying which numbers were snapshots read."""
    read = con.execute("select snapshot_id, snapshot_at, seq from audit_positions order by pos")
    positions = read.fetchall()
    seqs = np.array([seq for _, _, seq in positions], dtype=np.int64)
    newest_id, newest_at, newest_seq = positions[-1]
    frame = con.sql(
        "select check_id, resource_id, marks from audit_marks "
        "where contains(marks, '1') or contains(marks, 'u')"
    ).to_arrow_table()
    first = int(seqs[0])
    width = newest_seq - first + 1
    spread = np.full((frame.num_rows, width), _NONE, dtype=np.uint8)
    if frame.num_rows:
        spread[:, seqs - first] = matrix(frame["marks"], len(seqs))
    pattern = np.full((1, width), _NONE, dtype=np.uint8)
    pattern[:, seqs - first] = _NEITHER
    versions = con.sql(
        "select check_id, check_version from audit_versions order by check_id"
    ).to_arrow_table()
    version_of = dict(zip(*(versions[n].to_pylist() for n in versions.column_names), strict=True))
    check_ids = frame["check_id"].to_pylist()
    coverage = {
        "check_id": versions["check_id"].to_pylist(),
        "check_version": versions["check_version"].to_pylist(),
        "resource_id": [None] * versions.num_rows,
        "marks": [strings(pattern)[0].as_py()] * versions.num_rows,
    }
    rows = {
        "check_id": [*coverage["check_id"], *check_ids],
        "check_version": [*coverage["check_version"], *(version_of[c] for c in check_ids)],
        "resource_id": [*coverage["resource_id"], *frame["resource_id"].to_pylist()],
        "marks": pa.concat_arrays(
            [pa.array(coverage["marks"], pa.string()), strings(spread).cast(pa.string())]
        ),
    }
    count = len(rows["check_id"])
    return (
        pa.table(
            {
                "snapshot_id": [newest_id] * count,
                "snapshot_at": pa.array([newest_at] * count, MARKS.field("snapshot_at").type),
                **rows,
                "first_seq": [first] * count,
            }
        )
        .select(MARKS.names)
        .cast(MARKS)
    )


def marks_disagreeing(store: Store) -> list[str]:
    """The check versions (``check_id version``, the version shortened) whose kept marks say
    otherwise than their rows in the findings history, over the committed snapshots the
    marks cover; none when the store keeps no marks. ``store verify`` runs it: an audit
    reads the marks, not the rows, so a mark changed by hand would change a finding's state
    unseen."""
    kept = kept_of(store)
    coverage = kept.filter(pc.is_null(kept["resource_id"]))
    if coverage.num_rows == 0:
        return []
    through = int(pc.max(pc.add(coverage["first_seq"], pc.utf8_length(coverage["marks"]))).as_py())
    con = store.duckdb()
    try:
        con.execute(
            "create temp table audit_positions as select snapshot_id, seq, snapshot_at, "
            "row_number() over (order by seq) as pos from snapshots "
            "where status in ('complete', 'partial') and seq < $through",
            {"through": through},
        )
        con.register("audit_versions", coverage.select(["check_id", "check_version"]))
        con.execute(
            "create temp view audit_results as select * exclude (run_id) from check_results "
            "semi join audit_versions using (check_id, check_version)"
        )
        build_text(con, [])
        found = []
        for source in (kept, None):
            build_marks(con, [], source)
            found.append(con.sql("select * from audit_marks").to_arrow_table())
        con.register("audit_kept", found[0])
        con.register("audit_read", found[1])
        wrong = con.execute(
            "select distinct check_id from ((from audit_kept except from audit_read) "
            "union all (from audit_read except from audit_kept)) order by all"
        ).fetchall()
    finally:
        con.close()
    ids, versions = (coverage[n].to_pylist() for n in ("check_id", "check_version"))
    version = dict(zip(ids, versions, strict=True))
    return [f"{check} {version[check][:12]}" for (check,) in wrong]


def marks_verdict(store: Store) -> str | None:
    """What ``store verify`` says of kept marks that :func:`marks_disagreeing` finds wrong
    (None: none), and what to do."""
    wrong = marks_disagreeing(store)
    if not wrong:
        return None
    return (
        f"BROKEN: the findings' kept marks (finding_marks) of {', '.join(wrong)} differ from "
        "the findings history; delete the store's finding_marks table (its folder, or prefix "
        "on S3): the next audit reads every alarm once and keeps them again"
    )
