"""The review as one offline, printable HTML file, styled like the audit report.

A jinja2 template with autoescaping on: every value from the platform or the waiver file is
text. The only markup not escaped is the toolkit's own: the report's stylesheet
(:data:`toolkit.report.html_report.TEMPLATES`) and this package's. Time in violation is
drawn as CSS bars (widths computed here), so the page needs no script. Example::

    html = review_html(gather_review(store, period))
"""

from __future__ import annotations

from datetime import date, datetime
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2
from markupsafe import Markup

from toolkit.report.html_report import TEMPLATES as REPORT_TEMPLATES
from toolkit.review.figures import coverage_sentence

if TYPE_CHECKING:
    from toolkit.review.figures import CheckFigures, ReviewData

__all__ = ["review_html"]

TEMPLATES = Path(__file__).with_name("templates")


def review_html(data: ReviewData) -> str:
    """The review as one HTML document."""
    css = _asset(REPORT_TEMPLATES / "report.css") + _asset(TEMPLATES / "review.css")
    context: dict[str, Any] = {
        "data": data,
        "previous": data.period.previous(),
        "coverage": coverage_sentence(data.evidence.gaps, data.period.days),
        "checks": _bars(data.checks),
        "requirements": _bars(data.requirements),
        "totals": _totals(data),
        "css": Markup(css),  # noqa: S704 - the toolkit's own files
    }
    return _environment().get_template("review.html.j2").render(context)


def _bars(rows: tuple[CheckFigures, ...]) -> list[dict[str, Any]]:
    """Rows with bar widths (percent of the longest time in violation, either period);
    rows that were never in alarm in either period last."""
    longest = max((max(f.violation_days, f.previous_days or 0.0) for f in rows), default=0.0)
    longest = longest or 1.0
    shown = sorted(rows, key=lambda f: (-f.violation_days, -(f.previous_days or 0.0), f.id))
    return [
        {
            "f": f,
            "now": round(100 * f.violation_days / longest, 1),
            "then": round(100 * (f.previous_days or 0.0) / longest, 1),
            "quiet": not (f.violation_days or f.previous_days or f.open_at_start or f.opened),
        }
        for f in shown
    ]


def _totals(data: ReviewData) -> dict[str, Any]:
    checks = data.checks
    return {
        "violation_days": sum(f.violation_days for f in checks),
        "previous_days": None
        if any(f.previous_days is None for f in checks)
        else sum(f.previous_days or 0.0 for f in checks),
        "opened": sum(f.opened for f in checks),
        "resolved": sum(f.resolved for f in checks),
        "open_at_end": sum(f.open_at_end for f in checks),
        "breaches": len(data.breaches),
        "waivers": sum(w.active for w in data.waivers),
        "exposed_keys": sum(1 for k in data.keys if k.exposed_days > 0),
    }


@cache
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    env.filters["when"] = _when
    env.filters["days"] = lambda v: "" if v is None else f"{v:.2f}"
    return env


def _when(value: object) -> str:
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M UTC")
    if isinstance(value, date):
        return value.isoformat()
    return "" if value is None else str(value)


@cache
def _asset(path: Path) -> str:
    return path.read_text(encoding="utf-8")
