"""Waivers: findings a team accepted for a while, each with a reason, an owner and an expiry.

A waivers file (TOML or YAML) is read by :mod:`~toolkit.audit.waivers.file`, each entry
checked by :mod:`~toolkit.audit.waivers.entries`; what an audit does with them (which
findings each holds, and a report on every waiver: active, expiring, expired, stale,
duplicate or unchecked) is :mod:`~toolkit.audit.waivers.applied`::

    waivers = load_waivers(Path("waivers.toml"))    # WaiverError names a bad entry
    result = run_audit(store, AuditRequest(waivers=waivers))
    result.waiver_report                            # one row per waiver, with its status
"""

from __future__ import annotations

from toolkit.audit.waivers.applied import (
    ATTENTION,
    EXPIRING_DAYS,
    WAIVER_STATUSES,
    apply_waivers,
    require_known_checks,
)
from toolkit.audit.waivers.entries import SELECTORS, Waiver, parse_waivers
from toolkit.audit.waivers.file import load_waivers, waivers_from

__all__ = [
    "ATTENTION",
    "EXPIRING_DAYS",
    "SELECTORS",
    "WAIVER_STATUSES",
    "Waiver",
    "apply_waivers",
    "load_waivers",
    "parse_waivers",
    "require_known_checks",
    "waivers_from",
]
