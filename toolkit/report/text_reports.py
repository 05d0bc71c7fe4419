"""The report as Markdown (tickets, pull requests), JSON and CSV (tools).

Markdown has the HTML report's summary, its findings by check and the most severe unresolved
findings; every platform value goes through :func:`toolkit.report.exports.escape_markdown` (pipes,
backticks, ``<`` and ``&`` escaped, line breaks folded), so a hostile name is shown, never
interpreted. JSON carries everything the HTML report shows; CSV is one line per finding,
as ``audit`` writes it. Example::

    text = render_markdown(gather_report(store), top=20)
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from toolkit.audit import SEVERITIES
from toolkit.audit.waivers import ATTENTION
from toolkit.report.exports.formats import (
    configured_lines,
    escape_markdown,
    frame_records,
    partial_lines,
    to_csv,
    to_json,
)
from toolkit.report.report_view import (
    ACCOUNT_WIDE_NOTE,
    NO_TEAM,
    area_counts,
    changed_findings,
    check_rows,
    code_spans,
    finding_rows,
    service_changes,
    snapshot_rows,
    summary_counts,
    team_counts,
    verify_lines,
)

if TYPE_CHECKING:
    import pandas as pd

    from toolkit.report.report_data import ReportData

__all__ = ["render_csv", "render_json", "render_markdown"]

TOP_FINDINGS = 25
"""How many unresolved findings the Markdown report lists (the most severe first)."""


def render_markdown(data: ReportData, *, top: int = TOP_FINDINGS) -> str:
    """A review-ready summary: counts, what changed, the top findings, waivers, evidence."""
    result, counts = data.result, summary_counts(data)
    lines = ["# Platform audit report", "", _snapshot_line(data), ""]
    lines += [f"**Note: {escape_markdown(text)}**\n" for text in partial_lines(result)]
    lines += configured_lines(result)  # what the findings depend on besides the store
    open_frame = data.unwaived_open
    by_severity = ", ".join(f"{int((open_frame.severity == s).sum())} {s}" for s in SEVERITIES)
    lines += [
        f"**{len(open_frame)} unresolved findings** (new, regressed or open): {by_severity}.",
        "",
    ]
    if result.compare is not None:
        lines += _since_previous(data, counts)
    lines += _area_table(open_frame)
    lines += _team_table(open_frame)
    lines += _check_table(data)
    lines += _top_findings(open_frame, top)
    lines += _waivers_to_look_at(result.waiver_report)
    lines += _evidence(data)
    return "\n".join(lines).rstrip() + "\n"


def _since_previous(data: ReportData, counts: dict[str, int]) -> list[str]:
    """What changed since the compared snapshot: counts, the findings that changed state,
    and the services added, removed or changed."""
    md = escape_markdown
    lines = [
        "## Since the previous review",
        "",
        f"- {counts['new']} new and {counts['regressed']} regressed findings, "
        f"{counts['resolved']} resolved",
        f"- {counts['added']} services added, {counts['removed']} removed, "
        f"{counts['changed']} changed"
        + (
            f", {counts['not_collected']} not collected (not seen by one snapshot's collection)"
            if counts["not_collected"]
            else ""
        ),
        f"- {counts['waived']} unresolved findings waived; {counts['expired']} waivers "
        f"expired, {counts['stale']} stale",
        "",
    ]
    changed = changed_findings(data)
    if changed:
        lines += [
            "| change | severity | check | resource | where | reason |",
            "|---|---|---|---|---|---|",
        ]
        lines += [
            _row(f["state"], f["severity"], f"{f['check_id']} {f['title']}", f["resource"],
                 f["where"], f["reason"])
            for f in changed
        ]  # fmt: skip
        lines.append("")
    services = service_changes(data)
    if services:
        names = "; ".join(
            f"{s['change']} {md(s['name'] or s['id'])}"
            + (f" ({md(s['where'])})" if s["where"] else "")
            for s in services[:30]
        )
        more = f" and {len(services) - 30} more" if len(services) > 30 else ""
        lines += [f"Services: {names}{more}.", ""]
    return lines


def _waivers_to_look_at(report: pd.DataFrame) -> list[str]:
    """The waivers that are expired, stale or ending soon, as a table (none: nothing)."""
    lines: list[str] = []
    attention = [w for w in frame_records(report) if w["status"] in ATTENTION]
    if attention:
        lines += ["## Waivers to look at", "", "| # | status | check | matches | owner | expires |"]
        lines.append("|---:|---|---|---|---|---|")
        lines += [
            _row(w["entry"], w["status"], w["check_id"], _matches(w), w["owner"], w["expires"])
            for w in attention
        ]
        lines.append("")
    return lines


def _evidence(data: ReportData) -> list[str]:
    """What was verified (:func:`verify_lines`), and the newest snapshot's chain hash."""
    lines = ["## Evidence", ""]
    for line in verify_lines(data):
        lines += ["".join(_code_or_text(part, code) for part, code in code_spans(line)), ""]
    if data.snapshots:
        newest = data.snapshots[-1]
        lines.append(f"{len(data.snapshots)} snapshots; newest chain hash `{newest.chain_hash}`.")
    return lines


def _code_or_text(part: str, code: bool) -> str:
    """A span of toolkit text in Markdown: code as it is, text escaped with the spaces
    around it kept (``escape_markdown`` folds them)."""
    if code:
        return f"`{part}`"
    lead, trail = part[: len(part) - len(part.lstrip())], part[len(part.rstrip()) :]
    return f"{' ' if lead else ''}{escape_markdown(part)}{' ' if trail else ''}"


def _matches(waiver: dict[str, Any]) -> str:
    """A waiver's selector and, as the HTML report shows them, its ids matching nothing."""
    stale = waiver.get("stale_ids")
    return f"{waiver['selector']}; matching nothing: {stale}" if stale else str(waiver["selector"])


def render_json(data: ReportData) -> str:
    """Everything the HTML report shows, as one JSON document (times in ISO 8601)."""
    document: dict[str, Any] = {
        "report": {
            "toolkit_version": data.toolkit_version,
            "generated_at": data.generated_at.isoformat(),
            "store": data.store_url,
            "since": data.since.isoformat() if data.since else None,
        },
        **to_json(data.result),
        "changes": {
            "counts": summary_counts(data),
            "findings": [_finding_brief(f) for f in changed_findings(data)],
            "services": service_changes(data),
        },
        "trends": {
            "severity": frame_records(data.trends.severity),
            "runtime": frame_records(data.trends.runtime),
            "key_reach": frame_records(data.trends.reach),
        },
        "key_reach": frame_records(data.reach),
        "evidence": {
            "verify": {
                "ok": data.verify.ok,
                "summary": data.verify.summary(),
                "said": verify_lines(data),
                "content_recomputed": list(data.content_verified),
                "breaks": [str(b) for b in data.verify.breaks],
            },
            "snapshots": [
                {**row, "snapshot_at": row["snapshot_at"].isoformat()}
                for row in snapshot_rows(data.snapshots, data.content_verified)
            ],
        },
    }
    return json.dumps(document, indent=2, ensure_ascii=False, default=str) + "\n"


def render_csv(data: ReportData) -> str:
    """One line per finding (new, regressed, open and resolved), every finding column."""
    return to_csv(data.result)


def _snapshot_line(data: ReportData) -> str:
    target, compare = data.result.target, data.result.compare
    line = f"Snapshot `{target.snapshot_id}` taken {target.snapshot_at:%Y-%m-%d %H:%M} UTC"
    if compare is not None:
        line += f", compared with `{compare.snapshot_id}` ({compare.snapshot_at:%Y-%m-%d %H:%M})"
    generated = f"{data.generated_at:%Y-%m-%d %H:%M}"
    return f"{line}; {len(data.result.checks)} checks; generated {generated} UTC."


def _area_table(open_frame: pd.DataFrame) -> list[str]:
    rows = area_counts(open_frame)
    if not rows:
        return ["No unresolved findings.", ""]
    lines = [
        "## Unresolved findings by area",
        "",
        "| area | " + " | ".join(SEVERITIES) + " | total |",
    ]
    lines.append("|---|" + "---:|" * (len(SEVERITIES) + 1))
    lines += [_row(r["area"], *r["counts"], r["total"]) for r in rows]
    return [*lines, ""]


def _team_table(open_frame: pd.DataFrame) -> list[str]:
    rows, more = team_counts(open_frame)
    if not rows:
        return []
    lines = [
        "## Unresolved findings by team",
        "",
        "| team | " + " | ".join(SEVERITIES) + " | total |",
    ]
    lines.append("|---|" + "---:|" * (len(SEVERITIES) + 1))
    lines += [_row(r["team"], *r["counts"], r["total"]) for r in rows]
    if more:
        lines += ["", f"And {more} more team(s) with fewer or less severe findings."]
    if any(r["team_id"] == NO_TEAM for r in rows):
        lines += ["", escape_markdown(ACCOUNT_WIDE_NOTE)]
    return [*lines, ""]


def _check_table(data: ReportData) -> list[str]:
    """Checks with findings open, waived or resolved since the compared snapshot; the
    others found nothing wrong and are named in one line."""
    rows = check_rows(data)
    busy = [r for r in rows if r["alarming"] or r["waived"] or r["resolved"]]
    clean = [r["check_id"] for r in rows if r not in busy]
    lines = ["## Findings by check", ""]
    if busy:
        lines.append(
            "| check | severity | unresolved | new | regressed | waived | resolved "
            "| mean time to resolve |"
        )
        lines.append("|---|---|---:|---:|---:|---:|---:|---:|")
        lines += [
            _row(f"{r['check_id']} {r['title']}", r["severity"], r["alarming"], r["new"],
                 r["regressed"], r["waived"], r["resolved"], r["mttr"] or "–")
            for r in busy
        ]  # fmt: skip
        lines.append("")
    if clean:
        lines += [f"Nothing found by {len(clean)} check(s): {', '.join(clean)}.", ""]
    return lines


def _top_findings(open_frame: pd.DataFrame, top: int) -> list[str]:
    rows = finding_rows(open_frame)
    rows.sort(key=lambda r: (r["severity_rank"], ("new", "regressed", "open").index(r["state"])))
    if not rows:
        return []
    shown = rows[:top]
    title = (
        f"## Top {len(shown)} of {len(rows)} unresolved findings"
        if len(rows) > top
        else (f"## All {len(rows)} unresolved findings")
    )
    lines = [title, "", "| severity | state | check | resource | where | reason |"]
    lines.append("|---|---|---|---|---|---|")
    lines += [
        _row(r["severity"], r["state"], f"{r['check_id']} {r['title']}", r["resource"],
             r["where"], r["reason"])
        for r in shown
    ]  # fmt: skip
    return [*lines, ""]


def _finding_brief(record: dict[str, Any]) -> dict[str, Any]:
    keys = ("state", "severity", "check_id", "title", "resource_type", "resource_id")
    return {**{k: record.get(k) for k in keys}, "resource": record["resource"],
            "where": record["where"], "reason": record.get("reason")}  # fmt: skip


def _row(*cells: object) -> str:
    return "| " + " | ".join(escape_markdown(c) for c in cells) + " |"
