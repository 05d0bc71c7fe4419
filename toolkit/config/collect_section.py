"""The ``[collect]`` settings: what a snapshot's crawl reads, and at which level it asks.

They become the crawl's :class:`~toolkit.collect.CrawlOptions`, which
:func:`~toolkit.pipeline.snapshot_job.crawl_settings` (so ``platform-audit snapshot`` and
the scheduled job) uses unless it is given options of its own. Example::

    [collect]
    deployment_depth = 20
    verify_scope = true     # probe each audited key's real scope (check KEY009)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolkit.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from toolkit.collect import CrawlOptions

__all__ = ["COLLECT_KEYS", "collect_from_file"]

# Every key [collect] may hold and its type, for config.py's unknown-key refusal.
COLLECT_KEYS: dict[str, type | tuple[type, ...]] = {
    "deployment_depth": int,
    "replica_level": str,
    "volume_level": str,
    "verify_scope": bool,
    "value_mask_min_length": int,
}
# The least value_mask_min_length (toolkit.collect.known_values.MIN_LENGTH_FLOOR, kept here
# so that reading the settings does not import the crawl).
_MIN_VALUE_MASK = 4
# The levels CrawlOptions accepts for the lists it asks once per team, project, ...
_LEVELS = {
    "replica_level": ("team", "project", "environment", "service"),
    "volume_level": ("team", "project", "environment"),
}


def collect_from_file(table: Mapping[str, Any], source: Path | None) -> CrawlOptions | None:
    """``[collect]`` of a settings file (types already checked); None when it sets nothing.

    The options are built only when the section sets something, so that reading the
    settings does not import the crawl (and pyarrow) for commands that never collect.
    """
    if not table:
        return None
    where = f"{source}: [collect]"
    if table.get("deployment_depth", 0) < 0:
        raise ConfigError(
            f"{where} deployment_depth must be 0 or more (0 reads only the deployments each "
            "service lists)"
        )
    if table.get("value_mask_min_length", _MIN_VALUE_MASK) < _MIN_VALUE_MASK:
        raise ConfigError(
            f"{where} value_mask_min_length must be {_MIN_VALUE_MASK} or more (shorter values "
            "would mask ordinary words in messages); the default is 8"
        )
    for key, levels in _LEVELS.items():
        if key in table and table[key] not in levels:
            raise ConfigError(f"{where} {key} must be one of {', '.join(levels)}")
    from toolkit.collect.plan import CrawlOptions

    return CrawlOptions(**table)
