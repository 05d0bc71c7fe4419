"""One scheduled run: probe, snapshot, audit, notify, report; its outcome as data.

Each phase's failure becomes a :class:`RunOutcome` with an ``outcome`` word, the exit code
of :class:`toolkit.errors.ExitCode` a job runner alerts on, and one sentence that says what to
do. Nothing here sleeps or loops; :mod:`toolkit.pipeline.scheduler` does. Example::

    outcome = run_job(settings, run_id="r1")
    outcome.outcome, outcome.exit_code, outcome.snapshot_id, outcome.reason
"""

from __future__ import annotations

import logging
import os
import time
import traceback
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deltalake.exceptions import DeltaError

from toolkit.errors import (
    AuditError,
    CheckDefinitionError,
    CollectionAborted,
    ConfigError,
    ExitCode,
    PlatformUnavailable,
    StoreError,
)
from toolkit.report.report_formats import format_of

if TYPE_CHECKING:
    from toolkit.audit import AuditResult
    from toolkit.config import Settings
    from toolkit.pipeline.snapshot_job import SnapshotRun
    from toolkit.snapshot import FaultHook

__all__ = ["EXIT_CODES", "RunOutcome", "run_job", "unexpected"]

logger = logging.getLogger("toolkit.schedule")

# A run's outcome word and the exit code it stands for.
EXIT_CODES = {
    "ok": int(ExitCode.OK),
    "config": int(ExitCode.CONFIG),
    "partial": int(ExitCode.PARTIAL),
    "auth": int(ExitCode.AUTH),
    "unavailable": int(ExitCode.UNREACHABLE),
    "locked": int(ExitCode.LOCKED),
    "store": int(ExitCode.STORE),
    "interrupted": int(ExitCode.INTERRUPTED),
    "error": int(ExitCode.ERROR),
}
FATAL = frozenset({"auth", "config", "locked"})  # no later run succeeds without a person
# retried after a backoff; "error" too: a bug met once (a reply, a date) may not recur
TRANSIENT = frozenset({"unavailable", "store", "error"})


@dataclass
class RunOutcome:
    """How one run ended; ``fields`` holds its counts and durations for the log and status."""

    run_id: str
    outcome: str = "ok"
    reason: str | None = None
    snapshot_id: str | None = None
    started_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat())
    fields: dict[str, Any] = field(default_factory=dict)
    backoff: bool = False

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.outcome]

    @property
    def fatal(self) -> bool:
        return self.outcome in FATAL

    def fail(self, outcome: str, reason: str, *, backoff: bool = False) -> RunOutcome:
        self.outcome, self.reason = outcome, reason
        self.backoff = backoff or outcome in TRANSIENT
        return self

    def as_status(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "outcome": self.outcome,
            "exit_code": self.exit_code,
            "reason": self.reason,
            "snapshot_id": self.snapshot_id,
            "started_at": self.started_at,
            "finished_at": datetime.now(UTC).isoformat(),
            **self.fields,
        }


def run_job(settings: Settings, *, run_id: str, fault_hook: FaultHook | None = None) -> RunOutcome:
    """Probe the platform, take a snapshot, audit it, tell the webhook, write the report.

    Never raises an :class:`Exception`: one that no phase expects fails the run as
    ``error`` (:func:`unexpected`), keeping the id of a snapshot committed before it."""
    outcome = RunOutcome(run_id)
    try:
        _run_phases(settings, outcome, fault_hook)
    except Exception as exc:  # a run must end recorded, never left "running"
        unexpected(outcome, exc)
    return outcome


def unexpected(
    outcome: RunOutcome, exc: Exception, *, then: str = "the next run tries again"
) -> RunOutcome:
    """Fail ``outcome`` as ``error`` (exit 8) for an exception nothing expected: a bug.

    The message and traceback go to the log, whose handler masks secrets; the reason, which
    the status file keeps as it is, names only the exception's type and where it was raised
    (an exception's message may quote a URL or a value)."""
    logger.error(
        "the run failed on an unexpected error",
        exc_info=exc,
        extra={"fields": {"run_id": outcome.run_id}},
    )
    committed = (
        f"after snapshot {outcome.snapshot_id} was committed (it is kept)"
        if outcome.snapshot_id
        else "before a snapshot was committed"
    )
    return outcome.fail(
        "error",
        f"the run failed on an unexpected error ({type(exc).__name__}{_raised_at(exc)}) "
        f"{committed}; {then}. The log has its message and traceback: "
        "please report it as a bug with them",
    )


def _raised_at(exc: BaseException) -> str:
    """`` in FILE line N, FUNCTION`` of the frame that raised ``exc``, or nothing."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    last = frames[-1]
    return f" in {Path(last.filename).name} line {last.lineno}, {last.name}"


def _run_phases(settings: Settings, outcome: RunOutcome, fault_hook: FaultHook | None) -> None:
    durations: dict[str, float] = {}
    outcome.fields["durations"] = durations
    started = time.perf_counter()
    if not _probe(settings, outcome):
        durations["probe_s"] = round(time.perf_counter() - started, 3)
        return
    durations["probe_s"] = round(time.perf_counter() - started, 3)
    run = _snapshot(settings, outcome, fault_hook)
    if run is None:
        return
    durations["crawl_s"] = round(run.result.duration_s, 3)
    durations["write_s"] = round(run.write_s, 3)
    if settings.schedule.audit:
        started = time.perf_counter()
        result = _audit(settings, outcome)
        durations["audit_s"] = round(time.perf_counter() - started, 3)
        if result is not None:
            started = time.perf_counter()
            for output in (_notify, _report):  # one failing does not stop the other
                try:
                    output(settings, result, outcome)
                except Exception as exc:
                    unexpected(outcome, exc)
            durations["notify_report_s"] = round(time.perf_counter() - started, 3)


def _probe(settings: Settings, outcome: RunOutcome) -> bool:
    """``/users/me`` first: a platform that is down or a refused key commits nothing."""
    from toolkit.pipeline.identity_probe import probe_identity

    try:
        probe = probe_identity(settings)
    except ConfigError as exc:
        outcome.fail("config", str(exc))
        return False
    if probe.error is None:
        return True
    if probe.exit_code == EXIT_CODES["auth"]:
        outcome.fail("auth", probe.error + "; nothing was committed")
    else:
        outcome.fail("unavailable", f"the platform is unavailable: {probe.error}")
    return False


def _snapshot(
    settings: Settings, outcome: RunOutcome, fault_hook: FaultHook | None
) -> SnapshotRun | None:
    from toolkit.pipeline.snapshot_job import store_failure, take_snapshot

    try:
        run = take_snapshot(settings, quiet=True, fault_hook=fault_hook)
    except CollectionAborted as exc:
        outcome.fail("auth", str(exc))
        return None
    except PlatformUnavailable as exc:  # went down between the probe and the crawl
        outcome.fail("unavailable", str(exc))
        return None
    except ConfigError as exc:
        outcome.fail("config", str(exc))
        return None
    except (OSError, DeltaError, StoreError) as exc:
        outcome.fail("store", store_failure(settings.store_url, exc))
        return None
    info = run.info
    outcome.snapshot_id = info.snapshot_id
    outcome.fields.update(
        status=info.status,
        rows=sum(info.row_counts.values()),
        calls=run.result.calls,
        failed_calls=len(run.result.errors),
    )
    if info.status != "complete":
        unavailable = [e for e in run.result.errors if _is_unavailable(e.get("status"))]
        outcome.fail(
            "partial",
            f"snapshot {info.snapshot_id} is partial: {len(run.result.errors)} call(s) failed "
            f"({len(unavailable)} of them 429/5xx/network); it is kept and marked partial, see "
            "collection_errors",
            backoff=bool(unavailable),
        )
    return run


def _is_unavailable(status: object) -> bool:
    return status is None or status == 429 or (isinstance(status, int) and status >= 500)


def _audit(settings: Settings, outcome: RunOutcome) -> AuditResult | None:
    from toolkit.audit import run_audit
    from toolkit.audit.waivers import ATTENTION
    from toolkit.snapshot import Store

    try:  # judges the snapshot just committed into the findings history, reads the rest
        result = run_audit(Store.open(settings.store_url), options=settings.audit_options())
    except AuditError as exc:
        logger.info("audit skipped: %s", exc, extra={"fields": {"run_id": outcome.run_id}})
        return None
    except (CheckDefinitionError, ConfigError) as exc:
        outcome.fail("config", f"the audit cannot run: {exc}")
        return None
    except StoreError as exc:  # the snapshot is committed; the next run audits again
        outcome.fail("store", f"the audit could not read the store: {exc}")
        return None
    except Exception as exc:  # a run must end recorded, never left "running"
        logger.exception("the audit failed", extra={"fields": {"run_id": outcome.run_id}})
        outcome.fail(
            "config",
            f"the audit failed ({type(exc).__name__}: {exc}) after snapshot "
            f"{outcome.snapshot_id} was committed; check what it reads ([audit] waivers, "
            "[audit] checks, [checks.ID]), and report this as a bug with the logged traceback",
        )
        return None
    frame = result.findings
    alarming = frame[~frame.waived.astype(bool)]
    outcome.fields["findings"] = {
        state: int((alarming.state == state).sum())
        for state in ("new", "regressed", "open", "resolved")
    }
    outcome.fields["audited_snapshot_id"] = result.target.snapshot_id
    if not result.waiver_report.empty:  # for a monitor: waivers someone has to look at
        statuses = result.waiver_report.status
        counts = {status: int((statuses == status).sum()) for status in ATTENTION}
        outcome.fields["waivers"] = counts
        if any(counts.values()):
            said = ", ".join(f"{n} {status}" for status, n in counts.items() if n)
            logger.warning(
                "waivers to look at: %s (`platform-audit audit` names them)",
                said,
                extra={"fields": {"run_id": outcome.run_id}},
            )
    return result


def _notify(settings: Settings, result: AuditResult, outcome: RunOutcome) -> None:
    from toolkit.schedule.notify import NotifyError, build_payload, post_payload

    notify = settings.notify
    if notify.url_env is None:
        return
    url = os.environ.get(notify.url_env, "").strip()
    if not url:
        outcome.fields["notification"] = f"not sent: ${notify.url_env} is not set"
        logger.warning("notification not sent: $%s is not set", notify.url_env)
        return
    payload = build_payload(
        result.findings,
        min_severity=notify.min_severity,
        store=settings.store_url,
        snapshot_id=result.target.snapshot_id,
        waivers_ended_since=result.compare.snapshot_at.date() if result.compare else None,
    )
    if payload is None:
        outcome.fields["notification"] = "nothing new to send"
        return
    try:
        attempts = post_payload(
            url, payload, max_attempts=notify.max_attempts, timeout_s=notify.timeout_s
        )
    except NotifyError as exc:
        outcome.fields["notification"] = str(exc)
        logger.warning("%s", exc, extra={"fields": {"run_id": outcome.run_id}})
        return
    outcome.fields["notification"] = f"sent ({attempts} attempt(s))"


def _report(settings: Settings, result: AuditResult, outcome: RunOutcome) -> None:
    """Write ``[schedule] report`` (format from its suffix) with ``toolkit.report``."""
    from toolkit.audit import AuditRequest
    from toolkit.errors import ToolkitError
    from toolkit.report import write_report
    from toolkit.snapshot import Store

    path: Path | None = settings.schedule.report
    if path is None:
        return
    format = format_of(path) or "html"  # the settings refuse other names
    try:
        store = Store.open(settings.store_url)
        write_report(store, path, AuditRequest(options=settings.audit_options()), format=format)
    except (OSError, ValueError, ToolkitError) as exc:
        outcome.fields["report"] = f"not written: {exc}"
        logger.warning("report %s not written: %s", path, exc)
        return
    outcome.fields["report"] = str(path)
