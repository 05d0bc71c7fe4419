"""The loop of ``platform-audit schedule``: lock, wait, run, record, maintain, back off.

The job takes the store's lock once and holds it until it ends, so a second job on the
same store exits at once (:class:`~toolkit.errors.LockHeld`, exit 6). Between runs it waits
on ``stop``, so SIGTERM/SIGINT end the wait at once; a signal during a run lets the run
finish (its snapshot commits whole or not at all) and skips that run's maintenance. A run
that found the platform unavailable (or the store unwritable) is retried after a growing
backoff; a refused credential or a bad setting ends the job, since no later run can
succeed. The status file is rewritten atomically at every step. Example::

    scheduler = Scheduler(settings, cadence=Cadence.every(3600), max_runs=None)
    exit_code = scheduler.run()
"""

from __future__ import annotations

import logging
import os
import random
import socket
import threading
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from deltalake.exceptions import DeltaError

from toolkit.errors import ScheduleError, StoreError
from toolkit.pipeline.scheduled_job import EXIT_CODES, RunOutcome, run_job, unexpected
from toolkit.schedule.cadence import Cadence, backoff_delay
from toolkit.schedule.lock import LeaseKeeper, acquire_lock, renew_every_s, renew_or_warn
from toolkit.schedule.maintenance import maintain, maintenance_due
from toolkit.schedule.status import check_writable, read_status, write_status

if TYPE_CHECKING:
    from pathlib import Path

    from toolkit.config import Settings
    from toolkit.schedule.lock import StoreLock
    from toolkit.snapshot import FaultHook

__all__ = ["Scheduler"]

logger = logging.getLogger("toolkit.schedule")


class Scheduler:
    """Runs :func:`~toolkit.pipeline.scheduled_job.run_job` on a cadence (see the module
    docstring)."""

    def __init__(
        self,
        settings: Settings,
        *,
        cadence: Cadence,
        max_runs: int | None = None,
        status_file: Path | None = None,
        stop: threading.Event | None = None,
        fault_hook: FaultHook | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.settings = settings
        self.cadence = cadence
        self.max_runs = max_runs
        self.status_file = status_file or settings.schedule.status_file
        self.stop = stop or threading.Event()
        self._fault_hook = fault_hook
        self._rng = rng or random.Random()
        self._status: dict[str, Any] = {}
        self._lock: StoreLock | None = None

    def run(self) -> int:
        """Run until ``max_runs``, a fatal failure or ``stop``; returns the exit code."""
        owner = uuid.uuid4().hex
        self._lock = acquire_lock(
            self.settings.store_url, owner=owner, ttl_s=self.settings.schedule.lock_ttl_s
        )
        with self._lock:
            check_writable(self.status_file)
            self._status = read_status(self.status_file)
            self._note_unfinished_run()
            logger.info(
                "schedule started: %s on store %s",
                self.cadence.describe(),
                self.settings.store_url,
                extra={"fields": {"pid": os.getpid(), "max_runs": self.max_runs}},
            )
            try:
                return self._loop()
            except Exception as exc:  # between runs: the status file itself, or a bug
                return self._end_unexpectedly(exc)

    def _end_unexpectedly(self, exc: Exception) -> int:
        """Stop the job on an exception outside any run, recorded as far as the status file
        can still be written; exit 8 (``ExitCode.ERROR``)."""
        outcome = unexpected(RunOutcome(uuid.uuid4().hex[:16]), exc, then="the job stopped")
        try:
            self._status["state"] = "stopped"
            self._finish(outcome)
        except Exception:  # the status file cannot be written: the log says so
            logger.exception("the status file %s could not be written", self.status_file)
        return outcome.exit_code

    def _loop(self) -> int:
        runs, failures, code = 0, 0, EXIT_CODES["ok"]
        due = self.cadence.first(datetime.now(UTC))
        while self.max_runs is None or runs < self.max_runs:
            self._record(state="idle", next_run=due.isoformat())
            try:
                if not self._wait_until(due):
                    break
            except ScheduleError as exc:  # the lease ran out while waiting; another job has it
                outcome = RunOutcome(uuid.uuid4().hex[:16]).fail("locked", str(exc))
                self._finish(outcome)
                code = outcome.exit_code
                break
            outcome = self._run_once()
            runs += 1
            code = outcome.exit_code
            if outcome.outcome == "interrupted" or outcome.fatal:
                break
            failures = failures + 1 if outcome.backoff else 0
            now = datetime.now(UTC)
            if failures:
                delay = backoff_delay(
                    failures,
                    base_s=self.settings.schedule.backoff_s,
                    max_s=self.settings.schedule.backoff_max_s,
                    rng=self._rng,
                )
                due = now + timedelta(seconds=delay)
                logger.warning(
                    "backing off: next attempt in %.1f s (failure %d in a row)",
                    delay,
                    failures,
                    extra={"fields": {"run_id": outcome.run_id, "backoff_s": round(delay, 3)}},
                )
            else:
                due = self.cadence.next_after(now, self._rng)
            if self.stop.is_set():
                break
        stopped = "a signal" if self.stop.is_set() else f"{runs} run(s)"
        self._record(state="stopped", next_run=None)
        logger.info("schedule stopped after %s", stopped, extra={"fields": {"exit_code": code}})
        return code

    @property
    def _renew_every_s(self) -> float:
        return renew_every_s(self.settings.schedule.lock_ttl_s)

    def _wait_until(self, due: datetime) -> bool:
        """Sleep until ``due`` unless stopped; renews an S3 lease on the way
        (:class:`ScheduleError` if another job took it)."""
        renew_every = self._renew_every_s
        last_renew = time.monotonic()
        while not self.stop.is_set():
            left = (due - datetime.now(UTC)).total_seconds()
            if left <= 0:
                return True
            self.stop.wait(min(left, renew_every, 60.0))
            if time.monotonic() - last_renew >= renew_every and self._lock is not None:
                renew_or_warn(self._lock)
                last_renew = time.monotonic()
        return False

    def _run_once(self) -> RunOutcome:
        run_id = uuid.uuid4().hex[:16]
        fields = {"run_id": run_id}
        self._record(state="running", current_run={"run_id": run_id, "pid": os.getpid()})
        logger.info("run started", extra={"fields": fields})
        started = time.perf_counter()
        try:
            if self._lock is not None:
                renew_or_warn(self._lock)  # an unreachable store: the lease still runs
                with LeaseKeeper(self._lock, every_s=self._renew_every_s) as keeper:
                    outcome = run_job(self.settings, run_id=run_id, fault_hook=self._fault_hook)
                if keeper.lost is not None:
                    outcome.fail("locked", _lost_during_run(keeper.lost))
            else:
                outcome = run_job(self.settings, run_id=run_id, fault_hook=self._fault_hook)
        except KeyboardInterrupt:
            outcome = RunOutcome(run_id).fail(
                "interrupted",
                "stopped by a second signal during the run; its snapshot did not commit "
                "(store gc removes its rows)",
            )
        except ScheduleError as exc:
            outcome = RunOutcome(run_id).fail("locked", str(exc))
        except Exception as exc:  # run_job catches its own: this is the lease's, or a bug here
            outcome = unexpected(RunOutcome(run_id), exc)
        if _committed(outcome) and not self.stop.is_set():
            try:
                self._maintain(outcome)
            except Exception as exc:  # its expected failures are warnings (see _maintain)
                unexpected(outcome, exc)
        outcome.fields["duration_s"] = round(time.perf_counter() - started, 3)
        self._finish(outcome)
        return outcome

    def _maintain(self, outcome: RunOutcome) -> None:
        now = datetime.now(UTC)
        last = self._status.get("last_maintenance") or {}
        if not maintenance_due(self.settings.schedule, last.get("at"), now):
            return
        from toolkit.snapshot import Store

        try:
            report = maintain(Store.open(self.settings.store_url), self.settings.schedule, now=now)
        except (OSError, DeltaError, StoreError) as exc:
            logger.warning("maintenance failed: %s; the next run tries again", exc)
            return
        facts = report.as_fields()
        self._status["last_maintenance"] = {"at": now.isoformat(), **facts}
        outcome.fields["maintenance"] = facts
        logger.info("maintenance done", extra={"fields": {"run_id": outcome.run_id, **facts}})

    def _finish(self, outcome: RunOutcome) -> None:
        record = outcome.as_status()
        self._status["last_run"] = record
        if outcome.outcome == "ok":
            self._status["last_success"] = {"at": record["finished_at"], **record}
            self._status["consecutive_failures"] = 0
        else:
            self._status["last_failure"] = {"at": record["finished_at"], **record}
            failures = int(self._status.get("consecutive_failures", 0)) + 1
            self._status["consecutive_failures"] = failures
        self._record(current_run=None)
        fields = {k: v for k, v in record.items() if v is not None}
        fields["snapshot_id"] = outcome.snapshot_id
        if outcome.outcome == "ok":
            logger.info("run finished", extra={"fields": fields})
        else:
            logger.error("run failed: %s", outcome.reason, extra={"fields": fields})

    def _note_unfinished_run(self) -> None:
        """Record a run whose process died (``kill -9``, power loss) as a failure."""
        current = self._status.get("current_run")
        if not current:
            return  # this job holds the lock, so whoever wrote current_run is gone
        reason = (
            f"run {current['run_id']} (pid {current['pid']}) ended without finishing (killed?); "
            "its snapshot did not commit unless `platform-audit store ls` shows it, and "
            "maintenance removes its leftover rows"
        )
        logger.warning("previous run did not finish: %s", reason)
        record = {
            "at": datetime.now(UTC).isoformat(),
            "run_id": current["run_id"],
            "outcome": "interrupted",
            "exit_code": EXIT_CODES["interrupted"],
            "reason": reason,
        }
        self._status.update(last_run=record, last_failure=record, current_run=None)
        self._status["consecutive_failures"] = int(self._status.get("consecutive_failures", 0)) + 1

    def _record(self, **changes: Any) -> None:
        self._status.update(changes)
        self._status.update(
            pid=os.getpid(),
            host=socket.gethostname(),
            store=self.settings.store_url,
            cadence=self.cadence.describe(),
        )
        write_status(self.status_file, self._status)


def _committed(outcome: RunOutcome) -> bool:
    """Whether the run committed a snapshot and maintenance may follow: also when only
    its notification or report failed on a bug, which would otherwise stop maintenance
    for as long as the bug lasts."""
    return outcome.outcome in ("ok", "partial") or (
        outcome.outcome == "error" and outcome.snapshot_id is not None
    )


def _lost_during_run(why: str) -> str:
    return (
        f"{why}. It was lost during this run, so another job may have written the store "
        "beside it: run `platform-audit store verify`; this job stops"
    )
