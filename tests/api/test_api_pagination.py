"""Deployment pages and cursors; the typed values of the answers that need structure."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from toolkit.api import DeploymentPage, MalformedResponse, VariableList

pytestmark = pytest.mark.anyio

PAGES: dict[str | None, dict[str, Any]] = {
    None: {"ids": ["d1", "d2", "d3"], "next": "c1", "previous": None},
    "c1": {"ids": ["d4", "d5", "d6"], "next": "c2", "previous": "c0"},
    "c2": {"ids": ["d7"], "next": None, "previous": "c1"},
}


class Pages:
    """Serve PAGES by cursor and record the cursors and page sizes asked for."""

    def __init__(self, pages: dict[str | None, dict[str, Any]] = PAGES) -> None:
        self.pages = pages
        self.asked: list[tuple[str | None, str | None]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        cursor = request.url.params.get("cursor")
        self.asked.append((cursor, request.url.params.get("per_page")))
        page = self.pages[cursor]
        data = {
            "deployments": [{"id": i, "status": "active"} for i in page["ids"]],
            "current_deployment": {"id": "d1"},
            "metadata": {
                "has_next": page["next"] is not None,
                "next": page["next"],
                "previous": page["previous"],
            },
        }
        return httpx.Response(200, json={"data": data})


async def test_list_deployments_returns_a_typed_page(make_client, ids) -> None:
    client = make_client(Pages())
    page = await client.list_deployments(*ids.values(), per_page=3)
    assert isinstance(page, DeploymentPage)
    assert [d["id"] for d in page.deployments] == ["d1", "d2", "d3"]
    assert page.current_deployment == {"id": "d1"}
    assert (page.has_next, page.next_cursor, page.previous_cursor) == (True, "c1", None)


async def test_iter_deployments_follows_every_cursor(make_client, ids) -> None:
    pages = Pages()
    client = make_client(pages)
    seen = [d["id"] async for d in client.iter_deployments(*ids.values(), limit=None, per_page=3)]
    assert seen == ["d1", "d2", "d3", "d4", "d5", "d6", "d7"]
    assert [cursor for cursor, _ in pages.asked] == [None, "c1", "c2"]


async def test_iter_deployments_stops_at_the_limit(make_client, ids) -> None:
    pages = Pages()
    client = make_client(pages)
    seen = [d["id"] async for d in client.iter_deployments(*ids.values(), limit=4)]
    assert seen == ["d1", "d2", "d3", "d4"]
    assert pages.asked == [(None, "4"), ("c1", "4")]  # page 3 never fetched


async def test_iter_deployments_default_limit_is_20(make_client, ids) -> None:
    pages = Pages()
    client = make_client(pages)
    seen = [d async for d in client.iter_deployments(*ids.values())]
    assert len(seen) == 7
    assert pages.asked[0] == (None, "20")


async def test_a_cursor_that_does_not_advance_is_malformed(make_client, ids) -> None:
    looping = {
        None: {"ids": ["d1"], "next": "c1", "previous": None},
        "c1": {"ids": ["d2"], "next": "c1", "previous": None},
    }
    client = make_client(Pages(looping))
    with pytest.raises(MalformedResponse, match="does not advance"):
        async for _ in client.iter_deployments(*ids.values(), limit=None):
            pass


async def test_has_next_without_cursor_is_malformed(make_client, ids) -> None:
    data = {"deployments": [], "metadata": {"has_next": True}}
    client = make_client(lambda request: httpx.Response(200, json={"data": data}))
    with pytest.raises(MalformedResponse, match=r"metadata\.next"):
        await client.list_deployments(*ids.values())


async def test_variable_list_is_typed(make_client, ids) -> None:
    variables = [{"name": "A", "value": None, "resolved_value": None, "type": "team"}]
    body = {"data": {"values_redacted": True, "variables": variables}}
    client = make_client(lambda request: httpx.Response(200, json=body))
    result = await client.list_variables("team", team_id=ids["team_id"])
    assert result == VariableList(values_redacted=True, variables=variables)


async def test_variable_list_without_variables_is_malformed(make_client, ids) -> None:
    body = {"data": {"values_redacted": False}}
    client = make_client(lambda request: httpx.Response(200, json=body))
    with pytest.raises(MalformedResponse, match="`variables` should be a list"):
        await client.list_variables("team", team_id=ids["team_id"])
