"""The audit benchmark's pandas versions compute what the checks compute.

``benchmarks/audit.py`` times three checks against the same logic in pandas and says
whether the two built the same rows. A check's text can change without anyone running the
benchmark; this builds a small store with the benchmark's own builder (a real crawl of a
served simulator, then simulated days) and requires the same rows, text included.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from toolkit.audit import Catalogue, run_check
from toolkit.audit.check_run import ensure_views
from toolkit.snapshot import Store

if TYPE_CHECKING:
    from types import ModuleType

BENCHMARK = "benchmarks/audit.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    path = Path(__file__).resolve().parents[2] / BENCHMARK
    spec = importlib.util.spec_from_file_location("audit_benchmark", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def store(bench: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Store:
    folder = tmp_path_factory.mktemp("bench") / "audit-40x4"
    try:
        bench.ensure_store(folder, 40, 4, 7, False, lambda _: None)
    finally:
        os.environ.pop(bench._KEY_VAR, None)  # the crawl's simulator key, set for the crawl
    return Store.open(folder / "store", create=False)


@pytest.mark.parametrize(
    ("check_id", "isolated"),
    [("RES002", False), ("RES005", False), ("REP003", False), ("REP003", True)],
)
def test_pandas_version_builds_the_rows_of_the_check(
    bench: ModuleType,
    store: Store,
    check_id: str,
    isolated: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """In this process, and (once: two new interpreters) as the benchmark runs it."""
    assert check_id in bench.PANDAS, "the benchmark compares this check"
    monkeypatch.setattr(bench, "COMPARE_RUNS", 1)
    figures: dict[str, Any] = bench.compare(store, check_id, lambda _: None, isolated=isolated)
    assert figures["rows"] == 160  # 40 services, 4 snapshots
    assert figures["isolated"] is isolated
    assert figures["same_rows"] is True


def test_the_small_store_judges_both_ways(bench: ModuleType, store: Store) -> None:
    """Equal rows prove little if every row says the same: the data must hold alarms."""
    con = store.duckdb()
    ensure_views(con)
    specs = {s.id: s for s in Catalogue.load().specs}
    for check_id in ("RES002", "REP003"):
        statuses = set(run_check(con, specs[check_id]).column("status").to_pylist())
        assert statuses == {"alarm", "ok"}, check_id


def test_a_changed_reason_is_caught(
    bench: ModuleType, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The comparison reads the text: a pandas side that words one reason differently fails."""
    monkeypatch.setattr(bench, "COMPARE_RUNS", 1)
    load, logic = bench.PANDAS["RES002"]

    def reworded(frames: dict[str, Any], spec: Any) -> Any:
        rows = logic(frames, spec)
        rows.loc[rows.index[0], "reason"] = rows["reason"].iloc[0] + " "
        return rows

    monkeypatch.setitem(bench.PANDAS, "RES002", (load, reworded))
    figures = bench.compare(store, "RES002", lambda _: None, isolated=False)
    assert figures["same_rows"] is False


@pytest.mark.parametrize(
    ("fixture_name", "said"),
    [
        (
            "pass_no_replicas_at_the_previous_snapshot",
            "none counted at the previous snapshot (2026-01-04 00:00 UTC)",
        ),
        ("pass_count_unknown_at_the_previous_snapshot", "no count reported at the previous"),
        ("pass_restart_count_not_reported_is_no_fix", "reports no restart count (replicas: 2):"),
        ("fail_counted_restarts_alarm_though_one_count_is_missing", "not counting 1 replica(s)"),
    ],
)
def test_pandas_rep003_counts_only_what_is_reported(
    bench: ModuleType,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fixture_name: str,
    said: str,
) -> None:
    """A service without replicas at the previous snapshot has no count to compare with,
    and a count not reported is not judged, in pandas as in the check (the benchmark's own
    store never has such a gap)."""
    from datetime import datetime

    from toolkit.snapshot import TABLES
    from toolkit.snapshot.validation import to_arrow

    fixture = Path(__file__).with_name("fixtures") / "REP003"
    snapshots = json.loads((fixture / f"{fixture_name}.json").read_text(encoding="utf-8"))[
        "snapshots"
    ]
    store = Store.open(tmp_path / "store")
    for entry in snapshots:
        at = datetime.fromisoformat(entry["at"].replace("Z", "+00:00"))
        writer = store.begin(snapshot_at=at)
        for name, rows in entry["tables"].items():
            table = to_arrow(TABLES[name], rows, "fixture", at)
            writer.write(name, table.drop_columns(["snapshot_id", "snapshot_at"]))
        writer.commit(status="complete")
    monkeypatch.setattr(bench, "COMPARE_RUNS", 1)
    figures = bench.compare(store, "REP003", lambda _: None, isolated=False)
    assert figures["same_rows"] is True
    load, logic = bench.PANDAS["REP003"]
    spec = next(s for s in Catalogue.load().specs if s.id == "REP003")
    reasons = logic(load(store), spec)["reason"].tolist()
    assert any(said in r for r in reasons)


@pytest.mark.parametrize("check_id", ["RES002", "RES005"])
def test_pandas_versions_leave_values_not_reported_unjudged(
    bench: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, check_id: str
) -> None:
    """A limit or request not reported (null) is 'unknown' in pandas as in the check, and an
    unset one (-1, 0) is not (the benchmark's own store reports every value)."""
    from datetime import UTC, datetime

    from toolkit.snapshot import TABLES
    from toolkit.snapshot.validation import to_arrow

    values = [  # cpu limit, cpu request, memory limit, memory request
        (1000, 100, 512, 256), (1000, 500, 512, 256), (None, 100, 512, 256), (2000, None, -1, 64),
        (-1, None, None, 64), (0, 0, 4096, 128), (None, None, None, None),
    ]  # fmt: skip
    rows = [
        {"id": f"s{n}", "name": f"svc-{n}", "team_id": "t", "project_id": "p",
         "environment_id": "e", "cpu_limits_millicores": cl, "cpu_requests_millicores": cr,
         "memory_limits_megabytes": ml, "memory_requests_megabytes": mr}
        for n, (cl, cr, ml, mr) in enumerate(values)
    ]  # fmt: skip
    at = datetime(2026, 1, 1, tzinfo=UTC)
    store = Store.open(tmp_path / "store")
    writer = store.begin(snapshot_at=at)
    table = to_arrow(TABLES["services"], rows, "fixture", at)
    writer.write("services", table.drop_columns(["snapshot_id", "snapshot_at"]))
    writer.commit(status="complete")
    monkeypatch.setattr(bench, "COMPARE_RUNS", 1)
    figures = bench.compare(store, check_id, lambda _: None, isolated=False)
    assert figures["same_rows"] is True
    con = store.duckdb()
    ensure_views(con)
    spec = next(s for s in Catalogue.load().specs if s.id == check_id)
    statuses = set(run_check(con, spec).column("status").to_pylist())
    assert "unknown" in statuses and "ok" in statuses, statuses


def test_the_first_judgement_is_measured_in_a_process_of_its_own(
    bench: ModuleType, store: Store, tmp_path: Path
) -> None:
    """Its peak memory is the judging's alone: the figures come from a new interpreter,
    which appends the whole history to the store (a copy here)."""
    import shutil

    shutil.copytree(Path(store.url), tmp_path / "store")
    copy = Store.open(tmp_path / "store", create=False)
    figures = bench._in_process(copy, "--first")
    assert set(figures) == {"seconds", "cpu_s", "peak_rss_mb", "findings"}
    assert isinstance(figures["peak_rss_mb"], int)
    from toolkit.audit import run_audit

    after = run_audit(copy, checks=Catalogue.load())
    assert after.judged == {} and len(after.findings) == figures["findings"]


def test_the_kept_store_is_compacted_and_its_next_day_has_files_of_its_own(
    bench: ModuleType, store: Store, tmp_path: Path
) -> None:
    """The benchmark's "as the scheduled job keeps it" figures judge a new snapshot of a
    compacted store: the day after the newest, evolved from it, written as the job writes
    (a file of its own per table), beside the history's few compacted files."""
    import shutil

    shutil.copytree(Path(store.url), tmp_path / "store")
    copy = Store.open(tmp_path / "store", create=False)
    copy.compact()
    compacted = bench._data_files(copy)
    before = copy.snapshots()
    new_id = bench.next_day(copy, len(before))
    after = copy.snapshots()
    assert [s.snapshot_id for s in after[:-1]] == [s.snapshot_id for s in before]
    assert after[-1].snapshot_id == new_id and after[-1].status == "complete"
    con = copy.duckdb()
    counts = dict(con.execute("select snapshot_id, count(*) from services group by all").fetchall())
    assert counts[new_id] == counts[before[-1].snapshot_id] == 40
    written = bench._data_files(copy) - compacted
    tables = {name for name in bench.SNAPSHOT_TABLES if copy._delta(name) is not None}
    assert compacted == len(tables)  # the history: a file per table
    assert 0 < written <= len(tables)  # a file per table the day wrote, none rewritten


def test_the_first_judgements_peak_memory_is_its_own_not_its_parents(
    bench: ModuleType, store: Store, tmp_path: Path
) -> None:
    """The judging's process is started by a benchmark that may hold far more memory (it
    judged a larger store before): the peak reported is the judging's alone."""
    import shutil

    shutil.copytree(Path(store.url), tmp_path / "store")
    copy = Store.open(tmp_path / "store", create=False)
    held = bytearray(1024 * 2**20)  # the parent's memory, resident
    held[::4096] = b"x" * len(range(0, len(held), 4096))
    figures = bench._in_process(copy, "--first")
    assert figures["peak_rss_mb"] < 1024, figures
    del held
