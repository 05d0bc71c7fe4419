"""``platform-audit diff``: what changed between two snapshots, from the command line.

Services added, removed, changed or not collected (a failed listing, a 404, the collecting
key's limits: :mod:`toolkit.report.snapshot_diff`), and findings new, regressed, resolved
or not observed, as a table or JSON; an empty diff says so in one line ("No changes between
FROM and TO."; JSON: ``"empty": true``); a note on stderr for each partial side. Exits 2 on bad
configuration or snapshot choices, 7 when the store cannot be read::

    platform-audit diff                                 # the newest, and the complete before
    platform-audit diff --from 0193e1 --to 0193f2 --format json
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich import box
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from toolkit.cli.options import (
    ConfigOpt,
    StoreOpt,
    TableOrJsonOpt,
    WaiversOpt,
    audit_errors,
    table_or_json,
)
from toolkit.cli.stdout import console, writing_stdout
from toolkit.config import load_settings

if TYPE_CHECKING:
    import pandas as pd
    from rich.console import RenderableType

    from toolkit.audit.findings import SnapshotRef
    from toolkit.report.snapshot_diff import SnapshotDiff

__all__ = ["diff_command", "diff_json", "diff_renderable", "no_changes_line"]

err = Console(stderr=True, soft_wrap=True)  # messages stay whole, to copy and grep


def diff_command(
    store: StoreOpt = None,
    config: ConfigOpt = None,
    before: Annotated[
        str | None,
        typer.Option("--from", help="The older snapshot (default: the complete one before --to)."),
    ] = None,
    after: Annotated[
        str | None,
        typer.Option("--to", help="The newer snapshot (default: the newest, partial or not)."),
    ] = None,
    format: TableOrJsonOpt = "table",
    waivers: WaiversOpt = None,
) -> None:
    """Show services added, removed, changed or not collected, and findings that changed."""
    from toolkit.audit import AuditRequest
    from toolkit.report.snapshot_diff import diff_snapshots
    from toolkit.snapshot import Store

    table_or_json(format)
    with audit_errors():
        settings = load_settings(config, store_url=store)
        change = diff_snapshots(
            Store.open(settings.store_url, create=False),
            before=before,
            after=after,
            request=AuditRequest(options=settings.audit_options(), waivers=waivers),
        )
    for warning in change.warnings:
        err.print(Text(f"warning: {warning}"))
    with writing_stdout():
        if format == "json":
            sys.stdout.write(json.dumps(diff_json(change), indent=2, ensure_ascii=False) + "\n")
        else:
            console.print(diff_renderable(change))
    if change.configured and format != "json":  # the JSON document carries it
        err.print(Text("configured: " + "; ".join(change.configured)))
    for message in _diff_partial_messages(change):
        err.print(Text(message))


def diff_json(change: SnapshotDiff) -> dict[str, Any]:
    """The diff as JSON-ready data: each snapshot with its time and status (``partial``:
    some calls failed), the services by change, and the findings with status and owners."""
    from toolkit.report.exports.formats import frame_records, ref_json

    def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
        rows = frame_records(frame)
        for row in rows:
            if "changed_fields" in row:
                row["changed_fields"] = [str(f) for f in row["changed_fields"]]
        return rows

    columns = ["check_id", "severity", "state", "status", "resource_type", "resource_id",
               "resource_name", "team_id", "team_name", "project_id", "project_name",
               "environment_id", "environment_name", "service_id", "service_name", "reason",
               "waived", "waiver_status", "waiver_owner", "waiver_reason",
               "waiver_expires"]  # fmt: skip
    return {
        "from": ref_json(change.before),
        "to": ref_json(change.after),
        "empty": change.empty,  # nothing added, removed, changed, not collected, no finding
        "summary": no_changes_line(change) if change.empty else None,
        "services": {
            "added": records(change.added),
            "removed": records(change.removed),
            "changed": records(change.changed),
            "not_collected": records(change.not_collected),
        },
        "not_collected": {k: list(v) for k, v in change.tables_not_collected.items()},
        "findings": records(change.findings[columns]),
        "configured": list(change.configured),  # thresholds changed, checks left out
    }


def diff_renderable(change: SnapshotDiff) -> RenderableType:
    """Rich tables of a diff; every cell is plain text, control characters shown as escapes
    (line breaks too, in names: one would pass for the next row)."""
    from toolkit.report.exports.formats import frame_records, owner_path, waiver_line, where_cell
    from toolkit.snapshot.visible_text import visible

    def ref(snapshot: SnapshotRef) -> str:
        return snapshot.snapshot_id + (" (partial)" if snapshot.status == "partial" else "")

    title = f"from {ref(change.before)} to {ref(change.after)}"
    notes = [
        Text(f"not collected in --{side} {snap.snapshot_id} (partial): {', '.join(tables)}")
        for side, snap in (("from", change.before), ("to", change.after))
        if (tables := change.tables_not_collected.get(snap.snapshot_id))
    ]
    if change.empty:  # two tables with no row said nothing: say it
        return Group(Text(no_changes_line(change)), *notes)
    # Lighter boxes, and long ids and field names fold rather than end in "…": a terminal's
    # 80 columns must not hide which service or field changed.
    services = Table(title=Text(f"services {title}"), box=box.SIMPLE_HEAD)
    for column in ("change", "service / where", "id", "fields"):
        services.add_column(column, overflow="fold")
    for label, frame in (
        ("added", change.added),
        ("removed", change.removed),
        ("changed", change.changed),
        ("not collected", change.not_collected),
    ):
        for row in frame_records(frame):
            fields = ", ".join(str(f) for f in row.get("changed_fields", []))
            if "missing_from" in row:
                fields = f"{row['why']} in --{row['missing_from']}"
            services.add_row(
                Text(label),
                where_cell(
                    row["name"] or row["id"], owner_path({**row, "resource_type": "service"})
                ),
                Text(visible(row["id"], keep="")),
                Text(visible(fields, keep="")),
            )
    findings = Table(title=Text("findings"), box=box.SIMPLE_HEAD)
    for column in ("state", "severity", "check", "resource / where", "reason"):
        findings.add_column(column, overflow="fold")
    for f in frame_records(change.findings):
        reason = Text(visible(f["reason"] or ""))
        if f["waived"]:
            reason.append(f"\n{waiver_line(f)}", style="dim")
        findings.add_row(
            Text(visible(f["state"], keep="")),
            Text(visible(f["severity"], keep="")),
            Text(visible(f["check_id"], keep="")),
            where_cell(f["resource_name"] or f["resource_id"], owner_path(f)),
            reason,
        )
    shown = [
        table if table.row_count else Text(f"{name} {title}: no change")
        for name, table in (("services", services), ("findings", findings))
    ]
    return Group(*shown, *notes)


def no_changes_line(change: SnapshotDiff) -> str:
    """The whole table output of an empty diff: no service added, removed, changed or not
    collected, no finding new, regressed, resolved or unobserved."""
    return f"No changes between {change.before.snapshot_id} and {change.after.snapshot_id}."


def _diff_partial_messages(change: SnapshotDiff) -> list[str]:
    """A note for each side of the diff that is partial: what its failed calls did not
    collect is neither removed nor added, nor fixed."""
    from toolkit.report.exports.formats import blind_text

    notes = []
    for snapshot in change.partial:
        side = "to" if snapshot is change.after else "from"
        lost = int(
            (
                (change.not_collected.missing_from == side)
                & (change.not_collected.why == "a listing failed")
            ).sum()
        )
        services = (
            f"{lost} service(s) missing from it because a listing failed are shown as not "
            f"collected, not as {'removed' if side == 'to' else 'added'}"
            if lost
            else "no service is missing from it for a failed listing"
        )
        tables = change.tables_not_collected.get(snapshot.snapshot_id, ())
        uncollected = f"not collected: {', '.join(tables)}; " if tables else ""
        notes.append(
            f"note: the --{side} snapshot {snapshot.snapshot_id} is partial (its table "
            f"collection_errors says which calls failed); {uncollected}{services}; "
            f"{blind_text(change.blind, snapshot.snapshot_id)}"
        )
    return notes
