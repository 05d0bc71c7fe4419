"""Error answers and bodies become the right exception of the one tree."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from toolkit.api import (
    ApiError,
    BadRequest,
    Conflict,
    EndpointMissing,
    Forbidden,
    InternalError,
    MalformedResponse,
    NetworkError,
    NotFound,
    RateLimited,
    ReadOnlyKey,
    SessionOnlyEndpoint,
    Unauthorized,
    UpstreamError,
    ValidationFailed,
)

pytestmark = pytest.mark.anyio


def error_body(status: int, type_: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"type": type_, "status": status, "message": message, **extra}


def answer(status: int, body: Any = None, **kwargs: Any):
    def handler(request: httpx.Request) -> httpx.Response:
        if isinstance(body, bytes):
            return httpx.Response(status, content=body, **kwargs)
        return httpx.Response(status, json=body, **kwargs)

    return handler


@pytest.mark.parametrize(
    ("status", "type_", "cls"),
    [
        (400, "bad_request", BadRequest),
        (401, "unauthorized", Unauthorized),
        (403, "forbidden", Forbidden),
        (404, "not_found", NotFound),
        (409, "conflict", Conflict),
        (422, "validation_error", ValidationFailed),
        (429, "rate_limited", RateLimited),
        (500, "internal_error", InternalError),
        (502, "error", UpstreamError),
        (503, "error", UpstreamError),
        (504, "error", UpstreamError),
    ],
)
async def test_error_object_maps_to_its_class(make_client, ids, status, type_, cls) -> None:
    body = error_body(status, type_, "it failed", details=["a", "b"], request_id="req-body")
    client = make_client(answer(status, body), max_attempts=1)
    with pytest.raises(cls) as caught:
        await client.list_projects(ids["team_id"])  # names a resource: a 404 may be scope
    error = caught.value
    assert type(error) is cls
    assert (error.status, error.type, error.message) == (status, type_, "it failed")
    assert error.details == ("a", "b")
    assert error.request_id == "req-body"
    assert error.endpoint == "projects.list"
    text = str(error)
    assert "projects.list" in text
    assert f"status {status}" in text
    assert "req-body" in text
    assert "Next: " in text


async def test_validation_details_name_the_field(make_client) -> None:
    detail = "expected required property team_id to be present (query.team_id: null)"
    body = error_body(422, "validation_error", "validation failed", details=[detail])
    client = make_client(answer(422, body))
    with pytest.raises(ValidationFailed, match="team_id") as caught:
        await client.list_teams()
    assert caught.value.details == (detail,)


@pytest.mark.parametrize(
    ("message", "cls"),
    [
        ("This API key is read only", ReadOnlyKey),
        ("This endpoint cannot be used with an API key", SessionOnlyEndpoint),
        ("forbidden", Forbidden),
    ],
)
async def test_forbidden_variants(make_client, message, cls) -> None:
    client = make_client(answer(403, error_body(403, "forbidden", message)))
    with pytest.raises(Forbidden) as caught:
        await client.list_api_keys()
    assert type(caught.value) is cls
    assert caught.value.status == 403


async def test_read_only_and_session_hints_differ(make_client) -> None:
    read_only = make_client(answer(403, error_body(403, "forbidden", "This API key is read only")))
    with pytest.raises(ReadOnlyKey) as caught:
        await read_only.list_teams()
    assert "editor or admin key" in str(caught.value)
    session = make_client(
        answer(403, error_body(403, "forbidden", "This endpoint cannot be used with an API key"))
    )
    with pytest.raises(SessionOnlyEndpoint) as caught_session:
        await session.list_api_keys()
    assert "browser sessions" in str(caught_session.value)


async def test_unauthorized_says_what_to_do(make_client) -> None:
    client = make_client(answer(401, error_body(401, "unauthorized", "invalid token")))
    with pytest.raises(Unauthorized) as caught:
        await client.me()
    assert "create a new key and set PLATFORM_API_KEY" in str(caught.value)


async def test_not_found_on_me_suggests_the_prefix(make_client) -> None:
    # /users/me names no resource: its 404 is a missing endpoint, never "not visible"
    client = make_client(answer(404, error_body(404, "not_found", "not found")))
    with pytest.raises(EndpointMissing) as caught:
        await client.me()
    assert "/api/go prefix" in str(caught.value)


async def test_not_found_with_error_object_talks_about_scope(make_client, ids) -> None:
    client = make_client(answer(404, error_body(404, "not_found", "project not found")))
    with pytest.raises(NotFound) as caught:
        await client.list_projects(ids["team_id"])
    assert "outside the key's limits" in str(caught.value)


@pytest.mark.parametrize(
    ("type_", "status", "cls"),
    [
        ("brand_new_type", 404, NotFound),
        ("brand_new_type", 503, UpstreamError),
        (None, 409, Conflict),
        ("conflict", 400, Conflict),
        ("teapot", 418, ApiError),
    ],
)
async def test_unknown_types_map_by_status(make_client, ids, type_, status, cls) -> None:
    body = {"status": status, "message": "odd"} | ({"type": type_} if type_ else {})
    client = make_client(answer(status, body), max_attempts=1)
    with pytest.raises(ApiError) as caught:
        await client.list_projects(ids["team_id"])
    assert type(caught.value) is cls
    assert caught.value.status == status
    if type_:
        assert caught.value.type == type_


async def test_request_id_falls_back_to_the_header(make_client) -> None:
    body = error_body(409, "conflict", "name taken")
    client = make_client(answer(409, body, headers={"X-Request-Id": "req-header"}))
    with pytest.raises(Conflict) as caught:
        await client.list_teams()
    assert caught.value.request_id == "req-header"


@pytest.mark.parametrize(
    ("status", "content", "headers", "cls", "words"),
    [
        (502, b"<html><h1>Bad Gateway</h1></html>", {"content-type": "text/html"}, UpstreamError,
         "HTML page"),
        (500, b"", {}, InternalError, "empty body"),
        (404, b'{"type": "not_fo', {"content-type": "application/json"}, EndpointMissing,
         "truncated"),
        (404, b"404 page not found", {"content-type": "text/plain"}, EndpointMissing,
         "404 page not found"),
    ],
)  # fmt: skip
async def test_unreadable_error_bodies_still_give_status_and_request_id(
    make_client, status, content, headers, cls, words
) -> None:
    headers = {**headers, "X-Request-Id": "req-raw"}
    client = make_client(answer(status, content, headers=headers), max_attempts=1)
    with pytest.raises(ApiError) as caught:
        await client.list_teams()
    error = caught.value
    assert type(error) is cls
    assert error.status == status
    assert error.request_id == "req-raw"
    assert words in error.message
    assert "req-raw" in str(error)


async def test_non_json_404_suggests_the_prefix(make_client) -> None:
    client = make_client(answer(404, b"404 page not found", headers={"content-type": "text/plain"}))
    with pytest.raises(EndpointMissing) as caught:
        await client.list_teams()
    assert "/api/go prefix" in str(caught.value)


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b'{"data": [{"id": "a"', "truncated or invalid JSON"),
        (b"<html>maintenance</html>", "HTML page"),
        (b"", "empty body"),
        (b'{"teams": []}', "no `data` envelope"),
        (b"[1, 2]", "no `data` envelope"),
        (b'{"data": {"id": "x"}}', "should be a list"),
        (b'{"data": [1, 2]}', "should hold objects"),
    ],
)
async def test_malformed_success_bodies(make_client, content, words) -> None:
    client = make_client(answer(200, content, headers={"X-Request-Id": "req-ok"}))
    with pytest.raises(MalformedResponse) as caught:
        await client.list_teams()
    error = caught.value
    assert words in error.message
    assert error.status == 200
    assert error.request_id == "req-ok"
    assert "Next: " in str(error)


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (httpx.ConnectError("refused"), "connect"),
        (httpx.ConnectTimeout("slow"), "connect"),
        (httpx.ReadTimeout("slow"), "read"),
        (httpx.ReadError("reset"), "read"),
        (httpx.WriteError("broken pipe"), "write"),
        (httpx.RemoteProtocolError("server disconnected"), "protocol"),
    ],
)
async def test_network_failures_become_network_errors(make_client, exc, kind) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise exc

    client = make_client(handler, max_attempts=2)
    with pytest.raises(NetworkError) as caught:
        await client.list_templates()
    error = caught.value
    assert error.kind == kind
    assert error.status is None
    assert error.attempts == 2
    assert "no response" in str(error)
    assert isinstance(error.__cause__, httpx.TransportError)


@pytest.mark.parametrize(
    ("status", "content", "content_type"),
    [
        (404, b"404 page not found", "text/plain; charset=utf-8"),
        (404, b"<html><body>Not Found</body></html>", "text/html"),
        (404, b'{"detail": "Not Found"}', "application/json"),  # another JSON shape
        (405, b'{"type": "method_not_allowed", "status": 405, "message": "use GET"}',
         "application/json"),
        (501, b"", "text/plain"),
    ],
)  # fmt: skip
async def test_a_server_without_the_endpoint_is_told_apart_from_scope(
    make_client, ids, status, content, content_type
) -> None:
    headers = {"content-type": content_type}
    client = make_client(answer(status, content, headers=headers), max_attempts=1)
    with pytest.raises(EndpointMissing) as caught:
        await client.list_projects(ids["team_id"])
    error = caught.value
    assert not isinstance(error, NotFound)  # never "not visible to the credential"
    assert (error.type, error.status, error.path) == ("endpoint_missing", status, "/projects/list")
    assert error.content_type == content_type
    assert error.setting == '[endpoints] "projects.list"'
    assert '[endpoints] "projects.list"' in str(error) and "/projects/list" in str(error)


async def test_the_error_object_404_on_a_named_resource_is_scope(make_client, ids) -> None:
    body = error_body(404, "not_found", "project not found")  # no request_id, as the platform
    client = make_client(answer(404, body))
    with pytest.raises(NotFound) as caught:
        await client.list_projects(ids["team_id"])
    assert type(caught.value) is NotFound and caught.value.request_id is None


async def test_a_platform_403_without_request_id_stays_forbidden(make_client, ids) -> None:
    body = {"type": "forbidden", "status": 403, "message": "permission denied", "details": []}
    client = make_client(answer(403, body))
    with pytest.raises(Forbidden) as caught:
        await client.list_projects(ids["team_id"])
    assert caught.value.request_id is None and "request_id unknown" in str(caught.value)
