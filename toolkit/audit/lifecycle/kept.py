"""What a store keeps of its findings' marks (``finding_marks``: see
:mod:`toolkit.audit.lifecycle.marks`): reading them, rewriting them after an audit of the
newest snapshot, and holding them to the findings history's rows (``store verify``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from deltalake.exceptions import DeltaError

from toolkit.audit.lifecycle.marks import MARKS, as_matrix, as_strings, build_marks, build_text
from toolkit.audit.lifecycle.states import build_positions
from toolkit.errors import StoreUnavailable

if TYPE_CHECKING:
    import duckdb

    from toolkit.snapshot import Store

__all__ = ["keep_marks", "kept_of", "marks_disagreeing", "marks_to_keep", "marks_verdict"]

_NONE, _NEITHER = ord("-"), ord("0")


def kept_of(store: Store) -> pa.Table:
    """The store's kept marks (none: an empty table)."""
    return store._read("finding_marks")


def keep_marks(store: Store, marks: pa.Table) -> str | None:
    """Rewrite the store's kept marks with ``marks`` (:func:`marks_to_keep`), in one commit;
    what to warn of when the store cannot be written (the old marks stay: the next audit
    reads the rows they lack again)."""
    try:
        store._overwrite("finding_marks", marks)
    except (StoreUnavailable, OSError, DeltaError) as exc:
        return (
            f"the findings' marks could not be kept ({exc}); the next audit reads the alarms "
            "of the history again"
        )
    return None


def marks_to_keep(con: duckdb.DuckDBPyConnection) -> pa.Table:
    """What a store keeps (``finding_marks``) after :func:`build_marks` for an audit of its
    newest snapshot (the last read): a row per check version with no resource, whose marks
    say which sequence numbers from the oldest snapshot read to that one were snapshots read
    (``0``, else ``-``), and a row per finding marked, its marks spread the same way."""
    read = con.execute("select snapshot_id, snapshot_at, seq from audit_positions order by pos")
    positions = read.fetchall()
    seqs = np.array([seq for _, _, seq in positions], dtype=np.int64)
    newest_id, newest_at, newest_seq = positions[-1]
    first = int(seqs[0])
    versions = con.sql("select check_id, check_version from audit_versions").to_arrow_table()
    found = con.sql(
        "select m.check_id, v.check_version, m.resource_id, m.marks from audit_marks m "
        "join audit_versions v using (check_id) "
        "where contains(m.marks, '1') or contains(m.marks, 'u')"
    ).to_arrow_table()
    spread = np.full((found.num_rows + 1, newest_seq - first + 1), _NONE, dtype=np.uint8)
    spread[0, seqs - first] = _NEITHER  # the coverage rows'
    if found.num_rows:
        spread[1:, seqs - first] = as_matrix(found["marks"], len(seqs))
    marks = as_strings(spread)
    coverage = versions.append_column(
        "resource_id", pa.nulls(versions.num_rows, pa.string())
    ).append_column("marks", pa.array([marks[0].as_py()] * versions.num_rows, pa.string()))
    rows = pa.concat_tables(
        [coverage, found.set_column(3, "marks", marks.slice(1))], promote_options="permissive"
    )
    count = rows.num_rows
    return (
        rows.append_column("snapshot_id", pa.array([newest_id] * count, pa.string()))
        .append_column(
            "snapshot_at", pa.array([newest_at] * count, MARKS.field("snapshot_at").type)
        )
        .append_column("first_seq", pa.array([first] * count, pa.int64()))
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
        build_positions(con, None, through - 1)
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
