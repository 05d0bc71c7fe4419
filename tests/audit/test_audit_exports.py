"""The audit's public names: what ``toolkit.audit`` exports is there and documented."""

from __future__ import annotations

import toolkit.audit
import toolkit.cli.audit
import toolkit.cli.diff
import toolkit.cli.options
from toolkit.errors import AuditError, ConfigError, ToolkitError, WaiverError


def test_all_names_exist_and_are_sorted() -> None:
    for module in (toolkit.audit, toolkit.cli.audit, toolkit.cli.diff, toolkit.cli.options):
        names = module.__all__
        assert names == sorted(names, key=lambda n: (not n.isupper(), n))
        for name in names:
            assert getattr(module, name) is not None, name


def test_public_entry_points_have_docstrings() -> None:
    for name in ("run_audit", "diff_snapshots", "render", "load_waivers", "Catalogue"):
        assert getattr(toolkit.audit, name).__doc__, name


def test_errors_are_one_tree() -> None:
    assert issubclass(AuditError, ToolkitError)
    assert issubclass(WaiverError, ConfigError)
