"""Audits over history: SQL checks, findings over time, waivers (docs/checks.md).

>>> from toolkit.audit import run_audit
>>> from toolkit.snapshot import Store
>>> result = run_audit(Store.open("data/store"))          # doctest: +SKIP
>>> result = run_audit(store, AuditRequest(compare_to="0192"))  # doctest: +SKIP
>>> result.findings, result.summary(), result.mttr()     # doctest: +SKIP
>>> print(render(result, "markdown"))                     # doctest: +SKIP
"""

from __future__ import annotations

from toolkit.audit.catalogue import Catalogue, params_example
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
from toolkit.audit.diff import SnapshotDiff, diff_snapshots
from toolkit.audit.engine import AuditRequest, run_audit
from toolkit.audit.findings import FINDING_COLUMNS, AuditResult, SnapshotRef
from toolkit.audit.formats import FORMATS, escape_markdown, findings_table, render
from toolkit.audit.options import AuditOptions
from toolkit.audit.sarif import to_sarif
from toolkit.audit.waivers import Waiver, load_waivers, parse_waivers
from toolkit.errors import AuditError, CheckDefinitionError, WaiverError

__all__ = [
    "AREAS",
    "BUILTIN_CHECKS",
    "FINDING_COLUMNS",
    "FORMATS",
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
    "SnapshotDiff",
    "SnapshotRef",
    "Waiver",
    "WaiverError",
    "diff_snapshots",
    "discover_checks",
    "ensure_views",
    "escape_markdown",
    "findings_table",
    "install_views",
    "load_waivers",
    "params_example",
    "parse_waivers",
    "render",
    "run_audit",
    "run_check",
    "to_sarif",
]
