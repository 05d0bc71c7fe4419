"""A planned API read: endpoint name plus the exact parameters the client sends.

A `Call` is a value (hashable, comparable), so the crawl can tell that two calls are the
same GET and make it once, and a benchmark can count the calls a plan needs. `fetch` runs
it through the client's typed method, which owns retries and limits.

>>> Call.of("variables.list", type="team", team_id="t1").query()
{'team_id': 't1', 'type': 'team'}
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolkit.api import AsyncPlatformClient

__all__ = ["Call"]

Fetch = Callable[["AsyncPlatformClient", dict[str, Any]], Coroutine[Any, Any, Any]]
_IDS = ("team_id", "project_id", "environment_id", "service_id")


def _ids(p: dict[str, Any], *names: str) -> list[str]:
    return [p[name] for name in names]


def _scoped(p: dict[str, Any]) -> dict[str, Any]:
    return {name: p[name] for name in _IDS if name in p}


_FETCH: dict[str, Fetch] = {
    "users.me": lambda c, p: c.me(),
    "teams.list": lambda c, p: c.list_teams(),
    "projects.list": lambda c, p: c.list_projects(p["team_id"]),
    "environments.list": lambda c, p: c.list_environments(*_ids(p, "team_id", "project_id")),
    "services.list": lambda c, p: c.list_services(*_ids(p, *_IDS[:3])),
    "service_groups.list": lambda c, p: c.list_service_groups(*_ids(p, *_IDS[:3])),
    "deployments.list": lambda c, p: c.list_deployments(
        *_ids(p, *_IDS), per_page=p["per_page"], cursor=p.get("cursor")
    ),
    "replicas.list": lambda c, p: c.list_replicas(p["type"], **_scoped(p)),
    "replicas.health": lambda c, p: c.replica_health(*_ids(p, *_IDS)),
    "volumes.list": lambda c, p: c.list_volumes(p["type"], **_scoped(p)),
    "variables.list": lambda c, p: c.list_variables(p["type"], **_scoped(p)),
    "webhooks.list": lambda c, p: c.list_webhooks(p["type"], **_scoped(p)),
    "buckets.list": lambda c, p: c.list_buckets(p["team_id"]),
    "templates.list": lambda c, p: c.list_templates(),
}
READ_ENDPOINTS = frozenset(_FETCH)
"""The catalogue endpoints a crawl reads (it never changes anything)."""


@dataclass(frozen=True, slots=True)
class Call:
    """One GET: catalogue endpoint name and parameters (sorted, Nones left out)."""

    endpoint: str
    params: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def of(cls, endpoint: str, **params: Any) -> Call:
        """Build a call; parameters that are None are not sent."""
        if endpoint not in _FETCH:
            raise ValueError(f"the crawl does not read {endpoint!r}; known: {sorted(_FETCH)}")
        return cls(endpoint, tuple(sorted((k, v) for k, v in params.items() if v is not None)))

    def query(self) -> dict[str, Any]:
        """The parameters as a dict (what travels in the query string)."""
        return dict(self.params)

    def fetch(self, client: AsyncPlatformClient) -> Coroutine[Any, Any, Any]:
        """Run the call through the client's typed method (retries and limits included)."""
        return _FETCH[self.endpoint](client, self.query())

    def __str__(self) -> str:
        args = " ".join(f"{k}={v}" for k, v in self.params)
        return f"GET {self.endpoint}" + (f" {args}" if args else "")
