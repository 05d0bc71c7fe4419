"""The ``[review]`` settings: how long a finding may stay in alarm, per severity, before it
breaches its service level in a review (``platform-audit review``).

Example::

    [review]
    time_to_fix_days = { critical = 7, high = 30, medium = 90, low = 180 }

A severity left out keeps its default; ``info`` has none unless given.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolkit.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

__all__ = ["DEFAULT_TIME_TO_FIX", "REVIEW_KEYS", "ReviewSettings", "review_from_file"]

DEFAULT_TIME_TO_FIX: dict[str, int] = {"critical": 7, "high": 30, "medium": 90, "low": 180}
"""Days to fix a finding, per severity, unless ``[review] time_to_fix_days`` says otherwise."""
_SEVERITIES = ("critical", "high", "medium", "low", "info")

# Every key [review] may hold and its type, for the settings' unknown-key refusal.
REVIEW_KEYS: dict[str, type | tuple[type, ...]] = {"time_to_fix_days": dict}


@dataclass(frozen=True)
class ReviewSettings:
    """What a review is configured with: days to fix per severity (a severity not named has
    no service level)."""

    time_to_fix_days: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_TIME_TO_FIX))


def review_from_file(review: Mapping[str, Any], source: Path | None) -> ReviewSettings:
    """``[review]`` as :class:`ReviewSettings`; a severity it does not name keeps its default."""
    where = str(source)
    days = review.get("time_to_fix_days", {})
    chosen = dict(DEFAULT_TIME_TO_FIX)
    for severity, value in days.items():
        if severity not in _SEVERITIES:
            raise ConfigError(
                f"{where}: [review] time_to_fix_days names {severity!r}: use the severities "
                f"{', '.join(_SEVERITIES)}"
            )
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError(
                f"{where}: [review] time_to_fix_days.{severity} must be a whole number of days, "
                f"at least 1 (e.g. {severity} = {DEFAULT_TIME_TO_FIX.get(severity, 365)})"
            )
        chosen[severity] = value
    return ReviewSettings(time_to_fix_days=chosen)
