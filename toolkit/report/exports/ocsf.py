"""An audit result as OCSF Detection Findings (class 2004), for security data lakes and SIEMs.

Each finding becomes one Detection Finding built and validated by ``py-ocsf-models`` (the
library Prowler writes the same output with; its schema version is
:data:`OCSF_VERSION`). The lifecycle maps onto OCSF's activity and status:

==========  ========  =============  ==========================================
state       activity  status         why
==========  ========  =============  ==========================================
new         Create    New            first seen in alarm: nobody reviewed it yet
regressed   Update    New            the finding (same uid) existed and was
                                     resolved; in alarm again it needs review as
                                     a new one (``--fail-on-new`` and SARIF's
                                     ``baselineState`` treat it as new too)
open        Update    In Progress    in alarm since an earlier snapshot
resolved    Close     Resolved       no longer in alarm, or the resource is gone
waived      Update    Suppressed     accepted by a waiver: its owner, end and
                                     reason in ``status_detail``
==========  ========  =============  ==========================================

``status_code`` keeps the lifecycle state as it is. The severity maps onto ``severity_id``
(info 1, low 2, medium 3, high 4, critical 5); the check onto ``finding_info`` (a ``uid``
stable for the check and resource across runs, the check's title, the finding's reason,
the check's area as its type) and onto ``analytic``, ``risk_details`` and ``remediation``;
the resource onto ``resources`` (id, name, type, ``team / project / environment / service``
as its namespace, the team as its group, each level's id and name in ``data``). Times are
the judged snapshot's (``time``) and the finding's first and last sighting in alarm.

Findings carry no variable values (checks compare fingerprints); names and ids were scrubbed
when collected, and the free text a check writes (the reason, the evidence, which may quote
a crash message or a command) is scrubbed of credentials once more
(:func:`~toolkit.snapshot.text_scrub.scrub_text`) before it is written. Example::

    records = to_ocsf(result)            # JSON-ready dicts, one per finding
    Path("audit.ocsf.json").write_text(json.dumps(records))
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolkit._version import __version__
from toolkit.report.exports.plain_values import frame_records, parsed_evidence
from toolkit.snapshot.text_scrub import scrub_text

if TYPE_CHECKING:
    from datetime import datetime

    from toolkit.audit.check_file import CheckSpec
    from toolkit.audit.findings import AuditResult

__all__ = ["OCSF_CLASS_UID", "OCSF_STATUS", "SEVERITY_IDS", "finding_uid", "to_ocsf"]

OCSF_CLASS_UID = 2004
"""OCSF's Detection Finding class."""
SEVERITY_IDS = {"info": 1, "low": 2, "medium": 3, "high": 4, "critical": 5}
"""A check's severity as OCSF's ``severity_id`` (Informational, Low, Medium, High, Critical)."""
OCSF_STATUS = {
    "new": ("Create", "New"),
    "regressed": ("Update", "New"),
    "open": ("Update", "In Progress"),
    "resolved": ("Close", "Resolved"),
    "waived": ("Update", "Suppressed"),
}
"""A finding's lifecycle state (``waived`` for one a waiver holds) as OCSF's activity and
status captions (see the module's table for why)."""
_ACTIVITY_IDS = {"Create": 1, "Update": 2, "Close": 3}
_STATUS_IDS = {"New": 1, "In Progress": 2, "Suppressed": 3, "Resolved": 4}
_SEVERITY_CAPTIONS = {1: "Informational", 2: "Low", 3: "Medium", 4: "High", 5: "Critical"}
_LEVELS = ("team", "project", "environment", "service")


def to_ocsf(result: AuditResult) -> list[dict[str, Any]]:
    """One OCSF Detection Finding per finding of ``result`` (in alarm, waived or resolved),
    as JSON-ready dicts, most severe first as the findings are."""
    from py_ocsf_models.objects.metadata import Metadata
    from py_ocsf_models.objects.product import Product

    specs = {spec.id: spec for spec in result.checks}
    product = Product(
        name="platform-audit", uid="platform-audit", vendor_name="platform-audit",
        version=__version__, lang="en",
    )  # fmt: skip
    records = []
    for row in frame_records(result.findings):
        metadata = Metadata(product=product, event_code=row["check_id"], profiles=["datetime"])
        finding = _finding(row, specs[row["check_id"]], result, metadata)
        records.append(finding.model_dump(mode="json", exclude_none=True))
    return records


def finding_uid(row: dict[str, Any]) -> str:
    """The finding's identity across runs: its check and its resource's id (the key the
    lifecycle follows a finding by), so a consumer updates one record over time."""
    return f"platform-audit/{row['check_id']}/{row['resource_id']}"


def _finding(row: dict[str, Any], spec: CheckSpec, result: AuditResult, metadata: Any) -> Any:
    from py_ocsf_models.events.findings.detection_finding import (
        DetectionFinding,
        DetectionFindingTypeID,
    )
    from py_ocsf_models.objects.remediation import Remediation

    activity, status = OCSF_STATUS["waived" if row["waived"] else row["state"]]
    activity_id = _ACTIVITY_IDS[activity]
    severity_id = SEVERITY_IDS[row["severity"]]
    reason = scrub_text(str(row["reason"] or ""))
    at = result.target.snapshot_at
    return DetectionFinding(
        activity_id=activity_id,
        activity_name=activity,
        type_uid=DetectionFindingTypeID(OCSF_CLASS_UID * 100 + activity_id),
        type_name=f"Detection Finding: {activity}",
        severity_id=severity_id,
        severity=_SEVERITY_CAPTIONS[severity_id],
        status_id=_STATUS_IDS[status],
        status=status,
        status_code=row["state"],
        status_detail=_status_detail(row),
        message=reason or spec.title,
        time=_millis(at),
        time_dt=at,
        finding_info=_finding_info(row, spec, reason),
        risk_details=spec.risk,
        remediation=Remediation(desc=spec.remediation),
        resources=[_resource(row)],
        metadata=metadata,
        unmapped={
            "snapshot_id": result.target.snapshot_id,
            "compared_to": result.compare.snapshot_id if result.compare else None,
            "evidence": _scrubbed(parsed_evidence(row["evidence"])),
        },
    )


def _finding_info(row: dict[str, Any], spec: CheckSpec, reason: str) -> Any:
    from py_ocsf_models.objects.analytic import Analytic
    from py_ocsf_models.objects.finding_info import FindingInformation

    first, last = _when(row["first_seen"]), _when(row["last_seen"])
    return FindingInformation(
        uid=finding_uid(row),
        title=spec.title,
        desc=reason or spec.risk,
        types=[spec.area],
        analytic=Analytic(uid=spec.id, name=spec.title, type="Rule", type_id=1, category=spec.area),
        first_seen_time=_millis(first),
        first_seen_time_dt=first,
        last_seen_time=_millis(last),
        last_seen_time_dt=last,
    )


def _resource(row: dict[str, Any]) -> Any:
    from py_ocsf_models.objects.group import Group
    from py_ocsf_models.objects.resource_details import ResourceDetails

    levels = {
        level: {"id": row[f"{level}_id"], "name": row[f"{level}_name"]}
        for level in _LEVELS
        if row.get(f"{level}_id") or row.get(f"{level}_name")
    }
    team = levels.get("team")
    # where it lives, as the other formats show it: the service too for what is in one
    path = [v["name"] or v["id"] for k, v in levels.items() if k != row["resource_type"]]
    return ResourceDetails(
        uid=str(row["resource_id"]),
        name=str(row["resource_name"] or row["resource_id"]),
        type=row["resource_type"],
        namespace=" / ".join(path) or None,
        group=Group(uid=team["id"], name=team["name"]) if team else None,
        data=levels or None,
    )


def _status_detail(row: dict[str, Any]) -> str | None:
    """What a consumer needs beside the status: who waived a suppressed finding, until
    when and why; that a new-again finding had been resolved."""
    if row["waived"]:
        until = f" until {row['waiver_expires']}" if row["waiver_expires"] else ""
        return f"waived by {row['waiver_owner']}{until}: {row['waiver_reason']}"
    if row["state"] == "regressed":
        return "in alarm again after it was resolved"
    return None


def _scrubbed(value: Any) -> Any:
    """``value`` (parsed JSON) with every string in it scrubbed of credentials."""
    if isinstance(value, str):
        return scrub_text(value)
    if isinstance(value, dict):
        return {key: _scrubbed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_scrubbed(item) for item in value]
    return value


def _when(value: Any) -> datetime | None:
    from datetime import datetime

    return None if value is None else datetime.fromisoformat(str(value))


def _millis(value: datetime | None) -> int | None:
    """OCSF's timestamp: milliseconds since the epoch."""
    return None if value is None else int(value.timestamp() * 1000)
