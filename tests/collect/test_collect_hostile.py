"""A crawl always ends, and every call it loses is a recorded failure.

Hostile answers come over real loopback HTTP from `HostileServer` in front of a served
simulator; failures the client cannot produce (a crash, a cancelled worker) are injected
into the crawl's calls. Every crawl here is bounded by `within_s`: a hang fails the test.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import pytest
from collect_world import Crawled, crawl_world
from hostile_server import HostileServer, deep_json, drip

from toolkit.api import AsyncPlatformClient
from toolkit.sim import FaultProfile

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine

    from toolkit.sim import Simulator, SimulatorServer

World = tuple["Simulator", "SimulatorServer"]
WITHIN_S = 60


class Boom(BaseException):
    """Not an `Exception`: what no `except Exception` catches."""


def lost_services(sim: Simulator, crawled: Crawled, endpoint: str = "services.list") -> int:
    """The services of the environments whose `endpoint` call failed."""
    failed = {
        r["environment_id"] for r in crawled.rows["collection_errors"] if r["endpoint"] == endpoint
    }
    return sum(1 for s in sim.world.services.values() if s.environment_id in failed)


def test_a_deeply_nested_service_list_is_a_failed_call(fresh: World) -> None:
    sim, server = fresh
    with HostileServer(upstream=server.base_url) as hostile:
        sent = hostile.route("/services/list", deep_json(100_000), times=2)
        crawled = crawl_world(hostile, sim.keys["admin"], within_s=WITHIN_S)
    result, rows = crawled.output.result, crawled.rows
    assert sent.requests == 2
    assert result.status == "partial"
    errors = [r for r in rows["collection_errors"] if r["endpoint"] == "services.list"]
    assert len(errors) == 2
    for row in errors:
        assert row["error_type"] == "malformed_response" and row["status"] == 200
        assert "nests deeper" in row["message"] and row["environment_id"] is not None
    assert lost_services(sim, crawled) > 0
    assert len(rows["services"]) + lost_services(sim, crawled) == len(sim.world.services)


def test_a_crawl_whose_every_worker_meets_a_deep_body_still_ends(fresh: World) -> None:
    sim, server = fresh
    with HostileServer(upstream=server.base_url) as hostile:
        hostile.route("/services/list", deep_json(100_000))
        crawled = crawl_world(hostile, sim.keys["admin"], concurrency=2, within_s=WITHIN_S)
    assert crawled.output.result.status == "partial"
    assert crawled.rows["services"] == []
    assert lost_services(sim, crawled) == len(sim.world.services)


def failing_list_services(
    monkeypatch: pytest.MonkeyPatch, fail: Callable[[], Coroutine[Any, Any, Any]]
) -> None:
    """Make every `services.list` of the crawl run `fail` instead of a request."""

    def broken(self: AsyncPlatformClient, *ids: str) -> Coroutine[Any, Any, Any]:
        return fail()

    monkeypatch.setattr(AsyncPlatformClient, "list_services", broken)


async def _boom() -> Any:
    raise Boom("CANARYfeedfacefeedface")


async def _recursion() -> Any:
    raise RecursionError("maximum recursion depth exceeded")


async def _stray_cancel() -> Any:
    raise asyncio.CancelledError  # raised inside the call, not a cancellation of the worker


@pytest.mark.parametrize(
    ("fail", "kind"),
    [(_boom, "Boom"), (_recursion, "RecursionError"), (_stray_cancel, "CancelledError")],
)
def test_any_exception_in_a_call_is_a_recorded_failure(
    fresh: World, monkeypatch: pytest.MonkeyPatch, fail: Any, kind: str
) -> None:
    sim, server = fresh
    failing_list_services(monkeypatch, fail)
    crawled = crawl_world(server, sim.keys["admin"], concurrency=2, within_s=WITHIN_S)
    result, rows = crawled.output.result, crawled.rows
    assert result.status == "partial"
    errors = [r for r in rows["collection_errors"] if r["endpoint"] == "services.list"]
    assert errors and len(errors) == len(sim.world.environments)
    for row in errors:
        assert row["error_type"] == "client_error"
        assert kind in row["message"] and "CANARY" not in row["message"]
    assert rows["services"] == []
    assert len(rows["projects"]) == len(sim.world.projects)  # the rest was collected


def test_a_crawl_whose_workers_are_all_cancelled_ends_partial(
    fresh: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def cancel_my_worker() -> Any:
        task = asyncio.current_task()
        assert task is not None
        task.cancel()
        await asyncio.sleep(0)

    sim, server = fresh
    failing_list_services(monkeypatch, cancel_my_worker)
    crawled = crawl_world(server, sim.keys["admin"], concurrency=2, within_s=WITHIN_S)
    result, rows = crawled.output.result, crawled.rows
    assert result.status == "partial"
    messages = [r["message"] for r in rows["collection_errors"]]
    assert sum("CancelledError" in m for m in messages) == 2  # the two workers' own calls
    assert any("every crawl worker had ended" in m for m in messages)  # the rest of the queue


def test_a_slow_drip_ends_as_a_failed_call_at_the_deadline(fresh: World) -> None:
    sim, server = fresh
    with HostileServer(upstream=server.base_url) as hostile:
        sent = hostile.route("/templates/list", drip(b'{"data": []}' * 100, every_s=0.05))
        crawled = crawl_world(hostile, sim.keys["admin"], deadline_s=1.0, within_s=WITHIN_S)
    assert sent.requests == 1
    (row,) = crawled.rows["collection_errors"]
    assert row["endpoint"] == "templates.list" and row["error_type"] == "deadline_exceeded"
    assert crawled.output.result.status == "partial"
    assert len(crawled.rows["services"]) == len(sim.world.services)


def test_truncated_and_malformed_bodies_are_retried_to_a_complete_snapshot(fresh: World) -> None:
    sim, server = fresh
    paths = ("/services/list", "/variables/list", "/deployments/list")
    sim.set_faults(FaultProfile(rate_truncate=0.25, rate_malformed=0.1, seed=11, paths=paths))
    crawled = crawl_world(server, sim.keys["admin"], max_attempts=8, within_s=WITHIN_S)
    result = crawled.output.result
    assert result.status == "complete", crawled.rows["collection_errors"]
    assert len(crawled.rows["services"]) == len(sim.world.services)
    assert result.stats.retries.get("unreadable_body", 0) > 0
