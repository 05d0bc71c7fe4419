"""``platform-audit checks`` and ``finding``: what an audit runs, and one finding's story.

``checks`` lists the checks an audit would run with their thresholds (``--format json`` for
scripts), or with ``--framework`` a framework's requirements with the checks that are evidence
for each and why; ``finding CHECK RESOURCE`` runs that check alone over the whole history and tells
the finding's episodes in alarm, when each was fixed and after how long. Both are added to
the command by :func:`toolkit.cli.audit.register`::

    platform-audit checks --check key-scope --format json
    platform-audit checks --framework soc2
    platform-audit finding DEP003 gateway --format json
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from toolkit.cli.options import (
    ConfigOpt,
    ListedOpt,
    SkipOpt,
    SnapshotOpt,
    StoreOpt,
    TableOrJsonOpt,
    WaiversOpt,
    audit_errors,
    chosen_checks,
    fail,
    table_or_json,
)
from toolkit.cli.stdout import console, writing_stdout
from toolkit.config import load_settings
from toolkit.errors import CheckDefinitionError, ConfigError, ExitCode

if TYPE_CHECKING:
    from toolkit.audit import Catalogue
    from toolkit.audit.frameworks import FrameworkFile, Mapping

__all__ = ["checks_command", "finding_command"]

err = Console(stderr=True, soft_wrap=True)  # messages stay whole, to copy and grep

FrameworkOpt = Annotated[
    str | None,
    typer.Option(
        "--framework",
        help="List this framework's requirements (soc2, iso27001, cis, one of \\[audit] "
        "frameworks, or a .toml file) with the checks that are evidence for each, and why.",
    ),
]


def checks_command(
    config: ConfigOpt = None,
    format: TableOrJsonOpt = "table",
    check: ListedOpt = None,
    skip: SkipOpt = None,
    framework: FrameworkOpt = None,
) -> None:
    """List the checks an audit runs: id, severity, area, title and thresholds.

    With --framework, a framework's requirements and the checks that are evidence for each.
    """
    from toolkit.audit.frameworks import known_check_ids, read_framework

    table_or_json(format)
    try:
        settings = load_settings(config)
        catalogue = chosen_checks(settings, check, skip)
        if framework is not None:
            known = known_check_ids(settings.audit_checks)
            found = read_framework(framework, settings.audit_frameworks, known_checks=known)
    except (ConfigError, CheckDefinitionError) as exc:
        raise fail(str(exc), ExitCode.CONFIG) from None
    if framework is not None:
        _print_framework(found, catalogue, format)
        return
    if format == "json":
        entries = [
            {"id": spec.id, "severity": spec.severity, "area": spec.area, "title": spec.title,
             "risk": spec.risk, "remediation": spec.remediation, "history": spec.history,
             "path": str(spec.path), "params": catalogue.params(spec)}
            for spec in catalogue.specs
        ]  # fmt: skip
        with writing_stdout():
            sys.stdout.write(json.dumps(entries, indent=2, ensure_ascii=False) + "\n")
        return
    table = Table(title=Text(f"{len(catalogue.specs)} check(s)"), box=box.SIMPLE_HEAD)
    for column in ("id", "severity", "area", "title and thresholds"):
        table.add_column(column, overflow="fold")
    for spec in catalogue.specs:
        title = Text(spec.title)
        params = catalogue.params(spec)
        if params:
            title.append("\n" + ", ".join(f"{k} = {json.dumps(v)}" for k, v in params.items()))
        table.add_row(Text(spec.id), Text(spec.severity), Text(spec.area), title)
    with writing_stdout():
        console.print(table)
    # thresholds changed, checks left out, production
    for line in catalogue.configured(settings.audit_options()):
        err.print(Text(line))


def _print_framework(found: FrameworkFile, catalogue: Catalogue, format: str) -> None:
    """A framework's requirements, each with its checks (severity, title, why); a check
    this configuration does not run (``[audit] skip``, ``--check``) is marked as such."""
    from toolkit.audit import BUILTIN_CHECKS, discover_checks

    specs = {spec.id: spec for spec in discover_checks([BUILTIN_CHECKS])}
    specs.update((spec.id, spec) for spec in catalogue.specs)
    running = {spec.id for spec in catalogue.specs}
    fw = found.framework

    def entry(mapping: Mapping) -> dict[str, Any]:
        spec = specs.get(mapping.check_id)
        severity, title = (spec.severity, spec.title) if spec else ("", "")
        return {"id": mapping.check_id, "severity": severity, "title": title,
                "why": mapping.why, "runs": mapping.check_id in running}  # fmt: skip

    if format == "json":
        document = {
            "id": fw.id, "title": fw.title, "version": fw.version, "path": str(found.path),
            "requirements": [{"id": r.id, "title": r.title, "checks": [entry(m) for m in r.checks]}
                             for r in fw.requirements],
            "unmapped": [{"check": k, "reason": v} for k, v in found.unmapped.items()],
        }  # fmt: skip
        with writing_stdout():
            sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
        return
    title = Text(f"{fw.title} {fw.version}: {len(fw.requirements)} requirement(s)")
    table = Table(title=title, box=box.SIMPLE_HEAD, show_lines=True)
    for column in ("requirement", "check", "why it is evidence"):
        table.add_column(column, overflow="fold", ratio=2 if column.startswith("why") else 1)
    for requirement in fw.requirements:
        for n, mapping in enumerate(requirement.checks):
            shown = entry(mapping)
            check = Text(f"{mapping.check_id} ({shown['severity']})\n{shown['title']}")
            if not shown["runs"]:
                check.append("\nnot run: left out by this configuration", style="yellow")
            label = Text(f"{requirement.id}\n{requirement.title}" if n == 0 else "")
            table.add_row(label, check, Text(mapping.why))
    with writing_stdout():
        console.print(table)
        for check_id, reason in found.unmapped.items():
            console.print(Text(f"not evidence for {fw.id}: {check_id}: {reason}"))


def finding_command(
    check_id: Annotated[str, typer.Argument(metavar="CHECK", help="The check's id (REP001).")],
    resource: Annotated[
        str,
        typer.Argument(
            metavar="RESOURCE", help="The resource's id, or its name if only one finding has it."
        ),
    ],
    store: StoreOpt = None,
    config: ConfigOpt = None,
    snapshot: SnapshotOpt = None,
    waivers: WaiversOpt = None,
    format: TableOrJsonOpt = "table",
) -> None:
    """Show one finding: its check, resource, state, reason, waiver and every episode in alarm."""
    from toolkit.audit import Catalogue, run_audit
    from toolkit.report.finding_story import explain_finding
    from toolkit.snapshot import Store

    table_or_json(format)
    with audit_errors():
        settings = load_settings(config, store_url=store)
        options = settings.audit_options()
        catalogue = Catalogue.from_options(options)
        ids = {spec.id.upper(): spec.id for spec in catalogue.specs}
        check_id = ids.get(check_id.upper(), check_id)  # any case, as --check matches ids
        if check_id not in ids.values():
            raise ConfigError(
                f"no check has the id {check_id!r} (or [audit] skip leaves it out); "
                "`platform-audit checks` lists them"
            )
        result = run_audit(  # this check alone: its history is all the story needs
            Store.open(settings.store_url, create=False),
            options=options,
            checks=catalogue.select(only=[check_id]),
            snapshot=snapshot,
            waivers=waivers,
        )
        story = explain_finding(result, check_id, resource)
    from toolkit.report.finding_story import story_renderable

    with writing_stdout():
        if format == "json":
            document = json.dumps(story.as_json(), indent=2, ensure_ascii=False, default=str)
            sys.stdout.write(document + "\n")
        else:
            console.print(story_renderable(story))
