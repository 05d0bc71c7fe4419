"""The report's rows as plain values, shared by the HTML, Markdown and JSON builders.

Nothing here escapes: each builder escapes for its own format (jinja2 for HTML,
``escape_markdown`` for Markdown, the JSON encoder for JSON).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolkit.audit import AREAS, SEVERITIES
from toolkit.audit.formats import duration_text, evidence_text, frame_records, minute_text
from toolkit.audit.waivers import ATTENTION

if TYPE_CHECKING:
    from collections.abc import Iterable

    import pandas as pd

    from toolkit.report.report_data import ReportData
    from toolkit.snapshot import SnapshotInfo

__all__ = [
    "area_counts",
    "changed_findings",
    "check_rows",
    "duration_text",
    "evidence_text",
    "finding_rows",
    "resource_label",
    "service_changes",
    "snapshot_rows",
    "summary_counts",
    "team_choices",
    "team_counts",
]

TOP_TEAMS = 15
"""How many teams the by-team tables list (most severe findings first)."""
NO_TEAM = "-"
"""The team id the HTML report gives findings of no team (an API key's, say)."""

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
    findings are left out. A finding with no team (a key of no team) counts under "no team"."""
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
    return ids, names.fillna("no team")


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


def finding_rows(findings: pd.DataFrame) -> list[dict[str, Any]]:
    """The findings table's rows: the finding's columns plus display fields."""
    rows = []
    for record in frame_records(findings):
        where = " / ".join(
            str(record[k])
            for k in ("team_name", "project_name", "environment_name")
            if record.get(k) and record[k] != record.get("resource_name")
        )
        rows.append(
            {
                **record,
                "severity_rank": SEVERITIES.index(record["severity"])
                if record["severity"] in SEVERITIES
                else len(SEVERITIES),
                "resource": resource_label(record),
                "where": where,
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
    (not collected: neither removed nor added; the fields say why)."""
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
                    "fields": fields,
                }
            )
    return rows


def snapshot_rows(snapshots: Iterable[SnapshotInfo]) -> list[dict[str, Any]]:
    """The evidence appendix: one row per snapshot with its hashes."""
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
            "chain_hash": s.chain_hash,
        }
        for s in snapshots
    ]
