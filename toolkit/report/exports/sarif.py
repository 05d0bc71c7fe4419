"""An audit result as SARIF 2.1.0, for code-scanning dashboards and CI annotations.

One rule per check (title, risk, remediation, severity), one result per finding in alarm
(new, regressed or open). A platform resource has no file, so a result's location is a
logical location, ``team/project/environment/resource``, and a stable repository-relative
path made of its type and id (``platform/service/<id>``, line 1): GitHub code scanning
refuses a result without a physical location ("expected a physical location") and any
URI with a scheme, and tracks an alert across uploads by that path. ``baselineState``
carries the lifecycle (new and regressed are ``new``, open is ``unchanged``), and a waived
finding carries an accepted external suppression with its owner and reason, so it is shown
as suppressed rather than dropped. GitHub refuses a run of more than 25,000 results, so
only the first :data:`MAX_RESULTS` are kept, most severe first (new and regressed before
open), and the run's properties count those left out (:func:`results_left_out`). Example::

    json.dump(to_sarif(result), open("audit.sarif", "w"))
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from toolkit._version import __version__
from toolkit.audit.check_file import SEVERITIES
from toolkit.audit.findings import ALARMING
from toolkit.report.exports.plain_values import frame_records

if TYPE_CHECKING:
    import pandas as pd

    from toolkit.audit.findings import AuditResult

__all__ = ["MAX_RESULTS", "SARIF_SCHEMA", "SARIF_VERSION", "results_left_out", "to_sarif"]

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {"critical": "error", "high": "error", "medium": "warning", "low": "note", "info": "note"}
# GitHub code scanning reads this property (a CVSS-like score) to rank security results.
_SCORE = {"critical": "9.5", "high": "8.0", "medium": "5.5", "low": "3.0", "info": "0.0"}
_BASELINE = {"new": "new", "regressed": "new", "open": "unchanged"}
MAX_RESULTS = 25_000
"""The most results a run may have: GitHub code scanning rejects a file with more."""


def results_left_out(result: AuditResult) -> int:
    """How many findings in alarm :func:`to_sarif` leaves out to stay within
    :data:`MAX_RESULTS` (0 for most fleets)."""
    return max(0, int(result.findings.state.isin(ALARMING).sum()) - MAX_RESULTS)


def _most_severe_first(findings: pd.DataFrame) -> pd.DataFrame:
    """Findings in alarm by severity, then new and regressed before open, then unwaived
    before waived: the order in which they are kept when there are too many."""
    alarming = findings[findings.state.isin(ALARMING)]
    key = alarming.assign(
        _severity=alarming.severity.map({s: n for n, s in enumerate(SEVERITIES)}),
        _state=(alarming.state == "open").astype(int),
        _waived=alarming.waived.fillna(False).astype(bool).astype(int),
    )
    order = key.sort_values(["_severity", "_state", "_waived"], kind="stable").index
    return alarming.loc[order]


def to_sarif(result: AuditResult) -> dict[str, Any]:
    """The SARIF log (a JSON-ready dict) of ``result``'s findings in alarm, the first
    :data:`MAX_RESULTS` of them most severe first."""
    rules = [_rule(spec) for spec in result.checks]
    index = {spec.id: n for n, spec in enumerate(result.checks)}
    alarming = _most_severe_first(result.findings)
    kept = alarming.head(MAX_RESULTS)
    results = [_result(row, index) for row in frame_records(kept)]
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "platform-audit",
                "version": __version__,
                "rules": rules,
            }
        },
        "automationDetails": {"id": f"platform-audit/{result.target.snapshot_id}"},
        "results": results,
        "properties": {
            "snapshot_id": result.target.snapshot_id,
            "snapshot_at": result.target.snapshot_at.isoformat(),
            "compared_to": result.compare.snapshot_id if result.compare else None,
            "findings_in_alarm": len(alarming),
            "results_left_out": len(alarming) - len(kept),
            "configured": list(result.configured),  # thresholds changed, checks left out
        },
    }
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


def _rule(spec: Any) -> dict[str, Any]:
    return {
        "id": spec.id,
        "name": spec.id,
        "shortDescription": {"text": spec.title},
        "fullDescription": {"text": spec.risk},
        "help": {"text": spec.remediation},
        "defaultConfiguration": {"level": _LEVEL[spec.severity]},
        "properties": {
            "area": spec.area,
            "severity": spec.severity,
            # GitHub reads security-severity only on rules tagged "security"; without the
            # tag every finding showed as a plain warning or error
            "security-severity": _SCORE[spec.severity],
            # once each: the schema says tags are unique, and a security-area rule's
            # area is "security" too (code scanning refused such a run)
            "tags": list(dict.fromkeys(["security", "platform-audit", spec.area])),
        },
    }


def _result(row: dict[str, Any], index: dict[str, int]) -> dict[str, Any]:
    path = [_text(row.get(k)) for k in ("team_name", "project_name", "environment_name")]
    name = _text(row.get("resource_name")) or str(row["resource_id"])
    qualified = "/".join(part for part in [*path, name] if part)
    identity = f"{row['check_id']}:{row['resource_id']}".encode()
    out: dict[str, Any] = {
        "ruleId": row["check_id"],
        "ruleIndex": index[row["check_id"]],
        "level": _LEVEL[row["severity"]],
        "message": {"text": _text(row.get("reason")) or row["title"]},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": _artifact_uri(row)},
                    "region": {"startLine": 1},
                },
                "logicalLocations": [
                    {
                        "name": name,
                        "fullyQualifiedName": qualified,
                        "kind": _text(row.get("resource_type")) or "resource",
                    }
                ],
            }
        ],
        "partialFingerprints": {"platformAudit/v1": hashlib.sha256(identity).hexdigest()},
        "baselineState": _BASELINE[row["state"]],
        "properties": {
            "resource_id": str(row["resource_id"]),
            "state": row["state"],
            "first_seen": _time(row.get("first_seen")),
            "last_seen": _time(row.get("last_seen")),
            "evidence": _text(row.get("evidence")),
        },
    }
    if row.get("waived"):
        out["suppressions"] = [
            {
                "kind": "external",
                "status": "accepted",
                "justification": f"{_text(row.get('waiver_reason'))} "
                f"(owner {_text(row.get('waiver_owner'))}, "
                f"expires {_time(row.get('waiver_expires'))})",
            }
        ]
    return out


def _artifact_uri(row: dict[str, Any]) -> str:
    """``platform/<type>/<id>``, each part percent-encoded: the same for a resource in every
    run (its name may change; its id does not), and never absolute or with a scheme."""
    kind = _text(row.get("resource_type")) or "resource"
    return f"platform/{quote(kind, safe='')}/{quote(str(row['resource_id']), safe='')}"


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _time(value: Any) -> str | None:
    return None if value is None else str(value)
