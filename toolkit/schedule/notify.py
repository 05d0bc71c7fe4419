"""Tell a chat channel about new findings: a Slack-compatible JSON summary POSTed to a webhook.

Only unwaived findings at or above ``[notify] min_severity`` are sent: new and regressed
ones, and open ones whose waiver ended since the compared snapshot (an old finding the waiver
hid is news the day it ends, and no other run tells anyone: it is neither new nor regressed).
The payload names checks, severities and resources (ids and names are not secret); it never
carries a finding's reason or evidence, a variable value (the store holds none), a token,
or the webhook URL, which is itself a credential and is never logged either::

    payload = build_payload(result.findings, min_severity="high", store="data/store",
                            snapshot_id=result.target.snapshot_id,
                            waivers_ended_since=result.compare.snapshot_at.date())
    if payload is not None:
        post_payload(url, payload, max_attempts=4)
"""

from __future__ import annotations

import email.utils
import logging
import time
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any

import httpx
import pandas as pd

from toolkit.audit.check_file import SEVERITIES
from toolkit.audit.findings import WORSENED
from toolkit.report.exports.formats import owner_path

if TYPE_CHECKING:
    from collections.abc import Hashable, Mapping

__all__ = ["NotifyError", "build_payload", "new_findings", "post_payload"]

logger = logging.getLogger(__name__)

_MAX_LINES = 20
_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


class NotifyError(Exception):
    """The webhook refused the summary or could not be reached (no URL in the message)."""


def new_findings(
    findings: pd.DataFrame, min_severity: str, waivers_ended_since: date | None = None
) -> pd.DataFrame:
    """Unwaived findings at or above ``min_severity`` that are new or regressed, or open with
    a waiver that ended on or after ``waivers_ended_since`` (the day of the compared
    snapshot: the waiver still hid the finding then). Most severe first."""
    wanted = SEVERITIES[: SEVERITIES.index(min_severity) + 1]
    mask = findings.state.isin(WORSENED)
    if waivers_ended_since is not None and "waiver_expires" in findings:
        ended = findings.waiver_status.eq("expired") & findings.state.eq("open")
        mask |= ended & (_end_days(findings.waiver_expires) >= pd.Timestamp(waivers_ended_since))
    chosen = findings[mask & ~findings.waived.astype(bool) & findings.severity.isin(wanted)]
    order = {s: i for i, s in enumerate(SEVERITIES)}
    return chosen.sort_values(
        by=["severity", "check_id"], key=lambda c: c.map(order) if c.name == "severity" else c
    )


def _end_days(expires: pd.Series) -> pd.Series:
    """Waiver end dates as naive midnights, missing ones as NaT (which compares False).

    Compared as timestamps, not ``.dt.date``: a column with no date in it stays
    ``datetime64`` there, and a ``datetime64`` column does not compare with a ``date``."""
    return pd.to_datetime(expires, utc=True).dt.tz_localize(None).dt.normalize()


def build_payload(
    findings: pd.DataFrame,
    *,
    min_severity: str,
    store: str,
    snapshot_id: str,
    waivers_ended_since: date | None = None,
) -> dict[str, Any] | None:
    """The Slack-compatible message (``text`` plus ``blocks``), or None when nothing is new
    (:func:`new_findings` says what is)."""
    chosen = new_findings(findings, min_severity, waivers_ended_since)
    if chosen.empty:
        return None
    counts = chosen.severity.value_counts()
    by_severity = ", ".join(f"{int(counts[s])} {s}" for s in SEVERITIES if s in counts.index)
    ended = int((chosen.state == "open").sum())
    new = len(chosen) - ended
    what = [f"{new} new finding{'s' if new != 1 else ''}"] if new else []
    if ended:
        what.append(f"{ended} finding{'s' if ended != 1 else ''} whose waiver ended")
    text = (
        f"platform-audit: {' and '.join(what)} at or above {min_severity} "
        f"({by_severity}) in snapshot {snapshot_id} of store {store}"
    )
    lines = [_line(row) for row in chosen.head(_MAX_LINES).to_dict("records")]
    if len(chosen) > _MAX_LINES:
        lines.append(f"… and {len(chosen) - _MAX_LINES} more: run `platform-audit audit`")
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": "platform-audit: new findings"}},
        {"type": "section", "text": {"type": "mrkdwn", "text": _escape(text)}},
        {"type": "section", "text": {"type": "mrkdwn", "text": "\n".join(lines)}},
        {
            "type": "context",
            "elements": [{"type": "mrkdwn", "text": f"sent {datetime.now(UTC).isoformat()}"}],
        },
    ]
    return {"text": text, "blocks": blocks}


def _line(row: Mapping[Hashable, Any]) -> str:
    # where it lives, as audit's table says it: a variable's service too, so the findings of
    # one check on same-named variables in many services tell apart
    scope = owner_path({str(k): v for k, v in row.items()})
    name = row.get("resource_name") or row.get("resource_id") or "?"
    where = f" ({_escape(scope)})" if scope else ""
    state = row["state"]
    if state == "open":  # chosen because its waiver ended (new_findings)
        ended = pd.Timestamp(row["waiver_expires"]).date().isoformat()
        state = f"open, waiver by {_escape(str(row['waiver_owner']))} ended {ended}"
    return (
        f"• *{row['severity']}* `{row['check_id']}` {_escape(str(row['title']))}: "
        f"{row['resource_type']} *{_escape(str(name))}*{where} [{state}]"
    )


def _escape(text: str) -> str:
    """Slack mrkdwn's three control characters."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def post_payload(
    url: str,
    payload: dict[str, Any],
    *,
    max_attempts: int = 4,
    timeout_s: float = 10.0,
    backoff_s: float = 1.0,
    transport: httpx.BaseTransport | None = None,
) -> int:
    """POST ``payload``; retry network errors, 429 (honouring Retry-After) and 5xx.

    Returns the attempts it took; raises :class:`NotifyError` (without the URL) otherwise.
    """
    problem = "no attempt made"
    with httpx.Client(timeout=timeout_s, transport=transport) as client:
        for attempt in range(1, max_attempts + 1):
            wait = backoff_s * 2 ** (attempt - 1)
            try:
                response = client.post(url, json=payload)
            except httpx.HTTPError as exc:
                problem = f"the webhook could not be reached ({type(exc).__name__})"
            else:
                if response.is_success:
                    return attempt
                problem = f"the webhook answered {response.status_code}"
                if response.status_code not in _RETRY_STATUSES:
                    break
                wait = _retry_after(response) or wait
            if attempt < max_attempts:
                logger.info("notification attempt %d failed: %s; retrying", attempt, problem)
                time.sleep(min(wait, 60.0))
    raise NotifyError(
        f"notification not sent: {problem} (after {attempt} attempt(s)); the findings are in "
        "the store: run `platform-audit audit`"
    )


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value)
        return max(0.0, (parsed - datetime.now(UTC)).total_seconds()) if parsed else None
