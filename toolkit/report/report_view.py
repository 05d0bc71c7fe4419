"""The report's rows as plain values, shared by the HTML, Markdown and JSON builders.

Nothing here escapes: each builder escapes for its own format (jinja2 for HTML,
``escape_markdown`` for Markdown, the JSON encoder for JSON).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolkit.audit import AREAS, SEVERITIES
from toolkit.audit.waivers import ATTENTION
from toolkit.report.exports.formats import (
    duration_text,
    evidence_text,
    frame_records,
    minute_text,
    owner_path,
)

if TYPE_CHECKING:
    from collections.abc import Iterable

    import pandas as pd

    from toolkit.report.report_data import ReportData
    from toolkit.snapshot import SnapshotInfo

__all__ = [
    "area_counts",
    "changed_findings",
    "check_rows",
    "code_spans",
    "duration_text",
    "evidence_text",
    "finding_rows",
    "location",
    "resource_label",
    "service_changes",
    "snapshot_rows",
    "summary_counts",
    "team_choices",
    "team_counts",
    "verify_lines",
]

TOP_TEAMS = 15
"""How many teams the by-team tables list (most severe findings first)."""
NO_TEAM = "-"
"""The team id the HTML report gives findings of no team (an API key's, say)."""
ACCOUNT_WIDE = "account-wide (no team)"
"""How the reports name the place of findings of no team: an API key's."""
ACCOUNT_WIDE_NOTE = (
    "API keys are created in the account's settings and belong to no team: the findings of "
    "the key-scope checks (what a key can reach and do) are counted as account-wide (no team)."
)
"""Said under every table that has an account-wide row."""

_CHANGE_ORDER = {"new": 0, "regressed": 1, "resolved": 2}


def summary_counts(data: ReportData) -> dict[str, int]:
    """What changed since the compared snapshot, as counts."""
    changes, waivers = data.changes, data.result.waiver_report
    open_frame = data.open_findings
    return {
        "new": data.state_count("new"),
        "regressed": data.state_count("regressed"),
        "resolved": data.state_count("resolved"),
        "added": len(changes.added) if changes else 0,
        "removed": len(changes.removed) if changes else 0,
        "changed": len(changes.changed) if changes else 0,
        "not_collected": len(changes.not_collected) if changes else 0,
        "waived": int(open_frame.waived.sum()),
        **{
            status: int((waivers.status == status).sum()) if not waivers.empty else 0
            for status in ATTENTION
        },
    }


def area_counts(findings: pd.DataFrame) -> list[dict[str, Any]]:
    """Per area with findings: counts per severity (in :data:`SEVERITIES` order), total."""
    counts = _severity_counts(findings, findings.area)
    areas = [a for a in AREAS if a in counts] + sorted(set(counts) - set(AREAS))
    return [{"area": a, "counts": counts[a], "total": sum(counts[a])} for a in areas]


def team_counts(findings: pd.DataFrame, top: int = TOP_TEAMS) -> tuple[list[dict[str, Any]], int]:
    """The ``top`` teams by their findings' severity (most critical, then most high, ...):
    counts per severity (in :data:`SEVERITIES` order) and total; and how many teams with
    findings are left out. A finding with no team (an API key's) counts under
    :data:`ACCOUNT_WIDE`."""
    ids, names = _teams(findings)
    label = names.groupby(ids).first()
    rows: list[dict[str, Any]] = [
        {"team": str(label[team]), "team_id": team, "counts": counts, "total": sum(counts)}
        for team, counts in _severity_counts(findings, ids).items()
    ]
    rows.sort(key=lambda r: ([-n for n in r["counts"]], r["team"]))
    return rows[:top], max(0, len(rows) - top)


def team_choices(findings: pd.DataFrame) -> list[tuple[str, str]]:
    """``(team id or NO_TEAM, name)`` of every team with a finding, by name: the HTML
    findings table's team filter."""
    pairs = dict(zip(*_teams(findings), strict=True))
    return sorted(((str(k), str(v)) for k, v in pairs.items()), key=lambda p: (p[1], p[0]))


def _teams(findings: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """Each finding's team id (:data:`NO_TEAM` for none) and name (its id when unnamed)."""
    ids = findings.team_id.fillna(NO_TEAM)
    names = findings.team_name.where(findings.team_name.notna(), findings.team_id)
    return ids, names.fillna(ACCOUNT_WIDE)


def _severity_counts(findings: pd.DataFrame, key: pd.Series) -> dict[str, list[int]]:
    """Per value of ``key`` (a column or a series beside ``findings``) that has findings:
    their counts per severity, in :data:`SEVERITIES` order."""
    if findings.empty:
        return {}
    table = findings.groupby([key, findings.severity]).size().unstack(fill_value=0)
    table = table.reindex(columns=list(SEVERITIES), fill_value=0)
    return {
        str(value): [int(n) for n in counts]
        for value, counts in zip(table.index, table.to_numpy().tolist(), strict=True)
    }


def check_rows(data: ReportData) -> list[dict[str, Any]]:
    """Every check run (:meth:`~toolkit.audit.AuditResult.per_check`), with its mean time
    to resolve as text."""
    rows = frame_records(data.result.per_check())
    for row in rows:
        row["mttr"] = duration_text(row["mttr_hours"])
    return rows


def resource_label(record: dict[str, Any]) -> str:
    """A finding's resource as people name it: its name, else its id."""
    return str(record.get("resource_name") or record.get("resource_id") or "")


def location(record: dict[str, Any]) -> str:
    """Where a finding's resource lives, above the resource itself: ``team / project /
    environment`` and the service of a resource in one (a service-level variable, a volume),
    so same-named resources tell apart; :data:`ACCOUNT_WIDE` for one of no team (an API key).
    """
    own = record.get("resource_type")
    if own in ("team", "project", "environment"):  # not its own name again
        record = {**record, f"{own}_name": None, f"{own}_id": None}
    where = owner_path(record)
    if not where and not record.get("team_id") and own != "team":
        return ACCOUNT_WIDE
    return where


def finding_rows(findings: pd.DataFrame) -> list[dict[str, Any]]:
    """The findings table's rows: the finding's columns plus display fields."""
    rows = []
    for record in frame_records(findings):
        rows.append(
            {
                **record,
                "severity_rank": SEVERITIES.index(record["severity"])
                if record["severity"] in SEVERITIES
                else len(SEVERITIES),
                "resource": resource_label(record),
                "where": location(record),
                "evidence": evidence_text(record.get("evidence")),
                "first_seen_text": minute_text(record.get("first_seen"), zone=""),
            }
        )
    return rows


def changed_findings(data: ReportData) -> list[dict[str, Any]]:
    """New, regressed and resolved findings (unwaived), in that order, most severe first."""
    findings = data.result.findings
    frame = findings[findings.state.isin(tuple(_CHANGE_ORDER)) & ~findings.waived]
    rows = finding_rows(frame)
    rows.sort(key=lambda r: (_CHANGE_ORDER[r["state"]], r["severity_rank"], r["check_id"]))
    return rows


def service_changes(data: ReportData) -> list[dict[str, str]]:
    """Services added, removed and changed between the compared and the judged snapshot,
    and those missing from one of them only because its collection did not see them there
    (not collected: neither removed nor added; the fields say why). ``where`` is the
    service's ``team / project / environment``, so two services of one name tell apart."""
    if data.changes is None:
        return []
    rows: list[dict[str, str]] = []
    for change, frame in (
        ("added", data.changes.added),
        ("removed", data.changes.removed),
        ("changed", data.changes.changed),
        ("not collected", data.changes.not_collected),
    ):
        for record in frame_records(frame):
            fields = ", ".join(str(f) for f in record.get("changed_fields") or [])
            if "missing_from" in record:
                side = "judged" if record["missing_from"] == "to" else "compared"
                fields = f"{record['why']} in the {side} snapshot"
            rows.append(
                {
                    "change": change,
                    "name": str(record.get("name") or ""),
                    "id": str(record["id"]),
                    "where": owner_path({**record, "resource_type": "service"}),
                    "fields": fields,
                }
            )
    return rows


def verify_lines(data: ReportData) -> list[str]:
    """What the evidence appendix says was verified, consistent with ``store verify``: the
    chain over every snapshot, the content of the judged and compared snapshots only.
    Commands are in backticks (code in Markdown, ``<code>`` in HTML: :func:`code_spans`)."""
    report = data.verify
    if not report.ok:
        return [report.summary()]
    total, checked = report.snapshots, report.content_checked
    which = {1: "the judged snapshot", 2: "the judged and the compared snapshot"}
    lines = [
        f"Chain intact over all {total} snapshot(s): each one's chain hash links its content "
        "hash to the snapshot before it, so an edited or removed snapshot breaks the chain.",
        f"Content recomputed for {checked} snapshot(s) "
        f"({which.get(checked, 'those marked below')}): their rows hash to the content hash "
        "recorded when they were taken.",
    ]
    if report.content_skipped:
        lines.append(
            f"The other {report.content_skipped} snapshot(s) are checked by the chain only "
            f"here: `platform-audit store verify` recomputes the content of all {total}."
        )
    if report.pruned:
        lines.append(f"{report.pruned} snapshot(s) pruned: their rows are gone by design.")
    if report.orphans:
        lines.append(report.summary().rsplit("; ", 1)[-1])  # the orphans and the command
    return lines


def code_spans(text: str) -> list[tuple[str, bool]]:
    """``text`` cut at its backticks: ``(part, is_code)`` pairs; unpaired backticks are text."""
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an odd number of backticks: no code
        return [(text, False)]
    return [(part, n % 2 == 1) for n, part in enumerate(parts) if part]


def snapshot_rows(
    snapshots: Iterable[SnapshotInfo], recomputed: Iterable[str] = ()
) -> list[dict[str, Any]]:
    """The evidence appendix: one row per snapshot with its hashes, and whether this report
    recomputed its content (``recomputed``: ids) or checked its place in the chain only."""
    checked = set(recomputed)
    return [
        {
            "seq": s.seq,
            "snapshot_id": s.snapshot_id,
            "snapshot_at": s.snapshot_at,
            "status": s.status,
            "credential": " ".join(
                p
                for p in (s.credential_name, f"({s.credential_role})" if s.credential_role else "")
                if p
            ),
            "rows": sum(s.row_counts.values()),
            "content_hash": s.content_hash,
            "content_check": "recomputed" if s.snapshot_id in checked else "chain only",
            "chain_hash": s.chain_hash,
        }
        for s in snapshots
    ]
