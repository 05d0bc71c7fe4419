"""The ``[audit]`` and ``[checks.ID]`` settings: which checks run, how they gate, what they
call production, and the thresholds each check is given.

Paths are relative to the config file. Example::

    [audit]
    skip = ["KEY006"]
    frameworks = ["frameworks"]              # your own framework files, beside soc2, ...
    fail_on = "high"
    production_pattern = '\\b(prd|live)\\b'   # environments named prd-eu, live, ...

    [checks.RES005]
    max_ratio = 10
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolkit.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["AUDIT_KEYS", "FAIL_ON", "audit_from_file"]

# Every key [audit] may hold and its type, for config.py's unknown-key refusal.
AUDIT_KEYS: dict[str, type | tuple[type, ...]] = {
    "checks": list,
    "builtin_checks": bool,
    "frameworks": list,
    "skip": list,
    "waivers": str,
    "fail_on": str,
    "fail_on_new": bool,
    "production_pattern": str,
    "status_cache": (str, bool),  # refused below, with what to do
}
FAIL_ON = ("critical", "high", "medium", "low")
_CHECK_ID = re.compile(r"[A-Z]{2,5}[0-9]{3}")


def audit_from_file(
    audit: Mapping[str, Any], checks: Mapping[str, Any], source: Path | None
) -> dict[str, Any]:
    """``[audit]`` and ``[checks.ID]`` as :class:`~toolkit.config.Settings` fields."""
    where = str(source)
    base = source.parent if source is not None else Path()
    values: dict[str, Any] = {}
    folders = audit.get("checks", [])
    if not all(isinstance(f, str) and f.strip() for f in folders):
        raise ConfigError(f'{where}: [audit] checks must be a list of folders, e.g. ["checks"]')
    values["audit_checks"] = tuple(base / Path(f).expanduser() for f in folders)
    frameworks = audit.get("frameworks", [])
    if not all(isinstance(f, str) and f.strip() for f in frameworks):
        raise ConfigError(
            f'{where}: [audit] frameworks must be a list of folders, e.g. ["frameworks"]'
        )
    values["audit_frameworks"] = tuple(base / Path(f).expanduser() for f in frameworks)
    if "builtin_checks" in audit:
        values["builtin_checks"] = audit["builtin_checks"]
    skip = audit.get("skip", [])
    if not all(isinstance(p, str) and p for p in skip):
        raise ConfigError(
            f'{where}: [audit] skip must be a list of check ids, globs or areas, e.g. ["KEY006"]'
        )
    values["skip_checks"] = tuple(skip)
    if "waivers" in audit:
        if not audit["waivers"].strip():
            raise ConfigError(
                f'{where}: [audit] waivers must name a file, e.g. "waivers.toml" (or leave '
                "the setting out)"
            )
        values["waivers_file"] = base / Path(audit["waivers"]).expanduser()
    if "fail_on" in audit:
        if audit["fail_on"] not in FAIL_ON:
            raise ConfigError(f"{where}: [audit] fail_on must be one of {', '.join(FAIL_ON)}")
        values["fail_on"] = audit["fail_on"]
    if "fail_on_new" in audit:
        values["fail_on_new"] = audit["fail_on_new"]
    if "production_pattern" in audit:
        values["production_pattern"] = _production_pattern(audit["production_pattern"], where)
    if "status_cache" in audit:
        raise ConfigError(
            f"{where}: [audit] status_cache is gone: what each check said of each snapshot is "
            "kept in the store's findings history (check_results); remove the line (and the "
            "old cache folder, ~/.cache/platform-audit/status by default)"
        )
    values["check_params"] = _check_params(checks, where)
    return values


def _production_pattern(pattern: str, where: str) -> str:
    """The pattern, if DuckDB's RE2 reads it and it cannot match every name."""
    from toolkit.audit.check_values import regex_problem  # DuckDB: only when it is set

    setting = f"{where}: [audit] production_pattern = '{pattern}'"  # as the file writes it
    if not pattern.strip():
        raise ConfigError(
            f"{setting} is empty, which would make every environment production; give a "
            r"regular expression such as '\b(prod|prd|live)\b', or leave the setting out"
        )
    problem = regex_problem(pattern)
    if problem is not None:
        raise ConfigError(
            f"{setting} is not a regular expression DuckDB reads ({problem}); fix it "
            "(RE2 syntax: no look-around, no back-references)"
        )
    return pattern


def _check_params(
    checks: Mapping[str, Any], where: str
) -> dict[str, dict[str, int | float | str | bool]]:
    params: dict[str, dict[str, int | float | str | bool]] = {}
    for check_id, table in checks.items():
        if not _CHECK_ID.fullmatch(check_id) or not isinstance(table, dict):
            raise ConfigError(
                f"{where}: [checks.{check_id}] must be a table named for a check id such as "
                "RES003, holding that check's parameters"
            )
        for name, value in table.items():
            if not isinstance(value, int | float | str | bool):
                raise ConfigError(
                    f"{where}: [checks.{check_id}] {name} must be a number, string or boolean"
                )
        params[check_id] = dict(table)
    return params
