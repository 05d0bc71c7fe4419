"""The ``platform-audit`` command: one module per command group, rendering for terminals.

``platform-audit = "toolkit.cli:app"`` in pyproject.toml; ``python -m toolkit.cli`` runs
the same application. :mod:`toolkit.cli.main` holds the application and the commands of
its top level; the audit, report, store, schedule, checks and diff groups each have a
module of their own, registered on it.
"""

from __future__ import annotations

from toolkit.cli.main import app
from toolkit.errors import ExitCode

__all__ = ["ExitCode", "app"]
