"""The job as a real process: `kill -9` mid-run, and SIGTERM that lets the run finish."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

from job_harness import Job, json_lines

from toolkit.cli import ExitCode
from toolkit.sim import FaultProfile
from toolkit.snapshot import Store


def _wait_for_running(job: Job, process: subprocess.Popen[str], timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        if job.status_file.exists():
            try:
                if json.loads(job.status_file.read_text()).get("state") == "running":
                    return
            except ValueError:
                pass  # never: the file is replaced atomically; tolerated all the same
        time.sleep(0.05)
    raise AssertionError("the job never started a run")


def test_killed_mid_run_the_next_run_succeeds_and_the_store_verifies(job: Job) -> None:
    job.sim.set_faults(FaultProfile(latency_ms=150))  # a run takes a couple of seconds
    process = job.spawn("--every", "1h")
    _wait_for_running(job, process)
    time.sleep(0.8)  # well into the crawl
    process.kill()  # SIGKILL: no handler, no cleanup, the lock file keeps its pid
    process.wait(timeout=10)
    dead_pid = process.pid
    assert job.status()["state"] == "running"

    job.sim.set_faults(FaultProfile())
    result = job.run("--max-runs", "1", "--log-format", "json")
    assert result.exit_code == ExitCode.OK, result.output
    lines = json_lines(result.stderr)
    stale = [line for line in lines if "recovered a stale lock" in line["message"]]
    assert stale and stale[0]["stale_pid"] == dead_pid
    assert any("previous run did not finish" in line["message"] for line in lines)
    store = Store.open(str(job.store))
    assert store.verify().ok
    assert [s.status for s in store.snapshots()][-1] == "complete"
    status = job.status()
    assert status["last_failure"]["outcome"] == "interrupted"
    assert status["last_success"]["at"] > status["last_failure"]["at"]


def test_sigterm_lets_the_current_run_finish_then_stops(job: Job) -> None:
    job.sim.set_faults(FaultProfile(latency_ms=100))
    process = job.spawn("--every", "1h", "--log-format", "json")
    _wait_for_running(job, process)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == ExitCode.OK, stderr
    messages = [line["message"] for line in json_lines(stderr)]
    assert any("SIGTERM received: stopping after the current run" in m for m in messages)
    assert any(m == "run finished" for m in messages)
    store = Store.open(str(job.store))
    assert [s.status for s in store.snapshots()] == ["complete"]  # completed, not torn
    assert store.verify().ok
    status = job.status()
    assert status["state"] == "stopped" and status["current_run"] is None


def test_sigterm_while_waiting_stops_at_once(job: Job) -> None:
    process = job.spawn("--every", "1h", "--max-runs", "2")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if job.status_file.exists() and "last_success" in job.status_file.read_text():
            break
        time.sleep(0.05)
    started = time.monotonic()
    process.send_signal(signal.SIGINT)
    process.communicate(timeout=30)
    assert process.returncode == ExitCode.OK
    assert time.monotonic() - started < 10
    assert job.status()["state"] == "stopped"


def _dead_pid() -> int:
    """The pid of a process of this host that has ended."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_a_job_that_died_is_shown_died_and_its_next_run_counts_the_failure(job: Job) -> None:
    """`kill -9` left "running" and a dead pid: once read as a healthy job, and the next
    run did not count it among the failures in a row."""
    pid = _dead_pid()
    left = {
        "state": "running", "pid": pid, "host": socket.gethostname(),
        "current_run": {"run_id": "r-killed", "pid": pid}, "consecutive_failures": 0,
        "last_run": {"run_id": "r-before", "outcome": "ok", "exit_code": 0},
        "updated_at": "2026-11-27T10:00:00+00:00",
    }  # fmt: skip
    job.status_file.write_text(json.dumps(left), encoding="utf-8")
    shown = job.run("--status")
    assert shown.exit_code == ExitCode.INTERRUPTED, shown.output
    now = json.loads(shown.stdout)
    assert now["state"] == "died" and f"pid {pid}" in now["died"] and "r-killed" in now["died"]
    assert "died: the job" in shown.stderr
    assert job.status() == left  # --status only reads

    job.revoke("admin")  # the next run fails too: two failures in a row
    result = job.run("--max-runs", "1", "--log-format", "json")
    assert result.exit_code == ExitCode.AUTH, result.output
    status = job.status()
    assert status["consecutive_failures"] == 2 and status["state"] == "stopped"
    told = [line for line in json_lines(result.stderr) if "did not finish" in line["message"]]
    assert "run r-killed (pid " in told[0]["message"]


def test_status_of_a_live_job_and_of_none(job: Job) -> None:
    alive = {"state": "idle", "pid": os.getpid(), "host": socket.gethostname(),
             "last_run": {"outcome": "partial", "exit_code": 3}}  # fmt: skip
    job.status_file.write_text(json.dumps(alive), encoding="utf-8")
    shown = job.run("--status")
    assert shown.exit_code == ExitCode.PARTIAL and json.loads(shown.stdout) == alive
    job.status_file.unlink()
    missing = job.run("--status")
    assert missing.exit_code == ExitCode.CONFIG
    assert f"no status file at {job.status_file}" in " ".join(missing.stderr.split())
    assert job.run("--status", "--max-runs", "1").exit_code == ExitCode.CONFIG
