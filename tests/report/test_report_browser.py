"""The HTML report in headless Chromium, opened from disk: it draws, stays offline, shows text.

Chromium is driven over the DevTools protocol (``report_browser.py``), which reports every
request the page makes, every console error and uncaught exception, and any dialog; name
lookups are also mapped to nothing, so a request to another host could not succeed. The
screenshots land in ``test-artifacts/``; with ``PLATFORM_AUDIT_UPDATE_SCREENSHOTS=1`` they
also refresh the documentation's copies in ``docs/screenshots/``.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from report_browser import Browser, Page

from toolkit.report import render_report_data
from toolkit.sim.vocabulary import HTML_NAME, HTML_PROJECT_NAME

if TYPE_CHECKING:
    from collections.abc import Iterator

    from toolkit.report import ReportData

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
SCREENSHOTS = ROOT / "docs" / "screenshots"
CHARTS = "[...document.querySelectorAll('div.chart[data-figure]')]"
VISIBLE = "[...document.querySelectorAll('#findings-table tbody tr:not([hidden])')]"


@pytest.fixture(scope="module")
def page(
    chromium: Path, report_data: ReportData, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Page]:
    folder = tmp_path_factory.mktemp("browser")
    report = folder / "report.html"
    report.write_text(render_report_data(report_data, "html"), encoding="utf-8")
    with Browser.launch(str(chromium), folder / "profile") as browser:
        opened = browser.open(report.as_uri())
        opened.wait_for(
            f"{CHARTS}.length > 0 && {CHARTS}.every(d => d.querySelector('svg.main-svg'))"
        )
        yield opened


def test_every_chart_is_drawn(page: Page) -> None:
    drawn = page.evaluate(f"{CHARTS}.map(d => [d.id, d.querySelectorAll('svg.main-svg').length])")
    names = {name for name, svgs in drawn if svgs}
    expected = {"open-by-area", "severity-trend", "runtime-trend", "limits-trend", "reach-trend"}
    assert {f"chart-{n}" for n in (*expected, "reach-heatmap")} <= names
    assert page.evaluate("document.querySelectorAll('.js-plotly-plot .gtitle').length") >= 6


def test_no_request_leaves_the_file_and_no_console_error(page: Page) -> None:
    assert page.requests, "the protocol saw no request at all: the check would be blind"
    outside = [u for u in page.requests if not u.startswith(("file:", "data:", "about:"))]
    assert outside == []
    assert page.console_errors == []
    assert page.dialogs == []


def test_hostile_names_are_text(page: Page) -> None:
    text = page.evaluate("document.body.innerText")
    assert HTML_NAME in text
    assert HTML_PROJECT_NAME in text
    assert page.evaluate("document.querySelectorAll('img, iframe, object, embed').length") == 0
    with_handlers = page.evaluate(
        "[...document.querySelectorAll('*')]"
        ".filter(e => [...e.attributes].some(a => a.name.startsWith('on')))"
        ".map(e => e.outerHTML.slice(0, 80))"
    )
    assert with_handlers == []
    ticks = page.evaluate(
        "[...document.querySelectorAll('#chart-reach-heatmap .xtick text')].map(t => t.textContent)"
    )
    assert any(t.startswith("legacy <b onmouseover=alert(1)>ops<") for t in ticks), ticks


def test_findings_sort_and_filter(page: Page) -> None:
    first = "document.querySelector('#findings-table tbody tr:not([hidden])').dataset.severity"
    assert page.evaluate(first) == "critical"
    page.evaluate("document.querySelector('#findings-table th[data-sort=number]').click()")
    assert page.evaluate(first) != "critical"
    page.evaluate("document.querySelector('#findings-table th[data-sort=number]').click()")
    assert page.evaluate(first) == "critical"
    total = page.evaluate("document.querySelectorAll('#findings-table tbody tr').length")
    shown = _filter(page, "filter-text", "onerror=alert(1)")
    assert 0 < shown < total
    assert _filter(page, "filter-text", "") == total
    waived = page.evaluate("document.querySelectorAll('tr[data-waived=yes]').length")
    assert waived > 0
    assert _filter(page, "filter-waived", False) == total - waived
    assert _filter(page, "filter-waived", True) == total
    assert page.evaluate("document.getElementById('filter-count').textContent") == (
        f"{total} of {total} match"
    )


def test_a_check_in_the_by_check_table_lists_its_findings(page: Page) -> None:
    rows = "[...document.querySelectorAll('#findings-table tbody tr')]"
    checks = page.evaluate(f"[...new Set({rows}.map(r => r.dataset.check))]")
    assert len(checks) > 1
    _filter(page, "filter-text", "a phrase no finding has")  # the click clears other filters
    for check in checks[:3]:
        page.evaluate(
            "document.querySelector("
            f"'a.filter-link[data-filter=check][data-value={json.dumps(check)}]').click()"
        )
        shown = page.evaluate(f"{rows}.filter(r => !r.hidden).map(r => r.dataset.check)")
        assert shown and set(shown) == {check}
        same = page.evaluate(f"{rows}.filter(r => r.dataset.check == {json.dumps(check)}).length")
        assert len(shown) == same
    total = page.evaluate(f"{rows}.length")
    assert _filter(page, "filter-check", "") == total


def test_a_team_in_the_summary_lists_its_open_findings(page: Page) -> None:
    teams = page.evaluate(
        "[...document.querySelectorAll('a.filter-link[data-filter=team]')]"
        ".map(a => [a.dataset.value, Number(a.closest('tr').lastElementChild.textContent)])"
    )
    assert len(teams) >= 2  # a team, and "account-wide (no team)" for keys
    for team, total in teams:
        page.evaluate(
            "document.querySelector("
            f"'a.filter-link[data-filter=team][data-value={json.dumps(team)}]').click()"
        )
        shown = page.evaluate(f"{VISIBLE}.map(r => [r.dataset.team, r.dataset.waived])")
        assert len(shown) == total and shown  # the row's total: its unwaived open findings
        assert {tuple(s) for s in shown} == {(team, "no")}
    page.evaluate("document.getElementById('filter-waived').checked = true")
    total = page.evaluate("document.querySelectorAll('#findings-table tbody tr').length")
    assert _filter(page, "filter-team", "") == total


def test_findings_are_paged(page: Page) -> None:
    total = page.evaluate("document.querySelectorAll('#findings-table tbody tr').length")
    assert total > 100, "the report needs more findings than two pages of 50"
    info = "document.getElementById('page-info').textContent"
    disabled = "['page-prev', 'page-next'].map(b => document.getElementById(b).disabled)"
    assert _filter(page, "page-size", "50") == 50
    assert page.evaluate(info) == "rows 1\u201350" and page.evaluate(disabled) == [True, False]
    seen = set(page.evaluate(f"{VISIBLE}.map(r => r.rowIndex)"))
    pages = 1
    while not page.evaluate("document.getElementById('page-next').disabled"):
        page.evaluate("document.getElementById('page-next').click()")
        rows = page.evaluate(f"{VISIBLE}.map(r => r.rowIndex)")
        assert 0 < len(rows) <= 50 and not seen & set(rows)  # each row on one page only
        seen |= set(rows)
        pages += 1
    assert len(seen) == total and pages == -(-total // 50)
    assert page.evaluate(info) == f"rows {(pages - 1) * 50 + 1}\u2013{total}"
    page.evaluate("document.getElementById('page-prev').click()")
    assert page.evaluate(info) == f"rows {(pages - 2) * 50 + 1}\u2013{(pages - 1) * 50}"
    shown = _filter(page, "filter-text", "a")  # a new filter starts at its first page
    assert shown == 50 and page.evaluate(info) == "rows 1\u201350"
    _filter(page, "filter-text", "")
    assert _filter(page, "page-size", "0") == total  # all
    assert _filter(page, "page-size", "200") == min(total, 200)


def _filter(page: Page, control: str, value: str | bool) -> int:
    prop = "checked" if isinstance(value, bool) else "value"
    page.evaluate(
        f"(() => {{ const c = document.getElementById({json.dumps(control)}); "
        f"c.{prop} = {json.dumps(value)}; "
        "c.dispatchEvent(new Event(c.type == 'search' ? 'input' : 'change')); })()"
    )
    shown: int = page.evaluate(f"{VISIBLE}.length")
    return shown


def test_screenshots(page: Page) -> None:
    top = page.screenshot(ARTIFACTS / "report.png", height=1400)
    findings = page.screenshot(ARTIFACTS / "report-findings.png", selector="#findings", height=1100)
    scope = page.screenshot(ARTIFACTS / "report-key-scope.png", selector="#key-scope")
    checks = page.screenshot(ARTIFACTS / "report-checks.png", selector="#checks", height=900)
    for shot in (top, findings, scope, checks):
        assert shot.read_bytes().startswith(b"\x89PNG") and shot.stat().st_size > 10_000
    if not os.environ.get("PLATFORM_AUDIT_UPDATE_SCREENSHOTS"):
        return  # a test run never rewrites tracked files; set the variable to refresh them
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(top, SCREENSHOTS / "report-top.png")
    shutil.copyfile(findings, SCREENSHOTS / "report-findings.png")
    shutil.copyfile(scope, SCREENSHOTS / "report-key-scope.png")
    shutil.copyfile(checks, SCREENSHOTS / "report-checks.png")
