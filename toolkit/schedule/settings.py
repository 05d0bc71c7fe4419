"""The ``[schedule]`` and ``[notify]`` settings: when the job runs, and whom it tells.

Durations are written as a number and a unit (``"90s"``, ``"15m"``, ``"1h30m"``, ``"0.5s"``,
``"7d"``), in the file and on the command line alike. The webhook URL of ``[notify]`` is a
secret (a Slack incoming-webhook URL is its own credential), so the file names the
environment variable that holds it, never the URL. Example::

    [schedule]
    every = "1h"
    jitter = "2m"

    [notify]
    url_env = "PLATFORM_AUDIT_WEBHOOK"
    min_severity = "high"
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolkit.errors import ConfigError
from toolkit.report.report_formats import format_of, suffixes_text

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "NOTIFY_KEYS",
    "SCHEDULE_KEYS",
    "NotifySettings",
    "ScheduleSettings",
    "format_duration",
    "notify_from_file",
    "parse_duration",
    "schedule_from_file",
    "validate_cron",
]

_PART = re.compile(r"(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)")
_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_SEVERITIES = ("critical", "high", "medium", "low", "info")

# Every key each section may hold and its type, for config.py's unknown-key refusal.
SCHEDULE_KEYS: dict[str, type | tuple[type, ...]] = {
    "every": str,
    "cron": str,
    "jitter": str,
    "status_file": str,
    "backoff": str,
    "backoff_max": str,
    "lock_ttl": str,
    "audit": bool,
    "report": str,
    "maintain_every": str,
    "keep_all_for": str,
    "hourly_for": str,
    "daily_for": str,
    "vacuum_retention_hours": int,
}
NOTIFY_KEYS: dict[str, type | tuple[type, ...]] = {
    "url_env": str,
    "min_severity": str,
    "max_attempts": int,
    "timeout_s": (int, float),
}


def parse_duration(text: str, *, setting: str = "duration") -> float:
    """Seconds in ``text`` such as ``"1h30m"``, ``"0.5s"`` or ``"7d"``; ConfigError otherwise.

    >>> parse_duration("1h30m"), parse_duration("0.5s")
    (5400.0, 0.5)
    """
    compact = text.strip().lower().replace(" ", "")
    parts = _PART.findall(compact)
    if not compact or "".join(n + u for n, u in parts) != compact:
        raise ConfigError(
            f"{setting} = {text!r} is not a duration: write a number and a unit, "
            'e.g. "90s", "15m", "1h30m" or "7d"'
        )
    return sum(float(number) * _UNIT_S[unit] for number, unit in parts)


def format_duration(seconds: float) -> str:
    """A short human form: ``"1h 30m"``, ``"45s"``, ``"0.5s"``."""
    if seconds < 60:
        return f"{seconds:g}s"
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    units = zip((days, hours, minutes, secs), "dhms", strict=True)
    return " ".join(f"{value}{unit}" for value, unit in units if value)


@dataclass(frozen=True, kw_only=True)
class ScheduleSettings:
    """When and how ``platform-audit schedule`` runs; every field has a working default.

    ``every`` or ``cron`` sets the cadence (``every`` wins on the command line only);
    ``jitter`` adds a random delay up to that long to each run, so many jobs do not hit the
    platform at once. After a run that found the platform unavailable the next attempt
    comes after ``backoff``, doubling up to ``backoff_max``. ``lock_ttl`` is how long a
    lock on an S3 store stays valid without renewal (a local lock dies with its process);
    the job renews it every third of that, while waiting and during runs.
    Maintenance (retention, gc, compaction, vacuum) runs after a run when ``maintain_every``
    has passed since the last one (0: after every run).
    """

    every_s: float | None = None
    cron: str | None = None
    jitter_s: float = 0.0
    status_file: Path = Path("platform-audit-status.json")
    backoff_s: float = 30.0
    backoff_max_s: float = 900.0
    lock_ttl_s: float = 7200.0
    audit: bool = True
    report: Path | None = None
    maintain_every_s: float = 86400.0
    keep_all_for: timedelta = timedelta(days=2)
    hourly_for: timedelta = timedelta(days=7)
    daily_for: timedelta = timedelta(days=365)
    vacuum_retention_hours: int = 168


@dataclass(frozen=True, kw_only=True)
class NotifySettings:
    """Where to POST a summary of new findings at or above ``min_severity``.

    ``url_env`` names the environment variable holding the webhook URL; without it nothing
    is sent. ``max_attempts`` counts tries for network errors, 429 and 5xx answers.
    """

    url_env: str | None = None
    min_severity: str = "high"
    max_attempts: int = 4
    timeout_s: float = 10.0


def schedule_from_file(table: Mapping[str, Any], source: Path | None) -> ScheduleSettings:
    """``[schedule]`` of a settings file (types already checked); paths relative to the file."""
    where = f"{source}: [schedule]"
    base = source.parent if source is not None else Path()
    values: dict[str, Any] = {}
    seconds = {
        "every": "every_s",
        "jitter": "jitter_s",
        "backoff": "backoff_s",
        "backoff_max": "backoff_max_s",
        "lock_ttl": "lock_ttl_s",
        "maintain_every": "maintain_every_s",
    }
    for key, field_name in seconds.items():
        if key in table:
            values[field_name] = parse_duration(table[key], setting=f"{where} {key}")
    for key in ("keep_all_for", "hourly_for", "daily_for"):
        if key in table:
            values[key] = timedelta(seconds=parse_duration(table[key], setting=f"{where} {key}"))
    if "every" in table and "cron" in table:
        raise ConfigError(f"{where} sets both every and cron: keep one of them")
    if values.get("every_s") == 0:
        raise ConfigError(f'{where} every must be longer than 0, e.g. "1h"')
    if "cron" in table:
        values["cron"] = validate_cron(table["cron"], setting=f"{where} cron")
    for key in ("status_file", "report"):
        if key in table:
            values[key] = base / Path(table[key]).expanduser()
    if "report" in table and format_of(values["report"]) is None:
        raise ConfigError(
            f"{where} report = {table['report']!r}: name it {suffixes_text()} (the suffix "
            "picks the format; for PDF, print the HTML report from a browser)"
        )
    if "audit" in table:
        values["audit"] = table["audit"]
    if "vacuum_retention_hours" in table:
        if table["vacuum_retention_hours"] < 0:
            raise ConfigError(f"{where} vacuum_retention_hours must be 0 or more")
        values["vacuum_retention_hours"] = table["vacuum_retention_hours"]
    return ScheduleSettings(**values)


def notify_from_file(table: Mapping[str, Any], source: Path | None) -> NotifySettings:
    """``[notify]`` of a settings file (types already checked)."""
    where = f"{source}: [notify]"
    values = dict(table)
    if values.get("min_severity", "high") not in _SEVERITIES:
        raise ConfigError(f"{where} min_severity must be one of {', '.join(_SEVERITIES)}")
    if values.get("max_attempts", 1) < 1:
        raise ConfigError(f"{where} max_attempts must be 1 or more")
    if "timeout_s" in values:
        values["timeout_s"] = float(values["timeout_s"])
    return NotifySettings(**values)


def validate_cron(expression: str, *, setting: str = "--cron") -> str:
    """``expression`` when croniter accepts it (five fields, or six with seconds)."""
    from croniter import croniter  # type: ignore[import-untyped]  # croniter ships no types

    if not croniter.is_valid(expression):
        raise ConfigError(
            f"{setting} = {expression!r} is not a cron expression: give five fields such as "
            '"17 * * * *" (minute hour day month weekday)'
        )
    return expression
