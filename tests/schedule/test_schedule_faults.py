"""Scheduled runs against the simulator with faults: outage, revoked key, full disk, lock."""

from __future__ import annotations

import dataclasses
import errno
import logging
import time
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from job_harness import Job, ScriptedLease, json_lines

from toolkit.cli import ExitCode
from toolkit.config import Settings, load_settings
from toolkit.errors import ScheduleError, StoreUnavailable
from toolkit.pipeline.scheduler import Scheduler
from toolkit.schedule import Cadence, acquire_lock
from toolkit.sim import FaultProfile
from toolkit.snapshot import Store

if TYPE_CHECKING:
    import pytest


def _settings(job: Job, monkeypatch: pytest.MonkeyPatch, **schedule: float) -> Settings:
    """The job's settings for a Scheduler built in the test, with ``[schedule]`` changes."""
    monkeypatch.setenv("PLATFORM_API_URL", job.server.base_url)
    monkeypatch.setenv("PLATFORM_API_KEY", job.sim.keys["admin"])
    monkeypatch.setenv("PLATFORM_AUDIT_HMAC_KEY", "schedule-test-hmac-key-0123456789abcdef")
    settings = load_settings(job.config, store_url=str(job.store))
    changed = dataclasses.replace(settings.schedule, **schedule)
    return dataclasses.replace(settings, schedule=changed)


_LOST = ScheduleError("lost the lock on s3://bucket/store/_schedule_lock: another job took it")


def test_runs_on_an_interval_and_records_success(job: Job) -> None:
    result = job.run("--every", "0.2s", "--max-runs", "2")
    assert result.exit_code == ExitCode.OK, result.output
    assert job.snapshots() == ["complete", "complete"]
    status = job.status()
    assert status["state"] == "stopped"
    assert status["last_success"]["snapshot_id"] == status["last_run"]["snapshot_id"]
    assert status["last_run"]["outcome"] == "ok" and status["consecutive_failures"] == 0
    assert "last_failure" not in status
    assert status["last_maintenance"]["files_after"] > 0  # maintenance ran after the first run


def test_platform_unavailable_backs_off_and_the_next_run_succeeds(job: Job) -> None:
    # /users/me answers 503 twice: both attempts of the first run's probe; then all is well.
    job.sim.set_faults(FaultProfile(fail_first=2, fail_status=503))
    result = job.run("--every", "1h", "--max-runs", "2", "--log-format", "json")
    assert result.exit_code == ExitCode.OK, result.output
    assert job.snapshots() == ["complete"]  # nothing committed while it was down
    status = job.status()
    assert status["last_failure"]["outcome"] == "unavailable"
    assert "the platform is unavailable" in status["last_failure"]["reason"]
    assert status["last_success"]["at"] > status["last_failure"]["at"]
    backoff = [line for line in json_lines(result.stderr) if "backoff_s" in line]
    assert backoff and backoff[0]["backoff_s"] < 1  # not the hour of --every: a short backoff


def test_revoked_credential_fails_clearly_and_commits_nothing(job: Job) -> None:
    assert job.run("--max-runs", "1").exit_code == ExitCode.OK
    job.revoke("admin")
    result = job.run("--every", "0.2s", "--max-runs", "3")
    assert result.exit_code == ExitCode.AUTH, result.output
    assert job.snapshots() == ["complete"]  # the first run's only
    failure = job.status()["last_failure"]
    assert failure["outcome"] == "auth" and failure["exit_code"] == 4
    assert "revoked" in failure["reason"] and "PLATFORM_API_KEY" in failure["reason"]
    assert "nothing was committed" in failure["reason"]
    assert job.status()["last_run"]["run_id"] == failure["run_id"]  # it stopped at once
    assert job.sim.keys["admin"] not in job.status_file.read_text()


def test_full_disk_is_a_clear_error_and_earlier_snapshots_stay(
    job: Job, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert job.run("--max-runs", "1").exit_code == ExitCode.OK
    settings = _settings(job, monkeypatch)

    def disk_full(table: str) -> None:
        if table == "services":
            raise OSError(errno.ENOSPC, "No space left on device")

    scheduler = Scheduler(
        settings,
        cadence=Cadence.every(0.1),
        max_runs=1,
        status_file=job.status_file,
        fault_hook=disk_full,
    )
    assert scheduler.run() == ExitCode.STORE
    failure = job.status()["last_failure"]
    assert failure["outcome"] == "store"
    assert "No space left on device" in failure["reason"]
    assert "earlier snapshots are intact" in failure["reason"]
    store = Store.open(str(job.store))
    assert [s.status for s in store.snapshots()] == ["complete"]
    assert store.verify().ok


def test_a_second_job_on_the_same_store_exits_locked(job: Job) -> None:
    with acquire_lock(str(job.store), owner="someone-else"):
        result = job.run("--max-runs", "1")
    assert result.exit_code == ExitCode.LOCKED
    message = " ".join(result.stderr.split())
    assert "holds the lock on store" in message and "only one job" in message
    assert job.snapshots() == []
    assert not job.status_file.exists()  # the status file belongs to the job holding the lock


def test_the_lease_is_renewed_during_a_run_and_its_loss_stops_the_job(
    job: Job, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run longer than a third of lock_ttl renews the lease while it goes on; when another
    job took it (renewals failed past the ttl), the job says so and stops."""
    settings = _settings(job, monkeypatch, lock_ttl_s=3.0)  # renewed every second
    lease = ScriptedLease(_LOST, thread="lease-keeper")
    monkeypatch.setattr("toolkit.pipeline.scheduler.acquire_lock", lambda *_, **__: lease)

    def slow(table: str) -> None:
        if table == "services":
            time.sleep(1.6)  # the run outlasts a renewal period

    scheduler = Scheduler(settings, cadence=Cadence.every(0.1), max_runs=3,
                          status_file=job.status_file, fault_hook=slow)  # fmt: skip
    assert scheduler.run() == ExitCode.LOCKED
    failure = job.status()["last_failure"]
    assert failure["outcome"] == "locked" and failure["exit_code"] == ExitCode.LOCKED
    assert "another job took it" in failure["reason"]
    assert "lost during this run" in failure["reason"] and "store verify" in failure["reason"]
    assert failure["snapshot_id"] == job.status()["last_run"]["snapshot_id"]
    assert job.snapshots() == ["complete"]  # the run finished; no other began


def test_an_unreachable_lock_store_before_a_run_is_a_warning_not_a_crash(
    job: Job, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The lease outlives one failed renewal: the run goes ahead (it once raised out)."""
    settings = _settings(job, monkeypatch)
    lease = ScriptedLease(OSError("connection reset"), thread="MainThread")
    monkeypatch.setattr("toolkit.pipeline.scheduler.acquire_lock", lambda *_, **__: lease)
    scheduler = Scheduler(settings, cadence=Cadence.every(30), max_runs=1,
                          status_file=job.status_file)  # fmt: skip
    with caplog.at_level(logging.WARNING, logger="toolkit.schedule"):
        assert scheduler.run() == ExitCode.OK
    assert "could not renew the store's lock (OSError: connection reset)" in caplog.text
    assert job.snapshots() == ["complete"]


def test_a_lease_lost_between_runs_stops_the_job(job: Job, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = _settings(job, monkeypatch, lock_ttl_s=3.0)
    lease = ScriptedLease(None, _LOST, thread="MainThread")  # before run 1, then while waiting
    monkeypatch.setattr("toolkit.pipeline.scheduler.acquire_lock", lambda *_, **__: lease)
    scheduler = Scheduler(settings, cadence=Cadence.every(30), max_runs=2,
                          status_file=job.status_file)  # fmt: skip
    assert scheduler.run() == ExitCode.LOCKED  # not a traceback: once it was one
    status = job.status()
    assert status["last_success"]["snapshot_id"] is not None
    assert status["last_failure"]["outcome"] == "locked"
    assert "another job took it" in status["last_failure"]["reason"]
    assert job.snapshots() == ["complete"]


def test_an_audit_that_cannot_read_the_store_fails_the_run_as_store(
    job: Job, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The snapshot committed; the audit met a missing data file (it once raised out)."""
    import toolkit.audit

    def unreadable(*args: object, **kwargs: object) -> None:
        raise StoreUnavailable("RES001 could not read the store (IO Error: no file)")

    monkeypatch.setattr(toolkit.audit, "run_audit", unreadable)
    settings = _settings(job, monkeypatch, audit=True)
    scheduler = Scheduler(settings, cadence=Cadence.every(30), max_runs=1,
                          status_file=job.status_file)  # fmt: skip
    assert scheduler.run() == ExitCode.STORE
    failure = job.status()["last_failure"]
    assert failure["outcome"] == "store" and "could not read the store" in failure["reason"]
    assert job.snapshots() == ["complete"]


def test_a_job_that_cannot_start_says_why_and_writes_nothing(job: Job) -> None:
    """An unwritable status file (exit 2) or store path (exit 7): once tracebacks."""
    blocker = job.tmp / "a-file"
    blocker.write_text("x", encoding="utf-8")
    no_status = job.run("--max-runs", "1", "--status-file", str(blocker / "status.json"))
    assert no_status.exit_code == ExitCode.CONFIG, no_status.output
    message = " ".join(no_status.stderr.split())
    assert f"the status file {blocker / 'status.json'} cannot be written" in message
    assert "--status-file" in message and job.snapshots() == []
    no_store = job.run("--max-runs", "1", PLATFORM_AUDIT_STORE=str(blocker / "store"))
    assert no_store.exit_code == ExitCode.STORE, no_store.output
    assert f"cannot lock the store {blocker / 'store'}" in " ".join(no_store.stderr.split())
    assert not job.status_file.exists()


def test_bad_settings_exit_with_config(job: Job) -> None:
    job.config.write_text('[schedule]\nevery = "soon"\n', encoding="utf-8")
    result = job.run("--max-runs", "1")
    assert result.exit_code == ExitCode.CONFIG
    assert "[schedule] every = 'soon' is not a duration" in result.stderr
    job.configure("")
    assert job.run("--every", "1h", "--cron", "0 * * * *").exit_code == ExitCode.CONFIG
    assert "not a cron expression" in job.run("--cron", "every day").stderr


def test_a_bad_waivers_file_after_the_snapshot_ends_the_run_recorded_as_config(
    job: Job, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A YAML date that does not exist once raised ValueError out of the job: exit 1, and
    the status file stayed at "running" with no last_failure."""
    waivers = job.tmp / "waivers.yaml"
    waivers.write_text(
        "waivers:\n  - check: BAK001\n    service: mongodb\n    reason: r\n    owner: o\n"
        "    expires: 2026-02-30\n",
        encoding="utf-8",
    )
    settings = dataclasses.replace(_settings(job, monkeypatch, audit=True), waivers_file=waivers)
    scheduler = Scheduler(settings, cadence=Cadence.every(30), max_runs=1,
                          status_file=job.status_file)  # fmt: skip
    assert scheduler.run() == ExitCode.CONFIG
    status = job.status()
    assert status["state"] == "stopped" and status["current_run"] is None
    failure = status["last_failure"]
    assert failure["outcome"] == "config" and "'2026-02-30' is not a real date" in failure["reason"]
    assert str(waivers) in failure["reason"] and job.snapshots() == ["complete"]


def test_a_run_counts_the_waivers_to_look_at(job: Job, monkeypatch: pytest.MonkeyPatch) -> None:
    today = datetime.now(UTC).date()
    waivers = job.tmp / "waivers.toml"
    entry = (
        '[[waivers]]\ncheck = "BAK001"\nservice = "{}"\nreason = "r"\nowner = "o"\nexpires = {}\n'
    )
    waivers.write_text(
        entry.format("*", today + timedelta(days=5))  # ends within 14 days
        + entry.format("nothing-by-this-name", today + timedelta(days=300)),  # stale
        encoding="utf-8",
    )
    settings = dataclasses.replace(_settings(job, monkeypatch, audit=True), waivers_file=waivers)
    scheduler = Scheduler(settings, cadence=Cadence.every(30), max_runs=1,
                          status_file=job.status_file)  # fmt: skip
    assert scheduler.run() == ExitCode.OK
    counts = job.status()["last_run"]["waivers"]
    assert counts == {"expiring": 1, "expired": 0, "stale": 1, "duplicate": 0}


def test_an_unexpected_audit_error_ends_the_run_recorded(
    job: Job, monkeypatch: pytest.MonkeyPatch
) -> None:
    import toolkit.audit

    def broken(*args: object, **kwargs: object) -> None:
        raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")

    monkeypatch.setattr(toolkit.audit, "run_audit", broken)
    settings = _settings(job, monkeypatch, audit=True)
    scheduler = Scheduler(settings, cadence=Cadence.every(30), max_runs=1,
                          status_file=job.status_file)  # fmt: skip
    assert scheduler.run() == ExitCode.CONFIG
    status = job.status()
    assert status["state"] == "stopped" and status["current_run"] is None
    reason = status["last_failure"]["reason"]
    assert "the audit failed (UnicodeDecodeError:" in reason
    assert status["last_run"]["snapshot_id"] in reason and job.snapshots() == ["complete"]


def test_an_unexpected_error_after_the_snapshot_fails_the_run_and_the_job_goes_on(
    job: Job, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug in a phase after the commit (here: writing the report) once raised out of the
    job: exit 1, no later run, and the status file left at "running" with 0 failures."""
    import toolkit.report

    def broken(*args: object, **kwargs: object) -> None:
        raise TypeError("Invalid comparison between dtype=datetime64[s] and date")

    monkeypatch.setattr(toolkit.report, "write_report", broken)
    job.config.write_text(
        job.config.read_text().replace("audit = false", 'audit = true\nreport = "out.md"')
    )
    result = job.run("--every", "0.1s", "--max-runs", "2", "--log-format", "json")
    assert result.exit_code == ExitCode.ERROR, result.output
    status = job.status()
    assert status["state"] == "stopped" and status["current_run"] is None
    assert status["consecutive_failures"] == 2 and job.snapshots() == ["complete", "complete"]
    assert status["last_maintenance"]["at"]  # the store is still kept up
    failure = status["last_failure"]
    assert failure["outcome"] == "error" and failure["exit_code"] == ExitCode.ERROR
    assert "unexpected error (TypeError in test_schedule_faults.py line" in failure["reason"]
    assert f"after snapshot {failure['snapshot_id']} was committed" in failure["reason"]
    said = "the run failed on an unexpected error"
    logged = [line for line in json_lines(result.stderr) if line["message"] == said]
    assert "datetime64[s]" in logged[0]["error"]  # the message and traceback: in the log


def test_an_unexpected_error_in_maintenance_fails_the_run_recorded(
    job: Job, monkeypatch: pytest.MonkeyPatch
) -> None:
    import toolkit.pipeline.scheduler

    def broken(*args: object, **kwargs: object) -> None:
        raise KeyError("tables")

    monkeypatch.setattr(toolkit.pipeline.scheduler, "maintain", broken)
    scheduler = Scheduler(_settings(job, monkeypatch), cadence=Cadence.every(30), max_runs=1,
                          status_file=job.status_file)  # fmt: skip
    assert scheduler.run() == ExitCode.ERROR
    status = job.status()
    assert status["state"] == "stopped" and status["consecutive_failures"] == 1
    assert "unexpected error (KeyError" in status["last_failure"]["reason"]


def test_an_unexpected_error_between_runs_stops_the_job_recorded(
    job: Job, monkeypatch: pytest.MonkeyPatch
) -> None:
    scheduler = Scheduler(_settings(job, monkeypatch), cadence=Cadence.every(30), max_runs=1,
                          status_file=job.status_file)  # fmt: skip

    def broken(due: datetime) -> bool:
        raise RuntimeError("the clock went away")

    monkeypatch.setattr(scheduler, "_wait_until", broken)
    assert scheduler.run() == ExitCode.ERROR
    status = job.status()
    assert status["state"] == "stopped" and status["consecutive_failures"] == 1
    assert "unexpected error (RuntimeError" in status["last_failure"]["reason"]
    assert "the job stopped" in status["last_failure"]["reason"]
