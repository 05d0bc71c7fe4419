"""The ``[endpoints]`` and ``[fields.KIND]`` settings: a server that differs from the
specification, met by configuration.

``[endpoints]`` moves a path, by catalogue name (``toolkit.api.CATALOGUE``); ``"teams.list"``,
a bare ``teams.list`` (a nested table to TOML), ``teams_list`` and ``list_teams`` name the
same endpoint. ``[fields.KIND]`` renames a kind of record's fields, the server's name first
(:class:`toolkit.collect.aliases.FieldAliases`). Example::

    [endpoints]
    "replicas.list" = "/instances/list"

    [fields.services]
    svc_name = "name"
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolkit.api import ConfigError as ApiConfigError
from toolkit.api import endpoint_overrides
from toolkit.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["endpoints_from_file", "fields_from_file"]


def endpoints_from_file(table: Mapping[str, Any], where: str) -> dict[str, str]:
    """``[endpoints]`` of the file at ``where``, keyed by catalogue name."""
    try:
        named = endpoint_overrides(table)
    except ApiConfigError as exc:
        raise ConfigError(f"{where}: [endpoints] {exc}") from None
    for name, path in named.items():
        if not isinstance(path, str) or not path.startswith("/"):
            raise ConfigError(
                f'{where}: [endpoints] "{name}" must be a path such as "/teams/list" (the base '
                "URL carries the host and any prefix)"
            )
    return {name: str(path) for name, path in named.items()}


def fields_from_file(table: Mapping[str, Any], where: str) -> dict[str, dict[str, str]]:
    """``[fields.KIND]`` renames, checked by the aliases they configure (imported only when
    there are any: reading settings does not import the crawl and pyarrow)."""
    if not table:
        return {}
    from toolkit.collect.aliases import FieldAliases

    try:
        return FieldAliases(table).renames
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
