"""The report in each format from a store of simulated days: content, self-containment, escaping."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import re
import stat
from datetime import timedelta
from html.parser import HTMLParser
from typing import TYPE_CHECKING

import pandas as pd
import pytest
from markupsafe import escape

import toolkit.report
from toolkit.audit import FINDING_COLUMNS
from toolkit.errors import AuditError
from toolkit.report import Trends, gather_report, render_report_data, write_report
from toolkit.report.charts import plot_text
from toolkit.report.html_report import PAGE_ROWS, render_html, script_json
from toolkit.report.report_view import duration_text, team_choices, team_counts
from toolkit.report.text_reports import render_markdown
from toolkit.sim.vocabulary import HTML_NAME, HTML_PROJECT_NAME

if TYPE_CHECKING:
    from pathlib import Path

    from conftest import SimStore

    from toolkit.report import ReportData

HOSTILE = (HTML_NAME, HTML_PROJECT_NAME)


class Tags(HTMLParser):
    """Every start tag with its attributes, and the text of each script element."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self._in_script: dict[str, str | None] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._in_script = dict(attrs)
            self.scripts.append((self._in_script, ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = None

    def handle_data(self, data: str) -> None:
        if self._in_script is not None:
            attrs, text = self.scripts[-1]
            self.scripts[-1] = (attrs, text + data)


@pytest.fixture(scope="module")
def html(report_data: ReportData) -> str:
    return render_report_data(report_data, "html")


@pytest.fixture(scope="module")
def tags(html: str) -> Tags:
    parser = Tags()
    parser.feed(html)
    return parser


def test_public_names(report_data: ReportData) -> None:
    names = toolkit.report.__all__
    assert names == sorted(names, key=lambda n: (not n.isupper(), n))
    for name in names:
        assert getattr(toolkit.report, name) is not None
    for name in ("write_report", "render_report", "gather_report"):
        assert getattr(toolkit.report, name).__doc__


def test_gathered_content(report_data: ReportData, sim_store: SimStore) -> None:
    result = report_data.result
    assert result.target.snapshot_id == sim_store.snapshot_ids[-1]
    assert result.compare is not None and result.compare.snapshot_id == sim_store.snapshot_ids[-2]
    assert len(report_data.trends.runtime) == 3
    assert set(report_data.trends.severity.severity) >= {"critical", "high", "medium", "low"}
    assert {"admin", "viewer", "limited"} <= set(report_data.reach.credential_name)
    assert report_data.verify.ok
    assert [s.snapshot_id for s in report_data.snapshots] == list(sim_store.snapshot_ids)
    statuses = result.waiver_report.status.tolist()
    # entry 1 ends within days, but its renewal (4) holds its finding longer: a duplicate
    assert statuses == ["duplicate", "expired", "stale", "active"]  # entries 1 to 4


def test_html_is_self_contained(html: str, tags: Tags) -> None:
    assert html.count("* plotly.js v") == 1, "plotly.js must be embedded exactly once"
    assert "cdn.plot.ly/plotly" not in html
    for tag, attrs in tags.tags:
        assert tag not in ("link", "iframe", "img", "object", "embed"), tag
        for name in ("src", "href", "action", "data", "poster"):
            value = attrs.get(name) or ""
            assert "://" not in value, f"<{tag} {name}={value!r}>"
            assert not value.startswith("//"), f"<{tag} {name}={value!r}>"
    assert all("src" not in attrs for attrs, _ in tags.scripts)
    styles = re.findall(r"<style>(.*?)</style>", html, re.S)
    assert len(styles) == 1
    assert "@import" not in styles[0] and "url(" not in styles[0]


def test_html_sections_and_charts(html: str, tags: Tags, report_data: ReportData) -> None:
    ids = {attrs.get("id") for _, attrs in tags.tags}
    for section in (
        "summary",
        "trends",
        "changes",
        "checks",
        "findings",
        "key-scope",
        "waivers",
        "evidence",
    ):
        assert section in ids
    figures = {
        attrs["id"]: json.loads(text)
        for attrs, text in tags.scripts
        if attrs.get("type") == "application/json"
    }
    expected = {"open-by-area", "severity-trend", "runtime-trend", "limits-trend"}
    assert {f"figure-{n}" for n in (*expected, "reach-trend", "reach-heatmap")} <= set(figures)
    for figure in figures.values():
        layout = figure["layout"]
        assert layout["title"]["text"]
        # every axis that shows its ticks is named (small multiples: the bottom x axis)
        x_titles = [
            v.get("title", {}).get("text") for k, v in layout.items() if k.startswith("xaxis")
        ]
        assert any(x_titles) and layout["yaxis"]["title"]["text"]
    for sid in (s.snapshot_id for s in report_data.snapshots):
        assert sid in html
    assert report_data.snapshots[-1].content_hash in html
    assert "Chain intact over all" in html


def test_html_escapes_platform_text(html: str, tags: Tags) -> None:
    for name in HOSTILE:
        assert name not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "&lt;b onmouseover=alert(1)&gt;ops&lt;/b&gt;" in html
    assert "<b>raw</b>" not in html and "&lt;b&gt;raw&lt;/b&gt;" in html
    assert not [t for t, a in tags.tags if any(k.startswith("on") for k in a)]
    for attrs, text in tags.scripts:
        if attrs.get("type") == "application/json":
            assert "<" not in text and ">" not in text and "&" not in text


def test_plotly_labels_are_escaped(tags: Tags) -> None:
    heatmap = next(
        json.loads(text)
        for attrs, text in tags.scripts
        if attrs.get("id") == "figure-reach-heatmap"
    )
    labels = heatmap["data"][0]["x"]
    assert any(label.startswith("legacy &lt;b onmouseover") for label in labels)
    assert not any("<" in label for label in labels)


def test_script_json_cannot_end_its_element() -> None:
    text = json.dumps({"name": "</script><script>alert(1)</script> & \u2028\u2029 <!--"})
    safe = str(script_json(text))
    assert not re.search(r"[<>&\u2028\u2029]", safe)
    assert json.loads(safe) == json.loads(text)


def test_plot_text_shortens_before_escaping() -> None:
    assert plot_text("<b>x</b>") == "&lt;b&gt;x&lt;/b&gt;"
    assert plot_text("&" * 100, limit=10) == "&amp;" * 9 + "\u2026"


def test_html_findings_by_check(html: str, report_data: ReportData) -> None:
    section = html[html.index('<section id="checks">') : html.index('<section id="findings">')]
    findings = html[html.index('<section id="findings">') : html.index('id="key-scope"')]
    rows = re.findall(r"<tr(?: class=\"clean\")?><td>.*?</tr>", section)
    assert len(rows) == len(report_data.result.checks)  # every check run, clean ones too
    linked = 0
    for row in rows:
        check = re.search(r'</span></td><th scope="row">(?:<a [^>]*>)?(\w+)', row)
        assert check, row
        cells = re.findall(r'<td class="num">([^<]*)</td>', row)
        open_now, waived = int(cells[0]), int(cells[3])
        listed = [
            re.search(r'data-waived="(\w+)"', tr).group(1)  # type: ignore[union-attr]
            for tr in re.findall(rf'<tr [^>]*data-check="{check.group(1)}"[^>]*>', findings)
        ]
        assert (open_now, waived) == (listed.count("no"), listed.count("yes")), check.group(1)
        linked += 'data-filter="check"' in row
        assert ('class="clean"' in row) == (not listed)
    assert linked == len(set(report_data.open_findings.check_id)) > 0
    assert "days" in section or " h<" in section  # a mean time to resolve is shown


def test_html_findings_beyond_the_first_page_are_hidden(html: str, report_data: ReportData) -> None:
    def finding_rows(page: str) -> list[str]:
        table = page[page.index('id="findings-table"') : page.index('id="key-scope"')]
        return re.findall(r"<tr data-severity=[^>]*>", table)

    total = len(report_data.open_findings)
    assert 20 < total < PAGE_ROWS  # one page by default: nothing hidden, no note
    assert not [row for row in finding_rows(html) if row.endswith(" hidden>")]
    assert "<noscript>" not in html
    paged = render_html(report_data, page_rows=20)
    hidden = [row.endswith(" hidden>") for row in finding_rows(paged)]
    assert hidden == [False] * 20 + [True] * (total - 20)  # the JS shows them page by page
    assert f"shows the first 20 of its {total} findings" in paged
    assert '<option value="20" selected>20</option>' in paged


def test_team_counts_rank_teams_by_their_most_severe_findings() -> None:
    findings = pd.DataFrame(
        [
            ("t-a", "alpha", "high"), ("t-a", "alpha", "high"), ("t-a", "alpha", "low"),
            ("t-b", "beta", "critical"),
            ("t-c", None, "high"), ("t-c", None, "high"), ("t-c", None, "medium"),
            (None, None, "medium"),
        ],
        columns=["team_id", "team_name", "severity"],
    )  # fmt: skip
    rows, more = team_counts(findings)
    assert [r["team"] for r in rows] == ["beta", "t-c", "alpha", "account-wide (no team)"]
    assert rows[1]["counts"] == [0, 2, 1, 0, 0] and rows[1]["total"] == 3
    assert more == 0
    top, more = team_counts(findings, top=2)
    assert [r["team"] for r in top] == ["beta", "t-c"] and more == 2
    assert team_counts(findings.iloc[:0]) == ([], 0)
    assert rows[3]["team_id"] == "-"  # the HTML's value for findings of no team
    assert team_choices(findings) == [
        ("-", "account-wide (no team)"), ("t-a", "alpha"), ("t-b", "beta"), ("t-c", "t-c")
    ]  # fmt: skip


def test_reports_count_open_findings_by_team(html: str, report_data: ReportData) -> None:
    rows, _ = team_counts(report_data.unwaived_open)
    assert rows
    summary = html[html.index('<section id="summary">') : html.index('<section id="trends">')]
    table = summary.split("<h3>Unresolved findings by team</h3>", 1)[1]
    for row in rows:
        link = f'data-value="{escape(row["team_id"])}" data-waived="no">{escape(row["team"])}</a>'
        assert link in table
    text = render_markdown(report_data)
    assert "## Unresolved findings by team" in text and f"| {rows[0]['total']} |" in text


def test_duration_text() -> None:
    assert [duration_text(h) for h in (None, 0.5, 1.0, 47.4, 48.0, 84.0)] == [
        "", "30 min", "1 h", "47 h", "2.0 days", "3.5 days",
    ]  # fmt: skip


def test_html_marks_waivers(html: str) -> None:
    waivers = html[html.index('id="waivers"') : html.index('id="evidence"')]
    summary = " ".join(html[html.index('id="summary"') : html.index('id="trends"')].split())
    said = "<strong>0</strong> waiver(s) ending within 14 days, <strong>1</strong> expired"
    assert said in summary and "<strong>1</strong> duplicate" in summary
    for status in ("active", "duplicate", "expired", "stale"):
        assert f'class="waiver-{status}"' in waivers
    assert "held by waiver #4" in waivers
    assert "ops-team@example.com" in waivers and "dba@example.com" in waivers
    findings = html[html.index('id="findings"') : html.index('id="key-scope"')]
    assert ">waived</span>" in findings and ">waiver expired</span>" in findings


def test_markdown(report_data: ReportData) -> None:
    text = render_report_data(report_data, "markdown")
    assert text.startswith("# Platform audit report\n")
    assert "## Since the previous review" in text and "unresolved findings" in text
    # the per-check table's first count is every unresolved finding, not the state open
    assert "| check | severity | unresolved | new | regressed |" in text
    assert "## Waivers to look at" in text
    attention = text[text.index("## Waivers to look at") : text.index("## Evidence")]
    assert [line.split(" | ")[1] for line in attention.splitlines()[4:-1]] == [
        "duplicate", "expired", "stale",
    ]  # fmt: skip
    by_check = text.split("## Findings by check", 1)[1].split("\n## ", 1)[0]
    per_check = report_data.result.per_check()
    busy = per_check[(per_check.alarming + per_check.waived + per_check.resolved) > 0]
    table = [line for line in by_check.splitlines() if line.startswith("| ")][1:]
    assert [line.split(" ", 2)[1] for line in table] == list(busy.check_id)
    clean = per_check.check_id[~per_check.check_id.isin(busy.check_id)]
    assert f"Nothing found by {len(clean)} check(s): {', '.join(clean)}." in by_check
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    assert not [r for r in rows if re.search(r"(?<!\\)[`<]", r)], "backticks and < are escaped"


def test_markdown_escapes_platform_text(report_data: ReportData) -> None:
    text = render_markdown(report_data, top=10_000)  # every open finding, the hostile ones too
    for name in HOSTILE:
        assert name not in text
    assert r"""\<img src=x onerror=alert(1)\> "quoted" \& 'single'""" in text


def test_markdown_tables_keep_their_columns(report_data: ReportData) -> None:
    text = render_markdown(report_data, top=10_000)
    table: list[int] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            table.append(len(re.split(r"(?<!\\)\|", line)))
        elif table:
            assert len(set(table)) == 1, f"a row has more or fewer cells: {table}"
            table = []


def test_json(report_data: ReportData) -> None:
    document = json.loads(render_report_data(report_data, "json"))
    assert document["snapshot"]["snapshot_id"] == report_data.result.target.snapshot_id
    assert len(document["findings"]) == len(report_data.result.findings)
    assert document["evidence"]["verify"]["ok"] is True
    assert len(document["evidence"]["snapshots"]) == 3
    assert len(document["trends"]["runtime"]) == 3
    assert document["key_reach"] and document["changes"]["counts"]["new"] >= 0
    names = {f["resource_name"] for f in document["findings"]}
    assert HTML_NAME in names  # JSON keeps the text as it is; the encoder makes it safe


def test_csv(report_data: ReportData) -> None:
    rows = list(csv.reader(io.StringIO(render_report_data(report_data, "csv"))))
    assert tuple(rows[0]) == FINDING_COLUMNS
    assert len(rows) - 1 == len(report_data.result.findings)


def test_since_limits_trends_and_appendix(sim_store: SimStore, report_data: ReportData) -> None:
    since = report_data.snapshots[1].snapshot_at - timedelta(minutes=1)
    data = gather_report(sim_store.store, since=since.replace(tzinfo=None))
    t = data.trends
    assert len(data.trends.runtime) == 2
    assert [s.snapshot_id for s in data.snapshots] == list(sim_store.snapshot_ids[1:])
    empty = Trends(*(frame.iloc[0:0] for frame in (t.severity, t.runtime, t.reach)))
    assert "nothing to draw" in render_report_data(dataclasses.replace(data, trends=empty), "html")


def test_compare_to_and_write_report(sim_store: SimStore, tmp_path: Path) -> None:
    first = sim_store.snapshot_ids[0]
    out = write_report(
        sim_store.store, tmp_path / "deep" / "r.md", format="markdown", compare_to=first[:20]
    )
    assert out == tmp_path / "deep" / "r.md"
    assert first in out.read_text(encoding="utf-8")
    assert stat.S_IMODE(out.stat().st_mode) == 0o644
    assert [p.name for p in out.parent.iterdir()] == ["r.md"]  # no temporary file left


def test_errors(sim_store: SimStore, report_data: ReportData, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="format must be one of"):
        render_report_data(report_data, "pdf")
    with pytest.raises(ValueError, match="format must be one of"):
        write_report(sim_store.store, tmp_path / "x.pdf", format="pdf")
    with pytest.raises(AuditError, match="is not a committed snapshot"):
        gather_report(sim_store.store, compare_to="ffffffff")


def test_markdown_waiver_rows_name_ids_matching_nothing() -> None:
    from toolkit.report.text_reports import _matches

    waiver = {"selector": "resources: a, b", "stale_ids": "b"}
    assert _matches(waiver) == "resources: a, b; matching nothing: b"  # as the HTML shows them
    assert _matches({**waiver, "stale_ids": None}) == "resources: a, b"


def test_services_a_failed_listing_left_out_are_not_collected(report_data: ReportData) -> None:
    """A service missing from the judged snapshot only because a listing failed there is
    shown as not collected, in both formats, with the side it is missing from."""
    assert report_data.changes is not None
    lost = pd.DataFrame(
        {"id": ["svc-lost"], "name": ["ledger"], "missing_from": ["to"], "why": ["a <failure>"]}
    )
    changes = dataclasses.replace(report_data.changes, not_collected=lost)
    data = dataclasses.replace(report_data, changes=changes)
    markdown = render_report_data(data, "markdown")
    assert "1 not collected (not seen by one snapshot's collection)" in markdown
    assert "not collected ledger" in markdown
    html = render_html(data)
    assert "a &lt;failure&gt; in the judged snapshot" in html
    assert 'class="badge change-not-collected">not collected<' in html
    assert "<strong>1</strong> not collected (not seen by one snapshot's collection)" in html
