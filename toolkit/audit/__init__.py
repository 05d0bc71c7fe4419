"""Audits over history: SQL checks, findings over time, waivers (docs/checks.md).

The outputs of a result (a table, JSON, CSV, Markdown, SARIF, OCSF) are
:mod:`toolkit.report.exports`; the changes between two snapshots,
:mod:`toolkit.report.snapshot_diff`.

>>> from toolkit.audit import run_audit
>>> from toolkit.snapshot import Store
>>> result = run_audit(Store.open("data/store"))          # doctest: +SKIP
>>> result = run_audit(store, AuditRequest(compare_to="0192"))  # doctest: +SKIP
>>> result.findings, result.summary(), result.mttr()     # doctest: +SKIP
"""

from __future__ import annotations

from toolkit.audit.catalogue import AuditOptions, Catalogue, params_example
from toolkit.audit.check_file import (
    AREAS,
    BUILTIN_CHECKS,
    OUTPUT_COLUMNS,
    SEVERITIES,
    CheckParam,
    CheckSpec,
    discover_checks,
)
from toolkit.audit.check_run import ensure_views, install_views, run_check
from toolkit.audit.engine import AuditRequest, run_audit
from toolkit.audit.findings import FINDING_COLUMNS, AuditResult, SnapshotRef
from toolkit.audit.waivers import Waiver, load_waivers, parse_waivers
from toolkit.errors import AuditError, CheckDefinitionError, WaiverError

__all__ = [
    "AREAS",
    "BUILTIN_CHECKS",
    "FINDING_COLUMNS",
    "OUTPUT_COLUMNS",
    "SEVERITIES",
    "AuditError",
    "AuditOptions",
    "AuditRequest",
    "AuditResult",
    "Catalogue",
    "CheckDefinitionError",
    "CheckParam",
    "CheckSpec",
    "SnapshotRef",
    "Waiver",
    "WaiverError",
    "discover_checks",
    "ensure_views",
    "install_views",
    "load_waivers",
    "params_example",
    "parse_waivers",
    "run_audit",
    "run_check",
]
