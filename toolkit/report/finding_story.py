"""One finding, whole: what the check says, where the resource is, its state, and every
episode in which it was in alarm over the history. ``platform-audit finding`` prints it::

    result = run_audit(store, checks=Catalogue.load().select(only=["REP001"]))
    story = explain_finding(result, "REP001", "redis")   # a resource id, or a unique name
    story.episodes, story.finding["reason"], story.as_json()
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow.compute as pc
from rich import box
from rich.console import Group
from rich.table import Table
from rich.text import Text

from toolkit.errors import AuditError
from toolkit.report.exports.formats import (
    duration_text,
    evidence_text,
    frame_records,
    minute_text,
    owner_path,
    parsed_evidence,
    ref_json,
    visible,
)

if TYPE_CHECKING:
    import pandas as pd
    from rich.console import RenderableType

    from toolkit.audit.check_file import CheckSpec
    from toolkit.audit.findings import AuditResult

__all__ = ["FindingStory", "explain_finding", "story_renderable"]


@dataclass(frozen=True)
class FindingStory:
    """A finding of ``check`` on ``resource_id``: ``finding`` is its row of
    ``result.findings`` (None when it is in alarm in neither the judged nor the compared
    snapshot, only earlier); ``episodes`` is :meth:`AuditResult.episodes`; ``resource`` is
    the check's row on the resource in the judged (else the compared) snapshot, with its
    name and owners' ids, when ``finding`` is None and the resource is still there."""

    result: AuditResult
    check: CheckSpec
    resource_id: str
    finding: dict[str, Any] | None
    episodes: pd.DataFrame
    resource: dict[str, Any] | None = None

    def as_json(self) -> dict[str, Any]:
        """JSON-ready: the check, the resource, the finding (evidence parsed), the episodes."""
        finding = dict(self.finding) if self.finding is not None else None
        if finding is not None:
            finding["evidence"] = parsed_evidence(finding["evidence"])
        known = self.finding or self.resource or {}
        spec = self.check
        return {
            "snapshot": ref_json(self.result.target),
            "compared_to": ref_json(self.result.compare) if self.result.compare else None,
            "check": {"id": spec.id, "title": spec.title, "severity": spec.severity,
                      "area": spec.area, "risk": spec.risk, "remediation": spec.remediation},
            "resource_id": self.resource_id,
            "resource": {k: known.get(k) for k in _RESOURCE_KEYS} if known else None,
            "finding": finding,
            "episodes": frame_records(self.episodes),
        }  # fmt: skip


_RESOURCE_KEYS = ("resource_type", "resource_name", "team_id", "project_id", "environment_id")


def explain_finding(result: AuditResult, check_id: str, resource: str) -> FindingStory:
    """The story of ``check_id``'s finding on ``resource``: a resource id, or a resource
    name that only one of the check's findings has (or, for a finding only in the history,
    one resource of the judged or compared snapshot that was in alarm before).
    :class:`AuditError` says what to pass instead when the check did not run, the name is
    ambiguous or nothing matches."""
    spec = next((s for s in result.checks if s.id == check_id), None)
    if spec is None:
        raise AuditError(
            f"{check_id} is not a check of this audit; `platform-audit checks` lists them"
        )
    findings = result.findings[result.findings.check_id == check_id]
    by_id = findings[findings.resource_id == resource]
    if by_id.empty:
        past = result.episodes(check_id, resource)
        if not past.empty:  # in alarm only before the compared snapshot
            seen = _seen(result, check_id)
            row = seen[seen.resource_id == resource]
            known = frame_records(row)[0] if not row.empty else None
            return FindingStory(result, spec, resource, None, past, known)
        by_id = findings[findings.resource_name == resource]
    if by_id.empty:
        return _past_by_name(result, spec, resource, listed=not findings.empty)
    if len(by_id) > 1:
        raise _ambiguous(check_id, resource, frame_records(by_id))
    record = frame_records(by_id)[0]
    resource_id = str(record["resource_id"])
    return FindingStory(result, spec, resource_id, record, result.episodes(check_id, resource_id))


def _seen(result: AuditResult, check_id: str) -> pd.DataFrame:
    """The check's rows in the judged and compared snapshots, any status, one per resource
    (the judged snapshot's first): the resources a name can still be matched against."""
    details = result.details.filter(pc.equal(result.details["check_id"], check_id)).to_pandas()
    older = details.snapshot_id != result.target.snapshot_id
    seen: pd.DataFrame = details.loc[older.sort_values(kind="stable").index]
    return seen.drop_duplicates("resource_id")


def _past_by_name(result: AuditResult, spec: CheckSpec, name: str, *, listed: bool) -> FindingStory:
    """The story of a finding in alarm only before the compared snapshot, on the resource
    named ``name`` in the judged or compared snapshot."""
    seen = _seen(result, spec.id)
    named = frame_records(seen[seen.resource_name == name])
    stories = [
        FindingStory(result, spec, str(row["resource_id"]), None, past, row)
        for row in named
        if not (past := result.episodes(spec.id, str(row["resource_id"]))).empty
    ]
    if len(stories) == 1:
        return stories[0]
    if stories:
        raise _ambiguous(spec.id, name, [story.resource or {} for story in stories])
    snapshot = result.target.snapshot_id
    if named:
        ids = ", ".join(str(row["resource_id"]) for row in named[:20])
        raise AuditError(
            f"{spec.id} never found anything on {name!r} ({ids}) up to snapshot {snapshot}"
        )
    where = (
        f"`platform-audit audit --check {spec.id} --format csv` lists its findings with their "
        "resource ids"
        if listed
        else f"{spec.id} has no finding in snapshot {snapshot}; to find a resource gone since, "
        f"pass its id, or `--snapshot` an older snapshot"
    )
    raise AuditError(
        f"{spec.id} found nothing on {name!r}: no resource with that id was ever in alarm, and "
        f"none of that name in snapshot {snapshot} or the one compared with it was in alarm "
        f"in the history; {where}"
    )


def _ambiguous(check_id: str, name: str, records: list[dict[str, Any]]) -> AuditError:
    places = "; ".join(f"{r['resource_id']} ({_place(r)})" for r in records[:20])
    more = f" and {len(records) - 20} more" if len(records) > 20 else ""
    return AuditError(
        f"{len(records)} findings of {check_id} are on a resource named {name!r}: "
        f"{places}{more}; pass the resource id"
    )


def _place(record: dict[str, Any], result: AuditResult | None = None) -> str:
    """Where a finding's resource lives (:func:`owner_path`), by name. Only the check's row
    is known for a resource not in alarm now: its owners' names then come from the audit's
    findings on the same owners, else their ids. Control characters are shown as escapes:
    it goes to a terminal, in the story and in errors."""
    named = dict(record)
    if result is not None:
        findings = result.findings
        for level in ("team", "project", "environment", "service"):
            key = named.get(f"{level}_id")
            if named.get(f"{level}_name") or key is None:
                continue
            same = findings.loc[findings[f"{level}_id"] == key, f"{level}_name"].dropna()
            named[f"{level}_name"] = same.iloc[0] if not same.empty else None
    return visible(owner_path(named)) or "no owner recorded"


def story_renderable(story: FindingStory) -> RenderableType:
    """The story for a terminal: the facts, the episodes, then the risk and the fix. Every
    value is plain text, never markup, and its control characters are shown as escapes
    (names come from the platform)."""
    spec = story.check
    title = Text(f"{spec.id}  {spec.title}", style="bold")
    title.append(f"  ({spec.severity}, {spec.area})", style="dim")
    advice = _grid()
    advice.add_row("risk", Text(spec.risk))
    advice.add_row("fix", Text(spec.remediation))
    episodes = [_episodes_table(story.episodes)] if len(story.episodes) else []
    return Group(title, _facts(story), *episodes, advice)


def _grid() -> Table:
    """Two columns: a bold label, and its value folded to the width."""
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    return grid


def _facts(story: FindingStory) -> Table:
    """The resource, where it is, the snapshots, the state, the finding's reason, evidence
    and waiver, and how long it has been in alarm."""
    finding, result = story.finding, story.result
    facts = _grid()
    known = finding or story.resource or {}
    name = known.get("resource_name")
    kind = known.get("resource_type") or "resource"
    facts.add_row(
        "resource",
        Text(visible(f"{name} ({kind} {story.resource_id})" if name else story.resource_id)),
    )
    if known:
        facts.add_row("where", Text(_place(known, result)))
    judged = f"{result.target.snapshot_id} taken {minute_text(result.target.snapshot_at)}"
    if result.compare is not None:
        judged += f", compared with {result.compare.snapshot_id}"
    facts.add_row("snapshot", Text(judged))
    if finding is None:
        state = "in alarm only before the compared snapshot, not since"
        if (
            story.resource is not None
            and story.resource["snapshot_id"] == result.target.snapshot_id
        ):
            state += f" ({story.resource['status']} in the judged snapshot)"
    else:
        state = f"{finding['state']} ({finding['status']} in the judged snapshot)"
    facts.add_row("state", Text(visible(state)))
    if finding is not None:
        if finding.get("reason"):
            facts.add_row("reason", Text(visible(finding["reason"])))
        if finding.get("evidence"):
            facts.add_row("evidence", Text(visible(evidence_text(finding["evidence"]))))
        if finding.get("waiver_status"):
            until = f" until {finding['waiver_expires']}" if finding.get("waiver_expires") else ""
            waiver = f"{finding['waiver_status']}: {finding['waiver_owner']}{until}"
            facts.add_row("waiver", Text(visible(f"{waiver}: {finding['waiver_reason']}")))
    episodes = story.episodes
    alarms = int(episodes.snapshots.sum()) if not episodes.empty else 0
    facts.add_row("history", Text(f"in alarm in {alarms} snapshot(s), {len(episodes)} episode(s)"))
    return facts


def _episodes_table(episodes: pd.DataFrame) -> Table:
    """One row per episode in alarm: when it began, was last in alarm, and was fixed."""
    table = Table(
        box=box.SIMPLE_HEAD,
        title=Text("episodes in alarm (times UTC)"),
        title_justify="left",
        show_edge=False,  # 80 columns hold the five columns whole
    )
    for column in ("from", "last in alarm", "snapshots", "fixed by", "after"):
        numeric = column in ("snapshots", "after")
        table.add_column(column, justify="right" if numeric else "left", no_wrap=True)
    for row in frame_records(episodes):
        fixed = row["fixed_at"] is not None
        table.add_row(
            Text(minute_text(row["started"], zone="")),
            Text(minute_text(row["last_alarm"], zone="")),
            Text(str(row["snapshots"])),
            Text(minute_text(row["fixed_at"], zone="") if fixed else "still in alarm"),
            Text(duration_text(row["hours"]) if fixed else ""),
        )
    return table
