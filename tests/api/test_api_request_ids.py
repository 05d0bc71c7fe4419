"""A request id is the server's text: the client logs, raises and hands on only a plain one."""

from __future__ import annotations

import logging

import httpx
import pytest

from toolkit.api import Conflict, MalformedResponse

pytestmark = pytest.mark.anyio

SECRET = "CANARYreqid0secret0value"
HOSTILE = [
    f"https://robot:{SECRET}@registry.example/x",
    f"token={SECRET}",
    f"req-1\nINFO forged line {SECRET}",
    "r" * 129 + SECRET,
]


@pytest.mark.parametrize("hostile", HOSTILE)
async def test_a_hostile_request_id_is_neither_logged_nor_raised(
    make_client, caplog: pytest.LogCaptureFixture, hostile: str
) -> None:
    caplog.set_level(logging.DEBUG)
    header = hostile.replace("\n", " ")  # a header cannot carry a line break

    def handler(request: httpx.Request) -> httpx.Response:
        body = {"type": "conflict", "status": 409, "message": "taken", "request_id": hostile}
        return httpx.Response(409, json=body, headers={"X-Request-Id": header})

    client = make_client(handler)
    with pytest.raises(Conflict) as caught:
        await client.list_teams()
    assert caught.value.request_id == "***"
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "request_id=***" in logged
    assert SECRET not in logged and SECRET not in str(caught.value)


async def test_a_hostile_header_is_masked_on_a_success_too(
    make_client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)

    def handler(request: httpx.Request) -> httpx.Response:
        headers = {"X-Request-Id": f"sig={SECRET}"}
        return httpx.Response(200, content=b'{"data": {"id": "x"}}', headers=headers)

    client = make_client(handler)
    with pytest.raises(MalformedResponse) as caught:
        await client.list_teams()
    assert caught.value.request_id == "***"
    assert SECRET not in "\n".join(r.getMessage() for r in caplog.records)


async def test_a_plain_request_id_is_kept(make_client) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        body = {"type": "conflict", "status": 409, "message": "taken"}
        return httpx.Response(409, json=body, headers={"X-Request-Id": "req:7f3a-01.b_2"})

    with pytest.raises(Conflict) as caught:
        await make_client(handler).list_teams()
    assert caught.value.request_id == "req:7f3a-01.b_2"
