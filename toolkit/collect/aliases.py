"""The field aliases of real servers, in one place: product words and configured renames.

The specification replaced every product name inside an identifier by a neutral word (its
part 0); a real server sends the product names: `kubernetes_name` for `runtime_name`,
service type `github` for `gitprovider`, builder `railpack` for `buildpack`. Its shapes
differ in a few places too (replica health lists `instances`, deployments carry
`instance_events`). Every answer passes through `FieldAliases.normalise` before a collector
maps it, so collectors and checks only ever see the specification's words, whichever form
the server sends. What this module does not know, a user names in the configuration::

    [fields.services]
    service_name = "name"        # the server's field = the specification's field

>>> aliases = FieldAliases()
>>> aliases.normalise("services.list", [{"kubernetes_name": "web", "type": "github"}])
[{'runtime_name': 'web', 'type': 'gitprovider'}]
"""

from __future__ import annotations

import functools
import re
from dataclasses import replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from toolkit.api import DeploymentPage, VariableList
from toolkit.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["ENDPOINT_KINDS", "KINDS", "PRODUCT_WORDS", "FieldAliases", "kind_of_table"]

PRODUCT_WORDS: Mapping[str, str] = MappingProxyType(
    {
        "kubernetes": "runtime",
        "docker": "container",
        "railpack": "buildpack",
        "github": "gitprovider",
        "supabase": "backend",
    }
)
"""Product word on a real server -> the specification's neutral word (docs/spec/api-facts.md).

A field name is renamed word by word (`docker_builder_dockerfile_path` ->
`container_builder_dockerfile_path`); the value of an enumerated field likewise, its words
split on `-` (`docker-image` -> `container-image`)."""

ENDPOINT_KINDS: Mapping[str, str] = MappingProxyType(
    {
        "users.me": "credentials",
        "teams.list": "teams",
        "projects.list": "projects",
        "environments.list": "environments",
        "services.list": "services",
        "service_groups.list": "service_groups",
        "deployments.list": "deployments",
        "replicas.list": "replicas",
        "replicas.health": "replica_health",
        "volumes.list": "volumes",
        "variables.list": "variables",
        "webhooks.list": "webhooks",
        "buckets.list": "s3_buckets",
        "buckets.get": "s3_buckets",
        "templates.list": "templates",
    }
)
"""The kind of record each read endpoint answers with (its items, for a list)."""

# Records nested in a record of a kind: member -> the member's kind (an object or a list).
_NESTED: Mapping[str, Mapping[str, str]] = {
    "services": {
        "config": "service_config",
        "current_deployment": "deployments",
        "last_deployment": "deployments",
        "last_successful_deployment": "deployments",
    },
    "service_config": {"volumes": "volumes"},
    "replica_health": {"replicas": "replicas"},
}
_NESTED_ITEMS = {kind: tuple(members.items()) for kind, members in _NESTED.items()}
KINDS: frozenset[str] = frozenset(ENDPOINT_KINDS.values()) | {"service_config"}
"""The record kinds a `[fields.KIND]` table may name."""

# Where a real server's shape differs beyond the product words (docs/spec/api-facts.md, "The real
# platform"): the server's member -> the specification's, per kind.
_SHAPES: Mapping[str, Mapping[str, str]] = {
    "replica_health": {"expected_instances": "expected_replicas", "instances": "replicas"},
    "deployments": {"instance_events": "replica_events", "instance_restarts": "replica_restarts"},
}
# Enumerated fields whose values may carry a product word.
_ENUMS: Mapping[str, tuple[str, ...]] = {
    "services": ("type",),
    "service_config": ("builder",),
    "deployments": ("builder",),
}
_WORD = re.compile(r"[A-Za-z]+")
_SHAPES_LIMIT = 1_024  # record shapes remembered per kind; more start over


@functools.cache
def _neutral_key(key: str) -> str:
    """`key` with each product word between underscores replaced by its neutral word."""
    return "_".join(PRODUCT_WORDS.get(word, word) for word in key.split("_"))


@functools.cache
def _neutral_value(value: str) -> str:
    """An enumerated value with its product words replaced (`docker-image` -> `container-image`)."""
    return _WORD.sub(lambda m: PRODUCT_WORDS.get(m.group(0), m.group(0)), value)


def kind_of_table(table: str) -> str | None:
    """The `[fields.KIND]` kind whose records fill `table`, if any (for hints)."""
    return table if table in KINDS else None


class FieldAliases:
    """Rewrites a server's answers into the specification's field names and values.

    `renames` are the configured ones: kind -> {server's field: specification's field}.
    They apply before the built-in product words, so a configured rename always wins.
    """

    def __init__(self, renames: Mapping[str, Mapping[str, str]] | None = None) -> None:
        self.renames = _checked(renames or {})
        self._by_kind = {
            kind: {**_SHAPES.get(kind, {}), **self.renames.get(kind, {})} for kind in KINDS
        }
        # kind -> a record's member names in order -> their names in the specification
        self._plans: dict[str, dict[tuple[str, ...], tuple[str, ...]]] = {}

    def normalise(self, endpoint: str, payload: Any) -> Any:
        """The answer of `endpoint` with its records in the specification's words.

        Unknown endpoints and payload shapes pass through untouched; the collector that
        reads them reports what it cannot use.
        """
        kind = ENDPOINT_KINDS.get(endpoint)
        if kind is None:
            return payload
        if isinstance(payload, DeploymentPage):
            current = payload.current_deployment
            return replace(
                payload,
                deployments=self._each(kind, payload.deployments),
                current_deployment=self.record(kind, current) if current else current,
            )
        if isinstance(payload, VariableList):
            return replace(payload, variables=self._each(kind, payload.variables))
        if isinstance(payload, list):
            return self._each(kind, payload)
        return self.record(kind, payload)

    def record(self, kind: str, record: Any) -> Any:
        """One record of `kind` (and the records nested in it) in the specification's words."""
        if not isinstance(record, dict):
            return record
        keys = tuple(record)
        plans = self._plans.setdefault(kind, {})
        names = plans.get(keys)
        if names is None:
            if len(plans) >= _SHAPES_LIMIT:
                plans.clear()
            names = plans[keys] = self._names(kind, keys)
        out = dict(record) if names is keys else dict(zip(names, record.values(), strict=True))
        for field in _ENUMS.get(kind, ()):
            value = out.get(field)
            if isinstance(value, str):
                out[field] = _neutral_value(value)
        for member, member_kind in _NESTED_ITEMS.get(kind, ()):
            value = out.get(member)
            if isinstance(value, dict):
                out[member] = self.record(member_kind, value)
            elif isinstance(value, list):
                out[member] = self._each(member_kind, value)
        return out

    def _names(self, kind: str, keys: tuple[str, ...]) -> tuple[str, ...]:
        """The specification's name of each of `keys`, a record's members in order;
        `keys` itself when no name changes.

        Worked out once per shape of record (its member names in order), not per record.
        """
        renames = self._by_kind.get(kind, {})
        sent = set(keys)
        names: list[str] = []
        for key in keys:
            name = renames.get(key) or _neutral_key(key)
            if name != key and (name in sent or name in names):
                name = key  # the server sent both forms: the specification's wins
            names.append(name)
        found = tuple(names)
        return keys if found == keys else found

    def _each(self, kind: str, records: list[Any]) -> list[Any]:
        return [self.record(kind, item) for item in records]


def _checked(renames: Mapping[str, Mapping[str, str]]) -> dict[str, dict[str, str]]:
    """The configured renames, or a ConfigError naming the kinds and what to write."""
    found: dict[str, dict[str, str]] = {}
    for kind, table in renames.items():
        if kind not in KINDS:
            raise ConfigError(
                f"[fields.{kind}]: unknown kind of record {kind!r}; known kinds: "
                f"{', '.join(sorted(KINDS))}"
            )
        if not isinstance(table, dict):
            raise ConfigError(
                f'[fields.{kind}] must be a table of renames: server_field = "spec_field"'
            )
        for server, spec in table.items():
            if not isinstance(spec, str) or not spec.strip():
                raise ConfigError(
                    f"[fields.{kind}] {server} must name the specification's field, "
                    f'e.g. {server} = "name"'
                )
        found[kind] = dict(table)
    return found
