"""``platform-audit report``: the audit report for a review, as HTML, Markdown, JSON or CSV.

The HTML report is one self-contained file (it works offline and prints to PDF); without
``--out`` it is written to ``audit-report.html``, while the text formats go to standard
output so they can be piped into a ticket or a pull request. Exit 0 when written; 2 on bad
usage or configuration, a store without a complete snapshot, or an unknown snapshot id::

    platform-audit report --out review.html
    platform-audit report --format markdown --compare-to 0193e1 > summary.md
    platform-audit report --since 2026-01-01 --waivers waivers.toml --out review.html
"""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.text import Text

from toolkit.cli.options import (
    CheckOpt,
    ConfigOpt,
    SkipOpt,
    StoreOpt,
    WaiversOpt,
    audit_errors,
    chosen_checks,
    fail,
    output_format,
)
from toolkit.config import load_settings
from toolkit.errors import ExitCode
from toolkit.report.report_formats import REPORT_FORMATS, REPORT_SUFFIXES, suffixes_text

__all__ = ["DEFAULT_HTML_OUT", "register", "report_command"]

DEFAULT_HTML_OUT = Path("audit-report.html")

err = Console(stderr=True, soft_wrap=True)  # messages stay whole, to copy and grep


OutOpt = Annotated[
    Path | None,
    typer.Option(
        "--out",
        help=f"Write the report here; its suffix picks the format ({suffixes_text()}). "
        f"Without it: HTML to {DEFAULT_HTML_OUT}, other formats to standard output.",
    ),
]
FormatOpt = Annotated[
    str | None,
    typer.Option("--format", help="html, markdown, json or csv (default: from --out, else html)."),
]
SinceOpt = Annotated[
    datetime | None,
    typer.Option(
        "--since", help="Trends and evidence from this UTC date or time on (e.g. 2026-01-01)."
    ),
]
CompareToOpt = Annotated[
    str | None,
    typer.Option(
        "--compare-to",
        help="Compare with this snapshot (id or unique prefix; default: the "
        "complete one before the newest).",
    ),
]


def register(app: typer.Typer) -> None:
    """Add ``report`` to the ``platform-audit`` command."""
    app.command("report")(report_command)


def report_command(
    store: StoreOpt = None,
    out: OutOpt = None,
    format: FormatOpt = None,
    since: SinceOpt = None,
    compare_to: CompareToOpt = None,
    waivers: WaiversOpt = None,
    config: ConfigOpt = None,
    check: CheckOpt = None,
    skip: SkipOpt = None,
) -> None:
    """Build the audit report: summary, trends, changes, checks, findings, key scope, waivers."""
    from toolkit.audit import AuditRequest
    from toolkit.cli.stdout import writing_stdout
    from toolkit.report import gather_report, render_report_data
    from toolkit.report.exports.formats import partial_lines
    from toolkit.report.report_writer import write_text
    from toolkit.snapshot import Store

    chosen = output_format(
        format, out, formats=REPORT_FORMATS, suffixes=REPORT_SUFFIXES, default="html",
        hint="for PDF, print the HTML report from a browser",
    )  # fmt: skip
    try:
        with audit_errors():  # configuration, checks, waivers: 2; the store unreadable: 7
            settings = load_settings(config, store_url=store)
            opened = Store.open(settings.store_url, create=False)
            target = out if out is not None else (DEFAULT_HTML_OUT if chosen == "html" else None)
            request = AuditRequest(
                options=settings.audit_options(),
                checks=chosen_checks(settings, check, skip),
                compare_to=compare_to,
                waivers=waivers,
            )
            data = gather_report(opened, request, since=since)
            for warning in data.result.warnings:
                err.print(Text(f"warning: {warning}"))
            for line in partial_lines(data.result):
                err.print(Text(f"note: {line}"))
            text = render_report_data(data, chosen)
            if target is None or str(target) == "-":
                with writing_stdout():  # a closed pipe ends quietly, a full disk is one line
                    sys.stdout.write(text)
                return
            write_text(target, text)
    except OSError as exc:
        message = f"cannot write the report: {exc}; choose another --out"
        raise fail(message, ExitCode.CONFIG) from None
    err.print(Text(f"wrote {chosen} report to {target}"))
