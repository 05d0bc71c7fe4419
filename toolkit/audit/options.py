"""What an audit is configured with: the audit's own value, built by :mod:`toolkit.config`.

``[audit]`` and ``[checks.ID]`` of the config file become one :class:`AuditOptions`
(``Settings.audit_options()``), which :class:`~toolkit.audit.AuditRequest` and
:meth:`~toolkit.audit.Catalogue.from_options` take; the audit never reads the whole
settings. Example::

    options = load_settings().audit_options()
    result = run_audit(store, options=options)
    catalogue = Catalogue.from_options(AuditOptions(skip=("KEY006",)))
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

__all__ = ["AuditOptions"]


@dataclass(frozen=True, kw_only=True)
class AuditOptions:
    """Which checks run with which thresholds, which waivers apply and what production
    environments are named; the defaults are the built-in checks and thresholds alone."""

    check_folders: tuple[Path, ...] = ()
    """Folders of the user's own checks, run beside the built-in ones ([audit] checks)."""
    builtin_checks: bool = True
    """Whether the built-in checks run ([audit] builtin_checks)."""
    skip: tuple[str, ...] = ()
    """Checks left out of every audit: ids, globs on ids or areas ([audit] skip)."""
    check_params: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    """Threshold overrides per check id ([checks.RES003] min_ratio = 6)."""
    waivers_file: Path | None = None
    """The waivers an audit applies unless it is given others ([audit] waivers)."""
    production_pattern: str | None = None
    """What production environments are named ([audit] production_pattern); None: the
    built-in pattern."""
    source: Path | None = None
    """The config file these come from, named in the errors about them."""

    @property
    def where(self) -> str | None:
        """The config file, as errors name it; None when the options come from no file."""
        return str(self.source) if self.source else None
