"""One finding's story (``AuditResult.episodes``, ``explain_finding``, ``platform-audit
finding``) on the engine tests' known history (``engine_world``'s table of TST001)."""

from __future__ import annotations

import copy
import io
import json
from typing import TYPE_CHECKING

import pandas as pd
import pytest
from audit_fixtures import fixture_connection, fixture_snapshot_ids
from engine_world import HOSTILE, config_file, engine_catalogue, history, service_id, write_store
from rich.console import Console
from test_audit_cli import tst001_waivers
from typer.testing import CliRunner

from toolkit.audit import AuditError, AuditResult, run_audit
from toolkit.cli import ExitCode, app
from toolkit.report.finding_story import explain_finding, story_renderable

if TYPE_CHECKING:
    from pathlib import Path

runner = CliRunner()
DAY = [pd.Timestamp(f"2026-01-0{n}", tz="UTC") for n in (1, 2, 3, 4)]


@pytest.fixture(scope="module")
def result() -> AuditResult:
    return run_audit(fixture_connection(history()), checks=engine_catalogue())


def episodes(result: AuditResult, name: str) -> list[tuple[object, ...]]:
    """Each episode as a tuple, NaT and NaN as None."""
    frame = result.episodes("TST001", service_id(name)).astype(object)
    return [tuple(r) for r in frame.where(frame.notna(), None).itertuples(index=False)]


def test_episodes_follow_the_alarms(result: AuditResult) -> None:
    assert episodes(result, "open") == [(DAY[0], DAY[3], 4, None, None)]
    assert episodes(result, "resolved") == [(DAY[1], DAY[2], 2, DAY[3], 48.0)]
    assert episodes(result, "regressed") == [
        (DAY[0], DAY[0], 1, DAY[1], 24.0),
        (DAY[3], DAY[3], 1, None, None),
    ]
    assert episodes(result, "gone") == [(DAY[0], DAY[2], 3, DAY[3], 72.0)]  # fixed by absence
    assert episodes(result, "fine") == []
    assert episodes(result, "once") == [(DAY[0], DAY[0], 1, DAY[1], 24.0)]


def test_fixed_episodes_average_to_the_mean_time_to_resolve(result: AuditResult) -> None:
    names = ("open", "new", "resolved", "regressed", "gone", "fine", "once")
    hours = pd.concat([result.episodes("TST001", service_id(n)).hours for n in names]).dropna()
    mttr = result.mttr().set_index("check_id")
    assert len(hours) == mttr.loc["TST001", "resolved_count"]
    assert hours.mean() == pytest.approx(mttr.loc["TST001", "mttr_hours"])


def test_episodes_end_at_the_judged_snapshot() -> None:
    day3 = fixture_snapshot_ids(4)[2]
    earlier = run_audit(fixture_connection(history()), checks=engine_catalogue(), snapshot=day3)
    # On day 3 the second episode of "regressed" has not begun, and "resolved" is open.
    assert earlier.target.seq == 3
    assert len(earlier.episodes("TST001", service_id("regressed"))) == 1
    ongoing = earlier.episodes("TST001", service_id("resolved"))
    assert ongoing.fixed_at.isna().all() and ongoing.snapshots.tolist() == [2]


def test_a_finding_by_id_or_unique_name(result: AuditResult) -> None:
    by_id = explain_finding(result, "TST001", service_id("regressed"))
    by_name = explain_finding(result, "TST001", "regressed")
    assert by_id.finding is not None and by_name.finding is not None
    assert by_id.finding["state"] == by_name.finding["state"] == "regressed"
    assert by_id.episodes.equals(by_name.episodes)
    document = by_name.as_json()
    assert document["check"]["id"] == "TST001" and document["resource_id"] == "svc-regressed"
    assert isinstance(document["finding"]["evidence"], dict)
    assert [e["hours"] for e in document["episodes"]] == [24.0, None]
    json.dumps(document)  # JSON-ready as it is


def test_a_finding_only_in_the_past(result: AuditResult) -> None:
    story = explain_finding(result, "TST001", service_id("once"))
    assert story.finding is None and len(story.episodes) == 1
    assert story.as_json()["resource"]["resource_name"] == "once"  # named, though not a finding
    # where it lives, by name: its owners' names come from the audit's other findings
    text = io.StringIO()
    Console(file=text, width=200, color_system=None).print(story_renderable(story))
    assert "core-platform / shop / staging" in text.getvalue()


def test_a_finding_only_in_the_past_by_its_name(result: AuditResult) -> None:
    """``once`` was in alarm on day 1 only: no finding now, but its name is still known."""
    story = explain_finding(result, "TST001", "once")
    assert story.resource_id == service_id("once") and story.finding is None
    assert story.episodes.snapshots.tolist() == [1]
    with pytest.raises(AuditError, match=r"TST001 never found anything on 'fine' \(svc-fine\)"):
        explain_finding(result, "TST001", "fine")  # a resource it never flagged


def test_what_to_pass_instead(result: AuditResult) -> None:
    with pytest.raises(AuditError, match=r"TST001 found nothing on 'nope'.*--check TST001"):
        explain_finding(result, "TST001", "nope")  # no resource has that id or name
    with pytest.raises(AuditError, match="NOPE001 is not a check of this audit"):
        explain_finding(result, "NOPE001", "open")
    twins = copy.deepcopy(history())
    for snapshot in twins["snapshots"]:
        for service in snapshot["tables"]["services"]:
            if service["id"] == service_id("new"):
                service["name"] = "open"
    twin = run_audit(fixture_connection(twins), checks=engine_catalogue())
    with pytest.raises(AuditError, match=r"2 findings of TST001 .* 'open': svc-.*pass the"):
        explain_finding(twin, "TST001", "open")
    assert explain_finding(twin, "TST001", service_id("new")).finding is not None


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("finding-cli")
    write_store(root / "store", history(hostile=True))
    return root


def finding(root: Path, *args: str) -> tuple[int, str, str]:
    config = config_file(root)
    outcome = runner.invoke(
        app,
        ["finding", *args, "--store", str(root / "store"), "--config", str(config)],
        terminal_width=160,
    )
    return outcome.exit_code, outcome.stdout, outcome.stderr


def test_cli_tells_the_story(store_dir: Path) -> None:
    waivers = tst001_waivers(store_dir, "waivers.toml", "regressed")
    code, out, _ = finding(store_dir, "TST001", "svc-regressed", "--waivers", str(waivers))
    assert code == ExitCode.OK
    assert "regressed (alarm in the judged snapshot)" in out
    assert "active: ops until 2099-01-01: r" in out
    assert "in alarm in 2 snapshot(s), 2 episode(s)" in out
    assert "2026-01-01 00:00" in out and "24 h" in out and "still in alarm" in out
    assert "\u2026" not in out.split("episodes in alarm", 1)[1]  # whole on 80 columns
    code, out, _ = finding(store_dir, "TST001", "svc-open", "--format", "json")
    assert code == ExitCode.OK
    document = json.loads(out)
    assert document["finding"]["resource_name"] == HOSTILE  # as it is, in JSON
    assert document["episodes"][0]["snapshots"] == 4
    code, out, _ = finding(store_dir, "TST001", "svc-open")
    assert "[bold]x[/bold]" in out  # a platform name is text, never markup
    assert finding(store_dir, "tst001", "svc-open")[0] == ExitCode.OK  # any case, as --check
    code, out, _ = finding(store_dir, "TST001", "once")  # only in the history, by name
    assert code == ExitCode.OK
    assert "once (service svc-once)" in out and "where" in out
    assert "ok in the judged snapshot" in " ".join(out.split())


def test_cli_errors_say_what_to_do(store_dir: Path) -> None:
    code, _, err = finding(store_dir, "TST009", "svc-open")
    assert code == ExitCode.CONFIG and "`platform-audit checks` lists them" in err
    code, _, err = finding(store_dir, "TST001", "svc-fine")
    said = " ".join(err.split())
    assert code == ExitCode.CONFIG and "`platform-audit audit --check TST001 --format csv`" in said
    code, _, err = finding(store_dir, "TST001", "svc-open", "--format", "xml")
    assert code == ExitCode.CONFIG and "--format must be table or json" in err
