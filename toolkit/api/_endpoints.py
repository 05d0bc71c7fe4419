"""The endpoint catalogue: every path the client calls, in one place.

Paths the specification does not show are the project's assumptions
(`docs/spec/api-facts.md`). A server that differs is met by overriding a path from
configuration (`ClientConfig(endpoints={"variables.update": "/variables/upsert"})`),
never by editing code.

An endpoint is named `<group>.<verb>` (`replicas.list`). Because a dot in a TOML key makes
a nested table, the same name is also accepted as `group_verb` and `verb_group`
(`replicas_list`, `list_replicas`), and a nested `{"replicas": {"list": ...}}` reads as
`replicas.list`: see `endpoint_overrides`.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal

from toolkit.api._exceptions import ConfigError

if TYPE_CHECKING:
    from collections.abc import Mapping

Method = Literal["GET", "POST", "PUT", "DELETE"]


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One API operation: its catalogue name, HTTP method and path.

    `idempotent` says whether repeating the request after a network failure is harmless.
    Only reads are: a change that may have reached the server is never sent twice.
    """

    name: str
    method: Method
    path: str
    idempotent: bool

    @property
    def sends_body(self) -> bool:
        """Identifiers travel in the query for GET and in a JSON body otherwise (part 4)."""
        return self.method != "GET"


def _read(name: str, path: str) -> Endpoint:
    return Endpoint(name, "GET", path, idempotent=True)


def _change(name: str, method: Method, path: str) -> Endpoint:
    return Endpoint(name, method, path, idempotent=False)


CATALOGUE: Mapping[str, Endpoint] = MappingProxyType(
    {
        e.name: e
        for e in (
            _read("users.me", "/users/me"),
            _read("teams.list", "/teams/list"),
            _read("projects.list", "/projects/list"),
            _read("environments.list", "/environments/list"),
            _change("environments.delete", "DELETE", "/environments/delete"),
            _read("services.list", "/services/list"),
            _read("service_groups.list", "/service_groups/list"),
            _read("deployments.list", "/deployments/list"),
            _read("replicas.list", "/replicas/list"),
            _read("replicas.health", "/replicas/health"),
            _change("replicas.restart", "PUT", "/replicas/restart"),
            _read("volumes.list", "/volumes/list"),
            _read("variables.list", "/variables/list"),
            _change("variables.update", "POST", "/variables/update"),
            _change("variables.delete", "DELETE", "/variables/delete"),
            _read("webhooks.list", "/webhooks/list"),
            _read("buckets.list", "/storage/s3/list"),
            _read("buckets.get", "/storage/s3/get"),
            _read("templates.list", "/templates/list"),
            _read("api_keys.list", "/api_keys/list"),
        )
    }
)
"""Every endpoint by name: spec part 4, docs/spec/api-facts.md, and the simulator's
`/api_keys/list`."""


def _spellings() -> dict[str, str]:
    """Every accepted spelling of every catalogue name -> the name."""
    found: dict[str, str] = {}
    for name in CATALOGUE:
        group, verb = name.split(".")
        for spelling in (name, f"{group}_{verb}", f"{verb}_{group}"):
            found[spelling] = name
    return found


SPELLINGS: Mapping[str, str] = MappingProxyType(_spellings())


def endpoint_overrides(table: Mapping[str, object]) -> dict[str, object]:
    """`table` (a TOML `[endpoints]` section) keyed by catalogue names.

    Accepts `"replicas.list"` (quoted), `replicas.list` (a bare dotted key, which TOML reads
    as a nested table), `replicas_list` and `list_replicas`. An unknown name, or one name
    given twice, is a `ConfigError` that lists the names there are.

    >>> endpoint_overrides({"list_teams": "/t", "replicas": {"health": "/h"}})
    {'teams.list': '/t', 'replicas.health': '/h'}
    """
    flat: list[tuple[str, object]] = []
    for key, value in table.items():
        if isinstance(value, dict):
            flat += [(f"{key}.{verb}", path) for verb, path in value.items()]
        else:
            flat.append((key, value))
    found: dict[str, object] = {}
    for key, value in flat:
        name = SPELLINGS.get(key)
        if name is None:
            close = difflib.get_close_matches(key, list(SPELLINGS), n=1)
            hint = f"did you mean {SPELLINGS[close[0]]!r}? " if close else ""
            raise ConfigError(
                f"unknown endpoint name {key!r} in endpoint overrides; {hint}write one of "
                f'{", ".join(sorted(CATALOGUE))} (as "teams.list" = "/path" or '
                'teams_list = "/path")',
                setting="endpoints",
            )
        if name in found:
            raise ConfigError(
                f"endpoint {name} is overridden twice (as {key!r} and another spelling); keep one",
                setting="endpoints",
            )
        found[name] = value
    return found


def resolve_endpoints(overrides: Mapping[str, str]) -> dict[str, Endpoint]:
    """Return the catalogue with `overrides` (name -> path) applied.

    >>> resolve_endpoints({"teams.list": "/v2/teams/list"})["teams.list"].path
    '/v2/teams/list'
    """
    resolved = dict(CATALOGUE)
    for name, path in endpoint_overrides(overrides).items():
        if not isinstance(path, str) or not path.startswith("/") or "://" in path:
            raise ConfigError(
                f"endpoint override {name}={path!r} must be a path starting with '/' "
                "(the base URL carries the host and any prefix)",
                setting="endpoints",
            )
        resolved[name] = replace(CATALOGUE[name], path=path)
    return resolved
