"""The variables, key-scope, webhook, template and security checks against a served simulator.

Three snapshots of one world: an editor collects the first (values fingerprinted), a viewer
the second (values redacted), an editor the third a simulated day later, probing each
audited key's effective scope (`verify_scope`); every other planted key is audited each
time. The planted problems (`Simulator.planted`) must alarm, and the viewer's snapshot must
not raise an alarm the editor's did not (redacted values are not evidence of anything).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections import defaultdict
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import pytest

from toolkit.api import AsyncPlatformClient, ClientConfig, Secret
from toolkit.audit.check_file import BUILTIN_CHECKS, discover_checks
from toolkit.audit.check_run import install_views, run_check
from toolkit.collect import CrawlOptions
from toolkit.collect.scope_probe import probe_scopes
from toolkit.config import load_settings
from toolkit.pipeline.snapshot_job import take_snapshot
from toolkit.sim import Simulator, SimulatorServer
from toolkit.snapshot import Store

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    import duckdb

AREAS = {"variables", "key-scope", "webhooks", "templates", "security"}
CHECKS = {spec.id: spec for spec in discover_checks([BUILTIN_CHECKS]) if spec.area in AREAS}
# Findings of one check: {snapshot_id: {resource_id: status}}.
Findings = dict[str, dict[str, str]]


@dataclasses.dataclass
class Audited:
    sim: Simulator
    base_url: str
    con: duckdb.DuckDBPyConnection
    editor_snapshot: str
    viewer_snapshot: str
    later_snapshot: str
    findings: dict[str, Findings]

    def alarms(self, check_id: str, snapshot: str | None = None) -> set[str]:
        found = self.findings[check_id].get(snapshot or self.editor_snapshot, {})
        return {resource for resource, status in found.items() if status == "alarm"}

    def examined(self, check_id: str, snapshot: str) -> set[str]:
        return set(self.findings[check_id].get(snapshot, {}))


def _snapshot(
    sim: Simulator,
    url: str,
    store: Path,
    collector: str,
    monkeypatch: pytest.MonkeyPatch,
    later: timedelta = timedelta(0),
    options: CrawlOptions | None = None,
) -> str:
    tokens = {**sim.keys, **sim.extra_keys}
    for name, token in tokens.items():
        monkeypatch.setenv(f"SIM_KEY_{name.upper()}", token)
    settings = load_settings(
        base_url=url,
        store_url=str(store),
        token_env=f"SIM_KEY_{collector.upper()}",
        audited={name: f"SIM_KEY_{name.upper()}" for name in tokens if name != collector},
    )
    settings = dataclasses.replace(settings, rate_per_minute=None)
    run = take_snapshot(settings, as_of=sim.now + later, options=options)
    assert run.info.status == "complete", run.result.errors
    return run.info.snapshot_id


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Audited]:
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setenv("PLATFORM_AUDIT_HMAC_KEY", "sim-access-test-hmac-key-0123456789")
    store = tmp_path_factory.mktemp("sim-access") / "store"
    sim = Simulator(seed=7, services=40)
    try:
        with SimulatorServer(sim) as server:
            editor = _snapshot(sim, server.base_url, store, "editor", monkeypatch)
            # the same world, stamped a little later: only the collecting credential differs
            later = timedelta(minutes=30)
            viewer = _snapshot(sim, server.base_url, store, "viewer", monkeypatch, later)
            sim.advance(24)  # the clock moves viewer_env's scope to another environment
            verify = CrawlOptions(verify_scope=True)
            after = _snapshot(sim, server.base_url, store, "editor", monkeypatch, options=verify)
            con = Store.open(str(store)).duckdb()
            install_views(con)
            findings: dict[str, Findings] = {}
            for check_id, spec in CHECKS.items():
                by_snapshot: Findings = defaultdict(dict)
                for row in run_check(con, spec).to_pylist():
                    by_snapshot[row["snapshot_id"]][row["resource_id"]] = row["status"]
                findings[check_id] = dict(by_snapshot)
            yield Audited(sim, server.base_url, con, editor, viewer, after, findings)
    finally:
        monkeypatch.undo()


def _variable(level: str, owner: str, name: str) -> str:
    return f"{level}:{owner}:{name}"


def test_planted_webhooks_alarm(audited: Audited) -> None:
    ids = audited.sim.planted
    assert {ids["webhook_http"], ids["webhook_private"], ids["webhook_loopback"]} <= audited.alarms(
        "WEB001"
    )
    assert audited.alarms("WEB002") == {
        ids["webhook_userinfo"],
        ids["webhook_token"],
        ids["webhook_path_token"],
    }
    assert audited.alarms("WEB003") == {ids["webhook_private"], ids["webhook_loopback"]}


def test_planted_services_alarm(audited: Audited) -> None:
    ids = audited.sim.planted
    assert ids["service_privileged"] in audited.alarms("SEC001")
    assert ids["service_privileged"] in audited.alarms("SEC002")
    assert ids["service_nodeport"] in audited.alarms("SEC003")
    assert ids["service_template_outdated"] in audited.alarms("TPL001")
    assert ids["service_database"] not in audited.alarms("VAR001")  # its managed ones are there


def test_planted_variables_alarm(audited: Audited) -> None:
    ids = audited.sim.planted
    api, web = ids["service_unresolved_refs"], ids["service_no_limits"]
    broken = _variable("service", api, "BROKEN_REF")
    legacy = _variable("service", api, "LEGACY_DB_URL")
    assert {broken, legacy} <= audited.alarms("VAR005")
    assert audited.alarms("VAR006") == {legacy}
    assert _variable("service", web, "ADMIN_PASSWORD") in audited.alarms("VAR004")
    assert audited.alarms("VAR010") == {_variable("service", web, "QUEUE_URL")}
    assert _variable("service", web, "QUEUE_URL") not in audited.alarms("VAR005")  # resolves
    shared = {
        _variable("environment", ids["env_production"], "PAYMENT_API_SECRET"),
        _variable("environment", ids["env_staging"], "PAYMENT_API_SECRET"),
    }
    assert shared <= audited.alarms("VAR007")
    # a JSON Web Token under an innocent name, and the live payment key: found by their value
    innocent = _variable("environment", ids["env_production"], "SEARCH_SETTINGS")
    assert audited.alarms("VAR011") == shared | {innocent}
    assert innocent not in audited.alarms("VAR004")  # no check of names finds it
    # staging's automation references production's database URL: both hold the credential
    crossing = {
        _variable("service", api, "REPORTING_DATABASE_URL"),
        _variable("service", ids["service_database"], "DATABASE_URL"),
    }
    assert crossing <= audited.alarms("VAR007")
    assert audited.alarms("VAR007") == shared | crossing
    assert audited.alarms("VAR009") == set()
    assert audited.alarms("VAR009", audited.viewer_snapshot) == {"variable-values"}


def test_planted_keys_alarm(audited: Audited) -> None:
    assert "admin" in audited.alarms("KEY001")
    assert "admin" in audited.alarms("KEY005")  # never expires
    assert {"revoked", "expired", "session"} <= audited.alarms("KEY008")
    assert {"limited", "ci_deploy"} <= audited.alarms("KEY003")  # both reach production
    assert "viewer_env" not in audited.alarms("KEY003")
    assert "viewer" not in audited.alarms("KEY004")
    assert audited.alarms("KEY007", audited.viewer_snapshot) == set()


def test_a_keys_own_users_me_call_is_no_use(audited: Audited) -> None:
    # The simulator stamps last_used_at on every call, /users/me too: during a collection
    # each key it reads looks used just now, which says nothing of how long it sat idle.
    judged = audited.findings["KEY006"][audited.editor_snapshot]
    assert judged and set(judged.values()) == {"unknown"}, judged


def test_a_moved_scope_is_reach_growth(audited: Audited) -> None:
    grew = audited.alarms("KEY007", audited.later_snapshot)
    assert "viewer_env" in grew
    assert "default" in grew  # the collector is an editor again: it reads values again
    assert {"admin", "viewer", "limited", "ci_deploy"}.isdisjoint(grew)


def test_verified_scope_matches_the_claims(audited: Audited) -> None:
    later = audited.later_snapshot
    rel = audited.con.sql(
        "select credential_name, status, count(*) from credential_probes "
        "where snapshot_id = $s group by all",
        params={"s": later},
    )
    counts = {(name, status): n for name, status, n in rel.fetchall()}
    probed = {name for name, _ in counts}
    assert {"admin", "viewer", "limited", "viewer_env", "ci_deploy"} <= probed
    assert {"revoked", "expired", "session"}.isdisjoint(probed)  # no readable claim
    assert {status for _, status in counts} == {"match"}
    # limited keys were also probed outside their scope, and were refused there
    outside = audited.con.sql(
        "select count(*) from credential_probes where snapshot_id = $s "
        "and credential_name = 'limited' and not expected_visible and not observed_visible",
        params={"s": later},
    ).fetchall()
    assert outside[0][0] > 0
    assert audited.alarms("KEY009", later) == set()
    assert set(audited.findings["KEY009"][later]) == probed
    assert audited.editor_snapshot not in audited.findings["KEY009"]  # not verified then


def _rows(audited: Audited, sql: str) -> list[dict[str, Any]]:
    rel = audited.con.sql(sql, params={"s": audited.later_snapshot})
    return [dict(zip(rel.columns, row, strict=True)) for row in rel.fetchall()]


def test_verified_scope_catches_a_wrong_claim(audited: Audited) -> None:
    """The probes judge what the key does, not what it says: a falsified claim shows."""
    ids = audited.sim.planted
    inventory = {
        "environments": _rows(audited, "select * from environments where snapshot_id = $s"),
        "services": _rows(audited, "select * from services where snapshot_id = $s"),
    }
    credential = _rows(
        audited, "select * from credentials where snapshot_id = $s and name = 'limited'"
    )
    claimed = {"credential_name": "limited", "resource_type": "project"}
    wrong = {"credentials": credential, "credential_resources": [
        claimed | {"resource_id": ids["project_single_env"]}
    ]}  # fmt: skip
    config = ClientConfig(base_url=audited.base_url, token=Secret(audited.sim.keys["limited"]))

    async def probe() -> list[dict[str, Any]]:
        async with AsyncPlatformClient(config) as client:
            probed = await probe_scopes(inventory, [wrong], {"limited": client}, size=2)
        return probed["credential_probes"]

    rows = asyncio.run(probe())
    mismatched = {
        (r["resource_type"], r["observed_visible"]) for r in rows if r["status"] == "mismatch"
    }
    assert ("environment", True) in mismatched  # sees its real project, claimed outside
    assert ("environment", False) in mismatched  # refused the claimed one


def _reach(audited: Audited, credential: str) -> list[dict[str, Any]]:
    sql = (
        "select resource_type, resource_id, project_id, environment_id, service_id, "
        "navigable_only, can_change from credential_reach "
        "where snapshot_id = $s and credential_name = $c"
    )
    rel = audited.con.sql(sql, params={"s": audited.editor_snapshot, "c": credential})
    return [dict(zip(rel.columns, row, strict=True)) for row in rel.fetchall()]


def test_limited_keys_reach_only_their_resources(audited: Audited) -> None:
    ids = audited.sim.planted
    limited = _reach(audited, "limited")
    assert limited and {r["project_id"] for r in limited if not r["navigable_only"]} == {
        ids["project"]
    }
    assert {r["resource_type"] for r in limited if r["navigable_only"]} == {"team"}
    ci = [r for r in _reach(audited, "ci_deploy") if not r["navigable_only"]]
    assert [(r["resource_type"], r["resource_id"]) for r in ci] == [
        ("service", ids["service_nodeport"])
    ]
    viewer_env = [r for r in _reach(audited, "viewer_env") if not r["navigable_only"]]
    assert {r["environment_id"] for r in viewer_env} == {ids["env_staging"]}
    assert not any(r["can_change"] for r in viewer_env)
    assert _reach(audited, "revoked") == [] and _reach(audited, "session") == []


def test_viewer_snapshot_raises_no_alarm_from_redacted_values(audited: Audited) -> None:
    viewer, editor = audited.viewer_snapshot, audited.editor_snapshot
    # value-based checks say nothing when there are no values ...
    assert audited.examined("VAR003", viewer) == set()
    assert audited.examined("VAR007", viewer) == set()
    assert audited.examined("VAR003", editor) and audited.examined("VAR007", editor)
    # ... and no other check alarms on more than it did with values visible (key-scope checks
    # are left out: the collecting credential itself changed between the two snapshots)
    for check_id, spec in CHECKS.items():
        if spec.area == "key-scope" or check_id == "VAR009":
            continue
        extra = audited.alarms(check_id, viewer) - audited.alarms(check_id, editor)
        assert extra == set(), f"{check_id} alarms only with redacted values: {extra}"
