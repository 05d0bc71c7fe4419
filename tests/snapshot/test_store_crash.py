"""Crash safety: a write that dies (exception or kill -9) never hides or corrupts history."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
from store_harness import T0, WriteSnapshot, fetch, sample_rows

from toolkit.snapshot import SNAPSHOT_TABLES, Store

HERE = Path(__file__).parent


class Crash(RuntimeError):
    pass


def _assert_recovers(
    store: Store, good: list[str], dead: str, write_snapshot: WriteSnapshot
) -> None:
    report = store.verify()
    assert report.ok, report.summary()
    assert report.content_checked == len(good)
    assert dead in report.orphan_snapshot_ids
    assert [s.snapshot_id for s in store.snapshots()] == good
    con = store.duckdb()
    for name in SNAPSHOT_TABLES:
        query = f"select count(*) from {name} where snapshot_id = ?"  # noqa: S608 - declared names
        assert con.execute(query, [dead]).fetchone() == (0,), name
    latest = fetch(store, "select distinct snapshot_id from services_latest")
    assert latest == [{"snapshot_id": good[-1]}]
    removed = store.gc(min_age=timedelta(0))
    assert dead in removed.removed_snapshot_ids and removed.total_rows > 0
    after = store.verify()
    assert after.ok and not after.orphans
    nxt = write_snapshot(store, at=T0 + timedelta(days=2), version=7)
    assert nxt.seq == len(good) + 1
    assert store.verify().ok


@pytest.mark.parametrize("crash_before", ["services", "variables", "snapshots"])
def test_fault_between_tables_leaves_nothing_visible(
    store: Store, write_snapshot: WriteSnapshot, crash_before: str
) -> None:
    good = [
        write_snapshot(store, at=T0 + timedelta(hours=h), version=h).snapshot_id for h in range(2)
    ]

    def hook(table: str) -> None:
        if table == crash_before:
            raise Crash(table)

    writer = store.begin(snapshot_at=T0 + timedelta(days=1), fault_hook=hook)
    with pytest.raises(Crash):
        for name, rows in sample_rows(5).items():
            writer.write(name, rows)
        writer.commit()
    _assert_recovers(store, good, writer.snapshot_id, write_snapshot)


@pytest.mark.slow
def test_kill_9_mid_write_leaves_history_intact(
    tmp_path: Path, write_snapshot: WriteSnapshot
) -> None:
    store = Store.open(tmp_path / "store")
    good = [
        write_snapshot(store, at=T0 + timedelta(hours=h), version=h).snapshot_id for h in range(2)
    ]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
    }
    rng = random.Random(1234)
    for attempt in range(8):
        child = subprocess.Popen(
            [sys.executable, str(HERE / "crash_writer.py"), store.url, "1500"],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert child.stdout is not None
        dead = child.stdout.readline().split()[1]  # "begin <id>"
        appended = child.stdout.readline()  # first "append <table>": writing has started
        assert appended.startswith("append"), appended
        time.sleep(rng.uniform(0.0, 0.4 / (attempt + 1)))
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        rest = child.stdout.read()
        child.stdout.close()
        if "committed" not in rest and dead in store.verify().orphan_snapshot_ids:
            break  # the kill landed mid-write
        good = [s.snapshot_id for s in store.snapshots() if s.status == "complete"]
    else:
        pytest.fail("no kill landed mid-write in 8 attempts")
    assert child.returncode == -signal.SIGKILL
    _assert_recovers(store, good, dead, write_snapshot)
