"""The async platform API client: one typed method per endpoint of the catalogue."""

from __future__ import annotations

import asyncio
import random
import time
from typing import TYPE_CHECKING, Any, Self

from toolkit.api._config import ClientConfig
from toolkit.api._exceptions import MalformedResponse
from toolkit.api._models import DeploymentPage, VariableList
from toolkit.api._responses import Reply
from toolkit.api._runner import RequestRunner
from toolkit.api._validation import (
    VOLUME_LEVELS,
    WEBHOOK_LEVELS,
    Scope,
    check_cursor,
    check_limit,
    check_names,
    check_per_page,
    check_variables,
    require_ids,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
    from types import TracebackType

    import httpx

    from toolkit.api._stats import CallStats

JSON = dict[str, Any]


class AsyncPlatformClient:
    """Async client for the platform API, for crawls that run many requests at once.

    Every method validates its arguments locally (raising `InvalidRequest`), sends one
    catalogue request with retries, rate and concurrency limits, and returns the
    unwrapped `data`. Errors are the tree in `toolkit.api._exceptions`.

    >>> async def main() -> None:                                # doctest: +SKIP
    ...     async with AsyncPlatformClient(ClientConfig.from_env()) as client:
    ...         for team in await client.list_teams():
    ...             print(team["name"], len(await client.list_projects(team["id"])))

    `transport`, `sleep`, `rng` and `clock` are for tests (an `httpx.MockTransport`, a
    fake sleep, a fixed random source, a fake monotonic clock).
    """

    def __init__(
        self,
        config: ClientConfig,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        rng: Callable[[], float] = random.random,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._runner = RequestRunner(config, transport=transport, sleep=sleep, rng=rng, clock=clock)

    @classmethod
    def from_env(cls, **overrides: Any) -> AsyncPlatformClient:
        """A client configured from `PLATFORM_API_URL` and `PLATFORM_API_KEY`."""
        return cls(ClientConfig.from_env(**overrides))

    @property
    def config(self) -> ClientConfig:
        return self._runner.config

    def stats(self) -> CallStats:
        """A snapshot of this client's call statistics."""
        return self._runner.stats.snapshot()

    def reset_stats(self) -> None:
        self._runner.stats.reset()

    async def aclose(self) -> None:
        await self._runner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(base_url={self.config.base_url!r}, token={self.config.token!r})"
        )

    # identity and hierarchy

    async def me(self) -> JSON:
        """The calling user and, for an API key, its role and resource limits."""
        return await self._runner.call("users.me", {}, Reply.object)

    async def list_teams(self) -> list[JSON]:
        return await self._runner.call("teams.list", {}, Reply.items)

    async def list_projects(self, team_id: str) -> list[JSON]:
        return await self._runner.call("projects.list", require_ids(team_id=team_id), Reply.items)

    async def list_environments(self, team_id: str, project_id: str) -> list[JSON]:
        ids = require_ids(team_id=team_id, project_id=project_id)
        return await self._runner.call("environments.list", ids, Reply.items)

    async def list_services(self, team_id: str, project_id: str, environment_id: str) -> list[JSON]:
        ids = require_ids(team_id=team_id, project_id=project_id, environment_id=environment_id)
        return await self._runner.call("services.list", ids, Reply.items)

    async def list_service_groups(
        self, team_id: str, project_id: str, environment_id: str
    ) -> list[JSON]:
        ids = require_ids(team_id=team_id, project_id=project_id, environment_id=environment_id)
        return await self._runner.call("service_groups.list", ids, Reply.items)

    async def delete_environment(self, team_id: str, project_id: str, environment_id: str) -> JSON:
        """Permanently delete an environment with its services and volumes (admin only)."""
        ids = require_ids(team_id=team_id, project_id=project_id, environment_id=environment_id)
        return await self._runner.call("environments.delete", ids, Reply.object)

    # deployments

    async def list_deployments(
        self,
        team_id: str,
        project_id: str,
        environment_id: str,
        service_id: str,
        *,
        per_page: int = 50,
        cursor: str | None = None,
    ) -> DeploymentPage:
        """One page of a service's deployment history, newest first."""
        params: dict[str, Any] = require_ids(
            team_id=team_id,
            project_id=project_id,
            environment_id=environment_id,
            service_id=service_id,
        )
        params["per_page"] = check_per_page(per_page)
        if check_cursor(cursor) is not None:
            params["cursor"] = cursor
        return await self._runner.call("deployments.list", params, DeploymentPage.parse)

    async def iter_deployments(
        self,
        team_id: str,
        project_id: str,
        environment_id: str,
        service_id: str,
        *,
        limit: int | None = 20,
        per_page: int | None = None,
    ) -> AsyncIterator[JSON]:
        """Yield up to `limit` deployments (None: all), following the page cursors.

        >>> async for deployment in client.iter_deployments(t, p, e, s, limit=5):  # doctest: +SKIP
        ...     print(deployment["status"])
        """
        limit = check_limit(limit)
        size = per_page if per_page is not None else min(limit or 100, 100)
        ids = (team_id, project_id, environment_id, service_id)
        cursor: str | None = None
        followed: set[str] = set()
        yielded = 0
        while True:
            page = await self.list_deployments(*ids, per_page=size, cursor=cursor)
            for deployment in page.deployments:
                if limit is not None and yielded >= limit:
                    return
                yield deployment
                yielded += 1
            if not page.has_next or (limit is not None and yielded >= limit):
                return
            cursor = _next_cursor(page, followed)

    # replicas

    async def list_replicas(
        self,
        level: str,
        *,
        team_id: str,
        project_id: str | None = None,
        environment_id: str | None = None,
        service_id: str | None = None,
    ) -> list[JSON]:
        """Replicas of a team, project, environment or service, with their health."""
        scope = Scope.of(
            level,
            team_id=team_id,
            project_id=project_id,
            environment_id=environment_id,
            service_id=service_id,
        )
        return await self._runner.call("replicas.list", scope.params(), Reply.items)

    async def replica_health(
        self, team_id: str, project_id: str, environment_id: str, service_id: str
    ) -> JSON:
        ids = require_ids(
            team_id=team_id,
            project_id=project_id,
            environment_id=environment_id,
            service_id=service_id,
        )
        return await self._runner.call("replicas.health", ids, Reply.object)

    async def restart_replicas(
        self, team_id: str, project_id: str, environment_id: str, service_id: str
    ) -> JSON:
        """Roll all replicas of a service. Never repeated after a lost answer."""
        ids = require_ids(
            team_id=team_id,
            project_id=project_id,
            environment_id=environment_id,
            service_id=service_id,
        )
        return await self._runner.call("replicas.restart", ids, Reply.object)

    # volumes, variables, webhooks

    async def list_volumes(
        self,
        level: str,
        *,
        team_id: str,
        project_id: str | None = None,
        environment_id: str | None = None,
    ) -> list[JSON]:
        """Volumes of a team, project or environment (there is no service level)."""
        scope = Scope.of(
            level,
            team_id=team_id,
            project_id=project_id,
            environment_id=environment_id,
            allowed=VOLUME_LEVELS,
        )
        return await self._runner.call("volumes.list", scope.params(), Reply.items)

    async def list_variables(
        self,
        level: str,
        *,
        team_id: str,
        project_id: str | None = None,
        environment_id: str | None = None,
        service_id: str | None = None,
    ) -> VariableList:
        """Variables of one level; values are redacted for viewer keys."""
        scope = Scope.of(
            level,
            team_id=team_id,
            project_id=project_id,
            environment_id=environment_id,
            service_id=service_id,
        )
        return await self._runner.call("variables.list", scope.params(), VariableList.parse)

    async def upsert_variables(
        self,
        level: str,
        *,
        team_id: str,
        project_id: str | None = None,
        environment_id: str | None = None,
        service_id: str | None = None,
        variables: Mapping[str, str],
    ) -> VariableList:
        """Create or update variables by name. Never repeated after a lost answer."""
        scope = Scope.of(
            level,
            team_id=team_id,
            project_id=project_id,
            environment_id=environment_id,
            service_id=service_id,
        )
        body = {**scope.params(), "variables": check_variables(variables)}
        return await self._runner.call("variables.update", body, VariableList.parse)

    async def delete_variables(
        self,
        level: str,
        *,
        team_id: str,
        project_id: str | None = None,
        environment_id: str | None = None,
        service_id: str | None = None,
        names: Sequence[str],
    ) -> VariableList:
        """Delete variables by name; protected variables of a service cannot be deleted."""
        scope = Scope.of(
            level,
            team_id=team_id,
            project_id=project_id,
            environment_id=environment_id,
            service_id=service_id,
        )
        body = {**scope.params(), "variables": [{"name": n} for n in check_names(names)]}
        return await self._runner.call("variables.delete", body, VariableList.parse)

    async def list_webhooks(
        self, level: str, *, team_id: str, project_id: str | None = None
    ) -> list[JSON]:
        """Webhooks of a team or a project (`level` is sent as `type`)."""
        scope = Scope.of(level, team_id=team_id, project_id=project_id, allowed=WEBHOOK_LEVELS)
        return await self._runner.call("webhooks.list", scope.params(), Reply.items)

    # storage, templates, keys

    async def list_buckets(self, team_id: str) -> list[JSON]:
        return await self._runner.call("buckets.list", require_ids(team_id=team_id), Reply.items)

    async def get_bucket(self, team_id: str, bucket_id: str) -> JSON:
        ids = require_ids(team_id=team_id, bucket_id=bucket_id)
        return await self._runner.call(
            "buckets.get", {"id": ids["bucket_id"], "team_id": team_id}, Reply.object
        )

    async def list_templates(self) -> list[JSON]:
        return await self._runner.call("templates.list", {}, Reply.items)

    async def list_api_keys(self) -> list[JSON]:
        """API key records; browser sessions only (an API key gets `SessionOnlyEndpoint`)."""
        return await self._runner.call("api_keys.list", {}, Reply.items)


def _next_cursor(page: DeploymentPage, followed: set[str]) -> str:
    cursor = page.next_cursor
    if cursor is None or cursor in followed:
        raise MalformedResponse(
            f"the deployment cursor {cursor!r} does not advance; stopping to avoid a loop",
            endpoint="deployments.list",
        )
    followed.add(cursor)
    return cursor
