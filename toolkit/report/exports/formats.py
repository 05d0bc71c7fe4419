"""An audit result as text: a terminal table, JSON, CSV, Markdown (SARIF, OCSF: own modules).

Everything the platform returned (names, reasons, evidence) is plain text in every format:
the table uses rich ``Text`` (no markup is interpreted), Markdown escapes every character
that could start markup (pipes and backticks included) and folds line breaks, JSON and CSV
are written by their standard-library writers. Control characters (ESC and the rest) are
shown as ``\\x1b`` in the table, Markdown and CSV (:func:`visible`): a name must not drive
the terminal of whoever reads the audit. Example::

    print(render(result, "markdown"))
    console.print(findings_table(result))
"""

from __future__ import annotations

import csv
import io
import json
import re
from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import Group
from rich.table import Table
from rich.text import Text

from toolkit.audit.findings import FINDING_COLUMNS
from toolkit.audit.lifecycle import STATES
from toolkit.report.exports.ocsf import to_ocsf
from toolkit.report.exports.plain_values import frame_records, parsed_evidence
from toolkit.report.exports.plain_values import plain_value as _plain
from toolkit.report.exports.sarif import to_sarif
from toolkit.snapshot.visible_text import visible

if TYPE_CHECKING:
    from collections.abc import Mapping

    import pandas as pd
    from rich.console import RenderableType

    from toolkit.audit.findings import AuditResult, SnapshotRef

__all__ = [
    "FORMATS",
    "SUFFIXES",
    "blind_text",
    "configured_lines",
    "csv_cell",
    "duration_text",
    "escape_markdown",
    "evidence_text",
    "findings_table",
    "frame_records",
    "minute_text",
    "owner_path",
    "parsed_evidence",
    "partial_lines",
    "ref_json",
    "render",
    "to_records",
    "visible",
    "waiver_line",
    "where_cell",
]

FORMATS = ("table", "json", "csv", "markdown", "sarif", "ocsf")
SUFFIXES = {".txt": "table", ".json": "json", ".csv": "csv", ".md": "markdown",
            ".sarif": "sarif", ".ocsf.json": "ocsf"}  # fmt: skip
"""The file names that pick a format for ``platform-audit audit --out``."""
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_STYLE = {"critical": "bold red", "high": "red", "medium": "yellow", "low": "cyan"}
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&])")


def render(result: AuditResult, fmt: str) -> str:
    """The result in ``fmt`` (json, csv, markdown, sarif, ocsf or table) as one string."""
    if fmt in ("json", "sarif", "ocsf"):
        document = {"json": to_json, "sarif": to_sarif, "ocsf": to_ocsf}[fmt](result)
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    if fmt == "csv":
        return to_csv(result)
    if fmt == "markdown":
        return to_markdown(result)
    if fmt == "table":
        from rich.console import Console

        buffer = io.StringIO()
        Console(file=buffer, width=160, color_system=None).print(findings_table(result))
        # rich pads every line to the width: a file gets the text, not 160 columns of it
        return "".join(line.rstrip() + "\n" for line in buffer.getvalue().splitlines())
    raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {fmt!r}")


def to_records(result: AuditResult) -> list[dict[str, Any]]:
    """The findings as JSON-ready dicts (timestamps in ISO 8601, evidence parsed)."""
    records = frame_records(result.findings[list(FINDING_COLUMNS)])
    for record in records:
        record["evidence"] = parsed_evidence(record["evidence"])
    return records


def to_json(result: AuditResult) -> dict[str, Any]:
    """Judged and compared snapshots, counts per severity and per check (with mean time to
    resolve), findings and the waiver report."""
    summary = result.summary()
    return {
        "snapshot": ref_json(result.target),
        "compared_to": ref_json(result.compare) if result.compare else None,
        "latest_only": result.latest_only,
        "not_collected": {k: list(v) for k, v in result.not_collected.items()},
        "checks": len(result.checks),
        "configured": list(result.configured),
        "summary": {sev: {k: int(v) for k, v in row.items()} for sev, row in summary.iterrows()},
        "by_check": frame_records(result.per_check()),
        "findings": to_records(result),
        "waivers": frame_records(result.waiver_report),
    }


def to_csv(result: AuditResult) -> str:
    """One line per finding, every column of :data:`FINDING_COLUMNS`; text cells that a
    spreadsheet would run as a formula are neutralised (see :func:`csv_cell`)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(FINDING_COLUMNS)
    for row in result.findings[list(FINDING_COLUMNS)].itertuples(index=False):
        writer.writerow([csv_cell(v) for v in row])
    return buffer.getvalue()


def csv_cell(value: object) -> object:
    """A value for a CSV cell: null as empty, and text that starts like a formula (``=``,
    ``+``, ``-``, ``@``, tab or carriage return) prefixed with ``'``, as OWASP advises, so a
    resource named ``=HYPERLINK(...)`` by someone on the platform stays text in Excel or
    Sheets. Text keeps its tabs and line breaks, but other control characters are shown as
    escapes (:func:`visible`): the file is also read with ``cat``. Numbers and booleans are
    written as they are."""
    plain = _plain(value)
    if plain is None:
        return ""
    if not isinstance(plain, str):
        return plain
    shown = visible(plain, keep="\t\n\r")
    return "'" + shown if shown.startswith(_FORMULA_STARTS) else shown


def escape_markdown(value: object) -> str:
    """Text safe in a Markdown table cell: line breaks folded, control characters shown as
    escapes (:func:`visible`), markup characters escaped."""
    text = "" if _plain(value) is None else str(_plain(value))
    return _MARKDOWN_SPECIAL.sub(r"\\\1", visible(" ".join(text.split()), keep=""))


def configured_lines(result: AuditResult) -> list[str]:
    """What the audit was configured with (``AuditResult.configured``), as a paragraph."""
    if not result.configured:
        return []
    return ["Configured: " + "; ".join(escape_markdown(c) for c in result.configured) + ".", ""]


def to_markdown(result: AuditResult) -> str:
    """A review-ready report: the snapshots, counts per severity, findings, waivers."""
    compared = f" compared with `{result.compare.snapshot_id}`" if result.compare else ""
    lines = [
        "# Platform audit",
        "",
        f"Snapshot `{result.target.snapshot_id}` taken {result.target.snapshot_at:%Y-%m-%d %H:%M} "
        f"UTC{compared}; {len(result.checks)} checks.",
        "",
        *(f"**Note: {escape_markdown(text)}**\n" for text in partial_lines(result)),
        *configured_lines(result),
        "| severity | new | regressed | open | resolved | waived |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for severity, row in result.summary().iterrows():
        lines.append(f"| {severity} | " + " | ".join(str(int(v)) for v in row) + " |")
    lines += ["", "## Findings", ""]
    if result.findings.empty:
        lines.append("No findings.")
    else:
        lines += [
            "| severity | state | check | resource | where | reason | waived |",
            "|---|---|---|---|---|---|---|",
        ]
        for f in frame_records(result.findings):
            waived = f"yes ({escape_markdown(f['waiver_owner'])})" if f["waived"] else "no"
            cells = [
                escape_markdown(f["severity"]),
                escape_markdown(f["state"]),
                f"{escape_markdown(f['check_id'])} {escape_markdown(f['title'])}",
                escape_markdown(f["resource_name"] or f["resource_id"]),
                escape_markdown(owner_path(f)),
                escape_markdown(f["reason"]),
                waived,
            ]
            lines.append("| " + " | ".join(cells) + " |")
    if not result.waiver_report.empty:
        lines += ["", "## Waivers", "", "| entry | check | matches | owner | expires | status |"]
        lines.append("|---:|---|---|---|---|---|")
        for w in frame_records(result.waiver_report):
            cells = [
                str(w["entry"]),
                escape_markdown(w["check_id"]),
                escape_markdown(w["selector"]),
            ]
            cells += [escape_markdown(w[k]) for k in ("owner", "expires", "status")]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def findings_table(result: AuditResult, limit: int | None = None) -> RenderableType:
    """A rich table of the findings and a one-line summary; cell text is never markup.

    Laid out for an 80-column terminal too: the team goes under the resource's name and a
    waiver under the reason, so the reason column keeps most of the width and wraps
    without losing a word (:func:`to_csv` and ``--format json`` have every field).
    ``limit`` shows only the first findings (most severe, then new and regressed, first)
    and then counts per check: a fleet's tens of thousands of rows are for a file.
    """
    findings = result.findings
    shown = findings if not limit else findings.head(limit)
    table = Table(
        title=Text(f"findings in snapshot {result.target.snapshot_id}"),
        title_justify="left",
        box=box.SIMPLE_HEAD,
    )
    for column in ("severity", "state", "check"):
        table.add_column(column, no_wrap=True)
    table.add_column("resource / where", max_width=28, overflow="fold")
    table.add_column("reason", ratio=1, min_width=20, overflow="fold")
    for f in frame_records(shown):
        resource = where_cell(f["resource_name"] or f["resource_id"], owner_path(f))
        reason = Text(visible(f["reason"] or ""))
        if f["waived"]:
            reason.append(f"\n{waiver_line(f)}", style="dim")
        table.add_row(
            Text(str(f["severity"]), style=_STYLE.get(str(f["severity"]), "")),
            Text(visible(f["state"])),
            Text(visible(f["check_id"])),
            resource,
            reason,
        )
    parts: list[RenderableType] = [table]
    if len(shown) < len(findings):
        parts.append(_per_check_table(result))
        parts.append(
            Text(
                f"showed the first {len(shown):,} of {len(findings):,} findings (most severe, "
                "then new and regressed, first): --limit 0 shows them all; --format csv or "
                "json, or --out FILE, has every field"
            )
        )
    counts = result.summary().sum()
    line = ", ".join(f"{int(counts[k])} {k}" for k in counts.index)
    parts.append(Text(f"{len(result.checks)} checks; {line}"))
    parts.extend(Text(f"note: {text}", style="yellow") for text in partial_lines(result))
    return Group(*parts)


def owner_path(finding: Mapping[str, Any]) -> str:
    """Where a finding's resource lives: ``team / project / environment``, and the service
    for a resource that is not the service itself (names, else ids), so two findings of
    one check on same-named resources (a variable in two services) tell apart."""
    levels = ["team", "project", "environment"]
    if finding.get("resource_type") != "service":
        levels.append("service")
    parts = [finding.get(f"{level}_name") or finding.get(f"{level}_id") for level in levels]
    return " / ".join(str(p) for p in parts if p)


def where_cell(name: object, where: str) -> Text:
    """A table's "resource / where" cell: the name, and dimmed below it where it lives
    (:func:`owner_path`); each on one line (a line break in a name would pass for the
    next row), control characters shown as escapes."""
    cell = Text(visible(name, keep=""))
    if where:
        cell.append(f"\n{visible(where, keep='')}", style="dim")
    return cell


def waiver_line(finding: Mapping[str, Any]) -> str:
    """``waived by OWNER until DATE`` for a waived finding (a record of its findings row),
    control characters shown as escapes."""
    until = f" until {finding['waiver_expires']}" if finding["waiver_expires"] else ""
    return visible(f"waived by {finding['waiver_owner']}{until}")


def _per_check_table(result: AuditResult) -> Table:
    """Findings counted per check with any (states unwaived, as the summary line counts
    them); the title goes under the id, so the counts fit an 80-column terminal."""
    table = Table(title=Text("findings per check"), title_justify="left", box=box.SIMPLE_HEAD)
    table.add_column("check", ratio=1, min_width=16, overflow="fold")
    table.add_column("severity", no_wrap=True)
    columns = (*STATES, "waived")
    for column in columns:
        table.add_column(column, justify="right", no_wrap=True)
    for row in frame_records(result.per_check()):
        counts = [int(row[column]) for column in columns]
        if not any(counts):
            continue
        check = Text(visible(row["check_id"]))
        check.append(f"\n{visible(row['title'])}", style="dim")
        severity = str(row["severity"])
        table.add_row(
            check, Text(severity, style=_STYLE.get(severity, "")), *(Text(f"{n:,}") for n in counts)
        )
    return table


def ref_json(ref: SnapshotRef) -> dict[str, Any]:
    """A snapshot reference as JSON-ready data (its time in ISO 8601)."""
    return {
        "snapshot_id": ref.snapshot_id,
        "seq": ref.seq,
        "snapshot_at": ref.snapshot_at.isoformat(),
        "status": ref.status,
    }


def minute_text(value: object, zone: str = " UTC") -> str:
    """An ISO time (as :func:`frame_records` gives it) to the minute: ``2026-01-04 00:00
    UTC``, or with another ``zone`` suffix (``""`` for none); ``""`` for None."""
    text = "" if value is None else str(value)
    return f"{text[:16].replace('T', ' ')}{zone}" if text else ""


def duration_text(hours: float | None) -> str:
    """Hours as people read them: ``"40 min"``, ``"18 h"``, ``"3.5 days"``; ``""`` for
    None (no finding of the check was resolved yet)."""
    if hours is None:
        return ""
    if hours < 1:
        return f"{hours * 60:.0f} min"
    if hours < 48:
        return f"{hours:.0f} h"
    return f"{hours / 24:.1f} days"


def evidence_text(value: object) -> str:
    """A check's evidence JSON as ``key: value; ...`` (the text as it is when not an object)."""
    if value is None:
        return ""
    try:
        parsed = json.loads(str(value))
    except ValueError:
        return str(value)
    if not isinstance(parsed, dict):
        return json.dumps(parsed, ensure_ascii=False)
    parts = []
    for key, item in parsed.items():
        shown = item if isinstance(item, str) else json.dumps(item, ensure_ascii=False)
        parts.append(f"{key}: {shown}")
    return "; ".join(parts)


def partial_lines(result: AuditResult) -> list[str]:
    """One sentence per partial judged or compared snapshot: that it is partial, the
    tables it did not collect, and how its findings are judged. Every output of ``audit``
    and ``report`` carries them (stdout, stderr, the report's header)."""
    lines = []
    for snapshot in result.partial:
        judged = snapshot is result.target
        missing = result.not_collected.get(snapshot.snapshot_id, ())
        lines.append(
            f"the {'judged' if judged else 'compared'} snapshot {snapshot.snapshot_id} is "
            "partial: some calls failed (its collection_errors say which)"
            + (f"; not collected: {', '.join(missing)}" if missing else "")
            + (
                ". Judging it: what it did not collect is shown as unobserved (its last state "
                "kept), never as resolved"
                if judged
                else ""
            )
            + f"; {blind_text(result.blind, snapshot.snapshot_id)}."
        )
    return lines


def blind_text(blind: pd.DataFrame, snapshot_id: str) -> str:
    """Which checks could not see all they read in a partial snapshot (``blind``:
    ``check_id, snapshot_id``), for the notes of ``audit`` and ``diff``."""
    checks = sorted(set(blind.check_id[blind.snapshot_id == snapshot_id]))
    if not checks:
        return "no check reads what failed"
    shown = ", ".join(checks[:8]) + (", ..." if len(checks) > 8 else "")
    return (
        f"{len(checks)} check(s) could not see all they read ({shown}): what they did not "
        "see keeps its last state"
    )
