"""The world: planted problems at the smallest size, canaries, determinism, the clock, scale."""

from __future__ import annotations

import re
import resource
import time
from typing import TYPE_CHECKING, Any

import pytest
from live_api import service_ids

from toolkit.sim import Simulator
from toolkit.sim.vocabulary import HTML_NAME, HTML_PROJECT_NAME

if TYPE_CHECKING:
    from live_api import Api, Fresh


def _service(api: Api, sim: Simulator, name: str) -> dict[str, Any]:
    ids = service_ids(sim, sim.planted[name])
    env = {k: ids[k] for k in ("team_id", "project_id", "environment_id")}
    return next(s for s in api.data("/services/list", **env) if s["id"] == ids["service_id"])


def test_five_service_world_has_every_service_problem(fresh: Fresh) -> None:
    sim, admin = fresh.sim, fresh.api("admin")
    assert len(sim.world.services) == 5
    web = _service(admin, sim, "service_no_limits")
    assert set(web["config"]["resources"].values()) == {-1}
    assert web["config"]["is_public"] and web["config"]["health_check"] is None
    assert web["config"]["replicas"] == 1
    assert any(p["is_nodeport"] for p in web["config"]["ports"])
    worker = _service(admin, sim, "service_privileged")
    limits = worker["config"]["resources"]
    assert limits["memory_requests_megabytes"] > limits["memory_limits_megabytes"]
    assert worker["config"]["security_context"]["privileged"] is True
    assert {"SYS_ADMIN", "NET_ADMIN"} <= set(
        worker["config"]["security_context"]["capabilities"]["add"]
    )
    assert worker["current_deployment"]["crashing_reasons"]
    health = admin.data("/replicas/health", **service_ids(sim, worker["id"]))
    assert health["health"] == "crashing"
    assert any(e["type"] == "oom_killed" for p in health["replicas"] for e in p["events"])
    db = _service(admin, sim, "service_database")
    assert db["config"]["backup_schedule"] == "" and db["config"]["s3_backup_bucket_id"] is None
    assert db["config"]["protected_variables"] == ["POSTGRES_PASSWORD", "DATABASE_URL"]
    outdated = _service(admin, sim, "service_template_outdated")
    current = {t["id"]: t["version"] for t in admin.data("/templates/list")}
    assert outdated["template"]["version"] < current[outdated["template"]["id"]]
    assert _service(admin, sim, "service_html")["name"] == HTML_NAME


def test_five_service_world_has_every_other_problem(fresh: Fresh) -> None:
    sim, admin, ids = fresh.sim, fresh.api("admin"), fresh.sim.planted
    team = ids["team"]
    volumes = {v["id"]: v for v in admin.data("/volumes/list", type="team", team_id=team)}
    near_full = volumes[ids["volume_near_full"]]
    assert near_full["used_gb"] / near_full["capacity_gb"] > 0.85
    assert volumes[ids["volume_unattached"]]["mount_status"] == "unattached"
    assert volumes[ids["volume_pending_resize"]]["is_pending_resize"] is True
    env_values = []
    for env_key in ("env_production", "env_staging"):
        env = sim.world.environments[ids[env_key]]
        query = {"team_id": team, "project_id": env.project_id, "environment_id": env.id}
        found = admin.data("/variables/list", type="environment", **query)["variables"]
        env_values.append({v["name"]: v["value"] for v in found}["PAYMENT_API_SECRET"])
    assert env_values[0] == env_values[1]
    projects = {p["id"]: p["name"] for p in admin.data("/projects/list", team_id=team)}
    assert projects[ids["project_html"]] == HTML_PROJECT_NAME
    hooks = admin.data("/webhooks/list", type="team", team_id=team)
    for project_id in projects:
        hooks += admin.data("/webhooks/list", type="project", team_id=team, project_id=project_id)
    urls = {h["id"]: h["url"] for h in hooks}
    assert urls[ids["webhook_http"]].startswith("http://")
    assert "@" in urls[ids["webhook_userinfo"]] and "?token=" in urls[ids["webhook_token"]]
    assert "10.0." in urls[ids["webhook_private"]] and "127.0.0.1" in urls[ids["webhook_loopback"]]
    assert "<img" in urls[ids["webhook_html"]]
    keys = fresh.api("session").data("/api_keys/list")
    scopes = {(k["role"], k["access"], tuple(r["type"] for r in k["resources"])) for k in keys}
    assert {("editor", "limited", ("project",)), ("viewer", "limited", ("environment",))} <= scopes
    assert any(k["expires_at"] is None for k in keys)


def test_canaries_mark_every_secret(fresh: Fresh) -> None:
    sim = fresh.sim
    canaries = sim.canaries()
    assert set(sim.keys.values()) <= canaries
    for bucket in sim.world.buckets.values():
        assert bucket.secret_key in canaries
    for owned in sim.world.variables.values():
        for variable in owned.values():
            if "${{" not in variable.value:
                assert any(c in variable.value for c in canaries if c.startswith("CANARY"))
    assert len({c for c in canaries if c.startswith("CANARY")}) >= 20


@pytest.mark.parametrize("seed", [1, 2, 99])
def test_every_size_and_seed_plants_the_same_names(seed: int) -> None:
    small, large = Simulator(seed=seed, services=5), Simulator(seed=seed, services=120)
    assert set(small.planted) == set(large.planted)
    assert len(set(small.planted.values())) > 20
    assert len(large.world.services) == 120


def test_a_database_is_named_after_what_it_runs() -> None:
    # else a report reads "Database mysql (mongodb) has no backups", which looks like a bug
    sim = Simulator(seed=3, services=300)
    sim.advance(hours=72)  # services created later too
    databases = [s for s in sim.world.services.values() if s.kind == "database"]
    assert len({s.database_type for s in databases}) == 4
    planted = set(sim.planted.values())
    misnamed = [
        (s.name, s.database_type)
        for s in databases
        if s.id not in planted and re.sub(r"-\d+$", "", s.name) != s.database_type
    ]
    assert not misnamed


def _fingerprint(sim: Simulator) -> list[Any]:
    services = [(s.id, s.name, s.cpu, s.memory, s.crashing) for s in sim.world.services.values()]
    variables = sorted(
        (k, n, v.value) for k, vs in sim.world.variables.items() for n, v in vs.items()
    )
    volumes = [(v.id, v.used_gb) for v in sim.world.volumes.values()]
    return [services, variables, volumes, sorted(sim.keys.values())]


def test_same_seed_same_world_and_same_evolution() -> None:
    one, two = Simulator(seed=21, services=60), Simulator(seed=21, services=60)
    assert _fingerprint(one) == _fingerprint(two)
    assert _fingerprint(one) != _fingerprint(Simulator(seed=22, services=60))
    for sim in (one, two):
        sim.advance(hours=12)
        sim.advance(hours=36)
    assert _fingerprint(one) == _fingerprint(two)


def test_advance_changes_deployments_secrets_and_volumes() -> None:
    sim = Simulator(seed=5, services=5)
    before = _fingerprint(sim)
    deployments_before = sum(len(s.new_deployments) for s in sim.world.services.values())
    sim.advance(hours=24)
    after = _fingerprint(sim)
    assert sum(len(s.new_deployments) for s in sim.world.services.values()) > deployments_before
    assert before[1] != after[1], "a secret value should have rotated"
    used = dict(before[2])
    assert all(gb >= used.get(vid, 0) for vid, gb in after[2])
    assert any(gb > used.get(vid, 0) for vid, gb in after[2])
    assert sim.now.isoformat() == "2026-01-02T00:00:00+00:00"
    assert len(sim.world.services) == 6


def test_thousand_services_build_fast() -> None:
    started = time.perf_counter()
    sim = Simulator(seed=1, services=1000)
    assert time.perf_counter() - started < 2.0
    assert len(sim.world.services) == 1000
    kinds = {s.kind for s in sim.world.services.values()}
    assert kinds == {"gitprovider", "container-image", "database"}


@pytest.mark.slow
def test_fifty_thousand_services_fit_in_time_and_memory() -> None:
    started = time.perf_counter()
    sim = Simulator(seed=1, services=50_000)
    assert time.perf_counter() - started < 60
    assert len(sim.world.services) == 50_000
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss < 2 * 1024 * 1024  # KiB on Linux
    assert set(Simulator(seed=1, services=5).planted) == set(sim.planted)
