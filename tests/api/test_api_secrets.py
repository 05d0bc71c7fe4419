"""The token never shows: not in a repr, a message, a traceback or a log line."""

from __future__ import annotations

import logging
import traceback
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from toolkit.api import ClientConfig, PlatformError, Secret

if TYPE_CHECKING:
    from collections.abc import Callable

pytestmark = pytest.mark.anyio


def scenarios(token: str) -> dict[str, Callable[[httpx.Request], httpx.Response]]:
    """Hostile or broken answers, several of which echo the token back."""

    def error(status: int, type_: str, message: str, **extra: Any):
        body = {"type": type_, "status": status, "message": message, **extra}
        return lambda request: httpx.Response(status, json=body)

    def raw(status: int, content: str, content_type: str = "text/plain"):
        headers = {"content-type": content_type}
        return lambda request: httpx.Response(status, content=content.encode(), headers=headers)

    def network(exc: Exception):
        def handler(request: httpx.Request) -> httpx.Response:
            raise exc

        return handler

    return {
        "echo in message": error(401, "unauthorized", f"bad token Bearer {token}"),
        "echo in details": error(422, "validation_error", "validation failed", details=[token]),
        "read only": error(403, "forbidden", "This API key is read only"),
        "plain text error": raw(502, f"upstream rejected {token}"),
        "html error": raw(503, f"<html>{token}</html>", "text/html"),
        "plain text success": raw(200, f"hello {token}"),
        "missing envelope": lambda request: httpx.Response(200, json={"token": token}),
        "connect error": network(httpx.ConnectError(f"refused for {token}")),
        "read error": network(httpx.ReadError(f"reset, Authorization: Bearer {token}")),
    }


def assert_hidden(token: str, *texts: str) -> None:
    for text in texts:
        assert token not in text


def test_secret_masks_itself(token) -> None:
    secret = Secret(token)
    assert_hidden(token, str(secret), repr(secret), f"{secret}", f"{secret!r}", str([secret]))
    assert secret.reveal() == token
    assert secret.scrub(f"a {token} b") == "a ******** b"
    assert secret.fingerprint() == Secret(token).fingerprint() != Secret("other").fingerprint()
    assert token not in secret.fingerprint()


def test_config_never_shows_the_token(token) -> None:
    config = ClientConfig(base_url="https://h", token=Secret(token))
    plain = ClientConfig(base_url="https://h", token=token)  # type: ignore[arg-type]
    assert plain.token == config.token
    assert_hidden(token, repr(config), str(config), repr(plain))


def test_clients_never_show_the_token(make_client, make_sync_client, token) -> None:
    handler = scenarios(token)["read only"]
    assert_hidden(token, repr(make_client(handler)), str(make_client(handler)))
    assert_hidden(token, repr(make_sync_client(handler)), str(make_sync_client(handler)))


@pytest.mark.parametrize("name", list(scenarios("x")))
async def test_errors_and_logs_never_show_the_token(make_client, caplog, token, name) -> None:
    sent: list[str] = []
    handler = scenarios(token)[name]

    def spy(request: httpx.Request) -> httpx.Response:
        sent.append(request.headers["authorization"])
        return handler(request)

    client = make_client(spy, max_attempts=2)
    with (
        caplog.at_level(logging.DEBUG, logger="toolkit.api"),
        pytest.raises(PlatformError) as caught,
    ):
        await client.list_teams()
    assert sent and sent[0] == f"Bearer {token}"  # the header was sent
    error = caught.value
    formatted = "".join(traceback.format_exception(error))
    assert_hidden(token, str(error), repr(error), formatted, caplog.text)
    assert_hidden(token, *(str(a) for record in caplog.records for a in (record.args or ())))
    assert any(record.name == "toolkit.api" for record in caplog.records)
    assert "authorization" not in caplog.text.lower()


async def test_debug_log_names_method_endpoint_status_attempt(make_client, caplog) -> None:
    client = make_client(lambda request: httpx.Response(200, json={"data": []}))
    with caplog.at_level(logging.DEBUG, logger="toolkit.api"):
        await client.list_teams()
    (record,) = caplog.records
    assert record.levelno == logging.DEBUG
    message = record.getMessage()
    for words in ("GET", "teams.list", "200", "attempt=1", "latency="):
        assert words in message
