"""Partial failure is data; a refused credential stops the crawl; drift never crashes it."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

import pytest
from collect_world import Crawled, crawl_world

from toolkit.collect import CollectionAborted
from toolkit.sim import FaultProfile
from toolkit.sim.faults import UNKNOWN_ENUM_VALUE, UNKNOWN_FIELD

if TYPE_CHECKING:
    from toolkit.sim import Simulator, SimulatorServer

World = tuple["Simulator", "SimulatorServer"]


def test_failed_calls_become_rows_and_mark_the_result_partial(fresh: World) -> None:
    sim, server = fresh
    paths = ("/variables/list", "/replicas/health", "/volumes/list")
    sim.set_faults(FaultProfile(rate_5xx=0.5, seed=3, paths=paths))
    crawled = crawl_world(server, sim.keys["admin"], max_attempts=1)
    result = crawled.output.result
    errors = crawled.rows["collection_errors"]
    assert result.status == "partial"
    assert errors and len(errors) == len(result.errors)
    sent = sum(n for (path, _), n in crawled.counts.items() if path in paths)
    assert 0 < len(errors) < sent
    for row in errors:
        assert row["endpoint"] in {"variables.list", "replicas.health", "volumes.list"}
        assert row["status"] in {502, 503, 504}
        assert row["error_type"] == "error"
        assert row["request_id"] and row["attempts"] == 1
        assert row["team_id"] is not None
    # everything else was still collected
    assert len(crawled.rows["services"]) == len(sim.world.services)
    assert "errors" in crawled.progress


def test_retries_recover_what_one_attempt_loses(fresh: World) -> None:
    sim, server = fresh
    sim.set_faults(FaultProfile(rate_5xx=0.3, seed=4, paths=("/variables/list",)))
    crawled = crawl_world(server, sim.keys["admin"], max_attempts=6)
    assert crawled.output.result.status == "complete"
    assert crawled.output.result.calls > crawled.output.result.min_calls


def test_a_404_is_recorded_as_not_visible(fresh: World) -> None:
    sim, server = fresh
    sim.set_faults(FaultProfile(fail_first=2, fail_status=404, paths=("/services/list",)))
    crawled = crawl_world(server, sim.keys["admin"])
    errors = crawled.rows["collection_errors"]
    assert len(errors) == 2
    for row in errors:
        assert row["status"] == 404 and row["error_type"] == "not_found"
        assert row["message"].startswith("not visible to credential")
        assert row["environment_id"] is not None
    assert crawled.output.result.status == "complete"


def test_a_limited_key_sees_its_project_only(sim: Simulator, limited_crawl: Crawled) -> None:
    rows = limited_crawl.rows
    scope = {(r["resource_type"], r["resource_id"]) for r in rows["credential_resources"]}
    assert {kind for kind, _ in scope} == {"project"}
    (_, project_id), *_ = scope
    expected = [s for s in sim.world.services.values() if s.project_id == project_id]
    assert len(rows["services"]) == len(expected) > 0
    assert {r["id"] for r in rows["projects"]} == {project_id}
    assert rows["s3_buckets"] == []  # the team is navigable, not in scope
    assert limited_crawl.output.result.status == "complete"


@pytest.mark.parametrize("key", ["revoked", "expired"])
def test_a_refused_credential_aborts_at_once(
    sim: Simulator, server: SimulatorServer, key: str
) -> None:
    started = time.monotonic()
    with pytest.raises(CollectionAborted) as caught:
        crawl_world(server, sim.keys[key])
    assert time.monotonic() - started < 5
    error = caught.value
    assert error.status == 401 and error.credential == "default"
    assert "revoked or expired" in str(error) and "Nothing was committed" in str(error)
    assert sim.keys[key] not in str(error)


def test_drift_keeps_unknown_fields_and_values(fresh: World) -> None:
    sim, server = fresh
    sim.set_faults("drift")
    crawled = crawl_world(server, sim.keys["admin"])
    rows = crawled.rows
    assert crawled.output.result.status == "complete", rows["collection_errors"]
    assert len(rows["services"]) == len(sim.world.services)
    for table in ("teams", "services", "deployments", "volumes", "webhooks", "templates"):
        for row in rows[table]:
            extra = json.loads(row["extra"])
            assert UNKNOWN_FIELD in extra, table
    service_extra = json.loads(rows["services"][0]["extra"])
    assert UNKNOWN_FIELD in service_extra["config"]
    assert {r["status"] for r in rows["deployments"]} == {UNKNOWN_ENUM_VALUE}
    assert {r["type"] for r in rows["services"]} == {UNKNOWN_ENUM_VALUE}
    assert {r["protocol"] for r in rows["service_ports"]} == {UNKNOWN_ENUM_VALUE}


def test_drift_never_merges_two_replica_events(fresh: World) -> None:
    # This world has a service whose OOM kill and crash loop start together: under drift
    # both events get one unknown type, and they must still be two rows.
    sim, server = fresh
    clean = crawl_world(server, sim.keys["admin"]).rows["replica_events"]
    sim.set_faults("drift")
    drifted = crawl_world(server, sim.keys["admin"]).rows["replica_events"]

    def events(rows: list[dict[str, object]]) -> list[tuple[object, ...]]:
        return sorted((r["source"], r["replica_name"], r["reason"], r["count"]) for r in rows)

    assert {r["type"] for r in drifted} == {UNKNOWN_ENUM_VALUE}
    starts = [(r["service_id"], r["source"], r["replica_name"], r["first_seen"]) for r in clean]
    assert len(set(starts)) < len(starts)  # two events of one replica start together
    assert events(drifted) == events(clean)


def test_a_list_repeating_its_records_is_kept_once_and_partial(fresh: World) -> None:
    sim, server = fresh
    clean = crawl_world(server, sim.keys["admin"])
    sim.set_faults(FaultProfile(rate_duplicate=1.0, paths=("/services/list",)))
    crawled = crawl_world(server, sim.keys["admin"])
    assert crawled.output.result.status == "partial"
    services = crawled.rows["services"]
    assert len(services) == len({r["id"] for r in services}) == len(sim.world.services)
    for table, rows in clean.rows.items():
        if table != "collection_errors":
            assert len(crawled.rows[table]) == len(rows), table
    errors = [e for e in crawled.rows["collection_errors"] if e["table_name"] == "services"]
    assert sorted(e["service_id"] for e in errors) == sorted(sim.world.services)
    for error in errors:
        assert error["error_type"] == "duplicate_id" and error["endpoint"] == "services.list"
        assert error["message"] == (
            f"services: 2 rows share the key id={error['service_id']}; kept the first "
            "received, dropped 1 (they differ in extra)"
        )
    assert len(crawled.output.result.errors) == len(crawled.rows["collection_errors"])


@pytest.mark.parametrize("crawl_of", ["admin_crawl", "viewer_crawl", "limited_crawl"])
def test_a_normal_crawl_has_no_repeated_key(crawl_of: str, request: pytest.FixtureRequest) -> None:
    crawled: Crawled = request.getfixturevalue(crawl_of)
    assert crawled.output.result.status == "complete"
    assert not [e for e in crawled.rows["collection_errors"] if e["error_type"] == "duplicate_id"]


def test_a_mapping_bug_is_recorded_not_raised(
    fresh: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    import toolkit.collect.plan as plan

    def broken(payload: object) -> dict[str, list[dict[str, object]]]:
        raise ValueError("CANARYfeedfacefeedface")

    monkeypatch.setattr(plan, "map_templates", broken)
    sim, server = fresh
    crawled = crawl_world(server, sim.keys["admin"])
    (row,) = crawled.rows["collection_errors"]
    assert row["endpoint"] == "templates.list" and row["error_type"] == "mapping_error"
    assert "ValueError" in row["message"] and "CANARY" not in row["message"]
    assert crawled.output.result.status == "partial"
    assert len(crawled.rows["services"]) == len(sim.world.services)
