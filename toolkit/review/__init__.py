"""Reviews of a period: how the controls operated over it, from the findings history.

``platform-audit review --from DATE --to DATE`` and the notebook ``07_review`` read the same
record. Example::

    from toolkit.review import Period, gather_review, render_review
    data = gather_review(Store.open("data/store"), Period.parse("2026-01-01", "2026-01-14"))
    render_review(data, "markdown")
"""

from __future__ import annotations

from toolkit.review.figures import (
    Breach,
    CheckFigures,
    Evidence,
    KeyExposure,
    ReviewData,
    ServiceLevel,
    SnapshotLine,
    WaiverLine,
)
from toolkit.review.gather import gather_review
from toolkit.review.period import Period, coverage_gaps
from toolkit.review.settings import DEFAULT_TIME_TO_FIX, ReviewSettings
from toolkit.review.timeline import Episode, Timeline

__all__ = [
    "DEFAULT_TIME_TO_FIX",
    "REVIEW_FORMATS",
    "Breach",
    "CheckFigures",
    "Episode",
    "Evidence",
    "KeyExposure",
    "Period",
    "ReviewData",
    "ReviewSettings",
    "ServiceLevel",
    "SnapshotLine",
    "Timeline",
    "WaiverLine",
    "coverage_gaps",
    "gather_review",
    "render_review",
]

REVIEW_FORMATS = ("html", "markdown", "json", "csv")


def render_review(data: ReviewData, format: str) -> str:
    """The review in ``format`` (:data:`REVIEW_FORMATS`)."""
    from toolkit.review.review_html import review_html
    from toolkit.review.text_formats import review_csv, review_json, review_markdown

    writers = {"html": review_html, "markdown": review_markdown, "json": review_json,
               "csv": review_csv}  # fmt: skip
    if format not in writers:
        raise ValueError(f"unknown review format {format!r}: use {', '.join(REVIEW_FORMATS)}")
    return writers[format](data)
