"""The audit's public names: what ``toolkit.audit`` exports is there and documented."""

from __future__ import annotations

import toolkit.audit
import toolkit.cli.audit
import toolkit.cli.diff
import toolkit.cli.options
import toolkit.report
import toolkit.report.exports
from toolkit.errors import AuditError, ConfigError, ToolkitError, WaiverError


def test_all_names_exist_and_are_sorted() -> None:
    modules = (toolkit.audit, toolkit.report, toolkit.report.exports)
    for module in (*modules, toolkit.cli.audit, toolkit.cli.diff, toolkit.cli.options):
        names = module.__all__
        assert names == sorted(names, key=lambda n: (not n.isupper(), n))
        for name in names:
            assert getattr(module, name) is not None, name


def test_public_entry_points_have_docstrings() -> None:
    for name in ("run_audit", "load_waivers", "Catalogue"):
        assert getattr(toolkit.audit, name).__doc__, name
    assert toolkit.report.diff_snapshots.__doc__
    for name in ("render", "findings_table", "to_sarif", "to_ocsf"):
        assert getattr(toolkit.report.exports, name).__doc__, name


def test_the_outputs_are_the_report_floor_s() -> None:
    """An audit result's outputs and the diff of two snapshots are reports: the audit
    package does not export them (it may not import the floor above it)."""
    moved = {"FORMATS", "SnapshotDiff", "diff_snapshots", "escape_markdown", "render", "to_sarif"}
    assert moved.isdisjoint(toolkit.audit.__all__)
    assert moved <= {*toolkit.report.__all__, *toolkit.report.exports.__all__}


def test_errors_are_one_tree() -> None:
    assert issubclass(AuditError, ToolkitError)
    assert issubclass(WaiverError, ConfigError)
