"""Notifications of new findings: the Slack-compatible payload, retries, and no secrets."""

from __future__ import annotations

import json
import threading
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, ClassVar

import pandas as pd
import pytest
from job_harness import Job, json_lines

from toolkit.cli import ExitCode
from toolkit.schedule import build_payload, post_payload
from toolkit.schedule.notify import NotifyError

if TYPE_CHECKING:
    from collections.abc import Iterator


class Hook(BaseHTTPRequestHandler):
    """Answers each POST with the next of ``statuses`` (then 200) and keeps the bodies."""

    statuses: ClassVar[list[int]] = []
    received: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.received.append(json.loads(body))
        status = self.statuses.pop(0) if self.statuses else 200
        self.send_response(status)
        if status == 429:
            self.send_header("Retry-After", "0")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def hook() -> Iterator[str]:
    Hook.statuses, Hook.received = [], []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/services/T000/B000/secretpart"
    finally:
        server.shutdown()
        server.server_close()


def _findings(rows: list[tuple[str, str, str, bool]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "check_id": check, "title": "Service <runs> & more", "severity": severity,
                "state": state, "waived": waived, "resource_type": "service",
                "resource_id": f"svc-{i}", "resource_name": f"api-{i}", "team_name": "core",
                "project_name": "shop", "environment_name": "prod",
                "reason": "DATABASE_URL value CANARY123", "evidence": '{"value": "CANARY123"}',
                "waiver_status": None, "waiver_owner": None, "waiver_expires": None,
            }
            for i, (check, severity, state, waived) in enumerate(rows)
        ]
    )  # fmt: skip


def test_payload_lists_new_findings_at_or_above_the_severity() -> None:
    frame = _findings(
        [
            ("RES001", "high", "new", False),
            ("SEC001", "critical", "regressed", False),
            ("BAK001", "critical", "open", False),  # not new
            ("KEY001", "critical", "new", True),  # waived
            ("VOL001", "medium", "new", False),  # below
        ]
    )
    payload = build_payload(frame, min_severity="high", store="s3://b/p", snapshot_id="0193")
    assert payload is not None
    assert payload["text"].startswith("platform-audit: 2 new findings at or above high")
    assert "(1 critical, 1 high)" in payload["text"]
    body = json.dumps(payload)
    assert "SEC001" in body and "RES001" in body
    assert not any(c in body for c in ("BAK001", "KEY001", "VOL001"))
    assert "CANARY123" not in body and "DATABASE_URL" not in body  # no reason, no evidence
    assert "&lt;runs&gt; &amp;" in body  # mrkdwn escaped
    assert body.index("SEC001") < body.index("RES001")  # most severe first
    assert {b["type"] for b in payload["blocks"]} >= {"header", "section"}
    # a variable's finding names its service: one check's findings on same-named variables
    # in many services tell apart
    variable = _findings([("VAR004", "high", "new", False)])
    variable["resource_type"], variable["service_name"] = "variable", "billing"
    line = build_payload(variable, min_severity="high", store="s", snapshot_id="x")
    assert line is not None and "(core / shop / prod / billing)" in json.dumps(line)
    none_new = _findings([("BAK001", "critical", "open", False)])
    assert build_payload(none_new, min_severity="low", store="s", snapshot_id="x") is None


def test_payload_names_open_findings_whose_waiver_ended_since_the_compared_snapshot() -> None:
    frame = _findings(
        [
            ("SEC001", "critical", "open", False),  # its waiver ended on the 20th
            ("SEC002", "critical", "open", False),  # ended on the 10th: told back then
            ("SEC003", "critical", "open", True),  # still waived
            ("VOL001", "medium", "open", False),  # ended on the 20th, but below
            ("RES001", "high", "new", False),
        ]
    )
    ends = ["2026-11-20", "2026-11-10", "2026-12-31", "2026-11-20", None]
    frame["waiver_expires"] = [date.fromisoformat(e) if e else None for e in ends]
    frame["waiver_status"] = ["expired", "expired", "active", "expired", None]
    frame["waiver_owner"] = ["sec <team>", "sec", "sec", "ops", None]
    payload = build_payload(
        frame,
        min_severity="high",
        store="s",
        snapshot_id="x",
        waivers_ended_since=date(2026, 11, 20),
    )
    assert payload is not None
    assert payload["text"].startswith(
        "platform-audit: 1 new finding and 1 finding whose waiver ended at or above high "
        "(1 critical, 1 high)"
    )
    body = json.dumps(payload)
    assert "SEC001" in body and "RES001" in body
    assert not any(c in body for c in ("SEC002", "SEC003", "VOL001"))
    assert "[open, waiver by sec &lt;team&gt; ended 2026-11-20]" in body
    # Without a compared snapshot (a first run) only new findings count.
    first = build_payload(frame, min_severity="high", store="s", snapshot_id="x")
    assert first is not None and "SEC001" not in json.dumps(first)
    assert build_payload(
        frame,
        min_severity="high",
        store="s",
        snapshot_id="x",
        waivers_ended_since=date(2026, 11, 21),
    )["text"].startswith("platform-audit: 1 new finding at or above high")


@pytest.mark.parametrize(
    "expires",
    [
        pd.Series([None, None], dtype=object),  # no waiver at all: every value missing
        pd.Series([pd.NaT, pd.NaT], dtype="datetime64[s]"),  # the same, as Arrow gives it
        pd.Series([pd.Timestamp("2026-11-20", tz="UTC"), pd.NaT]),  # a zoned end date
    ],
)
def test_waiver_end_dates_of_any_type_compare_with_the_compared_day(expires: pd.Series) -> None:
    frame = _findings([("SEC001", "critical", "open", False), ("RES001", "high", "new", False)])
    frame["waiver_expires"] = expires
    frame["waiver_status"] = ["expired" if pd.notna(e) else None for e in expires]
    frame["waiver_owner"] = ["sec" if pd.notna(e) else None for e in expires]
    payload = build_payload(
        frame,
        min_severity="high",
        store="s",
        snapshot_id="x",
        waivers_ended_since=date(2026, 11, 20),
    )
    assert payload is not None
    ended = 1 if expires.notna().any() else 0
    assert ("SEC001" in json.dumps(payload)) is bool(ended)
    assert "RES001" in json.dumps(payload)


def test_post_retries_5xx_and_429_then_succeeds(hook: str) -> None:
    Hook.statuses = [503, 429]
    attempts = post_payload(hook, {"text": "hi"}, max_attempts=4, backoff_s=0.01)
    assert attempts == 3 and len(Hook.received) == 3


def test_post_gives_up_without_showing_the_url(hook: str) -> None:
    Hook.statuses = [500, 500, 500]
    with pytest.raises(NotifyError) as caught:
        post_payload(hook, {"text": "hi"}, max_attempts=3, backoff_s=0.01)
    assert "answered 500" in str(caught.value) and "after 3 attempt" in str(caught.value)
    assert "secretpart" not in str(caught.value)
    Hook.statuses = [400]
    with pytest.raises(NotifyError, match="answered 400 \\(after 1 attempt"):
        post_payload(hook, {"text": "hi"}, max_attempts=3, backoff_s=0.01)


def test_a_scheduled_run_posts_its_new_findings_and_logs_no_secret(job: Job, hook: str) -> None:
    job.configure('[notify]\nurl_env = "PLATFORM_AUDIT_WEBHOOK"\nmin_severity = "critical"\n')
    text = job.config.read_text().replace("audit = false", 'audit = true\nreport = "out/audit.md"')
    job.config.write_text(text)
    Hook.statuses = [503]  # the first post fails once and is retried
    result = job.run("--max-runs", "1", "--log-format", "json", PLATFORM_AUDIT_WEBHOOK=hook)
    assert result.exit_code == ExitCode.OK, result.output
    assert len(Hook.received) == 2
    payload = Hook.received[-1]
    assert "new finding" in payload["text"] and payload["blocks"]
    assert "critical" in payload["text"]
    last = job.status()["last_run"]
    assert last["notification"] == "sent (2 attempt(s))" and last["findings"]["new"] > 0
    report = job.tmp / "out" / "audit.md"
    assert last["report"] == str(report) and report.stat().st_size > 0
    finished = [line for line in json_lines(result.stderr) if line["message"] == "run finished"]
    assert finished[0]["snapshot_id"] and finished[0]["rows"] > 0 and finished[0]["durations"]
    written = result.stderr + job.status_file.read_text() + json.dumps(Hook.received)
    written += report.read_text()
    for secret in [*job.sim.keys.values(), "secretpart", *job.sim.canaries()]:
        assert secret not in written


def test_every_scheduled_run_with_notify_after_the_first_succeeds(job: Job, hook: str) -> None:
    """The second run compares against the first: its waiver end dates (none here) are
    compared with that snapshot's day, which once raised a TypeError on every later run."""
    job.configure('[notify]\nurl_env = "PLATFORM_AUDIT_WEBHOOK"\nmin_severity = "low"\n')
    job.config.write_text(job.config.read_text().replace("audit = false", "audit = true"))
    codes = [job.run("--max-runs", "1", PLATFORM_AUDIT_WEBHOOK=hook).exit_code for _ in range(2)]
    assert codes == [ExitCode.OK, ExitCode.OK]
    status = job.status()
    assert status["consecutive_failures"] == 0 and "last_failure" not in status
    assert status["last_run"]["notification"] in ("nothing new to send", "sent (1 attempt(s))")
