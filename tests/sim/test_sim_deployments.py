"""Deployment history: cursor pagination without duplicates or gaps, newest first."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from live_api import service_ids

if TYPE_CHECKING:
    from live_api import Api, ApiFactory, Fresh

    from toolkit.sim import Simulator


def _walk(api: Api, ids: dict[str, str], per_page: int) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []
    cursor = ""
    for _ in range(200):
        params = {**ids, "per_page": str(per_page)}
        if cursor:
            params["cursor"] = cursor
        page = api.data("/deployments/list", **params)
        assert len(page["deployments"]) <= per_page
        seen.extend(page["deployments"])
        if not page["metadata"]["has_next"]:
            assert page["metadata"]["next"] is None
            return seen
        cursor = page["metadata"]["next"]
    raise AssertionError("pagination never ended")


def test_pages_cover_history_exactly_once(api: ApiFactory, sim: Simulator) -> None:
    service = max(sim.world.services.values(), key=lambda s: s.history_depth)
    ids = service_ids(sim, service.id)
    everything = api("admin").data("/deployments/list", **ids, per_page="100")["deployments"]
    assert len(everything) == service.history_depth >= 3
    paged = _walk(api("admin"), ids, per_page=2)
    assert [d["id"] for d in paged] == [d["id"] for d in everything]
    assert len({d["id"] for d in paged}) == len(paged)
    stamps = [d["created_at"] for d in paged]
    assert stamps == sorted(stamps, reverse=True)


def test_exactly_one_live_deployment(api: ApiFactory, sim: Simulator) -> None:
    ids = service_ids(sim, sim.planted["service_crashing"])
    page = api("admin").data("/deployments/list", **ids, per_page="100")
    live = [d for d in page["deployments"] if d["status"] in {"active", "crashing"}]
    assert len(live) == 1
    assert page["current_deployment"]["id"] == live[0]["id"]
    assert page["current_deployment"]["crashing_reasons"]
    assert page["current_deployment"]["replica_restarts"] == 27
    assert {e["type"] for e in page["current_deployment"]["replica_events"]} == {
        "oom_killed",
        "crash_loop_back_off",
    }


def test_bad_page_parameters_are_validation_errors(api: ApiFactory, sim: Simulator) -> None:
    ids = service_ids(sim, sim.planted["service_crashing"])
    response = api("admin").get("/deployments/list", **ids, per_page="500", cursor="yesterday")
    assert response.status_code == 422
    assert response.json()["details"] == [
        'expected property per_page to be an integer from 1 to 100 (query.per_page: "500")',
        'expected property cursor to be an ISO 8601 timestamp (query.cursor: "yesterday")',
    ]


def test_new_deployments_arrive_on_top_without_breaking_a_walk(fresh: Fresh) -> None:
    sim, admin = fresh.sim, fresh.api("admin")
    every = [service_ids(sim, service_id) for service_id in sim.world.services]
    firsts = [admin.data("/deployments/list", **ids, per_page="1") for ids in every]
    befores = [_walk(admin, ids, per_page=3) for ids in every]
    sim.advance(hours=24 * 7)
    grown = 0
    for ids, first, before in zip(every, firsts, befores, strict=True):
        after = _walk(admin, ids, per_page=3)
        assert [d["id"] for d in after[-len(before) :]] == [d["id"] for d in before]
        grown += len(after) > len(before)
        cursor = first["metadata"]["next"]
        resumed = admin.data("/deployments/list", **ids, per_page="100", cursor=cursor)
        assert [d["id"] for d in resumed["deployments"]] == [d["id"] for d in before[1:]]
    assert grown >= 1


def test_cursor_at_the_edge_of_the_calendar_is_not_a_crash(api: ApiFactory, sim: Simulator) -> None:
    ids = service_ids(sim, sim.planted["service_crashing"])
    early = api("admin").get("/deployments/list", **ids, cursor="0001-01-01T00:00:00+05:00")
    assert early.status_code == 422
    old = api("admin").data("/deployments/list", **ids, cursor="0638-01-24T12:34:22Z")
    assert old["deployments"] == [] and old["metadata"]["previous"] == "0638-01-24T12:34:22Z"
