"""Prove that the stored history was not altered: recompute hashes, walk the chain.

For each ``snapshots`` row in chain order (``seq``): the sequence has no gap or repeat,
``prev_hash`` is the previous row's ``chain_hash``, ``chain_hash`` is
SHA-256(prev_hash + content_hash), and for every snapshot that still has data (not
``pruned``) the content hash recomputed from the stored rows equals the recorded one and
every row carries the snapshot's ``snapshot_at``. The content hash is recomputed with the
definition the snapshot recorded in ``content_hash_version`` (null: version 1, the
snapshots written before it was recorded; see :mod:`toolkit.snapshot.content_hash`);
version 2 is computed batch by batch as the rows stream in. The FIRST broken link is
named. Each judgement of the findings history (a ``check_runs`` row) is checked against its
``check_results`` rows (count and SHA-256). Rows whose snapshot never committed (or was pruned) are
reported as orphans; they
are not a break (``store gc`` removes them).

A hash chain proves that history was not edited piecemeal; rewriting every later row too
is only caught by comparing the newest ``chain_hash`` with a copy kept elsewhere (``store
ls`` prints it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from toolkit.snapshot.content_hash import (
    CONTENT_HASH_VERSIONS,
    canonical_rows,
    chain_hash,
    content_hash,
    content_hash_of_digests,
    row_digests,
)
from toolkit.snapshot.findings_history import verify_runs
from toolkit.snapshot.schema import SNAPSHOT_AT, SNAPSHOT_ID
from toolkit.snapshot.schema_tables import SNAPSHOT_TABLES
from toolkit.snapshot.validation import column_equals
from toolkit.snapshot.views import VISIBLE_STATUSES

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Mapping

    from toolkit.snapshot.store_tables import StoreTables

__all__ = ["ChainBreak", "VerifyReport", "find_orphans", "verify"]


@dataclass(frozen=True)
class ChainBreak:
    """One failed check: which snapshot, what was checked, what was expected and found."""

    snapshot_id: str
    seq: int
    # "seq", "prev_hash", "chain_hash", "content_hash", "content_hash_version", "snapshot_at"
    check: str
    expected: str
    found: str

    def __str__(self) -> str:
        return (
            f"snapshot {self.snapshot_id} (seq {self.seq}): {self.check} expected "
            f"{self.expected}, found {self.found}"
        )


@dataclass(frozen=True)
class VerifyReport:
    """The outcome of :func:`verify`; ``ok`` is False when any link is broken."""

    snapshots: int
    content_checked: int
    pruned: int
    breaks: tuple[ChainBreak, ...] = ()
    orphans: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    content_skipped: int = 0
    """Snapshots with data whose content was not recomputed (``verify(content=...)``)."""
    findings: tuple[str, ...] = ()
    """Judgements of the findings history whose ``check_results`` rows are not the ones
    their ``check_runs`` row recorded (:func:`~toolkit.snapshot.findings_history.verify_runs`)."""

    @property
    def ok(self) -> bool:
        return not self.breaks and not self.findings

    @property
    def first_break(self) -> ChainBreak | None:
        return self.breaks[0] if self.breaks else None

    @property
    def orphan_snapshot_ids(self) -> tuple[str, ...]:
        return tuple(sorted({sid for ids in self.orphans.values() for sid in ids}))

    def summary(self) -> str:
        """One sentence for people: green, or the first broken link and what to do."""
        orphan_note = (
            f"; {len(self.orphan_snapshot_ids)} uncommitted snapshot(s) left rows behind "
            "(run `platform-audit store gc`)"
            if self.orphans
            else ""
        )
        skipped_note = (
            f" (not those of the other {self.content_skipped}: `platform-audit store verify` "
            "recomputes them all)"
            if self.content_skipped
            else ""
        )
        if self.findings and not self.breaks:
            return (
                f"BROKEN: the findings history was altered: {self.findings[0]} "
                f"({len(self.findings)} problem(s) in all); `platform-audit audit` judges "
                "nothing again that it holds: restore the store from a copy"
            )
        if self.ok:
            return (
                f"ok: {self.snapshots} snapshot(s), chain intact, {self.content_checked} content "
                f"hash(es) recomputed{skipped_note}, {self.pruned} pruned{orphan_note}"
            )
        return (
            f"BROKEN: first broken link is {self.breaks[0]}; history from that snapshot on cannot "
            f"be trusted ({len(self.breaks)} problem(s) in all){orphan_note}"
        )


def verify(
    store: StoreTables,
    *,
    content: Collection[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> VerifyReport:
    """Check every snapshot of ``store``; see the module docstring for what is checked.

    ``content`` limits the recomputed content hashes to those snapshot ids (the chain is
    still walked whole): recomputing every snapshot's is minutes on a large store, and a
    report needs the snapshots it presents. The report says how many were left out.
    ``progress(done, total)`` is called after each snapshot.
    """
    rows = store._snapshot_rows().sort_by("seq").to_pylist()
    datasets = {name: store._dataset(name) for name in SNAPSHOT_TABLES}
    breaks: list[ChainBreak] = []
    prev_chain: str | None = None
    checked = pruned = skipped = 0
    for expected_seq, row in enumerate(rows, start=1):
        breaks.extend(_check_link(row, expected_seq, prev_chain))
        prev_chain = row["chain_hash"]
        if row["status"] not in VISIBLE_STATUSES:
            pruned += 1
        elif content is not None and row[SNAPSHOT_ID] not in content:
            skipped += 1
        else:
            checked += 1
            breaks.extend(_check_content(row, datasets))
        if progress is not None:
            progress(expected_seq, len(rows))
    visible = {r[SNAPSHOT_ID] for r in rows if r["status"] in VISIBLE_STATUSES}
    return VerifyReport(
        snapshots=len(rows),
        content_checked=checked,
        pruned=pruned,
        breaks=tuple(breaks),
        orphans=find_orphans(datasets, visible),
        content_skipped=skipped,
        findings=tuple(verify_runs(store, visible, content)),
    )


def _check_link(
    row: Mapping[str, Any], expected_seq: int, prev_chain: str | None
) -> list[ChainBreak]:
    sid, seq = row[SNAPSHOT_ID], row["seq"]
    out = []
    if seq != expected_seq:
        out.append(ChainBreak(sid, seq, "seq", str(expected_seq), str(seq)))
    if row["prev_hash"] != prev_chain:
        out.append(ChainBreak(sid, seq, "prev_hash", str(prev_chain), str(row["prev_hash"])))
    expected_chain = chain_hash(prev_chain, row["content_hash"])
    if row["chain_hash"] != expected_chain:
        out.append(ChainBreak(sid, seq, "chain_hash", expected_chain, row["chain_hash"]))
    return out


def _check_content(
    row: Mapping[str, Any], datasets: Mapping[str, ds.Dataset | None]
) -> list[ChainBreak]:
    sid, seq, at = row[SNAPSHOT_ID], row["seq"], row[SNAPSHOT_AT]
    version = row.get("content_hash_version") or 1
    if version not in CONTENT_HASH_VERSIONS:
        known = " or ".join(map(str, CONTENT_HASH_VERSIONS))
        found_note = f"{version} (verify it with the toolkit version that wrote it)"
        return [ChainBreak(sid, seq, "content_hash_version", known, found_note)]
    out = []
    canonical: dict[str, list[pa.Array]] = {}
    digests: dict[str, list[bytes]] = {}
    for name, dataset in datasets.items():
        if dataset is None:
            continue
        # One table of the snapshot's rows, in few large chunks: the scan yields many small
        # batches, and canonicalising costs pyarrow calls per batch, not per row.
        data = dataset.to_table(filter=pc.field(SNAPSHOT_ID) == sid).combine_chunks()
        if not data.num_rows:
            continue  # no rows in this table: as the writer hashed it
        wrong_time = not column_equals(data, SNAPSHOT_AT, at)
        if version == 1:
            canonical.setdefault(name, []).append(canonical_rows(data))
        else:
            digests.setdefault(name, []).append(row_digests(data))
        if wrong_time:
            out.append(
                ChainBreak(sid, seq, SNAPSHOT_AT, f"{at.isoformat()} in {name}", "other values")
            )
    if version == 1:
        found = content_hash(sid, at, canonical, version=1)
    else:
        found = content_hash_of_digests(sid, at, digests)
    if found != row["content_hash"]:
        out.append(ChainBreak(sid, seq, "content_hash", row["content_hash"], found))
    return out


def find_orphans(
    datasets: Mapping[str, ds.Dataset | None], visible: set[str]
) -> dict[str, tuple[str, ...]]:
    """Per table, the snapshot ids that have rows but no visible ``snapshots`` row."""
    out: dict[str, tuple[str, ...]] = {}
    for name, dataset in datasets.items():
        if dataset is None:
            continue
        ids = pc.unique(dataset.to_table(columns=[SNAPSHOT_ID]).column(SNAPSHOT_ID)).to_pylist()
        orphans = sorted(set(ids) - visible)
        if orphans:
            out[name] = tuple(orphans)
    return out
