"""What a reviewer reads in the report: where each finding is, which key collected, how many
critical findings there are, what the evidence verified."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import pandas as pd
import pytest
from markupsafe import escape

from toolkit.report.charts import reach_trend, severity_trend
from toolkit.report.html_report import render_html
from toolkit.report.report_view import (
    ACCOUNT_WIDE,
    ACCOUNT_WIDE_NOTE,
    location,
    service_changes,
    team_counts,
)
from toolkit.report.text_reports import render_json, render_markdown

if TYPE_CHECKING:
    from conftest import SimStore

    from toolkit.report import ReportData

T0 = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def html(report_data: ReportData) -> str:
    return render_html(report_data)


def _tables(text: str) -> list[list[str]]:
    """The Markdown's tables, each as its body rows (header and rule left out)."""
    tables: list[list[str]] = []
    current: list[str] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append(current[2:])
            current = []
    return tables


def test_location_names_the_owners_above_a_resource() -> None:
    owners = {"team_id": "t1", "team_name": "Acme", "project_name": "shop",
              "environment_name": "prod", "service_name": "auth"}  # fmt: skip
    variable = {**owners, "resource_type": "variable", "resource_name": "SECRET_KEY"}
    assert location(variable) == "Acme / shop / prod / auth"  # the service names it apart
    service = {**owners, "resource_type": "service", "resource_name": "auth"}
    assert location(service) == "Acme / shop / prod"
    project = {"team_id": "t1", "team_name": "Acme", "project_name": "shop",
               "resource_type": "project", "resource_name": "shop"}  # fmt: skip
    assert location(project) == "Acme"
    key = {"team_id": None, "resource_type": "credential", "resource_name": "ci"}
    assert location(key) == ACCOUNT_WIDE == "account-wide (no team)"
    assert location({"team_id": "t1", "team_name": "Acme", "resource_type": "team"}) == ""


def test_markdown_findings_rows_tell_same_named_resources_apart(
    report_data: ReportData,
) -> None:
    text = render_markdown(report_data, top=10_000)
    assert "| severity | state | check | resource | where | reason |" in text
    assert "| change | severity | check | resource | where | reason |" in text
    for table in _tables(text):
        assert len(table) == len(set(table)), "two rows of one table read the same"
    open_frame = report_data.unwaived_open
    names = open_frame[open_frame.resource_type == "variable"].resource_name
    shared = names[names.duplicated()]
    assert not shared.empty, "the store has no variable name in two services: nothing shown"
    rows = [r for t in _tables(text) for r in t if f"| {shared.iloc[0]} |".replace("_", "\\_") in r]
    assert len({r.split(" | ")[4] for r in rows}) > 1  # their where cells differ


def test_markdown_services_changes_name_where_each_service_is(report_data: ReportData) -> None:
    text = render_markdown(report_data)
    line = next(t for t in text.splitlines() if t.startswith("Services: "))
    entries = line.removeprefix("Services: ").rstrip(".").split("; ")
    assert len(entries) == len(set(entries))
    assert all(" / " in e for e in entries), entries  # (team / project / environment)


def test_html_service_changes_say_where_each_service_is(report_data: ReportData, html: str) -> None:
    changes = html[html.index('<section id="changes">') : html.index('<section id="checks">')]
    rows = service_changes(report_data)
    assert rows and "<th>where</th>" in changes
    for row in rows:
        assert row["where"].count(" / ") == 2  # team / project / environment
        assert f'<td class="where">{escape(row["where"])}</td>' in changes


def test_html_findings_name_the_service_of_a_service_level_variable(
    report_data: ReportData, html: str
) -> None:
    findings = report_data.open_findings
    service_level = findings[(findings.resource_type == "variable") & findings.service_name.notna()]
    assert not service_level.empty
    table = html[html.index('id="findings-table"') :]
    for f in service_level.itertuples():
        owners = (f.team_name, f.project_name, f.environment_name, f.service_name)
        assert f'<span class="where">{escape(" / ".join(owners))}</span>' in table


def test_account_wide_findings_are_labelled_and_explained(
    report_data: ReportData, html: str
) -> None:
    rows, _ = team_counts(report_data.unwaived_open)
    assert ACCOUNT_WIDE in [r["team"] for r in rows]  # the planted keys' findings
    summary = html[html.index('<section id="summary">') : html.index('<section id="trends">')]
    assert f">{escape(ACCOUNT_WIDE)}</a>" in summary and str(escape(ACCOUNT_WIDE_NOTE)) in summary
    text = render_markdown(report_data, top=10_000)
    assert f"| {ACCOUNT_WIDE} |" in text and "API keys are created in the account" in text
    keys = [r for t in _tables(text) for r in t if r.split(" | ")[2].startswith("KEY0")]
    assert keys and all(f"| {ACCOUNT_WIDE} |" in r for r in keys)


def test_evidence_says_what_was_verified(
    report_data: ReportData, html: str, sim_store: SimStore
) -> None:
    evidence = html[
        html.index('<section id="evidence">') : html.index(
            "</section>", html.index('<section id="evidence">')
        )
    ]
    assert "`" not in evidence  # the command is <code>, not literal backticks
    assert "<code>platform-audit store verify</code>" in evidence
    total = len(report_data.snapshots)
    assert f"Chain intact over all {total} snapshot(s)" in evidence
    assert "Content recomputed for 2 snapshot(s) (the judged and the compared snapshot)" in evidence
    assert f"The other {total - 2} snapshot(s) are checked by the chain only" in evidence
    cells = re.findall(r'<td class="nowrap">(recomputed|chain only)</td>', evidence)
    assert cells.count("recomputed") == 2 and cells.count("chain only") == total - 2
    full = sim_store.store.verify()  # what `store verify` recomputes: the same total
    report = report_data.verify
    assert full.content_checked == report.content_checked + report.content_skipped == total
    text = render_markdown(report_data)
    said = text[text.index("## Evidence") :]
    assert "\\`" not in said and "`platform-audit store verify` recomputes" in said
    assert " here: `platform-audit" in said  # the spaces around the code are kept


def test_json_evidence_names_the_snapshots_recomputed(report_data: ReportData) -> None:
    import json

    evidence = json.loads(render_json(report_data))["evidence"]
    target, compare = report_data.result.target, report_data.result.compare
    assert compare is not None
    assert evidence["verify"]["content_recomputed"] == [target.snapshot_id, compare.snapshot_id]
    checks = {s["snapshot_id"]: s["content_check"] for s in evidence["snapshots"]}
    changes = json.loads(render_json(report_data))["changes"]
    assert all(f["where"] for f in changes["findings"])  # as the tables show it
    assert all(s["where"] for s in changes["services"])
    assert checks[target.snapshot_id] == "recomputed"
    assert list(checks.values()).count("chain only") == len(checks) - 2


def _series(counts: dict[str, list[int]]) -> pd.DataFrame:
    rows = [
        (f"s{day}", T0 + timedelta(days=day), severity, n)
        for severity, values in counts.items()
        for day, n in enumerate(values)
    ]
    return pd.DataFrame(rows, columns=["snapshot_id", "snapshot_at", "severity", "alarms"])


def test_severity_trend_gives_each_severity_its_own_readable_panel() -> None:
    series = _series({"critical": [5, 6], "high": [118, 120], "medium": [99, 105],
                      "low": [17, 17], "info": [0, 0]})  # fmt: skip
    fig = severity_trend(series)
    bars = {trace.name: trace for trace in fig.data}
    assert list(bars) == ["critical", "high", "medium", "low"]  # critical first, on top
    axes = {trace.name: trace.yaxis for trace in fig.data}
    assert len(set(axes.values())) == 4  # a scale each: not one stack
    layout = fig.layout
    critical_axis = layout[axes["critical"].replace("y", "yaxis")]
    top = critical_axis.range[1]
    assert 6 / top >= 0.7  # 6 critical findings fill most of their panel, not 1-2 pixels
    assert critical_axis.domain[0] > layout[axes["low"].replace("y", "yaxis")].domain[0]
    assert list(bars["critical"].text) == [5, 6]  # the counts are written on the bars


def test_key_reach_shows_every_key_and_names_the_collecting_one() -> None:
    rows = [(f"s{d}", T0 + timedelta(days=d), key, n)
            for d in range(3)
            for key, n in (("viewer", 40 + d), ("demo", 40 + d), ("ci", 1))]  # fmt: skip
    reach = pd.DataFrame(
        rows, columns=["snapshot_id", "snapshot_at", "credential_name", "services"]
    )
    fig = reach_trend(reach, collectors={"demo"})
    traces = {t.name.split(",")[0].split(":")[0]: t for t in fig.data}
    assert fig.data[-1].name == "demo, collecting key: 42"  # drawn last: on top
    assert traces["viewer"].name == "viewer: 42"
    # viewer's line lies under demo's: drawn wider beneath it, so both show
    assert traces["viewer"].line.width > traces["demo"].line.width
    assert traces["viewer"].marker.size > traces["demo"].marker.size
    assert traces["ci"].line.width == traces["demo"].line.width  # nothing covers it
    symbols = {t.marker.symbol for t in fig.data}
    assert len(symbols) == len(fig.data)  # a marker each, not only a colour


def test_html_marks_the_collecting_key(report_data: ReportData, html: str) -> None:
    collector = report_data.snapshots[-1].credential_name
    assert collector
    figure = html[html.index('id="figure-reach-trend"') :].split("</script>", 1)[0]
    assert f"{collector}, collecting key: " in figure
