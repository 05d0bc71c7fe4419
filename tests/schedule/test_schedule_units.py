"""The parts of the job on their own: settings, cadence, backoff, status file, logs, locks."""

from __future__ import annotations

import io
import json
import logging
import os
import random
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import pytest
from job_harness import ScriptedLease

import toolkit.schedule as schedule
from toolkit.config import load_settings
from toolkit.errors import ConfigError, LockHeld, ScheduleError, ToolkitError
from toolkit.schedule import Cadence, acquire_lock, backoff_delay, parse_duration
from toolkit.schedule.lock import LOCAL_LOCK_NAME, unlock
from toolkit.schedule.logs import install_log_handler
from toolkit.schedule.status import read_status, write_status

if TYPE_CHECKING:
    from pathlib import Path

NOW = datetime(2026, 3, 1, 12, 0, 5, tzinfo=UTC)


def test_public_names_resolve() -> None:
    for name in schedule.__all__:
        assert getattr(schedule, name) is not None
    assert issubclass(LockHeld, ScheduleError) and issubclass(ScheduleError, ToolkitError)


@pytest.mark.parametrize(
    ("text", "seconds"), [("90s", 90), ("15m", 900), ("1h30m", 5400), ("0.5s", 0.5), ("7d", 604800)]
)
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "soon", "5", "1 hour", "-1s", "1h 2x"])
def test_bad_durations_say_how_to_write_one(text: str) -> None:
    with pytest.raises(ConfigError, match="not a duration"):
        parse_duration(text)


def test_schedule_and_notify_sections(tmp_path: Path) -> None:
    path = tmp_path / "platform-audit.toml"
    path.write_text(
        '[schedule]\ncron = "17 * * * *"\njitter = "2m"\nstatus_file = "run/status.json"\n'
        'keep_all_for = "1d"\nmaintain_every = "0s"\n'
        '[notify]\nurl_env = "HOOK"\nmin_severity = "critical"\n'
    )
    settings = load_settings(path, environ={})
    assert settings.schedule.cron == "17 * * * *" and settings.schedule.jitter_s == 120
    assert settings.schedule.status_file == tmp_path / "run" / "status.json"
    assert settings.schedule.keep_all_for == timedelta(days=1)
    assert settings.schedule.maintain_every_s == 0
    assert settings.notify.url_env == "HOOK" and settings.notify.min_severity == "critical"
    path.write_text('[notify]\nurl = "https://hooks.example/x"\n')
    with pytest.raises(ConfigError, match="unknown setting 'url'"):
        load_settings(path, environ={})
    path.write_text('[schedule]\nevery = "1h"\ncron = "0 * * * *"\n')
    with pytest.raises(ConfigError, match="keep one of them"):
        load_settings(path, environ={})
    path.write_text('[schedule]\ncron = "every hour"\n')
    with pytest.raises(ConfigError, match="not a cron expression"):
        load_settings(path, environ={})
    path.write_text('[schedule]\nreport = "reports/weekly.MD"\n')
    assert load_settings(path, environ={}).schedule.report == tmp_path / "reports/weekly.MD"
    path.write_text('[schedule]\nreport = "weekly.pdf"\n')  # once written as HTML silently
    with pytest.raises(ConfigError, match=r"report = 'weekly.pdf': name it .html, .htm, .md"):
        load_settings(path, environ={})


def test_cadence_every_cron_and_jitter() -> None:
    every = Cadence.every(3600)
    assert every.first(NOW) == NOW
    assert every.next_after(NOW) == NOW + timedelta(hours=1)
    cron = Cadence.cron("17 * * * *")
    assert cron.first(NOW) == datetime(2026, 3, 1, 12, 17, tzinfo=UTC)
    assert cron.next_after(datetime(2026, 3, 1, 12, 17, tzinfo=UTC)).hour == 13
    rng = random.Random(1)
    jittered = Cadence.every(60, jitter_s=30)
    gaps = [(jittered.next_after(NOW, rng) - NOW).total_seconds() for _ in range(50)]
    assert all(60 <= gap <= 90 for gap in gaps) and len(set(gaps)) > 1
    assert "jitter" in jittered.describe() and "cron" in cron.describe()


def test_backoff_grows_and_is_capped() -> None:
    rng = random.Random(2)
    delays = [backoff_delay(n, base_s=10, max_s=100, rng=rng) for n in range(1, 8)]
    assert 7.5 <= delays[0] <= 12.5 and 15 <= delays[1] <= 25
    assert all(d <= 125 for d in delays) and delays[-1] >= 75


def test_status_file_is_replaced_atomically(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "status.json"
    assert read_status(path) == {}
    write_status(path, {"state": "idle"})
    write_status(path, {"state": "running"})
    assert read_status(path)["state"] == "running" and read_status(path)["version"] == 1
    assert [p.name for p in path.parent.iterdir()] == ["status.json"]  # no temporary left
    path.write_text("{half")
    assert read_status(path) == {}


def test_json_logs_carry_fields_and_never_a_secret() -> None:
    stream = io.StringIO()
    handler, scrubber = install_log_handler(
        "json", secrets=["plat_SECRET_token_123"], stream=stream
    )
    try:
        log = logging.getLogger("toolkit.schedule")
        log.info("run finished", extra={"fields": {"run_id": "r1", "rows": 12, "duration_s": 1.5}})
        log.error("refused plat_SECRET_token_123 on %s", "/users/me")
        scrubber.add("https://hooks.example/T0/B0/xyzzy")
        log.warning("posting", extra={"fields": {"url": "https://hooks.example/T0/B0/xyzzy"}})
    finally:
        logging.getLogger("toolkit").removeHandler(handler)
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert lines[0]["run_id"] == "r1" and lines[0]["rows"] == 12 and lines[0]["level"] == "info"
    assert "plat_SECRET" not in stream.getvalue() and "xyzzy" not in stream.getvalue()
    assert lines[1]["message"] == "refused [redacted] on /users/me"


def test_local_lock_is_exclusive_and_names_its_holder(tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    with acquire_lock(store, owner="a"), pytest.raises(LockHeld, match=f"pid {os.getpid()}"):
        acquire_lock(store, owner="b")
    with acquire_lock(store, owner="b"):
        pass  # released: free again
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import time; from toolkit.schedule import acquire_lock; "
         f"lock = acquire_lock({store!r}, owner='child'); print('held', flush=True); "
         "time.sleep(30)"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(LockHeld, match=f"pid {holder.pid}"):
            acquire_lock(store, owner="parent")
    finally:
        holder.kill()
        holder.wait()


def test_stale_local_lock_of_a_dead_process_is_recovered_with_a_message(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "store").mkdir()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    stale = {"owner": "x", "pid": int(dead.stdout), "host": "h", "acquired_at": "2026-01-01"}
    (tmp_path / "store" / LOCAL_LOCK_NAME).write_text(json.dumps(stale))
    with caplog.at_level(logging.WARNING), acquire_lock(str(tmp_path / "store"), owner="me"):
        pass
    assert f"left by pid {int(dead.stdout)} on h" in caplog.text
    assert "no longer running" in caplog.text


def test_unlock_of_a_local_store_clears_only_what_a_dead_process_left(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = str(tmp_path / "store")
    assert unlock(store).holder is None  # never locked
    with acquire_lock(store, owner="a"):
        for force in (False, True):  # the kernel's lock: no force can end it
            with pytest.raises(LockHeld, match=f"pid {os.getpid()} .* ends with the process"):
                unlock(store, force=force)
    assert unlock(store).holder is None  # released cleanly: nothing left
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    stale = {"owner": "x", "pid": int(dead.stdout), "host": "h", "acquired_at": "2026-01-01"}
    (tmp_path / "store" / LOCAL_LOCK_NAME).write_text(json.dumps(stale))
    done = unlock(store)
    assert done.cleared == "gone" and done.holder is not None
    assert done.holder.pid == int(dead.stdout)
    assert (tmp_path / "store" / LOCAL_LOCK_NAME).read_text() == ""
    with caplog.at_level(logging.WARNING), acquire_lock(store, owner="me"):
        pass
    assert "recovered" not in caplog.text  # the record was cleared: nothing to recover


def test_lease_keeper_renews_until_the_block_ends() -> None:
    lease = ScriptedLease()
    with schedule.LeaseKeeper(lease, every_s=0.02) as keeper:
        deadline = time.monotonic() + 5
        while lease.renewals < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
    renewed = lease.renewals
    assert renewed >= 3 and keeper.lost is None
    time.sleep(0.1)
    assert lease.renewals == renewed  # the thread stopped with the block


def test_lease_keeper_retries_an_unreachable_store_and_reports_a_lost_lease(
    caplog: pytest.LogCaptureFixture,
) -> None:
    lost = ScheduleError("lost the lock on s3://b/_schedule_lock: another job took it")
    lease = ScriptedLease(OSError("connection reset"), None, lost)
    with caplog.at_level(logging.WARNING), schedule.LeaseKeeper(lease, every_s=0.02) as keeper:
        deadline = time.monotonic() + 5
        while keeper.lost is None and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.1)  # no renewal after the loss
    assert keeper.lost == str(lost)
    assert lease.renewals == 3
    assert "could not renew the store's lock (OSError: connection reset)" in caplog.text
    assert "another job took it" in caplog.text
