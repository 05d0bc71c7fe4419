"""``platform-audit audit``: the audit from the command line (``checks`` and ``finding`` are
:mod:`toolkit.cli.checks`, ``diff`` is :mod:`toolkit.cli.diff`).

``audit`` exits 1 when an unwaived finding at or above ``--fail-on`` is in alarm (new,
regressed or open; with ``--fail-on-new`` only new or regressed), so a CI pipeline can gate
on it; 2 on bad configuration, a bad check or waivers file, or a snapshot that is not
there, or when standard output cannot be written (a full disk; never 1, which a gate
would read as findings). ``register(app)`` adds it, ``checks``, ``finding`` and ``diff``::

    platform-audit audit --format sarif --out audit.sarif --fail-on high
    platform-audit audit --out audit.ocsf.json              # OCSF Detection Findings
    platform-audit audit --fail-on medium --fail-on-new     # only what got worse fails
    platform-audit audit --snapshot 0193f2 --compare-to 0193e1 --format markdown
    platform-audit audit --check security --check "WEB*" --skip SEC003
    platform-audit checks --format json
    platform-audit diff --from 0193e1 --to 0193f2
    platform-audit finding DEP003 gateway --format json
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.text import Text

from toolkit.cli.checks import checks_command, finding_command
from toolkit.cli.diff import diff_command
from toolkit.cli.options import (
    CheckOpt,
    ConfigOpt,
    SkipOpt,
    SnapshotOpt,
    StoreOpt,
    WaiversOpt,
    audit_errors,
    chosen_checks,
    fail,
    output_format,
)
from toolkit.cli.stdout import console, writing_stdout
from toolkit.config import FAIL_ON, load_settings
from toolkit.errors import ConfigError, ExitCode
from toolkit.snapshot.visible_text import visible

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pandas as pd

    from toolkit.audit import AuditResult
    from toolkit.config import Settings

__all__ = ["audit_command", "register"]

err = Console(stderr=True, soft_wrap=True)  # messages stay whole, to copy and grep


def register(app: typer.Typer) -> None:
    """Add ``audit``, ``checks``, ``finding`` and ``diff`` to the ``platform-audit`` command."""
    app.command("audit")(audit_command)
    app.command("checks")(checks_command)
    app.command("finding")(finding_command)
    app.command("diff")(diff_command)  # toolkit.cli.diff


CompareToOpt = Annotated[
    str | None,
    typer.Option("--compare-to", help="Compare with this one (default: the one before)."),
]
FormatOpt = Annotated[
    str | None,
    typer.Option(
        "--format",
        help="table, json, csv, markdown, sarif or ocsf (OCSF Detection Findings; default: "
        "from --out's suffix, .txt, .json, .csv, .md, .sarif or .ocsf.json; else table).",
    ),
]
FailOnOpt = Annotated[
    str | None,
    typer.Option(
        "--fail-on",
        help="Exit 1 on an unwaived finding at or above: critical, high, medium or low; "
        "never to gate on nothing (default \\[audit] fail_on; else never).",
    ),
]
FailOnNewOpt = Annotated[
    bool | None,
    typer.Option(
        "--fail-on-new/--no-fail-on-new",
        help="With --fail-on, exit 1 only on findings new or regressed since --compare-to, "
        "not on those open before: a ratchet (default \\[audit] fail_on_new).",
    ),
]
OutOpt = Annotated[
    Path | None,
    typer.Option("--out", help="Write the findings to this file (- for standard output)."),
]
LatestOnlyOpt = Annotated[
    bool,
    typer.Option(
        "--latest-only",
        help="Read only the judged and compared snapshots and the one before each: "
        "faster; first seen, regressed and resolve times see only those.",
    ),
]
LimitOpt = Annotated[
    int,
    typer.Option(
        "--limit",
        min=0,
        help="The table on the terminal shows this many findings, most severe first, then "
        "counts per check (0: all). Other formats and --out have every finding.",
    ),
]


def audit_command(
    store: StoreOpt = None,
    config: ConfigOpt = None,
    snapshot: SnapshotOpt = None,
    compare_to: CompareToOpt = None,
    format: FormatOpt = None,
    fail_on: FailOnOpt = None,
    fail_on_new: FailOnNewOpt = None,
    waivers: WaiversOpt = None,
    out: OutOpt = None,
    latest_only: LatestOnlyOpt = False,
    check: CheckOpt = None,
    skip: SkipOpt = None,
    limit: LimitOpt = 50,
) -> None:
    """Run every check over the history and report findings; exit 1 at --fail-on."""
    from toolkit.audit import AuditRequest, run_audit
    from toolkit.audit.waivers import ATTENTION
    from toolkit.report.exports import FORMATS, SUFFIXES
    from toolkit.snapshot import Store

    if out is not None and str(out) == "-":  # standard output, as without --out
        out = None
    format = output_format(format, out, formats=FORMATS, suffixes=SUFFIXES, default="table")
    fail_on = _fail_on_option(fail_on)
    with audit_errors():
        settings = load_settings(config, store_url=store)
        # never: this run does not gate, whatever [audit] fail_on says
        threshold = None if fail_on == "never" else fail_on or settings.fail_on
        new_only = settings.fail_on_new if fail_on_new is None else fail_on_new
        if new_only and threshold is None:  # else the run would gate on nothing, silently
            _refuse_ratchet_without_gate(settings, lifted=fail_on == "never", flag=fail_on_new)
        catalogue = chosen_checks(settings, check, skip)
        request = AuditRequest(
            options=settings.audit_options(),
            checks=catalogue,
            snapshot=snapshot,
            compare_to=compare_to,
            waivers=waivers,
            latest_only=latest_only,
        )
        result = run_audit(Store.open(settings.store_url, create=False), request)
    for warning in result.warnings:
        err.print(Text(f"warning: {warning}"))
    _write_findings(result, format, out, limit)
    if format == "sarif":
        _warn_of_sarif_results_left_out(result)
    _print_waiver_messages(result.waiver_report, ATTENTION)
    for message in _partial_messages(result):
        err.print(Text(message))
    if threshold is not None:
        failing = result.failing(threshold, new_only=new_only)
        if not failing.empty:
            err.print(Text(_gate_message(len(failing), threshold, result, new_only)))
            raise typer.Exit(int(ExitCode.FINDINGS))


def _fail_on_option(fail_on: str | None) -> str | None:
    """``--fail-on`` in lower case (any case is taken, as ``--check`` matches ids); a value
    that is no severity and not ``never`` is refused."""
    if fail_on is None:
        return None
    if fail_on.lower() not in (*FAIL_ON, "never"):
        message = f"--fail-on must be one of {', '.join(FAIL_ON)} or never, not {fail_on!r}"
        raise fail(message, ExitCode.CONFIG)
    return fail_on.lower()


def _write_findings(result: AuditResult, format: str, out: Path | None, limit: int) -> None:
    """The findings in ``format``: to ``out`` (whole or not at all), else to standard
    output, the table there showing ``limit`` findings (0: all)."""
    from toolkit.report.exports import render

    if out is not None:
        from toolkit.report.report_writer import write_text

        try:
            write_text(out, render(result, format))  # whole or not at all
            err.print(Text(f"wrote {format} report to {out}"))
        except BrokenPipeError:  # a pipe (/dev/stdout | head) its reader closed: as on stdout
            pass
        except OSError as exc:
            message = f"cannot write {out}: {exc.strerror or exc}; choose another --out"
            raise fail(message, ExitCode.CONFIG) from None
    elif format == "table":
        from toolkit.report.exports import findings_table

        with writing_stdout():
            console.print(findings_table(result, limit=limit or None))
        if result.configured:  # the other formats carry it in the document
            err.print(Text("configured: " + "; ".join(result.configured)))
    else:
        with writing_stdout():
            sys.stdout.write(render(result, format))


def _refuse_ratchet_without_gate(settings: Settings, *, lifted: bool, flag: bool | None) -> None:
    """Refuse ``--fail-on-new`` (``flag``), or ``[audit] fail_on_new = true``, in a run with
    no severity to gate on: it would exit 0 whatever it found. ``lifted``: ``--fail-on
    never`` took the gate away for this run, which the file's ratchet accepts."""
    where = settings.source or "the config file"
    if flag is None:  # the file's ratchet, waiting for a severity
        if lifted:
            return
        raise ConfigError(
            f"{where}: [audit] fail_on_new = true gates only with a severity, and none is "
            'set: add [audit] fail_on = "high" (or another) to the file, or pass --fail-on '
            "high; --no-fail-on-new runs without a gate"
        )
    if not lifted:
        raise ConfigError(
            "--fail-on-new gates only with a severity: add --fail-on high (or another), "
            "or set [audit] fail_on"
        )
    if settings.fail_on is not None:
        raise ConfigError(
            f'--fail-on never lifts the gate [audit] fail_on = "{settings.fail_on}" sets '
            f"({where}), so --fail-on-new has nothing to gate on: leave out "
            f"--fail-on never to gate on {settings.fail_on}, or --fail-on-new to run without "
            "a gate"
        )
    raise ConfigError(
        "--fail-on never runs without a gate, so --fail-on-new has nothing to gate on: give "
        "--fail-on high (or another), or leave out --fail-on-new"
    )


WAIVER_LINES = 20
"""Waiver messages printed before the rest are counted (a file of thousands prints them all
in the waiver report of --format json or --out)."""


def _print_waiver_messages(report: pd.DataFrame, attention: Sequence[str]) -> None:
    messages = [
        message
        for row in report.itertuples(index=False)
        for message in _waiver_messages(row, attention)
    ]
    for message in messages[:WAIVER_LINES]:
        err.print(Text(message))
    if len(messages) > WAIVER_LINES:
        err.print(
            Text(
                f"... and {len(messages) - WAIVER_LINES} more waiver message(s); the waiver "
                "report of --format json (or --out) lists every waiver with its status"
            )
        )


def _warn_of_sarif_results_left_out(result: AuditResult) -> None:
    from toolkit.report.exports.sarif import MAX_RESULTS, results_left_out

    left_out = results_left_out(result)
    if left_out:
        err.print(
            Text(
                f"warning: SARIF holds the {MAX_RESULTS:,} most severe findings in alarm, the "
                f"most GitHub code scanning accepts; {left_out:,} left out: --format csv or "
                "json has them all, or narrow the run with --check"
            )
        )


def _waiver_messages(row: Any, attention: Sequence[str]) -> list[str]:
    """What to do about a waiver of the report that is not simply active. Its check, owner
    and resource ids come from the waivers file: control characters and line breaks are
    shown as escapes (:func:`visible`), so none forges a line of a CI log."""
    entry = visible(f"waiver #{row.entry} ({row.check_id}, {row.owner})", keep="")
    said = []
    if row.status in attention:
        said.append(_waiver_message(entry, row))
    if isinstance(row.stale_ids, str) and row.status != "duplicate":
        said.append(
            f"{entry}: resource id(s) {visible(row.stale_ids, keep='')} match no finding in "
            "alarm; remove them from its resources"
        )
    return said


def _waiver_message(entry: str, row: Any) -> str:
    """``entry`` is already shown through :func:`visible`."""
    days = int(row.days_left)
    expires = visible(row.expires, keep="")
    if row.status == "expired":
        return f"{entry} ended {expires}: its findings count again; renew or remove it"
    if row.status == "stale":
        return f"{entry} is stale: it matches no finding in alarm; remove it"
    if row.status == "duplicate":
        return (
            f"{entry} is a duplicate: waiver #{int(row.covered_by)} holds every finding it matches "
            "as long or longer; remove it"
        )
    when = "today" if days == 0 else f"in {days} day(s)"
    return f"{entry} ends {when}, on {expires}: renew it or fix what it waives"


def _partial_messages(result: AuditResult) -> list[str]:
    """A note for the judged and the compared snapshot when it is partial: some calls
    failed, so what its blind checks did not see is neither fixed nor new."""
    from toolkit.report.exports.formats import partial_lines

    return [f"note: {line}" for line in partial_lines(result)]


def _gate_message(count: int, threshold: str, result: AuditResult, new_only: bool) -> str:
    if not new_only:
        return f"{count} unwaived finding(s) at or above {threshold}"
    since = (
        f"since snapshot {result.compare.snapshot_id}"
        if result.compare is not None
        else "in the first snapshot"
    )
    return f"{count} unwaived finding(s) at or above {threshold}, new or regressed {since}"
