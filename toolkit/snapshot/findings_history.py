"""Writing the findings history (``check_results``, ``check_runs``) with the snapshot
writer's discipline, and what ``store verify``, ``gc`` and retention do to it.

A judging appends its ``check_results`` rows in one Delta commit, then one ``check_runs``
row per check version and snapshot it judged (with the count and a SHA-256 of those rows)
in another: the views show a result only through its run (:mod:`toolkit.snapshot.views`),
so a judging that stops between the two leaves rows nobody sees, which ``gc`` removes. A
snapshot's results go when retention prunes it or gc removes its rows. Example::

    run_id = append_judgement(store, results, runs)   # results: CHECK_RESULTS columns
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from toolkit._version import __version__
from toolkit.snapshot.content_hash import content_hash_of_digests, row_digests
from toolkit.snapshot.schema import SNAPSHOT_AT, SNAPSHOT_ID
from toolkit.snapshot.schema_tables import DECLARED, FINDINGS_TABLES
from toolkit.snapshot.snapshot_ids import id_created_at, is_snapshot_id, new_snapshot_id

if TYPE_CHECKING:
    from collections.abc import Collection, Iterator

    from toolkit.snapshot.store_tables import StoreTables

__all__ = [
    "FINDINGS_TABLES",
    "append_judgement",
    "judgement_hash",
    "remove_findings",
    "unfinished_runs",
    "verify_runs",
]

_RESULTS = DECLARED["check_results"].arrow_schema
_RUNS = DECLARED["check_runs"].arrow_schema
_GROUP = ("check_id", "check_version", SNAPSHOT_ID)
_ORDER = (SNAPSHOT_ID, "check_id", "check_version", "resource_id")
"""How a judgement's rows are written: snapshot by snapshot, so each row group's snapshot_id
statistics (in the Parquet footer, and per file in the Delta log) span few snapshots and a
read of some snapshots (the lifecycle's judged and compared ones) skips the others. Sorted by
check first, every row group of a whole store's first judgement spanned every snapshot."""
HASH_TAG = "cols1:"
"""What starts a ``check_runs.content_hash`` of :func:`judgement_hash`'s form."""


def append_judgement(store: StoreTables, results: pa.Table, judged: pa.Table) -> str:
    """Append ``results`` (the ``check_results`` columns but ``run_id``) and then one run
    per row of ``judged`` (``check_id, check_version, snapshot_id, snapshot_at``: every
    check version and snapshot judged, with rows or not); returns the run's id."""
    run_id = new_snapshot_id()
    results = results.sort_by([(c, "ascending") for c in _ORDER])
    results = _with_run(results.select([n for n in _RESULTS.names if n != "run_id"]), run_id)
    results = results.select(_RESULTS.names).cast(_RESULTS)
    now = datetime.now(UTC)
    runs = [
        {
            **key,
            "run_id": run_id,
            "judged_at": now,
            "row_count": rows.num_rows,
            "content_hash": judgement_hash(rows, key[SNAPSHOT_ID], key[SNAPSHOT_AT]),
            "toolkit_version": __version__,
        }
        for key, rows in _groups(results, judged)
    ]
    if results.num_rows:
        store._append("check_results", results, run_id)
    store._append("check_runs", pa.Table.from_pylist(runs, schema=_RUNS), run_id)  # LAST
    return run_id


def judgement_hash(rows: pa.Table, snapshot_id: str, snapshot_at: datetime) -> str:
    """SHA-256 over one judgement's ``check_results`` rows, whatever their order, tagged
    :data:`HASH_TAG` (a run written before the tag is checked by :func:`_row_json_hash`).

    Vectorised: each row's values (the snapshot's are the header), joined in column-name
    order, are sorted; the hash reads that text and, per column, each value's byte length
    (-1 for null, so no text can pass for another split or a null). A judgement of
    thousands of rows costs milliseconds, not a JSON text per row."""
    names = sorted(n for n in rows.column_names if n not in (SNAPSHOT_ID, SNAPSHOT_AT))
    header = f"{snapshot_id}\x1f{snapshot_at.isoformat()}\x1f{rows.num_rows}\x1f{names}"
    digest = hashlib.sha256(header.encode())
    if not names or not rows.num_rows:
        return HASH_TAG + digest.hexdigest()
    texts = [pc.cast(rows.column(n), pa.string()).combine_chunks() for n in names]
    joined = pc.binary_join_element_wise(*(pc.fill_null(t, "") for t in texts), "\x1f")
    order = pc.sort_indices(joined)
    for text in texts:
        lengths = pc.fill_null(pc.binary_length(text), -1).take(order)
        digest.update(lengths.to_numpy(zero_copy_only=False).astype("<i8").tobytes())
    ordered = joined.take(order)
    _, offsets, data = ordered.buffers()
    ends = np.frombuffer(offsets, "<i4")[ordered.offset : ordered.offset + len(ordered) + 1]
    if data is not None:
        digest.update(memoryview(data)[int(ends[0]) : int(ends[-1])])
    return HASH_TAG + digest.hexdigest()


def _row_json_hash(rows: pa.Table, snapshot_id: str, snapshot_at: datetime) -> str:
    """The hash runs were written with before :data:`HASH_TAG`: SHA-256 over each row's
    canonical JSON (as a snapshot's content hash), kept so ``store verify`` checks them."""
    return content_hash_of_digests(snapshot_id, snapshot_at, {"check_results": [row_digests(rows)]})


def _hash_as_written(rows: pa.Table, run: dict[str, Any]) -> str:
    """The hash of ``rows`` in the form ``run``'s own was written in."""
    form = judgement_hash if str(run["content_hash"]).startswith(HASH_TAG) else _row_json_hash
    return form(rows, run[SNAPSHOT_ID], run[SNAPSHOT_AT])


def verify_runs(
    store: StoreTables, visible: Collection[str], content: Collection[str] | None
) -> list[str]:
    """For each committed run of a ``visible`` snapshot (of ``content`` only, when given):
    a sentence per run whose rows are not the ones it recorded (count or hash)."""
    runs = store._read("check_runs")
    results = store._read("check_results")
    wanted = set(visible) if content is None else set(visible) & set(content)
    problems = []
    for run in runs.to_pylist():
        if run[SNAPSHOT_ID] not in wanted:
            continue
        rows = results.filter(_run_filter(run))
        found = _hash_as_written(rows, run)
        if rows.num_rows != run["row_count"] or found != run["content_hash"]:
            problems.append(
                f"check_results of {run['check_id']} (version {run['check_version'][:12]}) in "
                f"snapshot {run[SNAPSHOT_ID]}: {rows.num_rows} row(s), hash {_short(found)}; "
                f"judged as {run['row_count']} row(s), hash {_short(run['content_hash'])}"
            )
    return problems


def _short(content_hash: object) -> str:
    return str(content_hash).removeprefix(HASH_TAG)[:12]


def unfinished_runs(store: StoreTables) -> list[str]:
    """The run ids of ``check_results`` rows that no ``check_runs`` row commits."""
    results = store._dataset("check_results")
    if results is None:
        return []
    written = set(pc.unique(results.to_table(columns=["run_id"]).column("run_id")).to_pylist())
    committed = set(store._read("check_runs", columns=["run_id"]).column("run_id").to_pylist())
    return sorted(written - committed)


def remove_findings(
    store: StoreTables,
    snapshot_ids: Collection[str],
    *,
    min_age: timedelta | None = None,
    now: datetime | None = None,
) -> dict[str, int]:
    """Delete the findings history of ``snapshot_ids`` and, with ``min_age`` (gc), the rows
    of runs that never committed and are older than it; rows deleted per table."""

    removed = {
        name: store._delete_rows(name, SNAPSHOT_ID, snapshot_ids) for name in FINDINGS_TABLES
    }
    if min_age is not None:
        moment = now or datetime.now(UTC)
        stale = [
            run
            for run in unfinished_runs(store)
            if is_snapshot_id(run) and id_created_at(run) <= moment - min_age
        ]
        removed["check_results"] += store._delete_rows("check_results", "run_id", stale)
    return {name: count for name, count in removed.items() if count}


def _with_run(results: pa.Table, run_id: str) -> pa.Table:
    return results.append_column(
        "run_id", pa.repeat(pa.scalar(run_id, pa.string()), results.num_rows)
    )


def _groups(results: pa.Table, judged: pa.Table) -> Iterator[tuple[dict[str, Any], pa.Table]]:
    """Each judged check version and snapshot, with its rows (a slice: ``results`` is
    sorted by them, in :data:`_ORDER`)."""
    joined = pc.binary_join_element_wise(*(results.column(c) for c in _GROUP), "\x1f")
    encoded = joined.combine_chunks().dictionary_encode() if results.num_rows else None
    where: dict[str, tuple[int, int]] = {}
    if encoded is not None:
        codes = encoded.indices.to_numpy(zero_copy_only=False)
        _, first, counts = np.unique(codes, return_index=True, return_counts=True)
        names = encoded.dictionary.to_pylist()
        where = {names[codes[f]]: (int(f), int(n)) for f, n in zip(first, counts, strict=True)}
    for key in judged.select([*_GROUP, SNAPSHOT_AT]).to_pylist():
        first_row, count = where.get("\x1f".join(str(key[c]) for c in _GROUP), (0, 0))
        yield key, results.slice(first_row, count)


def _run_filter(run: dict[str, object]) -> pc.Expression:
    expression = pc.field("run_id") == run["run_id"]
    for column in _GROUP:
        expression &= pc.field(column) == run[column]
    return expression
