"""The blocking facade: same methods, works from plain code and inside a running loop."""

from __future__ import annotations

import asyncio
import inspect
import threading

import httpx
import pytest

from toolkit.api import AsyncPlatformClient, NotFound, PlatformClient


def teams(request: httpx.Request) -> httpx.Response:
    if request.url.path == "/teams/list":
        return httpx.Response(200, json={"data": [{"id": "t1", "name": "core"}]})
    return httpx.Response(404, json={"type": "not_found", "status": 404, "message": "gone"})


def public_async_methods() -> set[str]:
    return {
        name
        for name, member in vars(AsyncPlatformClient).items()
        if not name.startswith("_")
        and (inspect.iscoroutinefunction(member) or inspect.isasyncgenfunction(member))
    }


def test_every_async_method_has_a_sync_twin() -> None:
    names = public_async_methods() - {"aclose"}
    assert len(names) == 21
    for name in names:
        twin = getattr(PlatformClient, name)
        assert not inspect.iscoroutinefunction(twin), name
        assert not inspect.isasyncgenfunction(twin), name
        assert inspect.signature(twin) == inspect.signature(getattr(AsyncPlatformClient, name))
        assert twin.__doc__ == getattr(AsyncPlatformClient, name).__doc__


def test_sync_client_from_plain_code(make_sync_client) -> None:
    client = make_sync_client(teams)
    assert client.list_teams() == [{"id": "t1", "name": "core"}]
    with pytest.raises(NotFound):
        client.list_projects("11111111-1111-4111-8111-111111111111")
    assert client.stats().requests == 2


def test_sync_client_inside_a_running_event_loop(make_sync_client) -> None:
    client = make_sync_client(teams)

    async def notebook_cell() -> list[dict[str, str]]:
        asyncio.get_running_loop()  # a loop is running here, as in Jupyter
        return client.list_teams()

    assert asyncio.run(notebook_cell()) == [{"id": "t1", "name": "core"}]


def test_requests_run_on_the_facade_thread(make_sync_client) -> None:
    threads: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        threads.append(threading.current_thread().name)
        return httpx.Response(200, json={"data": []})

    make_sync_client(handler).list_templates()
    assert threads == ["toolkit.api-loop"]


def test_sync_iter_deployments(make_sync_client, ids) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        cursor = request.url.params.get("cursor")
        batch = ["d1", "d2"] if cursor is None else ["d3"]
        meta = {"has_next": cursor is None, "next": "c1" if cursor is None else None}
        data = {"deployments": [{"id": i} for i in batch], "metadata": meta}
        return httpx.Response(200, json={"data": data})

    client = make_sync_client(handler)
    assert [d["id"] for d in client.iter_deployments(*ids.values(), limit=None)] == [
        "d1",
        "d2",
        "d3",
    ]
    iterator = client.iter_deployments(*ids.values(), limit=None)
    assert next(iterator)["id"] == "d1"
    iterator.close()  # an abandoned iteration closes its async generator


def test_close_stops_the_thread_and_is_idempotent(make_sync_client) -> None:
    client = make_sync_client(teams)
    client.list_teams()
    thread = client._loop.thread
    client.close()
    client.close()
    assert not thread.is_alive()


def test_context_manager_closes(fake_time) -> None:
    from toolkit.api import ClientConfig, Secret

    config = ClientConfig(base_url="http://h", token=Secret("plat_x"), rate_per_minute=None)
    with PlatformClient(config, transport=httpx.MockTransport(teams)) as client:
        assert client.list_teams()[0]["id"] == "t1"
    assert not client._loop.thread.is_alive()
