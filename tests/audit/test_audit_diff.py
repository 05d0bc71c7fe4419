"""``diff`` between two snapshots of a live simulator, a simulated day apart."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from engine_world import ENGINE_CHECKS
from typer.testing import CliRunner

from toolkit.audit import AuditError, Catalogue, diff_snapshots
from toolkit.cli import ExitCode, app
from toolkit.config import Credential, Settings
from toolkit.sim import Simulator, SimulatorServer
from toolkit.snapshot import Store
from toolkit.snapshot_job import take_snapshot

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
    assert set(data["services"]) == {"added", "removed", "changed"}
    assert data["to"] == store.snapshots()[-1].snapshot_id
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
         f"--compare-to {new} is not older than the newest complete snapshot {new}"),
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
