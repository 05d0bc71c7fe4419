"""A partial snapshot: a finding it could not have collected is not observed there, so it
is neither resolved nor regressed by it, and no episode ends in it."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pandas as pd
import pytest
from audit_fixtures import fixture_connection, fixture_snapshot_ids
from engine_world import engine_catalogue, failed_call, history, service_id, write_store

from toolkit.audit import Catalogue, run_audit
from toolkit.audit.snapshots_chosen import ENDPOINT_TABLES, blind_checks
from toolkit.collect.calls import READ_ENDPOINTS
from toolkit.snapshot import SNAPSHOT_TABLES

if TYPE_CHECKING:
    from pathlib import Path


IDS = fixture_snapshot_ids(4)


def partial_day3(endpoint: str) -> dict[str, Any]:
    """The engine history with day 3 partial: a call of ``endpoint`` failed for production,
    and the service 'open' (in alarm every other day) is missing from it."""
    fixture = history()
    day3 = fixture["snapshots"][2]
    day3["status"] = "partial"
    tables = day3["tables"]
    tables["services"] = [s for s in tables["services"] if s["id"] != service_id("open")]
    tables["collection_errors"] = [failed_call(endpoint)]
    return fixture


def by_resource(frame: pd.DataFrame, check: str = "TST001") -> pd.DataFrame:
    return frame[frame.check_id == check].set_index("resource_id")


def test_a_finding_missing_from_a_partial_snapshot_is_not_resolved_there() -> None:
    con = fixture_connection(partial_day3("services.list"))
    judged = run_audit(con, checks=engine_catalogue(), snapshot=IDS[2])
    assert [s.snapshot_id for s in judged.partial] == [IDS[2]]
    assert set(judged.blind.snapshot_id) == {IDS[2]} and "TST001" in set(judged.blind.check_id)
    row = by_resource(judged.findings).loc[service_id("open")]
    assert (row.state, row.status) == ("open", "unobserved")
    assert row.reason.startswith("not collected: ")
    assert len(judged.failing("high")) >= 1 and service_id("open") in set(
        judged.failing("high").resource_id
    )
    # Compared with the partial snapshot, it is still open, not regressed.
    after = run_audit(con, checks=engine_catalogue(), compare_to=IDS[2])
    assert by_resource(after.findings).loc[service_id("open"), "state"] == "open"
    # One episode, never fixed; resolve times as without the partial snapshot (42 h).
    episodes = after.episodes("TST001", service_id("open"))
    assert len(episodes) == 1 and pd.isna(episodes.fixed_at[0])
    mttr = after.mttr().set_index("check_id")
    assert mttr.loc["TST001", "resolved_count"] == 4
    assert mttr.loc["TST001", "mttr_hours"] == pytest.approx(42.0)


def test_latest_only_agrees_on_a_partial_compared_snapshot() -> None:
    con = fixture_connection(partial_day3("services.list"))
    fast = run_audit(con, checks=engine_catalogue(), compare_to=IDS[2], latest_only=True)
    assert by_resource(fast.findings).loc[service_id("open"), "state"] == "open"
    episodes = fast.episodes("TST001", service_id("open"))
    assert len(episodes) == 1 and pd.isna(episodes.fixed_at[0])


def test_a_failure_the_check_does_not_read_leaves_it_judged() -> None:
    # Webhooks failed: TST001 reads services only, so 'open' missing on day 3 is gone there.
    con = fixture_connection(partial_day3("webhooks.list"))
    judged = run_audit(con, checks=engine_catalogue(), snapshot=IDS[2])
    assert judged.partial and "TST001" not in set(judged.blind.check_id)
    row = by_resource(judged.findings).loc[service_id("open")]
    assert (row.state, row.status) == ("resolved", "absent")
    episodes = judged.episodes("TST001", service_id("open"))
    assert len(episodes) == 1 and episodes.fixed_at[0] == judged.target.snapshot_at


def test_every_endpoint_maps_to_declared_tables() -> None:
    assert set(ENDPOINT_TABLES) <= READ_ENDPOINTS
    hierarchy = {"teams.list", "projects.list", "environments.list", "services.list"}
    assert READ_ENDPOINTS - set(ENDPOINT_TABLES) == hierarchy  # these leave every table short
    for tables in ENDPOINT_TABLES.values():
        assert set(tables) <= set(SNAPSHOT_TABLES)


def test_blind_checks_follow_what_each_check_reads() -> None:
    specs = engine_catalogue().specs  # all three read services only
    assert blind_checks(specs, [("s3", "webhooks.list", None)]) == []
    assert {c for c, _ in blind_checks(specs, [("s3", "teams.list", None)])} == {
        "TST001", "TST002", "TST003",
    }  # fmt: skip
    drift = blind_checks(specs, [("s3", "variables.list", "services")])
    assert drift == [(s.id, "s3") for s in specs]  # a drift names the table it hit


def test_a_table_named_only_in_a_comment_is_not_read() -> None:
    spec = engine_catalogue().specs[0]
    noted = replace(spec, sql="-- unlike webhooks, /* or replicas */ read: services\n" + spec.sql)
    assert blind_checks([noted], [("s3", "webhooks.list", None)]) == []
    assert blind_checks([noted], [("s3", "replicas.list", None)]) == []
    # '--' in a string starts no comment: services, after it on the line, is still read
    quoted = replace(spec, sql=spec.sql.replace("from services", "from (select '--') x, services"))
    assert quoted.sql != spec.sql
    assert blind_checks([quoted], [("s3", "variables.list", "services")]) == [(spec.id, "s3")]


def test_a_check_reads_a_table_through_a_macro_named_unlike_its_file(tmp_path: Path) -> None:
    (tmp_path / "helpers.sql").write_text(
        "create or replace macro hooks() as table select * from webhooks\n", encoding="utf-8"
    )
    spec = engine_catalogue().specs[0]
    through = replace(spec, sql=spec.sql.replace("from services", "from services, hooks() h"))
    assert through.sql != spec.sql
    assert blind_checks([through], [("s3", "webhooks.list", None)], tmp_path) == [(spec.id, "s3")]
    assert blind_checks([spec], [("s3", "webhooks.list", None)], tmp_path) == []


def test_a_fix_a_partial_snapshot_did_observe_counts() -> None:
    # 'resolved' (o A A o) is fixed on day 3 instead: its ok row there is an observation,
    # though day 3 is partial and neither judged nor compared (day 4 against day 2).
    fixture = partial_day3("services.list")
    for service in fixture["snapshots"][2]["tables"]["services"]:
        if service["id"] == service_id("resolved"):
            service["memory_limits_megabytes"] = 512
    result = run_audit(fixture_connection(fixture), checks=engine_catalogue())
    assert result.compare is not None and result.compare.snapshot_id == IDS[1]
    episodes = result.episodes("TST001", service_id("resolved"))
    assert episodes.hours.tolist() == [24.0]
    # Resolved after 24 h (resolved), 24 h (regressed), 72 h (gone), 24 h (once).
    mttr = result.mttr().set_index("check_id")
    assert mttr.loc["TST001", "resolved_count"] == 4
    assert mttr.loc["TST001", "mttr_hours"] == pytest.approx(36.0)


def test_the_command_line_says_a_snapshot_is_partial(tmp_path: Path) -> None:
    """The table and every format read alike for a partial snapshot; stderr tells."""
    from engine_world import config_file, write_store
    from typer.testing import CliRunner

    from toolkit.cli import app

    store = write_store(tmp_path / "store", partial_day3("services.list"))
    ids = [
        row[0]
        for row in store.duckdb().sql("select snapshot_id from snapshots order by seq").fetchall()
    ]
    argv = ["audit", "--store", str(tmp_path / "store"), "--config", str(config_file(tmp_path))]
    outcome = CliRunner().invoke(app, [*argv, "--snapshot", ids[2]])  # the partial day 3
    assert outcome.exit_code == 0, outcome.stderr
    assert f"note: the judged snapshot {ids[2]} is partial" in outcome.stderr
    assert "3 check(s) could not see all they read (TST001, TST002, TST003)" in outcome.stderr
    compared = CliRunner().invoke(app, [*argv, "--compare-to", ids[2]])  # day 4 with day 3
    assert f"note: the compared snapshot {ids[2]} is partial" in compared.stderr
    whole = CliRunner().invoke(app, [*argv, "--snapshot", ids[1]])
    assert "partial" not in whole.stderr


def _blind_services(fixture: dict[str, Any], day: int) -> None:
    """Make ``day`` partial: the services call failed for production, 'open' is missing."""
    partial = partial_day3("services.list")["snapshots"][2]
    snapshot = fixture["snapshots"][day]
    snapshot["status"] = "partial"
    snapshot["tables"]["collection_errors"] = partial["tables"]["collection_errors"]
    snapshot["tables"]["services"] = [
        s for s in snapshot["tables"]["services"] if s["id"] != service_id("open")
    ]


@pytest.mark.parametrize("latest_only", [False, True])
def test_a_finding_neither_judged_nor_compared_snapshot_observed_stays_listed(
    latest_only: bool,
) -> None:
    # Two partial days in a row: 'open' (in alarm on days 1 and 2) was collected by neither.
    fixture = partial_day3("services.list")
    _blind_services(fixture, 3)
    con = fixture_connection(fixture)
    # partial snapshots are judged only when named (the default is the newest complete one)
    result = run_audit(
        con, checks=engine_catalogue(), snapshot=IDS[3], compare_to=IDS[2], latest_only=latest_only
    )
    row = by_resource(result.findings).loc[service_id("open")]
    assert (row.state, row.status) == ("open", "unobserved")
    assert row.reason == "not collected: Service open memory limit -1 MB."
    assert row.team_name == "payments" and row.last_seen == pd.Timestamp("2026-01-02", tz="UTC")
    assert service_id("open") in set(result.failing("high").resource_id)


def test_a_resource_gone_after_a_partial_compared_snapshot_is_listed_resolved() -> None:
    # Day 3 could not collect 'open'; day 4 collected everything and 'open' is gone.
    fixture = partial_day3("services.list")
    day4 = fixture["snapshots"][3]["tables"]
    day4["services"] = [s for s in day4["services"] if s["id"] != service_id("open")]
    result = run_audit(fixture_connection(fixture), checks=engine_catalogue(), compare_to=IDS[2])
    row = by_resource(result.findings).loc[service_id("open")]
    assert (row.state, row.status) == ("resolved", "absent")
    assert row.reason == "gone: Service open memory limit -1 MB."


@pytest.mark.parametrize(("latest_only", "on_disk"), [(False, False), (True, False), (True, True)])
def test_a_finding_last_observed_before_three_partial_snapshots_stays_listed(
    latest_only: bool, on_disk: bool, tmp_path: Path
) -> None:
    # Days 2, 3 and 4 could not collect 'open'; it was last observed, in alarm, on day 1.
    # A latest-only audit reads back to the complete snapshot before the compared one (a
    # store's latest-only connection opens only the files of the snapshots it reads).
    fixture = partial_day3("services.list")
    _blind_services(fixture, 1)
    _blind_services(fixture, 3)
    source = write_store(tmp_path, fixture) if on_disk else fixture_connection(fixture)
    ids = [s.snapshot_id for s in source.snapshots()] if on_disk else IDS
    result = run_audit(
        source,
        checks=engine_catalogue(),
        snapshot=ids[3],
        compare_to=ids[2],
        latest_only=latest_only,
    )
    row = by_resource(result.findings).loc[service_id("open")]
    assert (row.state, row.status) == ("open", "unobserved")
    assert row.reason == "not collected: Service open memory limit -1 MB."
    assert row.last_seen == pd.Timestamp("2026-01-01", tz="UTC")
    assert service_id("open") in set(result.failing("high").resource_id)
    if latest_only:
        assert list(result.read) == ids


def test_a_reference_a_failed_listing_hides_is_not_resolved_by_it() -> None:
    """VAR006 cannot tell a deleted service from one a failed listing left out: it returns
    no row there (not 'ok'), so the finding is not observed rather than fixed."""
    owner = {"team_id": "t1", "project_id": "p1", "environment_id": "e-prod"}
    tables = {
        "services": [{"id": "s-api", "name": "api", **owner}],
        "variables": [
            {"name": "DB_URL", "level": "service", "service_id": "s-api", "is_reference": True}
            | owner
        ],
        "variable_references": [
            {"variable_name": "DB_URL", "level": "service", "service_id": "s-api",
             "position": 0, "key": "URL", "source_type": "service", "source_id": "s-gone"}
            | owner
        ],
    }  # fmt: skip
    failed = {"endpoint": "services.list", "team_id": "t1", "project_id": "p1",
              "environment_id": "e-data", "status": 503}  # fmt: skip
    fixture = {
        "snapshots": [
            {"at": "2026-01-01T00:00:00Z", "tables": tables},
            {"at": "2026-01-02T00:00:00Z", "status": "partial",
             "tables": tables | {"collection_errors": [failed]}},
        ]
    }  # fmt: skip
    checks = [spec for spec in Catalogue.load().specs if spec.id == "VAR006"]
    partial = fixture_snapshot_ids(2)[1]
    audited = run_audit(fixture_connection(fixture), checks=checks, snapshot=partial)
    finding = audited.findings.iloc[0]
    assert (finding.state, finding.status) == ("open", "unobserved")
