"""The crawl against the simulator: every table, schema-exact rows, counts, no repeated GET."""

from __future__ import annotations

import gc
from collections import Counter
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pytest
from collect_world import CountingTransport, Crawled, crawl_world

from toolkit.api import CATALOGUE
from toolkit.collect import CrawlOptions, Planner
from toolkit.collect.aliases import FieldAliases
from toolkit.sim.history import deployments as sim_deployments
from toolkit.snapshot.redaction import Fingerprinter
from toolkit.snapshot.schema import SNAPSHOT_AT, SNAPSHOT_ID
from toolkit.snapshot.schema_tables import SNAPSHOT_TABLES, TABLES
from toolkit.snapshot.validation import to_arrow

if TYPE_CHECKING:
    import httpx

    from toolkit.sim import Simulator, SimulatorServer


def test_every_table_gets_rows(admin_crawl: Crawled) -> None:
    verified_mode_only = {"credential_probes"}  # filled by CrawlOptions(verify_scope=True)
    empty = [name for name in SNAPSHOT_TABLES if not admin_crawl.rows[name]]
    assert set(empty) == verified_mode_only


def test_row_keys_are_exactly_the_declared_columns(admin_crawl: Crawled) -> None:
    for name, rows in admin_crawl.rows.items():
        declared = [c for c in TABLES[name].column_names if c not in (SNAPSHOT_ID, SNAPSHOT_AT)]
        for row in rows:
            assert list(row) == declared, name


def test_rows_pass_the_writers_validation(admin_crawl: Crawled, viewer_crawl: Crawled) -> None:
    at = datetime.now(UTC)
    for crawled in (admin_crawl, viewer_crawl):
        for name, rows in crawled.rows.items():
            assert to_arrow(TABLES[name], rows, "0" * 32, at).num_rows == len(rows)


def test_counts_agree_with_the_simulator(sim: Simulator, admin_crawl: Crawled) -> None:
    world, rows = sim.world, admin_crawl.rows
    assert len(rows["teams"]) == len(world.teams)
    assert len(rows["projects"]) == len(world.projects)
    assert len(rows["environments"]) == len(world.environments)
    assert len(rows["services"]) == len(world.services)
    assert len(rows["volumes"]) == len(world.volumes)
    assert len(rows["webhooks"]) == len(world.webhooks)
    assert len(rows["s3_buckets"]) == len(world.buckets)
    assert len(rows["templates"]) == len(world.templates)
    assert len(rows["service_groups"]) == len(world.groups)
    assert len(rows["variables"]) == sum(len(v) for v in world.variables.values())
    assert len(rows["replicas"]) == sum(s.replicas for s in world.services.values())
    assert len(rows["replica_health"]) == len(world.services)
    history = sum(min(len(sim_deployments(s)), 20) for s in world.services.values())
    assert len(rows["deployments"]) == history
    assert len({r["id"] for r in rows["deployments"]}) == history
    assert admin_crawl.output.result.status == "complete"


def test_no_get_is_made_twice(admin_crawl: Crawled) -> None:
    repeated = {key: n for key, n in admin_crawl.counts.items() if n > 1}
    assert repeated == {}
    result = admin_crawl.output.result
    audited = 2  # /users/me of "limited" and "revoked", through their own clients
    assert sum(admin_crawl.counts.values()) + audited == result.calls == result.min_calls


def test_the_plan_equals_the_calls_made(admin_crawl: Crawled) -> None:
    planned = Planner(fingerprints=Fingerprinter(b"k" * 16)).plan(admin_crawl.rows)
    as_sent = {
        (CATALOGUE[c.endpoint].path, tuple(sorted((k, str(v)) for k, v in c.params)))
        for c in planned
    }
    made = set(admin_crawl.counts) - {("/users/me", ())}
    assert as_sent == made


def test_aggregated_levels_are_used(sim: Simulator, admin_crawl: Crawled) -> None:
    by_path: Counter[tuple[str, str | None]] = Counter()
    for path, query in admin_crawl.counts:
        by_path[(path, dict(query).get("type"))] += 1
    world = sim.world
    teams, projects, envs = len(world.teams), len(world.projects), len(world.environments)
    assert by_path[("/replicas/list", "environment")] == envs
    assert by_path[("/volumes/list", "environment")] == envs
    assert ("/replicas/list", "service") not in by_path
    assert by_path[("/variables/list", "team")] == teams
    assert by_path[("/variables/list", "project")] == projects
    assert by_path[("/variables/list", "environment")] == envs
    assert by_path[("/variables/list", "service")] == len(world.services)
    assert by_path[("/webhooks/list", "team")] == teams
    assert by_path[("/webhooks/list", "project")] == projects
    assert by_path[("/storage/s3/list", None)] == teams
    assert by_path[("/templates/list", None)] == 1


def test_critical_path_is_the_hierarchy_plus_one(admin_crawl: Crawled) -> None:
    # teams -> projects -> environments -> services -> deployments
    assert admin_crawl.output.result.critical_path == 5


class SendLog(CountingTransport):
    """Writes each request's endpoint to `log` as it is sent."""

    def __init__(self, log: list[str]) -> None:
        super().__init__()
        self.log = log

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.log.append(f"send {_ENDPOINTS[request.url.path]}")
        return await super().handle_async_request(request)


_ENDPOINTS = {entry.path: name for name, entry in CATALOGUE.items()}


def test_a_worker_sends_its_next_request_before_mapping_its_last_answer(
    server: SimulatorServer, sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The answer's mapping runs while the next request is on the wire, not before it: one
    worker, `users.me` then `teams.list` queued, and the second sent before the first is
    mapped. Every answer is still mapped: the crawl is the same."""
    log: list[str] = []
    normalise = FieldAliases.normalise

    def logged(self: FieldAliases, endpoint: str, payload: Any) -> Any:
        log.append(f"map {endpoint}")
        return normalise(self, endpoint, payload)

    monkeypatch.setattr(FieldAliases, "normalise", logged)
    crawled = crawl_world(server, sim.keys["admin"], transport=SendLog(log), concurrency=1)
    assert log[:3] == ["send users.me", "send teams.list", "map users.me"]
    result = crawled.output.result
    assert result.status == "complete" and result.calls == result.min_calls
    mapped = Counter(e.removeprefix("map ") for e in log if e.startswith("map "))
    assert mapped == Counter(e.removeprefix("send ") for e in log if e.startswith("send "))
    assert len(crawled.rows["services"]) == len(sim.world.services)


class FreezeWatch(CountingTransport):
    """Notes, at each request, how many objects the garbage collector has set aside."""

    def __init__(self) -> None:
        super().__init__()
        self.frozen: list[int] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.frozen.append(gc.get_freeze_count())
        return await super().handle_async_request(request)


def test_the_objects_alive_before_a_crawl_are_left_out_of_its_full_collections(
    server: SimulatorServer, sim: Simulator
) -> None:
    """A full collection stops the event loop while it walks every object: during the
    crawl it leaves the older ones (the imports, the caller's) alone, and after the crawl
    they are the collector's again; a process that froze objects itself keeps them so."""
    assert gc.get_freeze_count() == 0
    watch = FreezeWatch()
    crawl_world(server, sim.keys["admin"], transport=watch)
    assert min(watch.frozen) > 0 and gc.get_freeze_count() == 0
    gc.freeze()
    try:
        mine = gc.get_freeze_count()
        watch = FreezeWatch()
        crawl_world(server, sim.keys["admin"], transport=watch)
        # no more set aside than the process did (fewer as some of them are freed)
        assert max(watch.frozen) <= mine and 0 < gc.get_freeze_count() <= mine
    finally:
        gc.unfreeze()


def test_deployment_depth_follows_the_cursor(server: SimulatorServer, sim: Simulator) -> None:
    crawled = crawl_world(server, sim.keys["admin"], options=CrawlOptions(deployment_depth=3))
    ranked = [r for r in crawled.rows["deployments"] if r["history_rank"] is not None]
    ranks = Counter(r["service_id"] for r in ranked)
    assert max(ranks.values()) == 3
    pages = [q for (path, q) in crawled.counts if path == "/deployments/list"]
    assert all(dict(q)["per_page"] == "3" for q in pages)
    deep = max(sim.world.services.values(), key=lambda s: len(sim_deployments(s)))
    depth = len(sim_deployments(deep))
    crawled = crawl_world(server, sim.keys["admin"], options=CrawlOptions(deployment_depth=depth))
    mine = [r for r in crawled.rows["deployments"] if r["service_id"] == deep.id]
    assert sorted(r["history_rank"] for r in mine) == list(range(depth))


def test_deployment_flags_come_from_the_service(admin_crawl: Crawled) -> None:
    rows = admin_crawl.rows
    for service in rows["services"]:
        mine = {r["id"]: r for r in rows["deployments"] if r["service_id"] == service["id"]}
        for which in ("current", "last", "last_successful"):
            ref = service[f"{which}_deployment_id"]
            flagged = [i for i, r in mine.items() if r[f"is_{which}"]]
            assert flagged == ([ref] if ref else [])


def test_credentials_cover_every_configured_credential(admin_crawl: Crawled) -> None:
    rows = {r["name"]: r for r in admin_crawl.rows["credentials"]}
    assert set(rows) == {"default", "limited", "revoked"}
    assert rows["default"]["role"] == "admin"
    assert rows["limited"]["access"] == "limited"
    assert rows["revoked"]["role"] is None and rows["revoked"]["problems"]
    assert {r["credential_name"] for r in admin_crawl.rows["credential_resources"]} == {"limited"}
    assert all(len(r["token_fingerprint"]) == 64 for r in rows.values())
    # a refused audited credential is recorded, but the snapshot stays complete
    assert admin_crawl.output.result.status == "complete"


def test_progress_is_shown_on_a_terminal(admin_crawl: Crawled) -> None:
    assert "calls" in admin_crawl.progress and "errors" in admin_crawl.progress


@pytest.mark.parametrize("level", ["team", "project"])
def test_other_aggregation_levels_give_the_same_rows(
    server: SimulatorServer, sim: Simulator, admin_crawl: Crawled, level: str
) -> None:
    options = CrawlOptions(replica_level=level, volume_level=level)  # type: ignore[arg-type]
    crawled = crawl_world(server, sim.keys["admin"], options=options)
    for table in ("replicas", "volumes"):
        assert _keys(crawled.rows[table]) == _keys(admin_crawl.rows[table])
    assert not crawled.output.result.errors


def _keys(rows: list[dict[str, object]]) -> list[tuple[object, ...]]:
    return sorted((r.get("id"), r.get("service_id"), r.get("runtime_name")) for r in rows)
