"""``diff`` between two snapshots of a live simulator, a simulated day apart."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from audit_fixtures import fixture_connection, fixture_snapshot_ids
from engine_world import ENGINE_CHECKS, config_file, engine_catalogue, history, write_store
from typer.testing import CliRunner

from toolkit.audit import AuditError, Catalogue
from toolkit.cli import ExitCode, app
from toolkit.config import Credential, Settings
from toolkit.pipeline.snapshot_job import take_snapshot
from toolkit.report.snapshot_diff import diff_snapshots
from toolkit.sim import Simulator, SimulatorServer
from toolkit.snapshot import Store

if TYPE_CHECKING:
    from pathlib import Path

TOKEN_ENV = "AUDIT_DIFF_TEST_KEY"


@pytest.fixture(scope="module")
def sim_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Store, Simulator]:
    root = tmp_path_factory.mktemp("audit-diff")
    sim = Simulator(seed=3, services=12)
    with SimulatorServer(sim) as server, pytest.MonkeyPatch.context() as patch:
        patch.setenv(TOKEN_ENV, sim.keys["admin"])
        patch.delenv("PLATFORM_AUDIT_HMAC_KEY", raising=False)
        settings = Settings(
            base_url=server.base_url,
            credentials={"default": Credential(name="default", token_env=TOKEN_ENV)},
            rate_per_minute=None,
            store_url=str(root / "store"),
            hmac_key_file=root / "hmac.key",
        )
        take_snapshot(settings, as_of=sim.now)
        sim.advance(24)
        take_snapshot(settings, as_of=sim.now)
    return Store.open(root / "store"), sim


def test_inventory_changes_between_the_two_newest(sim_store: tuple[Store, Simulator]) -> None:
    store, sim = sim_store
    change = diff_snapshots(store, checks=Catalogue.load([ENGINE_CHECKS], builtin=False))
    first, second = store.snapshots()[-2:]
    assert (change.before.snapshot_id, change.after.snapshot_id) == (
        first.snapshot_id,
        second.snapshot_id,
    )
    con = store.duckdb()
    query = "select id from services where snapshot_id = ?"
    before = {r[0] for r in con.execute(query, [first.snapshot_id]).fetchall()}
    after = {r[0] for r in con.execute(query, [second.snapshot_id]).fetchall()}
    assert set(change.added.id) == after - before
    assert set(change.removed.id) == before - after
    assert set(sim.world.services) == after
    assert not change.changed.empty  # a simulated day deploys, crashes and grows things
    for fields in change.changed.changed_fields:
        assert len(fields) > 0
        assert "snapshot_id" not in fields and "snapshot_at" not in fields
    assert set(change.findings.state) <= {"new", "regressed", "resolved"}


def test_changed_fields_are_exact(sim_store: tuple[Store, Simulator]) -> None:
    store, _ = sim_store
    change = diff_snapshots(store, checks=Catalogue.load([ENGINE_CHECKS], builtin=False))
    con = store.duckdb()
    row = change.changed.iloc[0]
    fields = list(row.changed_fields)
    a, b = (
        con.execute(
            "select * from services where snapshot_id = ? and id = ?", [sid, row.id]
        ).fetchall()[0]
        for sid in (change.before.snapshot_id, change.after.snapshot_id)
    )
    names = [c[0] for c in con.execute("select * from services limit 0").description]
    differing = [n for n, x, y in zip(names, a, b, strict=True) if x != y]
    assert sorted(set(differing) - {"snapshot_id", "snapshot_at"}) == sorted(fields)


def test_diff_with_builtin_checks_and_the_command(
    sim_store: tuple[Store, Simulator], tmp_path: Path
) -> None:
    store, _ = sim_store
    runner = CliRunner()
    config = tmp_path / "empty.toml"
    config.write_text("", encoding="utf-8")
    outcome = runner.invoke(
        app, ["diff", "--store", store.url, "--config", str(config), "--format", "json"]
    )
    assert outcome.exit_code == 0, outcome.stderr
    data = json.loads(outcome.stdout)
    assert set(data["services"]) == {"added", "removed", "changed", "not_collected"}
    assert data["to"]["snapshot_id"] == store.snapshots()[-1].snapshot_id
    table = runner.invoke(app, ["diff", "--store", store.url, "--config", str(config)])
    assert table.exit_code == 0 and "services from" in table.stdout


def test_diff_needs_two_snapshots(sim_store: tuple[Store, Simulator]) -> None:
    store, _ = sim_store
    first = store.snapshots()[0].snapshot_id
    # nothing is older, so --from cannot help: the message does not offer it
    with pytest.raises(AuditError, match="no complete snapshot before it") as caught:
        diff_snapshots(store, after=first)
    assert "take another snapshot" in str(caught.value) and "--from" not in str(caught.value)
    runner = CliRunner()
    outcome = runner.invoke(app, ["diff", "--store", store.url, "--to", first])
    assert outcome.exit_code == ExitCode.CONFIG


def test_snapshots_in_the_wrong_order_are_named_by_the_options_given(
    sim_store: tuple[Store, Simulator],
) -> None:
    store, _ = sim_store
    old, new = store.snapshots()[0].snapshot_id, store.snapshots()[-1].snapshot_id
    runner = CliRunner()
    for args, said in (
        (["diff", "--from", new, "--to", old], f"--from {new} is not older than --to {old}"),
        (["audit", "--snapshot", old, "--compare-to", new],
         f"--compare-to {new} is not older than --snapshot {old}"),
        (["audit", "--compare-to", new],
         f"--compare-to {new} is not older than the newest snapshot {new}"),
    ):  # fmt: skip
        outcome = runner.invoke(app, [*args, "--store", store.url])
        assert outcome.exit_code == ExitCode.CONFIG
        assert said in " ".join(outcome.stderr.split()), outcome.stderr


def test_diff_shows_a_waived_finding_with_its_waiver(
    sim_store: tuple[Store, Simulator], tmp_path: Path
) -> None:
    store, _ = sim_store
    config = tmp_path / "empty.toml"
    config.write_text("", encoding="utf-8")
    base = ["diff", "--store", store.url, "--config", str(config)]
    runner = CliRunner()
    plain = json.loads(runner.invoke(app, [*base, "--format", "json"]).stdout)["findings"]
    assert plain and not any(f["waived"] for f in plain)
    chosen = plain[0]
    waivers = tmp_path / "waivers.toml"
    waivers.write_text(
        f'[[waivers]]\ncheck = "{chosen["check_id"]}"\nresources = ["{chosen["resource_id"]}"]\n'
        'reason = "Accepted for the migration."\nowner = "ops@example.com"\n'
        "expires = 2099-01-01\n",
        encoding="utf-8",
    )
    outcome = runner.invoke(app, [*base, "--format", "json", "--waivers", str(waivers)])
    assert outcome.exit_code == 0, outcome.stderr
    waived = [f for f in json.loads(outcome.stdout)["findings"] if f["waived"]]
    assert [(f["check_id"], f["resource_id"]) for f in waived] == [
        (chosen["check_id"], chosen["resource_id"])
    ]
    assert waived[0]["waiver_owner"] == "ops@example.com"
    assert waived[0]["waiver_expires"] == "2099-01-01"
    table = runner.invoke(app, [*base, "--waivers", str(waivers)], env={"COLUMNS": "200"})
    assert table.exit_code == 0, table.stderr
    assert "waived by ops@example.com until 2099-01-01" in table.stdout


IDS = fixture_snapshot_ids(4)
PROD = {"team_id": "t-pay", "project_id": "p-shop", "environment_id": "e-prod"}
NO_CHECKS = Catalogue((), {})


def partial_day3(endpoint: str, owner: dict[str, str], **error: Any) -> dict[str, Any]:
    """The engine history with day 3 partial: a call of ``endpoint`` for ``owner`` failed.
    'open' (payments / shop / production) is missing from it, and so is 'fine' (core /
    shop / staging), which day 4 has again."""
    fixture = history()
    day3 = fixture["snapshots"][2]
    day3["status"] = "partial"
    tables = day3["tables"]
    tables["services"] = [s for s in tables["services"] if s["id"] not in ("svc-open", "svc-fine")]
    failed = {"endpoint": endpoint, "method": "GET", "status": 503, "not_visible": False}
    tables["collection_errors"] = [{**failed, "error_type": "unavailable", **owner, **error}]
    return fixture


@pytest.mark.parametrize(
    ("endpoint", "owner", "error", "lost"),
    [
        ("services.list", PROD, {}, {"svc-open"}),
        ("environments.list", {"team_id": "t-pay", "project_id": "p-shop"}, {}, {"svc-open"}),
        ("projects.list", {"team_id": "t-pay"}, {}, {"svc-open"}),
        ("teams.list", {}, {}, {"svc-open", "svc-fine"}),  # nothing below it was listed
        ("services.list", PROD, {"error_type": "schema_drift", "table_name": "services"},
         {"svc-open"}),  # a row missing its id is dropped
        # not what lists services: their absence is real
        ("variables.list", PROD, {}, set()),
        ("services.list", PROD, {"error_type": "schema_drift", "table_name": "service_ports"},
         set()),
    ],
)  # fmt: skip
def test_a_service_a_failed_listing_did_not_collect_is_neither_removed_nor_added(
    endpoint: str, owner: dict[str, str], error: dict[str, Any], lost: set[str]
) -> None:
    con = fixture_connection(partial_day3(endpoint, owner, **error))
    into = diff_snapshots(con, before=IDS[1], after=IDS[2], checks=NO_CHECKS)
    assert into.after.status == "partial"
    assert set(into.removed.id) == {"svc-open", "svc-fine"} - lost
    assert set(into.not_collected.id) == lost
    assert set(into.not_collected.missing_from) <= {"to"}
    assert set(into.not_collected.why) <= {"a listing failed"}
    out = diff_snapshots(con, before=IDS[2], after=IDS[3], checks=NO_CHECKS)
    assert set(out.added.id) == {"svc-open", "svc-fine"} - lost
    assert set(out.not_collected.id) == lost
    assert set(out.not_collected.missing_from) <= {"from"}
    assert set(out.removed.id) == {"svc-gone"}  # day 4 is complete: gone is gone


def test_a_service_its_listing_answered_404_for_is_not_removed() -> None:
    # A 404 (platform-api section 7) is "does not exist, or the credential cannot see it":
    # the crawler keeps the snapshot complete, and the diff says which it may be.
    fixture = partial_day3("services.list", PROD, status=404, not_visible=True)
    fixture["snapshots"][2]["status"] = "complete"
    con = fixture_connection(fixture)
    into = diff_snapshots(con, before=IDS[1], after=IDS[2], checks=NO_CHECKS)
    assert set(into.removed.id) == {"svc-fine"}  # no error covers staging: gone is gone
    assert list(zip(into.not_collected.id, into.not_collected.missing_from, strict=True)) == [
        ("svc-open", "to")
    ]
    assert into.not_collected.why[0].startswith("its listing answered 404")


def test_a_service_outside_the_collecting_keys_limits_is_not_removed_nor_added() -> None:
    # The key collecting day 3 is limited to production: staging's services are out of its
    # view there, not deleted, and not new when day 4's key (unlimited) sees them again.
    fixture = history()
    day3 = fixture["snapshots"][2]
    day3["credential_name"] = "collector"
    tables = day3["tables"]
    tables["services"] = [s for s in tables["services"] if s["environment_id"] == "e-prod"]
    tables["credentials"] = [{"name": "collector", "role": "viewer", "access": "limited"}]
    tables["credential_resources"] = [
        {"credential_name": "collector", "resource_type": "environment", "resource_id": "e-prod"}
    ]
    con = fixture_connection(fixture)
    into = diff_snapshots(con, before=IDS[1], after=IDS[2], checks=NO_CHECKS)
    hidden = {"svc-new", "svc-fine", "svc-once", "svc-gone"}
    assert into.removed.empty
    assert set(into.not_collected.id) == hidden
    assert set(into.not_collected.why) == {"outside the collecting key's limits"}
    out = diff_snapshots(con, before=IDS[2], after=IDS[3], checks=NO_CHECKS)
    assert out.added.empty
    assert set(out.not_collected.id) == hidden - {"svc-gone"}
    assert set(out.not_collected.missing_from) == {"from"}
    assert out.removed.empty  # svc-gone was out of view on day 3 already, and is gone


def test_a_finding_a_partial_snapshot_did_not_observe_is_listed_unobserved_not_resolved() -> None:
    con = fixture_connection(partial_day3("services.list", PROD))
    change = diff_snapshots(con, before=IDS[1], after=IDS[2], checks=engine_catalogue())
    findings = change.findings.set_index(["check_id", "resource_id"])
    row = findings.loc[("TST001", "svc-open")]
    assert (row.state, row.status) == ("open", "unobserved")
    assert row.reason.startswith("not collected: ")
    assert not (
        (change.findings.status == "unobserved") & (change.findings.state == "resolved")
    ).any()
    assert set(change.blind.snapshot_id) == {IDS[2]} and "TST001" in set(change.blind.check_id)


def _store_ids(root: Path, fixture: dict[str, Any]) -> list[str]:
    store = write_store(root / "store", fixture)
    return [s.snapshot_id for s in store.snapshots()]


def test_the_command_says_which_side_is_partial(tmp_path: Path) -> None:
    ids = _store_ids(tmp_path, partial_day3("services.list", PROD))
    argv = ["diff", "--store", str(tmp_path / "store"), "--config", str(config_file(tmp_path))]
    runner = CliRunner()
    outcome = runner.invoke(app, [*argv, "--from", ids[1], "--to", ids[2], "--format", "json"])
    assert outcome.exit_code == 0, outcome.stderr
    data = json.loads(outcome.stdout)
    assert (data["from"]["status"], data["to"]["status"]) == ("complete", "partial")
    assert data["to"]["snapshot_at"] == "2026-01-03T00:00:00+00:00"
    assert [s["id"] for s in data["services"]["removed"]] == ["svc-fine"]
    assert [(s["id"], s["missing_from"]) for s in data["services"]["not_collected"]] == [
        ("svc-open", "to")
    ]
    note = f"note: the --to snapshot {ids[2]} is partial"
    said = " ".join(outcome.stderr.split())
    assert note in said and "1 service(s) missing from it because a listing failed" in said
    table = runner.invoke(app, [*argv, "--from", ids[2], "--to", ids[3]])
    assert table.exit_code == 0, table.stderr
    assert f"note: the --from snapshot {ids[2]} is partial" in " ".join(table.stderr.split())
    assert "not collected" in table.stdout and "(partial)" in table.stdout
    whole = runner.invoke(app, [*argv, "--from", ids[0], "--to", ids[1]])
    assert whole.exit_code == 0 and "partial" not in whole.stderr


def test_json_findings_carry_status_waiver_status_and_owners(tmp_path: Path) -> None:
    ids = _store_ids(tmp_path, partial_day3("services.list", PROD))
    argv = ["diff", "--store", str(tmp_path / "store"), "--config", str(config_file(tmp_path))]
    outcome = CliRunner().invoke(app, [*argv, "--from", ids[1], "--to", ids[2], "--format", "json"])
    assert outcome.exit_code == 0, outcome.stderr
    findings = {
        (f["check_id"], f["resource_id"]): f for f in json.loads(outcome.stdout)["findings"]
    }
    unobserved = findings["TST001", "svc-open"]
    assert unobserved["status"] == "unobserved" and unobserved["waiver_status"] is None
    assert {k: unobserved[k] for k in PROD} == PROD
    assert unobserved["environment_name"] == "production"
    assert {f["status"] for f in findings.values()} <= {"alarm", "ok", "absent", "unobserved"}


def test_diff_says_what_its_audit_was_configured_with(tmp_path: Path) -> None:
    """Findings that changed, or did not, because of a threshold must say so, as audit's do."""
    _store_ids(tmp_path, history())
    config = config_file(tmp_path, "[checks.TST002]\nmin_replicas = 3\n")
    argv = ["diff", "--store", str(tmp_path / "store"), "--config", str(config)]
    said = "TST002 min_replicas = 3 (default 2)"
    outcome = CliRunner().invoke(app, [*argv, "--format", "json"])
    assert outcome.exit_code == 0, outcome.stderr
    assert json.loads(outcome.stdout)["configured"] == [said]
    table = CliRunner().invoke(app, argv)
    assert table.exit_code == 0 and f"configured: {said}" in " ".join(table.stderr.split())
    plain = ["diff", "--store", str(tmp_path / "store"), "--config", str(config_file(tmp_path))]
    default = CliRunner().invoke(app, plain)
    assert default.exit_code == 0 and "configured" not in default.stderr


def _renamed(names: dict[str, str], teams: dict[str, str] | None = None) -> dict[str, Any]:
    fixture = history()
    for snapshot in fixture["snapshots"]:
        tables = snapshot["tables"]
        for service in tables["services"]:
            service["name"] = names.get(service["id"], service["name"])
        for team in tables["teams"]:
            team["name"] = (teams or {}).get(team["id"], team["name"])
    return fixture


def test_the_table_escapes_line_breaks_in_names(tmp_path: Path) -> None:
    fixture = _renamed({"svc-gone": "gone\nsecond", "svc-resolved": "fixed\rthere"},
                       teams={"t-core": "core\nplatform"})  # fmt: skip
    _store_ids(tmp_path, fixture)
    argv = ["diff", "--store", str(tmp_path / "store"), "--config", str(config_file(tmp_path))]
    outcome = CliRunner().invoke(app, argv, env={"COLUMNS": "200"})
    assert outcome.exit_code == 0, outcome.stderr
    shown = outcome.stdout
    assert "gone\\x0asecond" in shown and "fixed\\x0dthere" in shown  # removed, resolved
    assert "core\\x0aplatform / shop / staging" in shown
    lines = shown.splitlines()
    assert not any(line.strip().startswith(("second", "platform", "there")) for line in lines)


def test_the_table_says_where_same_named_resources_live(tmp_path: Path) -> None:
    # 'new' (payments, staging) and 'regressed' (core, production) both change and alarm
    _store_ids(tmp_path, _renamed({"svc-new": "scheduler", "svc-regressed": "scheduler"}))
    argv = ["diff", "--store", str(tmp_path / "store"), "--config", str(config_file(tmp_path))]
    outcome = CliRunner().invoke(app, argv, env={"COLUMNS": "200"})
    assert outcome.exit_code == 0, outcome.stderr
    rows = [" ".join(line.split()) for line in outcome.stdout.splitlines()]
    # each row that names scheduler has its owner path on the line under it
    where = {
        (row.split()[0], rows[n + 1])
        for n, row in enumerate(rows)
        if row.startswith(("changed scheduler", "new high TST001 scheduler",
                           "regressed high TST001 scheduler"))
    }  # fmt: skip
    assert where == {
        ("changed", "payments / shop / staging"),
        ("changed", "core-platform / shop / production"),
        ("new", "payments / shop / staging"),
        ("regressed", "core-platform / shop / production"),
    }


def test_an_empty_diff_says_no_changes_in_every_format(tmp_path: Path) -> None:
    """Two snapshots of the same platform: no empty tables, one sentence; JSON says empty."""
    fixture = history()
    first, second = fixture["snapshots"][:2]
    fixture["snapshots"] = [first, {**first, "at": second["at"]}]
    ids = _store_ids(tmp_path, fixture)
    argv = ["diff", "--store", str(tmp_path / "store"), "--config", str(config_file(tmp_path))]
    table = CliRunner().invoke(app, argv, env={"COLUMNS": "200"})
    assert table.exit_code == 0, table.stderr
    assert table.stdout.strip() == f"No changes between {ids[0]} and {ids[1]}."
    outcome = CliRunner().invoke(app, [*argv, "--format", "json"])
    data = json.loads(outcome.stdout)
    assert data["empty"] is True and data["summary"] == table.stdout.strip()
    assert not data["findings"] and not any(data["services"].values())


def test_a_diff_with_changes_is_not_empty(tmp_path: Path) -> None:
    _store_ids(tmp_path, history())
    argv = ["diff", "--store", str(tmp_path / "store"), "--config", str(config_file(tmp_path))]
    outcome = CliRunner().invoke(app, [*argv, "--format", "json"])
    data = json.loads(outcome.stdout)
    assert data["empty"] is False and data["summary"] is None
    table = CliRunner().invoke(app, argv, env={"COLUMNS": "200"})
    assert "No changes" not in table.stdout and "services from" in table.stdout
