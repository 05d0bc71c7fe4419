"""The runtime checks (resources, replicas, deployments, volumes, backups) on a simulated platform.

Two snapshots of one seeded world, a simulated day apart, are taken through the real client
and store; each check then runs over the whole history, and the planted problems of
`toolkit.sim.planted` must be in alarm in the newest snapshot while planted resources that
are healthy in that respect must not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest
from audit_fixtures import alarmed_in_last_snapshot

from toolkit.audit.check_file import BUILTIN_CHECKS, discover_checks
from toolkit.audit.check_run import install_views, run_check
from toolkit.config import Credential, Settings
from toolkit.pipeline.snapshot_job import take_snapshot
from toolkit.sim import Simulator, SimulatorServer
from toolkit.snapshot import Store

if TYPE_CHECKING:
    from collections.abc import Iterator

    import pyarrow as pa

AREAS = {"resource-limits", "replicas", "deployments", "volumes", "backups"}
CHECKS = {spec.id: spec for spec in discover_checks([BUILTIN_CHECKS]) if spec.area in AREAS}
TOKEN_ENV = "AUDIT_SIM_RUNTIME_KEY"

# check id -> (planted names that must be in alarm, planted names that must not be)
EXPECTED: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "RES001": (("service_no_limits",), ("service_html", "service_crashing")),
    "RES002": (("service_no_limits",), ("service_html", "service_crashing")),
    "RES003": (("service_no_limits",), ("service_html", "service_crashing")),
    "RES004": (("service_requests_above_limits",), ("service_html", "service_no_limits")),
    "RES005": ((), ("service_html", "service_requests_above_limits")),
    "RES006": (("service_oom",), ("service_html", "service_no_limits")),
    "REP001": (("service_crashing",), ("service_html", "service_no_limits")),
    "REP002": (("service_oom",), ("service_html", "service_no_limits")),
    "REP003": (("service_restarts",), ("service_html", "service_no_limits")),
    "REP004": (("service_one_replica",), ("service_crashing",)),
    "REP005": (("service_public_no_health",), ("service_template_outdated",)),
    "DEP001": ((), ("service_crashing", "service_html")),
    "DEP002": ((), ("service_html",)),
    "DEP003": ((), ()),
    "VOL001": (("volume_near_full",), ("volume_pending_resize", "volume_unattached")),
    "VOL002": (("volume_unattached",), ("volume_near_full", "volume_pending_resize")),
    "VOL003": (("volume_pending_resize",), ("volume_near_full", "volume_unattached")),
    "BAK001": (("service_no_backup",), ()),
    "BAK002": ((), ()),
}


@dataclass(frozen=True)
class World:
    """The simulator's planted ids and the results of every runtime check on its store."""

    planted: dict[str, str]
    results: dict[str, pa.Table]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    sim = Simulator(seed=7, services=40)
    store_url = str(tmp_path_factory.mktemp("sim-runtime") / "store")
    with pytest.MonkeyPatch.context() as env, SimulatorServer(sim) as server:
        env.setenv(TOKEN_ENV, sim.keys["admin"])
        env.setenv("PLATFORM_AUDIT_HMAC_KEY", "sim-runtime-test-hmac-key")
        settings = Settings(
            base_url=server.base_url,
            credentials={"default": Credential(name="default", token_env=TOKEN_ENV)},
            store_url=store_url,
            rate_per_minute=None,
        )
        take_snapshot(settings, as_of=sim.now)
        sim.advance(24)
        take_snapshot(settings, as_of=sim.now)
    con = Store.open(store_url).duckdb()
    install_views(con)
    yield World(dict(sim.planted), {cid: run_check(con, spec) for cid, spec in CHECKS.items()})
    con.close()


def test_expectations_cover_every_runtime_check() -> None:
    assert set(EXPECTED) == set(CHECKS)


def test_history_has_two_snapshots(world: World) -> None:
    snapshots = {r["snapshot_id"] for r in world.results["RES002"].to_pylist()}
    assert len(snapshots) == 2


@pytest.mark.parametrize("check_id", sorted(EXPECTED))
def test_planted_problems_alarm_and_healthy_resources_do_not(world: World, check_id: str) -> None:
    result = world.results[check_id]
    rows = result.to_pylist()
    assert rows, f"{check_id} examined nothing in the simulated world"
    assert {r["status"] for r in rows} <= {"alarm", "ok"}
    assert all(r["reason"] for r in rows), f"{check_id} returned a row without a reason"
    alarms = alarmed_in_last_snapshot(result)
    must, must_not = EXPECTED[check_id]
    for name in must:
        assert world.planted[name] in alarms, f"{check_id}: planted {name} is not in alarm"
    for name in must_not:
        assert world.planted[name] not in alarms, f"{check_id}: healthy {name} is in alarm"
