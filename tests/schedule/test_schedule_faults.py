"""Scheduled runs against the simulator with faults: outage, revoked key, full disk, lock."""

from __future__ import annotations

import errno
from typing import TYPE_CHECKING

from job_harness import Job, json_lines

from toolkit.cli import ExitCode
from toolkit.config import load_settings
from toolkit.schedule import Cadence, Scheduler, acquire_lock
from toolkit.sim import FaultProfile
from toolkit.snapshot import Store

if TYPE_CHECKING:
    import pytest


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
    monkeypatch.setenv("PLATFORM_API_URL", job.server.base_url)
    monkeypatch.setenv("PLATFORM_API_KEY", job.sim.keys["admin"])
    monkeypatch.setenv("PLATFORM_AUDIT_HMAC_KEY", "schedule-test-hmac-key-0123456789abcdef")
    settings = load_settings(job.config, store_url=str(job.store))

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


def test_bad_settings_exit_with_config(job: Job) -> None:
    job.config.write_text('[schedule]\nevery = "soon"\n', encoding="utf-8")
    result = job.run("--max-runs", "1")
    assert result.exit_code == ExitCode.CONFIG
    assert "[schedule] every = 'soon' is not a duration" in result.stderr
    job.configure("")
    assert job.run("--every", "1h", "--cron", "0 * * * *").exit_code == ExitCode.CONFIG
    assert "not a cron expression" in job.run("--cron", "every day").stderr
