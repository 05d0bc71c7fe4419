"""Fault injection as an HTTP client sees it: a tiny Starlette app behind `FaultMiddleware`,
served by uvicorn on loopback, called with httpx."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from toolkit.sim.fault_responses import duplicated
from toolkit.sim.faults import (
    COPY_FIELD,
    PROFILES,
    UNKNOWN_ENUM_VALUE,
    UNKNOWN_FIELD,
    FaultMiddleware,
    FaultProfile,
    resolve_profile,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

    from starlette.requests import Request

ITEM = {
    "id": "0b6f3c1e-8a37-4f55-9a52-3f1f7d1b2c01",
    "team_id": "5d0c1a7e-2b6f-4c9d-8e3a-1f2b3c4d5e6f",
    "name": "api",
    "status": "active",
    "type": "gitprovider",
    "config": {"builder": "buildpack", "ports": [{"port": 80, "protocol": "TCP"}]},
    "events": [{"type": "oom_killed", "count": 2}],
}


@dataclass
class Harness:
    """The served app's knobs: the current profile, a settable clock, a write counter."""

    profile: FaultProfile = field(default_factory=FaultProfile)
    now: float = 1000.0
    writes: int = 0
    base_url: str = ""

    def use(self, **kwargs: Any) -> None:
        self.profile = FaultProfile(**kwargs)


def _app(harness: Harness) -> FaultMiddleware:
    async def items(request: Request) -> JSONResponse:
        if request.method == "POST":
            harness.writes += 1
        return JSONResponse({"data": [ITEM, {**ITEM, "id": "second"}]})

    async def other(request: Request) -> JSONResponse:
        return JSONResponse({"data": {"ok": True}}, headers={"X-Request-Id": "inner-id"})

    async def openapi(request: Request) -> JSONResponse:
        return JSONResponse({"openapi": "3.0.3"})

    routes = [
        Route("/items", items, methods=["GET", "POST"]),
        Route("/other", other),
        Route("/openapi.json", openapi),
    ]
    return FaultMiddleware(
        Starlette(routes=routes), lambda: harness.profile, clock=lambda: harness.now
    )


@pytest.fixture(scope="module")
def served() -> Iterator[Harness]:
    harness = Harness()
    config = uvicorn.Config(
        _app(harness), host="127.0.0.1", port=0, log_config=None, log_level="error"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    harness.base_url = f"http://127.0.0.1:{port}"
    yield harness
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture
def harness(served: Harness) -> Harness:
    served.profile, served.now, served.writes = FaultProfile(), 1000.0, 0
    return served


@pytest.fixture
def client(harness: Harness) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=harness.base_url, timeout=5) as http:
        yield http


def _assert_error(response: httpx.Response, status: int, error_type: str) -> dict[str, Any]:
    assert response.status_code == status
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["type"] == error_type
    assert body["status"] == status
    assert body["message"]
    assert body["request_id"] == response.headers["x-request-id"]
    return body  # type: ignore[no-any-return]


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def _outcome(client: httpx.Client) -> str:
    try:
        response = client.get("/items")
    except httpx.RemoteProtocolError:
        return "drop"
    try:
        body = response.json()
    except ValueError:
        return f"{response.status_code}-broken"
    drifted = UNKNOWN_FIELD in json.dumps(body)
    return f"{response.status_code}{'-drift' if drifted else ''}"


def test_no_faults_pass_through_with_a_request_id(harness: Harness, client: httpx.Client) -> None:
    response = client.get("/items")
    assert response.status_code == 200
    assert response.json() == {"data": [ITEM, {**ITEM, "id": "second"}]}
    assert response.headers["x-request-id"]
    assert client.get("/other").headers.get_list("x-request-id") == ["inner-id"]


def test_latency_delays_every_request(harness: Harness, client: httpx.Client) -> None:
    harness.use(latency_ms=120, latency_jitter_ms=30)
    started = time.monotonic()
    assert client.get("/items").status_code == 200
    assert 0.12 <= time.monotonic() - started < 1.0


def test_429_carries_retry_after_seconds(harness: Harness, client: httpx.Client) -> None:
    harness.use(rate_429=1.0, retry_after_s=7)
    response = client.get("/items")
    _assert_error(response, 429, "rate_limited")
    assert response.headers["retry-after"] == "7"


def test_retry_after_can_be_an_http_date(harness: Harness, client: httpx.Client) -> None:
    harness.use(rate_429=1.0, retry_after_s=30, retry_after_http_date=True)
    response = client.get("/items")
    _assert_error(response, 429, "rate_limited")
    wait = parsedate_to_datetime(response.headers["retry-after"]) - datetime.now(UTC)
    assert 29 <= wait.total_seconds() <= 33


def test_5xx_are_gateway_errors(harness: Harness, client: httpx.Client) -> None:
    harness.use(rate_5xx=1.0, seed=1)
    statuses = set()
    for _ in range(15):
        response = client.get("/items")
        statuses.add(_assert_error(response, response.status_code, "error")["status"])
    assert statuses == {502, 503, 504}


def test_a_drop_is_a_protocol_error_after_the_change_happened(
    harness: Harness, client: httpx.Client
) -> None:
    handler = _Records()
    logging.getLogger("uvicorn.error").addHandler(handler)
    harness.use(rate_drop=1.0)
    try:
        # The server closes the connection mid-body; whether the client reads the early end
        # (incomplete body) or the kernel's reset first is a race under load. Both are a
        # transport error after the write, which the client never retries.
        with pytest.raises(
            (httpx.RemoteProtocolError, httpx.ReadError), match=r"complete message body|reset"
        ):
            client.post("/items", json={"name": "x"})
    finally:
        logging.getLogger("uvicorn.error").removeHandler(handler)
    assert harness.writes == 1  # spec part 7 rule 4: the first attempt may have succeeded
    assert handler.records == []  # a deliberate drop is not logged as a server error
    harness.use()
    assert client.get("/items").status_code == 200  # the client recovers on a new connection


def test_truncated_json_is_a_prefix_of_the_real_body(
    harness: Harness, client: httpx.Client
) -> None:
    full = client.get("/items").content
    harness.use(rate_truncate=1.0)
    response = client.get("/items")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert 0 < len(response.content) < len(full)
    assert full.startswith(response.content)
    with pytest.raises(json.JSONDecodeError):
        response.json()


def test_malformed_bodies_are_200_and_not_json(harness: Harness, client: httpx.Client) -> None:
    harness.use(rate_malformed=1.0, seed=2)
    bodies = set()
    for _ in range(20):
        response = client.get("/items")
        assert response.status_code == 200
        with pytest.raises(ValueError):  # JSONDecodeError or UnicodeDecodeError
            response.json()
        bodies.add(response.content)
    assert len(bodies) >= 3


def test_drift_adds_unknown_fields_and_enum_values_but_keeps_ids(
    harness: Harness, client: httpx.Client
) -> None:
    harness.use(rate_unknown_fields=1.0)
    first, second = client.get("/items").json()["data"]
    for item, item_id in ((first, ITEM["id"]), (second, "second")):
        assert item["id"] == item_id
        assert item["team_id"] == ITEM["team_id"]
        assert item["name"] == "api"
        assert item["status"] == item["type"] == UNKNOWN_ENUM_VALUE
        assert item["config"]["builder"] == UNKNOWN_ENUM_VALUE
        assert item["config"]["ports"][0] == {
            "port": 80,
            "protocol": UNKNOWN_ENUM_VALUE,
            UNKNOWN_FIELD: item[UNKNOWN_FIELD],
        }
        assert item["events"][0]["type"] == UNKNOWN_ENUM_VALUE
        assert UNKNOWN_FIELD in item["config"] and UNKNOWN_FIELD in item["events"][0]


def test_duplicate_lists_every_record_twice_under_its_id(
    harness: Harness, client: httpx.Client
) -> None:
    harness.use(rate_duplicate=1.0)
    items = client.get("/items").json()["data"]
    assert [item["id"] for item in items] == [ITEM["id"], ITEM["id"], "second", "second"]
    assert items[0] == ITEM and items[1] == {**ITEM, COPY_FIELD: 2}
    assert client.get("/other").json() == {"data": {"ok": True}}  # no list: unchanged


def test_duplicate_repeats_the_lists_inside_an_object_answer() -> None:
    body = {"data": {"values_redacted": False, "variables": [{"name": "A"}], "count": 1}}
    data = json.loads(duplicated(json.dumps(body).encode()))["data"]
    assert data["variables"] == [{"name": "A"}, {"name": "A", COPY_FIELD: 2}]
    assert data["values_redacted"] is False and data["count"] == 1
    assert duplicated(b"not json") == b"not json"


def test_openapi_document_and_other_paths_are_never_faulted(
    harness: Harness, client: httpx.Client
) -> None:
    harness.use(rate_5xx=1.0, paths=("/items",))
    assert client.get("/openapi.json").json() == {"openapi": "3.0.3"}
    assert client.get("/other").status_code == 200
    assert client.get("/items").status_code >= 502


def test_same_seed_same_faults_other_seed_other_faults(
    harness: Harness, client: httpx.Client
) -> None:
    mix = {"rate_429": 0.1, "rate_5xx": 0.15, "rate_drop": 0.1, "rate_truncate": 0.1}
    runs = []
    for seed in (11, 11, 12):
        harness.use(
            **mix, rate_malformed=0.1, rate_unknown_fields=0.2, seed=seed
        )  # a new object: fresh state
        runs.append([_outcome(client) for _ in range(30)])
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]
    assert {"200", "200-drift", "200-broken", "drop", "429"} <= set(runs[0] + runs[2])


def test_fail_first_is_deterministic(harness: Harness, client: httpx.Client) -> None:
    harness.use(fail_first=2, fail_status=503, retry_after_s=2)
    for _ in range(2):
        response = client.get("/items")
        _assert_error(response, 503, "error")
        assert response.headers["retry-after"] == "2"
    assert client.get("/items").status_code == 200
    harness.use(fail_first=1, fail_status=404)
    _assert_error(client.get("/items"), 404, "not_found")


def test_rate_limit_is_a_sliding_window_per_minute(harness: Harness, client: httpx.Client) -> None:
    harness.use(rate_limit_per_minute=5)
    for step in range(5):
        harness.now = 1000.0 + step * 10
        assert client.get("/items").status_code == 200
    harness.now = 1045.0
    response = client.get("/items")
    _assert_error(response, 429, "rate_limited")
    assert response.headers["retry-after"] == "15"  # the first request leaves at 1060
    harness.now = 1060.0
    assert client.get("/items").status_code == 200
    _assert_error(client.get("/items"), 429, "rate_limited")


def test_rate_limit_counts_each_client_ip_apart(harness: Harness) -> None:
    """No socket needed: httpx's ASGI transport sets the client address."""
    harness.use(rate_limit_per_minute=2)
    app = _app(harness)

    async def statuses(ip: str, count: int) -> list[int]:
        transport = httpx.ASGITransport(app=app, client=(ip, 4321))
        async with httpx.AsyncClient(transport=transport, base_url="http://sim") as http:
            return [(await http.get("/items")).status_code for _ in range(count)]

    assert asyncio.run(statuses("10.0.0.1", 3)) == [200, 200, 429]
    assert asyncio.run(statuses("10.0.0.2", 2)) == [200, 200]


def test_swapping_the_profile_at_runtime_resets_its_state(
    harness: Harness, client: httpx.Client
) -> None:
    failing = FaultProfile(fail_first=1)
    harness.profile = failing
    assert client.get("/items").status_code == 503
    assert client.get("/items").status_code == 200
    harness.use()
    assert client.get("/items").status_code == 200
    harness.profile = resolve_profile(failing)  # set again: counts from zero
    assert client.get("/items").status_code == 503


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rate_5xx": 1.5}, "rate_5xx=1.5: give a probability between 0 and 1"),
        ({"rate_429": -0.1}, "between 0 and 1"),
        ({"rate_5xx": 0.6, "rate_drop": 0.6}, "add up to 1 or less"),
        ({"latency_ms": -1}, "latency_ms=-1: give 0 (none) or more"),
        ({"fail_status": 200}, "give an error status"),
        ({"rate_limit_per_minute": -5}, "rate_limit_per_minute=-5: give 0 (none) or more"),
        ({"paths": ["services/list"]}, "tuple of path suffixes"),
    ],
)
def test_bad_profiles_say_what_to_do(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        FaultProfile(**kwargs)


def test_resolve_profile_names_and_cli_form() -> None:
    assert set(PROFILES) == {"none", "slow", "flaky", "rate-limited", "chaos", "drift"}
    assert resolve_profile("rate-limited").rate_limit_per_minute == 600
    assert resolve_profile("drift") == PROFILES["drift"]
    assert resolve_profile("drift") is not PROFILES["drift"]
    assert resolve_profile("rate_5xx=0.2,latency_ms=50") == FaultProfile(
        rate_5xx=0.2, latency_ms=50
    )
    flaky = resolve_profile("flaky, seed=3, retry_after_http_date=true")
    assert (flaky.seed, flaky.rate_5xx, flaky.retry_after_http_date) == (3, 0.1, True)
    assert resolve_profile("paths=/services/list|/teams/list").paths == (
        "/services/list",
        "/teams/list",
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("chaotic", "unknown fault profile 'chaotic': use one of none, slow, flaky"),
        ("rate_5xx=0.2,flaky", "unknown fault profile 'flaky'"),
        ("rate_500=0.2", "unknown fault field 'rate_500': use one of latency_ms"),
        ("fail_first=two", "fail_first='two': give a whole number"),
        ("rate_5xx=2", "between 0 and 1"),
    ],
)
def test_resolve_profile_errors_list_the_choices(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        resolve_profile(spec)
