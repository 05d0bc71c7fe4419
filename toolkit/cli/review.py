"""``platform-audit review``: how the controls operated over a period, from the findings
history, as HTML, Markdown, JSON or CSV.

The period is whole UTC days, ``--from`` to ``--to`` included, compared with the previous
period of the same length. Without ``--out`` the HTML goes to ``review.html`` and the text
formats to standard output. Exit 0 when written; 2 on bad usage or configuration (a date
that is not ``YYYY-MM-DD``, ``--to`` before ``--from``, no snapshot before the period's
end, an unknown framework); 7 when the store cannot be read::

    platform-audit review --from 2026-01-01 --to 2026-03-31 --out q1-review.html
    platform-audit review --from 2026-01-01 --to 2026-03-31 --framework soc2 --out q1.csv
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

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
from toolkit.errors import ExitCode
from toolkit.report.report_formats import REPORT_FORMATS, REPORT_SUFFIXES, suffixes_text

if TYPE_CHECKING:
    from toolkit.audit.frameworks import Framework
    from toolkit.config import Settings

__all__ = ["DEFAULT_REVIEW_OUT", "register", "review_command"]

DEFAULT_REVIEW_OUT = Path("review.html")

err = Console(stderr=True, soft_wrap=True)

FromOpt = Annotated[
    str,
    typer.Option("--from", help="The period's first day, YYYY-MM-DD (UTC).", show_default=False),
]
ToOpt = Annotated[
    str,
    typer.Option(
        "--to", help="The period's last day, YYYY-MM-DD (UTC), included.", show_default=False
    ),
]
FrameworkOpt = Annotated[
    str | None,
    typer.Option(
        "--framework",
        help="Add figures per requirement of this framework (soc2, iso27001, cis, or a file).",
    ),
]
OutOpt = Annotated[
    Path | None,
    typer.Option(
        "--out",
        help=f"Write the review here; its suffix picks the format ({suffixes_text()}). "
        f"Without it: HTML to {DEFAULT_REVIEW_OUT}, other formats to standard output.",
    ),
]
FormatOpt = Annotated[
    str | None,
    typer.Option("--format", help="html, markdown, json or csv (default: from --out, else html)."),
]


def register(app: typer.Typer) -> None:
    """Add ``review`` to the ``platform-audit`` command."""
    app.command("review")(review_command)


def review_command(
    period_from: FromOpt,
    period_to: ToOpt,
    framework: FrameworkOpt = None,
    out: OutOpt = None,
    format: FormatOpt = None,
    store: StoreOpt = None,
    config: ConfigOpt = None,
    waivers: WaiversOpt = None,
    check: CheckOpt = None,
    skip: SkipOpt = None,
) -> None:
    """Review a period: findings, time in violation, service levels, waivers, key exposure.

    The evidence too: each snapshot's hash, store verify, and the days without one (first).

    Exit 0 when written, 2 for a bad date or configuration, 7 when the store is unreadable."""
    from toolkit.audit import AuditRequest
    from toolkit.cli.stdout import writing_stdout
    from toolkit.config import load_settings
    from toolkit.report.report_writer import write_text
    from toolkit.review import Period, gather_review, render_review
    from toolkit.snapshot import Store

    chosen = output_format(
        format, out, formats=REPORT_FORMATS, suffixes=REPORT_SUFFIXES, default="html",
        hint="for PDF, print the HTML review from a browser",
    )  # fmt: skip
    try:
        with audit_errors():  # dates, configuration, checks, waivers: 2; the store: 7
            period = Period.parse(period_from, period_to)
            settings = load_settings(config, store_url=store)
            chosen_framework = _framework(framework, settings) if framework else None
            opened = Store.open(settings.store_url, create=False)
            request = AuditRequest(
                options=settings.audit_options(),
                checks=chosen_checks(settings, check, skip),
                waivers=waivers,
            )
            data = gather_review(
                opened, period, request, framework=chosen_framework, settings=settings.review
            )
            target = out if out is not None else (DEFAULT_REVIEW_OUT if chosen == "html" else None)
            text = render_review(data, chosen)
            if target is None or str(target) == "-":
                with writing_stdout():
                    sys.stdout.write(text)
                return
            write_text(target, text)
    except OSError as exc:
        raise fail(
            f"cannot write the review: {exc}; choose another --out", ExitCode.CONFIG
        ) from None
    gaps = len(data.evidence.gaps)
    if gaps:
        err.print(Text(f"note: {gaps} day(s) of the period have no complete snapshot"))
    err.print(Text(f"wrote {chosen} review of {period} to {target}"))


def _framework(name: str, settings: Settings) -> Framework:
    """The framework ``--framework`` names (a built-in one's id, or a file), found also in
    the configured folders ([audit] frameworks) and allowed to map the configured checks."""
    try:
        from toolkit.audit.frameworks import (  # type: ignore[attr-defined, unused-ignore]
            known_check_ids,
            load_framework,
        )
    except ImportError:
        raise fail(
            "--framework needs the framework files (toolkit/audit/frameworks), which this "
            "installation lacks; leave --framework out",
            ExitCode.CONFIG,
        ) from None
    folders = getattr(settings, "audit_frameworks", ())  # [audit] frameworks, where configured
    try:
        known = known_check_ids(settings.audit_checks)
        found: Framework = load_framework(name, folders, known_checks=known)
    except (OSError, ValueError, KeyError) as exc:  # a file it cannot read or parse
        raise fail(f"--framework {name}: {exc}", ExitCode.CONFIG) from None
    return found
