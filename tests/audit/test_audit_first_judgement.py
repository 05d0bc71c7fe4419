"""Judging a whole unjudged store (one written by an older toolkit, a changed check) in
batches of snapshots: each batch its own committed run, released before the next, so the
judging's memory does not grow with the history, and a judging that stops keeps them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from audit_fixtures import fixture_connection
from engine_world import history, write_store

import toolkit.audit.history as history_module
from toolkit.audit import Catalogue, run_audit

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence
    from pathlib import Path

    import pandas as pd

    from toolkit.snapshot import Store

_SHOWN = ["check_id", "resource_id", "state", "status", "reason", "first_seen", "last_seen"]


def _findings(frame: pd.DataFrame) -> list[tuple[object, ...]]:
    rows = frame[_SHOWN].astype(str).sort_values(_SHOWN).itertuples(index=False)
    return [tuple(row) for row in rows]


def _runs(store: Store) -> list[list[str]]:
    """The snapshots each committed run judged, in the order the runs were written."""
    found = store.duckdb().sql(
        "select list(distinct snapshot_id order by snapshot_id) from check_runs "
        "group by run_id order by min(judged_at), run_id"
    )
    return [list(ids) for (ids,) in found.fetchall()]


def _budget(monkeypatch: pytest.MonkeyPatch, rows: int) -> None:
    monkeypatch.setattr(history_module, "JUDGE_BATCH_ROWS", rows)


def test_a_whole_store_is_judged_in_batches_each_committed_as_its_own_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fixture = history()
    checks = Catalogue.load()  # the built-in checks: some read the whole history
    whole = run_audit(fixture_connection(fixture), checks=checks)  # one judging, in memory
    _budget(monkeypatch, 1)  # a batch is never less than one snapshot
    store = write_store(tmp_path / "store", fixture)
    batched = run_audit(store, checks=checks)
    assert batched.judged == {spec.id: 4 for spec in checks.specs}
    order = [s.snapshot_id for s in store.snapshots()]
    assert _runs(store) == [[i] for i in order]
    assert _findings(batched.findings) == _findings(whole.findings)
    assert store.verify().ok
    # with room for the rest, the first snapshot (whose rows size the batches) is judged
    # alone and the other three together
    _budget(monkeypatch, 10**9)
    one = write_store(tmp_path / "one", fixture)
    assert _findings(run_audit(one, checks=checks).findings) == _findings(whole.findings)
    assert [len(run) for run in _runs(one)] == [1, 3]


def test_an_interrupted_judging_keeps_its_committed_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fixture = history()
    checks = Catalogue.load()
    store = write_store(tmp_path / "store", fixture)
    _budget(monkeypatch, 1)
    real = history_module.judge
    calls: list[int] = []

    def judge_then_stop(*args: object, **kwargs: object) -> object:
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt  # the user stops it half-way, or the machine does
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(history_module, "judge", judge_then_stop)
    with pytest.raises(KeyboardInterrupt):
        run_audit(store, checks=checks)
    first = store.snapshots()[0].snapshot_id
    assert _runs(store) == [[first]]  # the first batch committed, visible
    monkeypatch.setattr(history_module, "judge", real)
    resumed = run_audit(store, checks=checks)
    assert resumed.judged == {spec.id: 3 for spec in checks.specs}  # only the rest
    assert _findings(resumed.findings) == _findings(
        run_audit(fixture_connection(fixture), checks=checks).findings
    )
    assert store.verify().ok


def test_the_progress_counts_every_pair_across_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from contextlib import contextmanager

    counted: list[int] = []
    totals: list[int] = []

    @contextmanager
    def progress(wanted: Mapping[str, Sequence[str]]) -> Iterator[object]:
        totals.append(sum(len(ids) for ids in wanted.values()))
        yield counted.append

    monkeypatch.setattr(history_module, "_progress", progress)
    _budget(monkeypatch, 1)
    store = write_store(tmp_path / "store", history())
    checks = Catalogue.load()
    run_audit(store, checks=checks)
    assert totals == [4 * len(checks.specs)]
    assert sum(counted) == totals[0] and len(counted) == 4 * len(checks.specs)
    assert len(_runs(store)) == 4
