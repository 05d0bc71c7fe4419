"""The HTML report: one self-contained file, plotly.js inlined once, no request to any host.

The page is a jinja2 template with autoescaping on, so every value from the platform is
text. The only markup that is not escaped is the toolkit's own: the stylesheet and script
files beside the template, plotly.js (``plotly.offline.get_plotlyjs()``, in one script
tag) and each figure's JSON in a ``<script type="application/json">`` block, made safe by
:func:`script_json` (``<``, ``>``, ``&``, U+2028 and U+2029 as ``\\uXXXX`` escapes). Figure
labels that carry platform names are escaped before plotly sees them (see ``charts.py``).
Example::

    html = render_html(gather_report(store))
"""

from __future__ import annotations

import re
from datetime import date, datetime
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2
from markupsafe import Markup, escape

from toolkit.audit import AREAS, SEVERITIES
from toolkit.audit.waivers import EXPIRING_DAYS
from toolkit.report.charts import report_figures
from toolkit.report.exports.formats import partial_lines
from toolkit.report.report_view import (
    ACCOUNT_WIDE_NOTE,
    NO_TEAM,
    area_counts,
    changed_findings,
    check_rows,
    code_spans,
    finding_rows,
    service_changes,
    snapshot_rows,
    summary_counts,
    team_choices,
    team_counts,
    verify_lines,
)

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from toolkit.report.report_data import ReportData

__all__ = ["PAGE_ROWS", "TEMPLATES", "render_html", "script_json"]

TEMPLATES = Path(__file__).with_name("templates")
_SCRIPT_END = re.compile(r"</(script)", re.IGNORECASE)
_JSON_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}
_JSON_UNSAFE = re.compile("[<>&\u2028\u2029]")


def script_json(text: str) -> Markup:
    """JSON text safe inside a ``<script>`` element: it cannot end it or open a comment.

    The characters replaced can only occur inside JSON strings, where the ``\\uXXXX``
    escape means the same character, so ``JSON.parse`` returns the same value.
    """
    return Markup(_JSON_UNSAFE.sub(lambda m: _JSON_ESCAPES[m.group(0)], text))  # noqa: S704 - escaped above


PAGE_ROWS = 200
"""Findings shown at a time in the HTML report's table: a browser lays out tens of
thousands of rows in tens of seconds, and again on every sort or cleared filter."""
_PAGE_SIZES = (50, 200, 1000, 0)  # 0: all


def render_html(data: ReportData, *, page_rows: int = PAGE_ROWS) -> str:
    """The report as one HTML document (about 5 MB, most of it plotly.js, for a few hundred
    findings); the findings table shows ``page_rows`` rows at a time."""
    figures = report_figures(data)
    result = data.result
    open_frame = data.unwaived_open
    context: dict[str, Any] = {
        "version": data.toolkit_version,
        "generated_at": data.generated_at,
        "store_url": data.store_url,
        "since": data.since,
        "target": result.target,
        "compare": result.compare,
        "checks": len(result.checks),
        "history_count": len(data.snapshots),
        "configured": data.configured,
        "partial_lines": partial_lines(result),
        "severities": SEVERITIES,
        "areas": sorted(set(AREAS) | set(data.open_findings.area)),
        "open_total": len(open_frame),
        "open_by_severity": [(s, int((open_frame.severity == s).sum())) for s in SEVERITIES],
        "counts": summary_counts(data),
        "area_rows": area_counts(open_frame),
        "team_rows": team_counts(open_frame),
        "team_options": team_choices(data.open_findings),
        "no_team": NO_TEAM,
        "account_wide_note": ACCOUNT_WIDE_NOTE,
        "expiring_days": EXPIRING_DAYS,
        "has_trends": not data.trends.empty,
        "changed_findings": changed_findings(data),
        "check_rows": check_rows(data),
        "service_changes": service_changes(data),
        "findings": finding_rows(data.open_findings),
        "page_rows": page_rows,
        "page_sizes": sorted({*_PAGE_SIZES, page_rows}, key=lambda n: n or float("inf")),
        "has_reach": "reach-heatmap" in figures,
        "waivers": _records(result.waiver_report),
        "verify_ok": data.verify.ok,
        "verify_lines": verify_lines(data),
        "verify_breaks": [str(b) for b in data.verify.breaks[:20]],
        "snapshots": snapshot_rows(data.snapshots, data.content_verified),
        "chart": _chart_renderer(figures),
        "css": Markup(_asset("report.css")),  # noqa: S704 - the toolkit's own file
        "js": Markup(_safe_script(_asset("report.js"))),  # noqa: S704 - the toolkit's own file
        "plotly_js": Markup(_safe_script(_plotly_js())),  # noqa: S704 - plotly's own bundle
    }
    return _environment().get_template("report.html.j2").render(context)


def _chart_renderer(figures: dict[str, go.Figure]) -> Any:
    def chart(name: str) -> Markup:
        figure = figures.get(name)
        if figure is None:
            return Markup("")
        title = figure.layout.title.text or name
        return Markup(
            '<div class="chart" id="chart-{0}" data-figure="figure-{0}" role="img" '
            'aria-label="{1}"></div>'
            '<script type="application/json" id="figure-{0}">{2}</script>'
        ).format(name, title, script_json(figure.to_json()))

    return chart


@cache
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=False,
        keep_trailing_newline=True,
    )
    env.filters["when"] = _when
    env.filters["code_spans"] = _code_markup
    return env


def _when(value: object) -> str:
    """A time as ``2026-01-04 00:00 UTC`` (the store keeps UTC)."""
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M UTC")
    if isinstance(value, date):
        return value.isoformat()
    return "" if value is None else str(value)


def _code_markup(text: str) -> Markup:
    """Text with its backtick spans as ``<code>``, every part escaped."""
    return Markup("").join(
        Markup("<code>{}</code>").format(part) if code else escape(part)
        for part, code in code_spans(text)
    )


@cache
def _asset(name: str) -> str:
    return (TEMPLATES / name).read_text(encoding="utf-8")


@cache
def _plotly_js() -> str:
    from plotly.offline import get_plotlyjs

    return str(get_plotlyjs())


def _safe_script(source: str) -> str:
    """Script text that cannot close its element early (``</script`` -> ``<\\/script``).

    Inside a JavaScript string, regular expression or comment ``<\\/`` means ``</``.
    """
    return _SCRIPT_END.sub(r"<\\/\1", source)


def _records(frame: Any) -> list[dict[str, Any]]:
    from toolkit.report.exports.formats import frame_records

    return frame_records(frame)
