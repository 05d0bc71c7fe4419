"""The review as JSON and CSV for tools, and Markdown for tickets.

Every format says the coverage gaps first: they weaken every conclusion after them.

JSON: one object; its first keys are ``coverage_gaps`` (days, ``YYYY-MM-DD``) and ``notes``,
then ``period``, ``checks``, ``requirements``, ``service_levels``, ``breaches``, ``waivers``,
``keys`` and ``evidence``, with the fields of :mod:`toolkit.review.figures` (times in ISO
8601 UTC, durations in days).

CSV: one row per coverage gap, then per check, then per requirement; the columns
(:data:`CSV_COLUMNS`) are ``kind`` (``coverage_gap``, ``check`` or ``requirement``), ``id``
(the day, the check id or the requirement id), ``title``, ``severity``, ``mapped`` (a
check's requirements, a requirement's checks, ``;``-separated), ``open_at_start``,
``opened``, ``resolved``, ``open_at_end``, ``regressions``, ``violation_days``,
``previous_days``, ``trend_days`` (resource-days in alarm in the period, in the previous
one, and the difference; empty when no snapshot was taken before the period),
``time_to_fix_days`` (the severity's) and ``breaches`` (findings that breached it). A
coverage gap's row fills ``kind``, ``id`` and ``title`` only.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from toolkit.report.exports import escape_markdown as md
from toolkit.review.figures import coverage_sentence

if TYPE_CHECKING:
    from toolkit.review.figures import CheckFigures, ReviewData

__all__ = ["CSV_COLUMNS", "review_csv", "review_json", "review_markdown"]

CSV_COLUMNS = (
    "kind", "id", "title", "severity", "mapped", "open_at_start", "opened", "resolved",
    "open_at_end", "regressions", "violation_days", "previous_days", "trend_days",
    "time_to_fix_days", "breaches",
)  # fmt: skip


def _plain(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    raise TypeError(f"not JSON: {type(value).__name__}")


def _figures(f: CheckFigures) -> dict[str, Any]:
    return {**asdict(f), "trend_days": _rounded(f.trend_days),
            "violation_days": round(f.violation_days, 4),
            "previous_days": _rounded(f.previous_days)}  # fmt: skip


def _rounded(value: float | None, places: int = 4) -> float | None:
    return None if value is None else round(value, places)


def _fixed(value: float | None, spec: str = ".4f") -> str:
    """``value`` formatted, or empty when unknown."""
    return "" if value is None else format(value, spec)


def review_json(data: ReviewData) -> str:
    """The review as one JSON object (see the module docstring)."""
    evidence = data.evidence
    document = {
        "coverage_gaps": list(evidence.gaps),
        "notes": list(data.notes),
        "period": {
            "from": data.period.first, "to": data.period.last, "days": data.period.days,
            "ends_at": data.ends_at, "previous": {"from": data.period.previous().first,
                                                  "to": data.period.previous().last},
        },
        "generated_at": data.generated_at,
        "store_url": data.store_url,
        "toolkit_version": data.toolkit_version,
        "framework": dict(zip(("id", "title", "version"), data.framework, strict=True))
        if data.framework else None,
        "time_to_fix_days": data.time_to_fix_days,
        "checks": [_figures(f) for f in data.checks],
        "requirements": [_figures(f) for f in data.requirements],
        "service_levels": [{**asdict(s), "share": s.share} for s in data.service_levels],
        "breaches": [{**asdict(b), "kind": b.kind} for b in data.breaches],
        "waivers": [asdict(w) for w in data.waivers],
        "keys": [asdict(k) for k in data.keys],
        "evidence": asdict(evidence),
    }  # fmt: skip
    return json.dumps(document, indent=2, default=_plain, ensure_ascii=False) + "\n"


def review_csv(data: ReviewData) -> str:
    """One row per coverage gap, check and requirement (see the module docstring)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, CSV_COLUMNS, lineterminator="\n", restval="")
    writer.writeheader()
    for day in data.evidence.gaps:
        writer.writerow({"kind": "coverage_gap", "id": day.isoformat(),
                         "title": "no complete snapshot this day"})  # fmt: skip
    breached: dict[str, int] = {}
    for breach in data.breaches:
        breached[breach.check_id] = breached.get(breach.check_id, 0) + 1
    rows = [("check", f, ";".join(f.requirements), breached.get(f.id, 0)) for f in data.checks]
    rows += [
        ("requirement", f, ";".join(f.checks), sum(breached.get(c, 0) for c in f.checks))
        for f in data.requirements
    ]
    for kind, f, mapped, breaches in rows:
        writer.writerow(
            {
                "kind": kind, "id": f.id, "title": f.title, "severity": f.severity,
                "mapped": mapped, "open_at_start": f.open_at_start, "opened": f.opened,
                "resolved": f.resolved, "open_at_end": f.open_at_end,
                "regressions": f.regressions, "violation_days": f"{f.violation_days:.4f}",
                "previous_days": _fixed(f.previous_days), "trend_days": _fixed(f.trend_days),
                "time_to_fix_days": data.time_to_fix_days.get(f.severity, ""),
                "breaches": breaches,
            }
        )  # fmt: skip
    return out.getvalue()


def _when(value: datetime | None) -> str:
    return "" if value is None else value.strftime("%Y-%m-%d %H:%M UTC")


def review_markdown(data: ReviewData) -> str:
    """The review for a ticket: coverage first, then each section as a table."""
    lines = [f"# Review {data.period}", ""]
    lines += _coverage_md(data)
    made = f"Generated {_when(data.generated_at)} by platform-audit {data.toolkit_version}"
    lines += [f"{made} from `{md(data.store_url)}`; previous period {data.period.previous()}.", ""]
    if data.framework:
        lines += [f"Framework: {md(data.framework[1])} ({md(data.framework[2])}).", ""]
    head = ("| id | title | severity | open at start | opened | resolved | open at end | "
            "regressions | resource-days in alarm | previous | trend |")  # fmt: skip
    for title, rows in (("By requirement", data.requirements), ("By check", data.checks)):
        if not rows:
            continue
        lines += [f"## {title}", "", head, "|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|"]
        lines += [
            f"| {md(f.id)} | {md(f.title)} | {f.severity} | {f.open_at_start} | {f.opened} | "
            f"{f.resolved} | {f.open_at_end} | {f.regressions} | {f.violation_days:.2f} | "
            f"{_fixed(f.previous_days, '.2f') or 'unknown'} | {_fixed(f.trend_days, '+.2f')} |"
            for f in rows
        ]
        lines.append("")
    lines += _service_md(data) + _waivers_md(data) + _keys_md(data) + _evidence_md(data)
    return "\n".join(lines).rstrip("\n") + "\n"


def _coverage_md(data: ReviewData) -> list[str]:
    sentence = coverage_sentence(data.evidence.gaps, data.period.days)
    lines = ["## Coverage", "", f"**{sentence}**" if data.evidence.gaps else sentence, ""]
    lines += [f"- {md(note)}" for note in data.notes]
    return [*lines, ""] if data.notes else lines


def _service_md(data: ReviewData) -> list[str]:
    head = ("| severity | time to fix (days) | due | fixed in time | resolved late | "
            "open past deadline | share in time |")  # fmt: skip
    lines = ["## Service levels", "", head, "|---|--:|--:|--:|--:|--:|--:|"]
    for s in data.service_levels:
        share = "" if s.share is None else f"{100 * s.share:.0f}%"
        lines.append(f"| {s.severity} | {s.allowed_days} | {s.due} | {s.in_time} | "
                     f"{s.resolved_late} | {s.open_overdue} | {share} |")  # fmt: skip
    lines += ["", "### Breaches", ""]
    if not data.breaches:
        return [*lines, "None.", ""]
    lines += ["| check | severity | resource | started | deadline | fixed | breach | days over "
              "| waived |", "|---|---|---|---|---|---|---|--:|---|"]  # fmt: skip
    lines += [
        f"| {md(b.check_id)} | {b.severity} | {md(b.resource_name or b.resource_id)} | "
        f"{_when(b.started)} | {_when(b.deadline)} | {_when(b.fixed)} | {b.kind} | "
        f"{b.overdue_days:.2f} | {md(b.waiver or '')} |"
        for b in data.breaches
    ]
    return [*lines, ""]


def _waivers_md(data: ReviewData) -> list[str]:
    lines = ["## Waivers", ""]
    if not data.waivers:
        return [*lines, "No waiver.", ""]
    lines += ["| # | check | waives | owner | reason | expires | in force | ended in period | "
              "needs renewal |", "|--:|---|---|---|---|---|---|---|---|"]  # fmt: skip
    yes = {True: "yes", False: ""}
    lines += [
        f"| {w.entry} | {md(w.check_id)} | {md(w.selector)} | {md(w.owner)} | {md(w.reason)} | "
        f"{w.expires} | {yes[w.active]} | {yes[w.ended]} | {yes[w.unrenewed]} |"
        for w in data.waivers
    ]
    return [*lines, ""]


def _keys_md(data: ReviewData) -> list[str]:
    lines = ["## Key-scope exposure", ""]
    if not data.keys:
        return [*lines, "No credential recorded.", ""]
    lines += ["| credential | role | largest reach (services) | days admin or never expiring | "
              "days beyond claimed scope |", "|---|---|--:|--:|--:|"]  # fmt: skip
    lines += [
        f"| {md(k.credential)} | {md(k.role or '')} | {k.largest_reach} | {k.exposed_days:.2f} | "
        f"{'not verified' if k.exceeded_days is None else f'{k.exceeded_days:.2f}'} |"
        for k in data.keys
    ]
    return [*lines, ""]


def _evidence_md(data: ReviewData) -> list[str]:
    e = data.evidence
    lines = ["## Evidence", "", f"store verify: {md(e.verify_summary)}", ""]
    lines += [f"- {md(p)}" for p in e.verify_problems]
    lines += ["| snapshot | taken | status | content hash |", "|---|---|---|---|"]
    lines += [f"| `{s.snapshot_id}` | {_when(s.snapshot_at)} | {s.status} | `{s.content_hash}` |"
              for s in e.snapshots]  # fmt: skip
    return [*lines, ""]
