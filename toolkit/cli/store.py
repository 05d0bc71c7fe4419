"""``platform-audit store ...`` and ``platform-audit sql``: the store from the command line.

``store_app`` is a typer sub-app (``ls``, ``verify``, ``gc``, ``compact``, ``vacuum``,
``retain``, ``unlock``); :func:`sql_command` runs one query over the store's DuckDB views. Every
command takes ``--store URL`` (default ``$PLATFORM_AUDIT_STORE``, else the configuration
file's ``[store] url``, else ``data/store``), and refuses a folder that holds no store.
S3 settings come from the usual ``AWS_*`` environment variables.
"""

from __future__ import annotations

import csv
import functools
import json
import sys
import uuid
from contextlib import contextmanager
from datetime import timedelta
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer
from deltalake.exceptions import DeltaError
from rich import box
from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text

from toolkit.cli.options import StoreOpt, fail
from toolkit.cli.sql import refuse_writes
from toolkit.cli.stdout import console, writing_stdout
from toolkit.config import load_settings
from toolkit.errors import ConfigError, ExitCode, LockHeld, StoreError
from toolkit.snapshot import RetentionPolicy, Store
from toolkit.snapshot.visible_text import visible

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    import duckdb
    import pyarrow as pa

__all__ = ["resolve_store_url", "sql_command", "store_app"]

store_app = typer.Typer(
    help="Inspect and maintain the snapshot store.", no_args_is_help=True, add_completion=False
)


def resolve_store_url(store: str | None) -> str:
    """The store URL in the order every command uses: ``--store``, else
    ``$PLATFORM_AUDIT_STORE``, else ``[store] url`` of the configuration file
    (``$PLATFORM_AUDIT_CONFIG`` or ``./platform-audit.toml``), else ``data/store``."""
    return load_settings(store_url=store).store_url


def _open(store: str | None) -> Store:
    """The existing store (every command here reads or maintains one; none creates it)."""
    return Store.open(resolve_store_url(store), create=False)


@contextmanager
def _writing(store: str | None) -> Iterator[Store]:
    """The existing store, holding the lock ``platform-audit schedule`` holds while the
    command changes it: maintenance beside a job's write could fail its commit (exit 6,
    naming the job, when the lock is taken). An S3 lease is renewed while it runs."""
    from toolkit.schedule.lock import holding_lock

    opened = _open(store)
    owner, ttl = f"store-{uuid.uuid4().hex}", load_settings(store_url=store).schedule.lock_ttl_s
    with holding_lock(opened.url, owner=owner, ttl_s=ttl):
        yield opened


@contextmanager
def _store_errors() -> Iterator[None]:
    """End a store command with one message: exit 2 for a bad setting or a missing store,
    6 while a job holds the store's lock, 7 for a store that cannot be read or written (URL,
    credentials, disk, permissions, a data file gone)."""
    try:
        yield
    except LockHeld as exc:
        raise fail(str(exc), ExitCode.LOCKED) from None
    except ConfigError as exc:  # a malformed configuration file, or StoreNotFound
        raise fail(str(exc), ExitCode.CONFIG) from None
    except StoreError as exc:
        raise fail(str(exc), ExitCode.STORE) from None
    except FileNotFoundError as exc:  # deleted by hand, or a vacuum that kept too little
        message = f"a file the store's Delta log lists is missing: {exc.filename or exc}"
        raise fail(message, ExitCode.STORE) from None
    except (OSError, DeltaError) as exc:  # every file these commands touch is the store's
        message = f"the store could not be read or written: {exc}"
        raise fail(message, ExitCode.STORE) from None


def _command(name: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """``@store_app.command(name)``, with the command's store errors said in one message."""

    def register(command: Callable[..., None]) -> Callable[..., None]:
        @functools.wraps(command)
        def run(*args: Any, **kwargs: Any) -> None:
            with _store_errors():
                command(*args, **kwargs)

        store_app.command(name)(run)
        return command

    return register


def _table(title: str, columns: list[str], rows: list[list[Any]]) -> RichTable:
    """Rows as a rich table of plain text: values come from the platform (a service may be
    named "[bold]x" or "[/]") and column names from the query, so none is read as markup."""
    out = RichTable(title=Text(title), box=box.SIMPLE_HEAD, min_width=len(title) + 2)
    for column in columns:  # long ids fold rather than end in "…": they are copied from here
        out.add_column(Text(column), overflow="fold")
    for row in rows:
        out.add_row(*(Text("" if v is None else visible(v)) for v in row))
    return out


@_command("ls")
def ls(store: StoreOpt = None) -> None:
    """List snapshots, oldest first, with status, rows, tables not collected and chain hash.

    A table not collected is one failed calls left without a row: its 0 says nothing."""
    snapshots = _open(store).snapshots()
    console.print(f"{len(snapshots)} snapshot(s), oldest first", highlight=False)
    for s in snapshots:  # a line each, not a table: an id stays whole, to be copied
        console.print(
            Text(
                f"{s.seq:>4}  {s.snapshot_id}  {s.snapshot_at:%Y-%m-%d %H:%M:%S} UTC  "
                f"{s.status}  {sum(s.row_counts.values()):,} rows  "
                f"credential {visible(s.credential_name or '')}  chain {s.chain_hash[:12]}"
            )
        )
        if s.not_collected:
            console.print(Text(f"      not collected: {', '.join(s.not_collected)}"))
    if snapshots:
        console.print(f"newest chain_hash: {snapshots[-1].chain_hash}", highlight=False)


@_command("verify")
def verify(store: StoreOpt = None) -> None:
    """Recompute content hashes and check the chain; exit 1 when history was altered."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    from toolkit.audit.lifecycle import marks_verdict  # the audit's floor: read when asked

    opened = _open(store)
    errors = Console(stderr=True)  # a terminal gets a bar while it runs (minutes), then none
    columns = ("{task.description}", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=errors, transient=True, disable=not errors.is_terminal) as bar:
        task = bar.add_task("verifying snapshots", total=None)
        report = opened.verify(
            progress=lambda done, total: bar.update(task, completed=done, total=total)
        )
    if report.breaks:
        rows = [[b.seq, b.snapshot_id, b.check, b.expected, b.found] for b in report.breaks]
        console.print(
            _table("broken links", ["seq", "snapshot_id", "check", "expected", "found"], rows)
        )
    verdict = marks_verdict(opened)  # the findings' kept marks against the history's rows
    console.print("\n".join(filter(None, [report.summary(), verdict])), highlight=False)
    if not report.ok or verdict:
        raise typer.Exit(1)


@_command("gc")
def gc(
    store: StoreOpt = None,
    min_age_minutes: Annotated[
        int,
        typer.Option(
            "--min-age-minutes", min=0, help="Keep orphans younger than this (in-flight writes)."
        ),
    ] = 60,
) -> None:
    """Delete rows of snapshots that never committed (or were pruned)."""
    with _writing(store) as opened:
        report = opened.gc(min_age=timedelta(minutes=min_age_minutes))
    rows = [[name, count] for name, count in sorted(report.removed_rows.items())]
    console.print(_table("rows removed", ["table", "rows"], rows))
    console.print(
        f"removed {report.total_rows} row(s) of {len(report.removed_snapshot_ids)} snapshot(s); "
        f"kept {len(report.kept_recent)} recent; {len(report.unsafe_ids)} malformed id(s) skipped",
        highlight=False,
    )


@_command("compact")
def compact(store: StoreOpt = None) -> None:
    """Rewrite many small files into few large ones."""
    with _writing(store) as opened:
        report = opened.compact()
    rows = [[n, report.files_before[n], report.files_after[n]] for n in sorted(report.files_before)]
    console.print(_table("data files", ["table", "before", "after"], rows))


@_command("vacuum")
def vacuum(
    store: StoreOpt = None,
    retention_hours: Annotated[
        int,
        typer.Option("--retention-hours", min=0, help="Keep unreferenced files younger than this."),
    ] = 168,
) -> None:
    """Remove files that no table version within the retention needs."""
    with _writing(store) as opened:
        report = opened.vacuum(retention_hours=retention_hours)
    rows = [[n, c, report.kept.get(n, 0)] for n, c in sorted(report.removed.items())]
    console.print(_table("files no version needs", ["table", "removed", "kept"], rows))
    line = _vacuum_line(report.total, report.total_kept, retention_hours)
    console.print(line, highlight=False, markup=False)  # "[schedule]" is text, not a style


def _vacuum_line(removed: int, kept: int, retention_hours: int) -> str:
    """What ``store vacuum`` did, and why files no version needs were kept: the retention
    window (``--retention-hours``; ``[schedule] vacuum_retention_hours`` for the scheduled
    job) protects files younger than it (a ``compact`` just now leaves its old files inside it)."""
    line = f"removed {removed} file(s)"
    if not kept:
        return f"{line}; no other file is unneeded"
    return (
        f"{line}; kept {kept} file(s) no version needs because they are younger than the "
        f"retention window of {retention_hours} hour(s) (older table versions can still be "
        "read until then). To remove them now: platform-audit store vacuum "
        "--retention-hours 0 (time travel to older versions then stops working); the "
        "scheduled job's window is [schedule] vacuum_retention_hours"
    )


@_command("retain")
def retain(
    store: StoreOpt = None,
    keep_all_days: Annotated[
        int, typer.Option(min=0, help="Keep every snapshot this many days.")
    ] = 0,
    hourly_days: Annotated[
        int, typer.Option(min=0, help="Then one per hour for this many days.")
    ] = 7,
    daily_days: Annotated[
        int, typer.Option(min=0, help="Then one per day for this many days.")
    ] = 365,
) -> None:
    """Apply the retention policy: prune snapshots it does not keep (the chain stays)."""
    policy = RetentionPolicy(
        keep_all_for=timedelta(days=keep_all_days),
        hourly_for=timedelta(days=hourly_days),
        daily_for=timedelta(days=daily_days),
    )
    with _writing(store) as opened:
        report = opened.apply_retention(policy)
    console.print(
        f"kept {len(report.kept)} snapshot(s), pruned {len(report.pruned)}, deleted "
        f"{sum(report.deleted_rows.values())} data row(s)",
        highlight=False,
    )


@_command("unlock")
def unlock(
    store: StoreOpt = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Also end a live S3 lease held from another machine: only for a job whose "
            "machine is known to be gone.",
        ),
    ] = False,
) -> None:
    """Free the store's lock that a job killed outright left behind.

    Exit 6 while a live job holds it. A local store's lock ends with its process.

    An S3 lease held from another machine lasts until it expires, or until --force ends it."""
    from toolkit.schedule.lock import unlock as unlock_store

    done = unlock_store(_open(store).url, force=force)
    if done.holder is None:
        message = f"store {done.store} is not locked"
    elif done.cleared == "forced":
        message = (
            f"ended the lease of {done.holder.describe()} on store {done.store}, which would "
            f"have lasted until {done.holder.expires_at}. Were that job still running, it "
            "stops at its next renewal; `platform-audit store verify` checks the store"
        )
    else:
        why = "its lease expired" if done.cleared == "expired" else "its process has ended"
        message = (
            f"cleared the lock of {done.holder.describe()} on store {done.store}: {why} "
            "(the next job would have taken it over too)"
        )
    console.print(Text(message), soft_wrap=True)  # paths stay whole, to be copied


def sql_command(
    query: str, store: str | None = None, format: str = "table", *, allow_writes: bool = False
) -> None:
    """Run ``query`` over the store's views and print the result as a table, CSV or JSON.

    One statement per call: several would print only the last result, so they are refused,
    as is a query with no statement (exit 2). A statement that could write a file (the
    store's own among them) is refused unless ``allow_writes`` (:mod:`toolkit.cli.sql`).
    ``describe NAME``, ``show NAME`` and
    ``summarize NAME`` of a store view read that view, also where DuckDB alone reads the
    name as its own (``describe variables``: its session variables)."""
    if format not in ("table", "csv", "json"):
        raise typer.BadParameter("format must be table, csv or json", param_hint="--format")
    import duckdb

    try:
        statements = duckdb.extract_statements(query)
    except duckdb.Error as exc:  # a syntax error: DuckDB's message says where
        raise _query_failed(exc) from None
    if not statements:
        raise fail('no query given: give one SQL statement, e.g. "show tables"', ExitCode.CONFIG)
    if len(statements) > 1:
        message = (
            f"{len(statements)} statements given, and only the last one's result would be "
            "shown: run one query per call"
        )
        raise fail(message, ExitCode.CONFIG)
    if not allow_writes:
        refuse_writes(statements[0])
    with _store_errors():
        con = _open(store).duckdb()
    try:
        # DuckDB's stubs say sql() always returns a relation; it returns None for statements.
        result = cast(
            "duckdb.DuckDBPyRelation | None", con.sql(_qualified_describe(con, query) or query)
        )
        if result is None:
            return
        data: pa.Table = result.to_arrow_table()
    except duckdb.Error as exc:  # the query's own mistake: DuckDB's message says where
        raise _query_failed(exc) from None
    with writing_stdout():  # a closed pipe ends quietly, a full disk is one line
        if format == "csv":
            from toolkit.report.exports.formats import csv_cell  # pandas: only for CSV

            writer = csv.writer(sys.stdout, lineterminator="\n")  # shells strip \n, not \r
            writer.writerow(data.column_names)
            for row in data.to_pylist():
                writer.writerow([csv_cell(_plain(v)) for v in row.values()])
        elif format == "json":
            sys.stdout.write(json.dumps(data.to_pylist(), default=str, indent=2) + "\n")
        else:
            rows = [list(r.values()) for r in data.to_pylist()]
            console.print(_table(f"{data.num_rows} row(s)", data.column_names, rows))


def _query_failed(exc: Exception) -> typer.Exit:
    views = 'the views are listed by: platform-audit sql "show tables"'
    return fail(f"the query failed: {exc}\n{views}", ExitCode.CONFIG)


_DESCRIBING = frozenset({"describe", "show", "summarize"})


def _qualified_describe(con: duckdb.DuckDBPyConnection, query: str) -> str | None:
    """``describe NAME`` (or ``show``, ``summarize``) of a view or table of ``con``, as the
    same statement on ``main."NAME"``; None for any other query.

    DuckDB reads ``describe variables`` as its session variables (none on this fresh
    connection, one statement per call), not as the store's ``variables`` view. Qualified,
    the name can only be the view; for every other view the output is the same."""
    import duckdb

    tokens = duckdb.tokenize(query)
    ends = [start for start, _ in tokens[1:]] + [len(query)]
    words = [
        (query[start:end].strip(), kind)
        for (start, kind), end in zip(tokens, ends, strict=True)
        if kind != duckdb.token_type.comment
    ]
    while words and words[-1][0] == ";":
        words.pop()
    if (
        len(words) != 2
        or words[0][0].lower() not in _DESCRIBING
        or words[1][1] != duckdb.token_type.identifier
    ):
        return None
    verb, name = words[0][0], words[1][0]
    if name.startswith('"'):
        name = name[1:-1].replace('""', '"')
    found = con.execute(
        "select table_name from information_schema.tables "
        "where table_schema = 'main' and lower(table_name) = lower(?)",
        [name],
    ).fetchall()
    if not found:
        return None
    quoted = str(found[0][0]).replace('"', '""')
    return f'{verb} main."{quoted}"'


def _plain(value: Any) -> Any:
    return json.dumps(value, default=str) if isinstance(value, list | dict) else value
