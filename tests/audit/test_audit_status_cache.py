"""A full audit with a status cache finds exactly what one without it finds.

The demo's simulated platform is snapshotted a day at a time (its clock moves restarts,
crashes, rotations and deployments, and the demo's operator squeezes a memory limit into OOM
kills and a crash loop), and after each day the store is audited with and without the
cache, as a scheduled report would. Rows, details, findings and resolve times must be the
same every day, and from the day the history is longer than the window the cached audit must
take every snapshot but the new one from the cache. Then the cache is made wrong in each
way it can be (thresholds changed, a snapshot pruned, a file torn, a page damaged, an entry
that disagrees, a folder that cannot be written), and the audit must still find the same.
"""

from __future__ import annotations

import json
import shutil
from datetime import timedelta
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from engine_world import record_connections

from toolkit.audit import Catalogue, run_audit
from toolkit.audit.check_cache import ENTRY_SCHEMA
from toolkit.audit.status_cache import StatusCache
from toolkit.pipeline.demo_steps import Operator, demo_settings, forget_tokens
from toolkit.pipeline.snapshot_job import take_snapshot
from toolkit.sim import Simulator, SimulatorServer
from toolkit.snapshot import RetentionPolicy, Store

if TYPE_CHECKING:
    from collections.abc import Collection, Iterator
    from pathlib import Path

    from toolkit.audit import AuditResult

DAYS = 7
CACHED = {s.id for s in Catalogue.load().specs if s.history in ("snapshot", "previous")}


class History:
    """The store, the simulator, the cache folder and what each day's audits gave."""

    def __init__(self, store: Store, sim: Simulator, folder: Path) -> None:
        self.store, self.sim, self.folder = store, sim, folder
        self.days: list[tuple[tuple[object, ...], tuple[object, ...], AuditResult]] = []

    @property
    def newest(self) -> tuple[object, ...]:
        """What an audit of the newest snapshot without a cache finds."""
        return self.days[-1][1]


def _everything(result: AuditResult) -> tuple[object, ...]:
    rows = sorted(map(str, result.rows.to_pylist()))
    details = sorted(map(str, result.details.to_pylist()))
    findings = result.findings.sort_values(["check_id", "resource_id"]).to_dict("records")
    return rows, details, str(findings), str(result.mttr().to_dict("records"))


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Iterator[History]:
    out = tmp_path_factory.mktemp("status-cache")
    sim = Simulator(seed=11, services=30)
    cache = StatusCache(out / "cache")
    days = []
    with SimulatorServer(sim) as server:
        settings = demo_settings(sim, server.base_url, out)
        operator = Operator(sim, days=DAYS)
        try:
            for day in range(1, DAYS + 1):
                list(operator.act(day))
                take_snapshot(settings, as_of=sim.now)
                sim.advance(hours=24)
                operator.after_day()
                if day < 3:  # a history within one window: no cache is read or written
                    continue
                store = Store.open(settings.store_url)
                cached = run_audit(store, cache=cache)
                days.append((_everything(cached), _everything(run_audit(store)), cached))
        finally:
            forget_tokens(settings)
    found = History(Store.open(settings.store_url), sim, out / "cache")
    found.days = days
    yield found


def test_every_day_the_cached_audit_finds_what_the_plain_one_does(history: History) -> None:
    assert len(history.days) == DAYS - 2
    for day, (cached, plain, result) in enumerate(history.days, start=3):
        assert cached == plain, f"day {day}"
        assert len(result.findings) > 0
        assert result.warnings == ()


def test_once_the_history_outgrows_the_window_only_the_new_snapshot_is_judged(
    history: History,
) -> None:
    # The window holds the judged and compared snapshots and the one before each. Up to day
    # 3 that is every snapshot: one pass, nothing filed. Day 4 judges the whole history and
    # files it; from day 5 each audit judges only the new snapshot, in the window, and takes
    # the others from the cache (all but the two it judges there).
    reused = {day: result.reused for day, (_, _, result) in enumerate(history.days, start=3)}
    assert reused[3] == reused[4] == {}
    for day in range(5, DAYS + 1):
        assert reused[day] == dict.fromkeys(CACHED, day - 2), f"day {day}"


def _ids(store: Store) -> list[str]:
    return [s.snapshot_id for s in store.snapshots()]


def _copy(history: History, tmp_path: Path) -> StatusCache:
    """The cache as the daily audits left it, in a folder of this test's, for the store."""
    shutil.copytree(history.folder, tmp_path / "cache")
    return StatusCache(tmp_path / "cache").bound(history.store.url)


@pytest.mark.parametrize(
    ("snapshot", "compare_to"),
    [(-1, 0), (-3, None), (-2, -5)],
    ids=["newest-vs-first", "older", "older-vs-older"],
)
def test_other_snapshots_are_judged_from_the_cache_alike(
    history: History, tmp_path: Path, snapshot: int, compare_to: int | None
) -> None:
    ids = _ids(history.store)
    chosen = {
        "snapshot": ids[snapshot],
        "compare_to": None if compare_to is None else ids[compare_to],
    }
    got = run_audit(history.store, cache=_copy(history, tmp_path), **chosen)
    assert _everything(got) == _everything(run_audit(history.store, **chosen))
    assert got.reused == dict.fromkeys(CACHED, DAYS - 2)  # every snapshot filed already


def test_changed_thresholds_judge_that_check_again(history: History, tmp_path: Path) -> None:
    shipped = Catalogue.load()
    strict = Catalogue(shipped.specs, {**shipped.overrides, "RES005": {"max_ratio": 2}})
    cache = _copy(history, tmp_path)
    first = run_audit(history.store, checks=strict, cache=cache)
    assert _everything(first) == _everything(run_audit(history.store, checks=strict))
    assert "RES005" not in first.reused and "RES001" in first.reused
    again = run_audit(history.store, checks=strict, cache=cache)
    assert again.reused["RES005"] == DAYS - 2  # filed under its new thresholds
    assert _everything(again) == _everything(first)


def test_a_pruned_snapshot_changes_what_comes_before_the_next(
    history: History, tmp_path: Path
) -> None:
    shutil.copytree(history.store.url, tmp_path / "store")
    store = Store.open(str(tmp_path / "store"))
    newest = store.snapshots()[-1].snapshot_at
    report = store.apply_retention(
        RetentionPolicy(hourly_for=timedelta(0), daily_for=timedelta(days=4, hours=12)),
        now=newest,
    )
    assert len(report.pruned) == 2
    # The copy holds the same snapshots as the store the cache was filled from.
    cache = _copy(history, tmp_path)
    got = run_audit(store.duckdb(), cache=cache)
    assert _everything(got) == _everything(run_audit(store))
    # REP003 compares each snapshot with the one before: the oldest one left lost it, and
    # is judged again (alone, in a scope of its own).
    assert got.reused["RES001"] == DAYS - 2 - 2
    assert got.reused["REP003"] == DAYS - 2 - 2 - 1


def _check_folders(cache: StatusCache) -> list[Path]:
    (store,) = [p for p in cache.folder.iterdir() if p.is_dir()]
    return sorted(p for p in store.iterdir() if p.is_dir())


def test_a_torn_file_is_left_out_and_replaced(history: History, tmp_path: Path) -> None:
    cache = _copy(history, tmp_path)
    torn = [folder / "00000000000000000000-torn.parquet" for folder in _check_folders(cache)]
    for path in torn:
        path.write_bytes(b"PAR1 not parquet")
    got = run_audit(history.store, cache=cache)
    assert _everything(got) == history.newest
    assert got.reused == dict.fromkeys(CACHED, DAYS - 2) and got.warnings == ()
    assert not any(path.exists() for path in torn)


def _damage_only_checksums_reveal(path: Path, spared: Collection[str]) -> bool:
    """Flip the first byte of ``path`` whose damage a reader without page checksums takes
    for other entries of snapshots not ``spared`` (it reads, and differs there only), while
    one checking them refuses the file; False when no byte is such (a file of few entries).
    Damage to the entries of the judged or compared snapshot the window would catch."""
    data, entries = path.read_bytes(), pq.read_table(path)
    footer = int.from_bytes(data[-8:-4], "little")  # the pages lie between it and the magic
    kept = pa.array(sorted(spared), pa.string())
    for place in range(4, len(data) - 8 - footer):
        damaged = bytearray(data)
        damaged[place] ^= 0xFF
        path.write_bytes(damaged)
        try:
            unchecked = pq.read_table(path)
        except (OSError, pa.ArrowException):
            continue
        if unchecked.equals(entries) or not unchecked.filter(
            pc.is_in(unchecked.column("snapshot_id"), kept)
        ).equals(entries.filter(pc.is_in(entries.column("snapshot_id"), kept))):
            continue
        try:
            pq.read_table(path, page_checksum_verification=True)
        except (OSError, pa.ArrowException):
            return True
    path.write_bytes(data)
    return False


def test_a_damaged_entry_is_judged_again_not_read(history: History, tmp_path: Path) -> None:
    # Disk damage inside a page: read without checksums, some of it decodes as other
    # statuses (another resource, alarm for unknown), which no token would notice.
    cache = _copy(history, tmp_path)
    judged = _ids(history.store)[-2:]
    folders = _check_folders(cache)
    damaged = [  # each check's files, every one tried (a folder may hold several)
        [_damage_only_checksums_reveal(path, judged) for path in folder.glob("*.parquet")]
        for folder in folders
    ]
    assert sum(map(any, damaged)) >= len(folders) / 4  # the others hold too few entries
    got = run_audit(history.store, cache=cache)
    assert _everything(got) == history.newest
    # the checks whose entries were damaged judged the history again
    assert len(got.reused) == len(folders) - sum(map(any, damaged))
    again = run_audit(history.store, cache=cache)  # filed again, whole
    assert again.reused == dict.fromkeys(CACHED, DAYS - 2)
    assert _everything(again) == history.newest


def test_an_entry_the_window_contradicts_is_judged_again(history: History, tmp_path: Path) -> None:
    # An entry filing a false alarm at the newest snapshot: the window judges it again.
    cache = _copy(history, tmp_path)
    newest = _ids(history.store)[-1]
    for folder in _check_folders(cache):
        tokens = {}
        for path in folder.glob("*.parquet"):
            tokens.update(json.loads(pq.read_schema(path).metadata[b"platform_audit.covers"]))
        covers = json.dumps({newest: tokens[newest]}).encode()
        false = pa.table(
            {"snapshot_id": [newest], "resource_id": ["no-such-resource"], "status": ["alarm"]},
            schema=ENTRY_SCHEMA,
        ).replace_schema_metadata({b"platform_audit.covers": covers})
        pq.write_table(false, folder / "00000000000000000000-false.parquet")
    got = run_audit(history.store, cache=cache)
    assert _everything(got) == history.newest
    assert got.reused == {} and "no-such-resource" not in set(got.findings.resource_id)
    again = run_audit(history.store, cache=cache)  # the entries were filed again, right
    assert again.reused == dict.fromkeys(CACHED, DAYS - 2)


def test_a_cache_that_cannot_be_written_only_warns(history: History, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")
    got = run_audit(history.store, cache=StatusCache(blocker / "status"))
    assert _everything(got) == history.newest
    assert got.reused == {}
    assert got.warnings and all(str(blocker) in w and "not written" in w for w in got.warnings)


def test_the_cache_holds_no_secret(history: History) -> None:
    files = sorted(history.folder.rglob("*.parquet"))
    assert files
    canaries = history.sim.canaries()
    assert canaries
    for path in files:
        raw = path.read_bytes()
        decoded = str(pq.read_table(path).to_pylist()).encode()
        leaked = [c for c in canaries if c.encode() in raw or c.encode() in decoded]
        assert not leaked, f"{path}: {leaked[:3]}"
        assert pq.read_table(path).schema.remove_metadata() == ENTRY_SCHEMA


def test_a_connection_showing_some_snapshots_files_only_those(
    history: History, tmp_path: Path
) -> None:
    # store.duckdb(ids) lists every snapshot but shows the rows of those ids only: the
    # others must not be filed as snapshots without an alarm.
    ids = _ids(history.store)
    cache = StatusCache(tmp_path / "cache").bound(history.store.url)
    run_audit(history.store.duckdb(ids[2:]), cache=cache)  # the two oldest hidden
    got = run_audit(history.store, cache=cache)
    assert _everything(got) == history.newest
    # The two oldest were never judged (REP003: the third neither, its predecessor hidden):
    # they are judged now, alone, and the rest comes from the cache.
    assert got.reused == {**dict.fromkeys(CACHED, DAYS - 2 - 2), "REP003": DAYS - 2 - 3}
    # Yesterday's store: every snapshot but the newest, judged as the newest then was.
    cache = StatusCache(tmp_path / "yesterday").bound(history.store.url)
    run_audit(history.store.duckdb(ids[:-1]), snapshot=ids[-2], cache=cache)
    got = run_audit(history.store, cache=cache)
    assert _everything(got) == history.newest
    assert got.reused == dict.fromkeys(CACHED, DAYS - 2)


def test_an_audit_of_some_snapshots_keeps_the_entries_of_the_others(
    history: History, tmp_path: Path
) -> None:
    ids = _ids(history.store)
    cache = _copy(history, tmp_path)
    for folder in _check_folders(cache):  # many files: the next save merges them
        for n in range(8):
            (folder / f"00000000000000000000-{n}.parquet").write_bytes(b"torn")
    some = run_audit(history.store.duckdb(ids[2:]), cache=cache)
    assert some.reused  # the entries of the snapshots it shows
    got = run_audit(history.store, cache=cache)
    assert _everything(got) == history.newest
    assert got.reused == dict.fromkeys(CACHED, DAYS - 2)  # the two it hid were kept


@pytest.mark.parametrize("filed", [4, 2])
def test_snapshots_taken_since_the_last_audit_are_judged_alone(
    history: History, tmp_path: Path, filed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A weekly report over daily snapshots: the last audit saw the first `filed` days;
    # the days since (besides the two judged in the window) are judged in a scope of
    # their own, and filed, not the whole history again.
    ids = _ids(history.store)
    cache = StatusCache(tmp_path / "cache").bound(history.store.url)
    run_audit(history.store.duckdb(ids[:filed]), snapshot=ids[filed - 1], cache=cache)
    opened = record_connections(monkeypatch)
    got = run_audit(history.store, cache=cache)
    assert _everything(got) == history.newest
    assert got.reused == dict.fromkeys(CACHED, filed)
    # the store, the window (judged, compared, the one before each), then the days not
    # filed and the one before each, each scope from its snapshots' files alone
    shown = [snapshots for snapshots, _ in opened]
    assert shown == [None, sorted(ids[DAYS - 3 :]), sorted(ids[filed - 1 : DAYS - 2])]
    opened.clear()
    again = run_audit(history.store, cache=cache)
    assert again.reused == dict.fromkeys(CACHED, DAYS - 2)
    assert _everything(again) == history.newest
    assert [snapshots for snapshots, _ in opened] == [None, sorted(ids[DAYS - 3 :])]


def test_a_connection_needs_the_cache_bound_to_its_store(history: History, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"cache.bound\(store.url\)"):
        run_audit(history.store.duckdb(), cache=StatusCache(tmp_path))
    with pytest.raises(ValueError, match="bound to"):
        run_audit(history.store, cache=StatusCache(tmp_path).bound(str(tmp_path / "other")))


def test_a_latest_only_audit_neither_reads_nor_writes_the_cache(
    tmp_path: Path, history: History
) -> None:
    got = run_audit(history.store, latest_only=True, cache=StatusCache(tmp_path / "cache"))
    assert got.reused == {} and not (tmp_path / "cache").exists()
