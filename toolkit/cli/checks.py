"""``platform-audit checks`` and ``finding``: what an audit runs, and one finding's story.

``checks`` lists the checks an audit would run with their thresholds (``--format json`` for
scripts); ``finding CHECK RESOURCE`` runs that check alone over the whole history and tells
the finding's episodes in alarm, when each was fixed and after how long. Both are added to
the command by :func:`toolkit.cli.audit.register`::

    platform-audit checks --check key-scope --format json
    platform-audit finding DEP003 gateway --format json
"""

from __future__ import annotations

import json
import sys
from typing import Annotated

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

__all__ = ["checks_command", "finding_command"]

err = Console(stderr=True, soft_wrap=True)  # messages stay whole, to copy and grep


def checks_command(
    config: ConfigOpt = None,
    format: TableOrJsonOpt = "table",
    check: ListedOpt = None,
    skip: SkipOpt = None,
) -> None:
    """List the checks an audit runs: id, severity, area, title and thresholds."""
    table_or_json(format)
    try:
        settings = load_settings(config)
        catalogue = chosen_checks(settings, check, skip)
    except (ConfigError, CheckDefinitionError) as exc:
        raise fail(str(exc), ExitCode.CONFIG) from None
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
    from toolkit.audit.explain import explain_finding
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
    from toolkit.audit.explain import story_renderable

    with writing_stdout():
        if format == "json":
            document = json.dumps(story.as_json(), indent=2, ensure_ascii=False, default=str)
            sys.stdout.write(document + "\n")
        else:
            console.print(story_renderable(story))
