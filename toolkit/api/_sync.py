"""A blocking facade over the async client, for notebooks and scripts.

The async client runs on an event loop in a background thread owned by the facade, so
the facade works from plain code and from inside an already running loop (Jupyter)
without nest_asyncio. Its methods are derived from the async ones, keeping their types.
"""

from __future__ import annotations

import asyncio
import functools
import random
import threading
import time
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Coroutine, Iterator
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, Self, TypeVar, cast

from toolkit.api._client import AsyncPlatformClient
from toolkit.api._config import ClientConfig

if TYPE_CHECKING:
    from collections.abc import Awaitable
    from types import TracebackType

    import httpx

    from toolkit.api._stats import CallStats

P = ParamSpec("P")
T = TypeVar("T")


class _LoopThread:
    """An event loop running forever in a daemon thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._serve, name="toolkit.api-loop", daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run `coro` on the loop thread and wait for its result in the calling thread."""
        if threading.current_thread() is self.thread:
            coro.close()
            raise RuntimeError("the blocking client was called from its own loop thread")
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result()
        except BaseException:
            future.cancel()
            raise

    def stop(self) -> None:
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()
        self.loop.close()


async def _step(iterator: AsyncIterator[T]) -> tuple[bool, T | None]:
    try:
        return True, await anext(iterator)
    except StopAsyncIteration:
        return False, None


def _blocking(
    method: Callable[Concatenate[AsyncPlatformClient, P], Coroutine[Any, Any, T]],
) -> Callable[Concatenate[PlatformClient, P], T]:
    """Turn an async client method into a blocking facade method of the same signature."""

    @functools.wraps(method)
    def call(self: PlatformClient, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self._loop.run(method(self._client, *args, **kwargs))

    return call


def _blocking_iter(
    method: Callable[Concatenate[AsyncPlatformClient, P], AsyncIterator[T]],
) -> Callable[Concatenate[PlatformClient, P], Iterator[T]]:
    """Turn an async generator method into a blocking iterator of the same signature."""

    @functools.wraps(method)
    def call(self: PlatformClient, /, *args: P.args, **kwargs: P.kwargs) -> Iterator[T]:
        return self._iterate(method(self._client, *args, **kwargs))

    return call


class PlatformClient:
    """Blocking client for the platform API; same methods as `AsyncPlatformClient`.

    >>> with PlatformClient(ClientConfig.from_env()) as client:   # doctest: +SKIP
    ...     teams = client.list_teams()
    ...     client.stats().as_dict()["requests"]
    1

    Works in a Jupyter cell too: the requests run on the facade's own event loop thread.
    Close it (or use `with`) to stop that thread.
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
        self._client = AsyncPlatformClient(
            config, transport=transport, sleep=sleep, rng=rng, clock=clock
        )
        self._loop = _LoopThread()
        weakref.finalize(self, self._loop.stop)

    @classmethod
    def from_env(cls, **overrides: Any) -> PlatformClient:
        """A client configured from `PLATFORM_API_URL` and `PLATFORM_API_KEY`."""
        return cls(ClientConfig.from_env(**overrides))

    @property
    def config(self) -> ClientConfig:
        return self._client.config

    def stats(self) -> CallStats:
        """A snapshot of this client's call statistics."""
        return self._client.stats()

    def reset_stats(self) -> None:
        self._client.reset_stats()

    def close(self) -> None:
        """Close the HTTP connections and stop the loop thread. Safe to call twice."""
        if not self._loop.loop.is_closed():
            self._loop.run(self._client.aclose())
            self._loop.stop()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(base_url={self.config.base_url!r}, token={self.config.token!r})"
        )

    def _iterate(self, iterator: AsyncIterator[T]) -> Iterator[T]:
        try:
            while True:
                more, item = self._loop.run(_step(iterator))
                if not more:
                    return
                yield cast("T", item)
        finally:
            if isinstance(iterator, AsyncGenerator) and not self._loop.loop.is_closed():
                self._loop.run(iterator.aclose())

    me = _blocking(AsyncPlatformClient.me)
    list_teams = _blocking(AsyncPlatformClient.list_teams)
    list_projects = _blocking(AsyncPlatformClient.list_projects)
    list_environments = _blocking(AsyncPlatformClient.list_environments)
    list_services = _blocking(AsyncPlatformClient.list_services)
    list_service_groups = _blocking(AsyncPlatformClient.list_service_groups)
    delete_environment = _blocking(AsyncPlatformClient.delete_environment)
    list_deployments = _blocking(AsyncPlatformClient.list_deployments)
    iter_deployments = _blocking_iter(AsyncPlatformClient.iter_deployments)
    list_replicas = _blocking(AsyncPlatformClient.list_replicas)
    replica_health = _blocking(AsyncPlatformClient.replica_health)
    restart_replicas = _blocking(AsyncPlatformClient.restart_replicas)
    list_volumes = _blocking(AsyncPlatformClient.list_volumes)
    list_variables = _blocking(AsyncPlatformClient.list_variables)
    upsert_variables = _blocking(AsyncPlatformClient.upsert_variables)
    delete_variables = _blocking(AsyncPlatformClient.delete_variables)
    list_webhooks = _blocking(AsyncPlatformClient.list_webhooks)
    list_buckets = _blocking(AsyncPlatformClient.list_buckets)
    get_bucket = _blocking(AsyncPlatformClient.get_bucket)
    list_templates = _blocking(AsyncPlatformClient.list_templates)
    list_api_keys = _blocking(AsyncPlatformClient.list_api_keys)
