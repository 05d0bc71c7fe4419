"""Audit reports for reviews: one self-contained HTML page, Markdown, JSON and CSV.

>>> from toolkit.report import write_report
>>> from toolkit.snapshot import Store
>>> write_report(Store.open("data/store"), Path("audit.html"))            # doctest: +SKIP
>>> print(render_report(store, format="markdown"))                        # doctest: +SKIP
>>> data = gather_report(store); data.trends.runtime, data.reach           # doctest: +SKIP
>>> change = diff_snapshots(store); change.added, change.findings          # doctest: +SKIP

An audit result's own outputs (a table, JSON, CSV, Markdown, SARIF, OCSF) are
:mod:`toolkit.report.exports`; one finding's story, :mod:`toolkit.report.finding_story`.

The command line is ``platform-audit report`` (``toolkit.cli.report``).
"""

from __future__ import annotations

from toolkit.report.report_data import ReportData, gather_report
from toolkit.report.report_writer import (
    REPORT_FORMATS,
    render_report,
    render_report_data,
    write_report,
)
from toolkit.report.snapshot_diff import SnapshotDiff, diff_snapshots
from toolkit.report.trends import ACCESS_LEVELS, Trends

__all__ = [
    "ACCESS_LEVELS",
    "REPORT_FORMATS",
    "ReportData",
    "SnapshotDiff",
    "Trends",
    "diff_snapshots",
    "gather_report",
    "render_report",
    "render_report_data",
    "write_report",
]
