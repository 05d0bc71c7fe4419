"""Build a report from a store in one call: HTML, Markdown, JSON or CSV, to text or a file.

>>> from toolkit.report import write_report
>>> from toolkit.snapshot import Store
>>> write_report(Store.open("data/store"), Path("audit.html"))          # doctest: +SKIP
PosixPath('audit.html')
>>> text = render_report(store, format="markdown", compare_to="0193e1")  # doctest: +SKIP
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.report.report_data import ReportData, gather_report
from toolkit.report_formats import REPORT_FORMATS

if TYPE_CHECKING:
    from datetime import datetime

    from toolkit.audit import Catalogue
    from toolkit.config import Settings
    from toolkit.snapshot import Store

__all__ = ["REPORT_FORMATS", "render_report", "render_report_data", "write_report", "write_text"]


def write_report(
    store: Store,
    out: Path,
    *,
    format: str = "html",
    since: datetime | None = None,
    compare_to: str | None = None,
    waivers: Path | None = None,
    settings: Settings | None = None,
    checks: Catalogue | None = None,
) -> Path:
    """Audit the newest complete snapshot of ``store`` and write the report to ``out``.

    The file is replaced atomically (written beside it, then renamed), so a reader never
    sees half a report; missing parent folders are created. See :func:`render_report` for
    the arguments. Returns ``out``.
    """
    text = render_report(
        store,
        format=format,
        since=since,
        compare_to=compare_to,
        waivers=waivers,
        settings=settings,
        checks=checks,
    )
    write_text(out, text)
    return out


def write_text(out: Path, text: str) -> None:
    """Replace ``out`` with ``text`` atomically (written beside it, then renamed)."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        Path(tmp).chmod(0o644)  # mkstemp's 0600 would hide a report meant to be shared
        Path(tmp).replace(out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def render_report(
    store: Store,
    *,
    format: str = "html",
    since: datetime | None = None,
    compare_to: str | None = None,
    waivers: Path | None = None,
    settings: Settings | None = None,
    checks: Catalogue | None = None,
) -> str:
    """The report as text in ``format`` (html, markdown, json or csv).

    ``compare_to`` (a snapshot id or unique prefix) defaults to the complete snapshot
    before the newest; ``since`` limits the trends and the evidence appendix to snapshots
    taken at or after it; ``waivers`` (a TOML or YAML file), ``settings`` (checks,
    thresholds, the waivers file) and ``checks`` (a catalogue instead of the configured
    one) are passed to :func:`toolkit.audit.run_audit`. Raises
    ``ValueError`` for an unknown format and :class:`~toolkit.errors.AuditError` when the
    store has no complete snapshot or the id is unknown.
    """
    _check_format(format)
    data = gather_report(
        store,
        since=since,
        compare_to=compare_to,
        waivers=waivers,
        settings=settings,
        checks=checks,
    )
    return render_report_data(data, format)


def render_report_data(data: ReportData, format: str) -> str:
    """Gathered report data as text in ``format`` (to render one gathering several ways)."""
    _check_format(format)
    if format == "html":
        from toolkit.report.html_report import render_html

        return render_html(data)
    from toolkit.report.text_reports import render_csv, render_json, render_markdown

    renderers = {"markdown": render_markdown, "json": render_json, "csv": render_csv}
    return renderers[format](data)


def _check_format(format: str) -> None:
    if format not in REPORT_FORMATS:
        raise ValueError(f"format must be one of {', '.join(REPORT_FORMATS)}, not {format!r}")
