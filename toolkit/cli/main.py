"""The ``platform-audit`` command: thin wrappers over the public API, with rich output.

Every command exits with one of :class:`ExitCode`, so a scheduler or CI can act on it, and
every failure prints one sentence that says what to do next.
"""

from __future__ import annotations

import logging
import sys
import uuid
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from deltalake.exceptions import DeltaError
from rich.console import Console
from rich.text import Text

from toolkit._version import __version__
from toolkit.cli.audit import register as register_audit
from toolkit.cli.options import BaseUrlOpt, ConfigOpt, StoreOpt, TokenEnvOpt, fail
from toolkit.cli.report import register as register_report
from toolkit.cli.review import register as register_review
from toolkit.cli.schedule import register as register_schedule
from toolkit.cli.store import sql_command, store_app
from toolkit.config import DEFAULT_CONFIG_NAME, example_config, load_settings
from toolkit.errors import (
    CollectionAborted,
    ConfigError,
    ExitCode,
    LockHeld,
    PlatformUnavailable,
    StoreError,
)
from toolkit.pipeline.snapshot_job import describe_run, store_failure, take_snapshot

if TYPE_CHECKING:
    from toolkit.config import Settings
    from toolkit.pipeline.snapshot_job import SnapshotRun

__all__ = ["ExitCode", "app"]

app = typer.Typer(
    name="platform-audit",
    help="Collect, audit and report on a hosted deployment platform.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
)
sim_app = typer.Typer(
    help="The embedded platform simulator (for demos and tests).", no_args_is_help=True
)
app.add_typer(sim_app, name="sim")
app.add_typer(store_app, name="store")
register_audit(app)
register_report(app)
register_review(app)
register_schedule(app)

console = Console()
err = Console(stderr=True)


_LOG_LEVELS = ("debug", "info", "warning", "error")
_log_handler: logging.Handler | None = None


@app.callback()
def main(
    log_level: Annotated[
        str | None,
        typer.Option(
            "--log-level",
            envvar="PLATFORM_AUDIT_LOG_LEVEL",
            help="Write the toolkit's log (debug, info, warning or error) to stderr; "
            "else $PLATFORM_AUDIT_LOG_LEVEL. Tokens and secret values are never logged.",
        ),
    ] = None,
    log_format: Annotated[
        str | None,
        typer.Option(
            "--log-format",
            help="text or json (one object per line): the toolkit's log and a crawl's progress "
            "lines on stderr, at INFO unless --log-level says otherwise.",
        ),
    ] = None,
) -> None:
    """Collect, audit and report on a hosted deployment platform."""
    if log_level is not None:
        _log_to_stderr(log_level)
    if log_format is not None:
        _log_format(log_format)


def _log_to_stderr(level: str) -> None:
    """Send the ``toolkit.*`` loggers to stderr at ``level`` (replacing an earlier handler)."""
    global _log_handler  # one handler per process, even when the app is invoked again
    if level.lower() not in _LOG_LEVELS:
        raise fail(
            f"--log-level {level!r} is not a level: use one of {', '.join(_LOG_LEVELS)}",
            ExitCode.CONFIG,
        )
    logger = logging.getLogger("toolkit")
    if _log_handler is not None:
        logger.removeHandler(_log_handler)
    _log_handler = logging.StreamHandler(sys.stderr)
    _log_handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger.addHandler(_log_handler)
    logger.setLevel(level.upper())


def _log_format(log_format: str) -> None:
    """Send the ``toolkit.*`` loggers to stderr as text or JSON lines (`--log-format`)."""
    global _log_handler
    from toolkit.schedule.logs import LOG_FORMATS, install_log_handler

    if log_format not in LOG_FORMATS:
        raise fail(f"--log-format {log_format!r}: use text or json", ExitCode.CONFIG)
    _log_handler, _ = install_log_handler(log_format)


@app.command()
def version() -> None:
    """Print the toolkit's version."""
    console.print(f"platform-audit {__version__}")


@app.command()
def init(
    path: Annotated[Path, typer.Argument(help="Where to write the file.")] = Path(
        DEFAULT_CONFIG_NAME
    ),
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")] = False,
) -> None:
    """Write a commented example configuration file."""
    if path.exists() and not force:
        raise fail(f"{path} exists; pass --force to overwrite it", ExitCode.CONFIG)
    try:
        path.write_text(example_config(), encoding="utf-8")
    except OSError as exc:
        raise fail(f"cannot write {path}: {exc.strerror or exc}", ExitCode.CONFIG) from None
    console.print(
        Text(f"wrote {path}: set base_url, then export PLATFORM_API_KEY and run "
             "`platform-audit check`")
    )  # fmt: skip


@app.command()
def check(
    config: ConfigOpt = None, base_url: BaseUrlOpt = None, token_env: TokenEnvOpt = None
) -> None:
    """Call /users/me and show who the credential is: role, access and limits."""
    from toolkit.cli.identity_view import describe_identity
    from toolkit.pipeline.identity_probe import probe_identity

    try:
        settings = load_settings(config, base_url=base_url, token_env=token_env)
        outcome = probe_identity(settings)
    except ConfigError as exc:
        raise fail(str(exc), ExitCode.CONFIG) from None
    if outcome.error is not None:
        raise fail(outcome.error, ExitCode(outcome.exit_code))
    console.print(describe_identity(outcome))


def _credential_pairs(values: list[str]) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for value in values:
        name, sep, variable = value.partition("=")
        if not sep or not name or not variable:
            raise ConfigError(f"--credential {value!r} must be NAME=ENV_VAR, e.g. ci=CI_DEPLOY_KEY")
        pairs[name] = variable
    return pairs


AsOfOpt = Annotated[
    datetime | None,
    typer.Option("--as-of", help="Stamp the snapshot with this UTC time instead of now."),
]
CredentialOpt = Annotated[
    list[str] | None,
    typer.Option("--credential", help="Also audit this key: NAME=ENV_VAR (repeatable)."),
]
VerifyScopeOpt = Annotated[
    bool | None,
    typer.Option(
        "--verify-scope/--no-verify-scope",
        help="Verified mode: compare what each audited key really sees with the scope it "
        "claims (check KEY009; up to six more calls per audited key). Overrides "
        "\\[collect] verify_scope for this run; off by default.",
    ),
]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress display.")]


@app.command()
def snapshot(
    config: ConfigOpt = None,
    base_url: BaseUrlOpt = None,
    token_env: TokenEnvOpt = None,
    store: StoreOpt = None,
    as_of: AsOfOpt = None,
    credential: CredentialOpt = None,
    verify_scope: VerifyScopeOpt = None,
    quiet: QuietOpt = False,
) -> None:
    """Collect the platform into one snapshot.

    Exit 0 complete, 3 partial, 4 credential refused, 5 platform unreachable, 2 configuration.

    Exit 6 while another job writes the store, 7 when the store cannot be written."""
    url = store or "the store"  # until the settings say which
    try:
        settings = load_settings(
            config,
            base_url=base_url,
            token_env=token_env,
            store_url=store,
            audited=_credential_pairs(credential or []),
        )
        url = settings.store_url
        if verify_scope is not None:
            from toolkit.collect import CrawlOptions

            options = replace(settings.collect or CrawlOptions(), verify_scope=verify_scope)
            settings = replace(settings, collect=options)
        settings.require_base_url()
        settings.token()
        if settings.collect is not None and settings.collect.verify_scope and not settings.audited:
            err.print(
                Text(
                    "note: verified mode probes the audited keys, and none is configured: add "
                    "--credential NAME=ENV_VAR or a [credentials.NAME] section"
                )
            )
        run = _locked_snapshot(settings, as_of=_utc(as_of), quiet=quiet)
    except LockHeld as exc:
        raise fail(str(exc), ExitCode.LOCKED) from None
    except ConfigError as exc:
        raise fail(str(exc), ExitCode.CONFIG) from None
    except CollectionAborted as exc:
        raise fail(str(exc), ExitCode.AUTH) from None
    except PlatformUnavailable as exc:
        raise fail(str(exc), ExitCode.UNREACHABLE) from None
    except (OSError, DeltaError, StoreError) as exc:  # full disk, permissions, bucket
        raise fail(store_failure(url, exc), ExitCode.STORE) from None
    _report_run(run, settings.store_url)


def _report_run(run: SnapshotRun, store_url: str) -> None:
    """What a snapshot committed, its warnings, and exit 3 when it is partial."""
    console.print(describe_run(run, store_url))
    for warning in run.warnings:
        err.print(Text.assemble(("warning: ", "yellow"), warning), highlight=False)
    if run.info.status != "complete":
        err.print(
            Text.assemble(
                ("partial snapshot: ", "yellow"),
                f"{len(run.result.errors)} calls failed. It is kept and marked partial; the "
                "next run tries again. See which calls failed with: "
                + _errors_query(run.info.snapshot_id),
            ),
            highlight=False,
        )
        raise typer.Exit(int(ExitCode.PARTIAL))


@app.command()
def sql(
    query: Annotated[str, typer.Argument(help="DuckDB SQL over the store's views.")],
    store: StoreOpt = None,
    format: Annotated[str, typer.Option("--format", help="table, csv or json.")] = "table",
    allow_writes: Annotated[
        bool,
        typer.Option(
            "--allow-writes",
            help="Also run statements that can write files (COPY, EXPORT, ATTACH, SET, ...), "
            "into the store too; without it, only queries that read run.",
        ),
    ] = False,
) -> None:
    """Run SQL over every table's history view and its <table>_latest view.

    Read-only unless --allow-writes: COPY ... TO and other statements that write exit 2."""
    sql_command(query, store, format, allow_writes=allow_writes)


def _locked_snapshot(settings: Settings, *, as_of: datetime | None, quiet: bool) -> SnapshotRun:
    """:func:`take_snapshot` holding the store's lock, the one ``platform-audit schedule``
    holds: two writers would both link their snapshot to the same predecessor and fork the
    chain (LockHeld, exit 6, when a job holds it). An S3 lease is renewed while it runs."""
    from toolkit.schedule.lock import holding_lock

    owner, ttl = f"snapshot-{uuid.uuid4().hex}", settings.schedule.lock_ttl_s
    with holding_lock(settings.store_url, owner=owner, ttl_s=ttl):
        return take_snapshot(settings, as_of=as_of, quiet=quiet)


def _errors_query(snapshot_id: str) -> str:
    # Not collection_errors_latest: a partial snapshot never becomes "latest".
    return (
        'platform-audit sql "select endpoint, status, error_type, attempts, message '  # noqa: S608 - a command shown to the user, with the writer's own UUIDv7
        f"from collection_errors where snapshot_id = '{snapshot_id}'\""
    )


def _utc(moment: datetime | None) -> datetime | None:
    if moment is None:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


@sim_app.command("serve")
def sim_serve(
    host: Annotated[str, typer.Option(help="Loopback address to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port; 0 picks a free one.")] = 0,
    seed: Annotated[int, typer.Option(help="World seed: same seed, same world.")] = 7,
    services: Annotated[int, typer.Option(help="Services in the world (5 to 50,000).")] = 40,
    faults: Annotated[
        str, typer.Option(help="Fault profile name or settings such as rate_5xx=0.2,latency_ms=50.")
    ] = "none",
    keys_out: Annotated[
        Path | None,
        typer.Option("--keys-out", help="Write the base URL and demo keys here (mode 0600)."),
    ] = None,
    prefix: Annotated[str, typer.Option(help="Serve under a path prefix such as /api/go.")] = "",
    variant: Annotated[
        str,
        typer.Option(
            help="spec: as the specification says; real: as the real platform's source "
            "(product words, moved paths, plain-text 404s; docs/troubleshooting.md)."
        ),
    ] = "spec",
) -> None:
    """Serve the simulated platform over HTTP until interrupted; prints its base URL."""
    from toolkit.sim import serve

    if not 5 <= services <= 50_000:
        raise fail("--services must be between 5 and 50000", ExitCode.CONFIG)
    try:
        serve(
            host=host,
            port=port,
            seed=seed,
            services=services,
            faults=faults,
            keys_out=keys_out,
            prefix=prefix,
            variant=variant,
        )
    except ValueError as exc:
        raise fail(str(exc), ExitCode.CONFIG) from None
    except OSError as exc:  # the port is taken, or the host is not this machine's
        where = f"{host}:{port}"
        raise fail(f"cannot serve on {where}: {exc.strerror or exc}; pick another --port "
                   "(0 picks a free one) or --host", ExitCode.CONFIG) from None  # fmt: skip


@app.command()
def demo(
    services: Annotated[int, typer.Option(help="Services in the simulated world.")] = 40,
    seed: Annotated[int, typer.Option(help="World seed.")] = 7,
    days: Annotated[int, typer.Option(help="Simulated days, one snapshot each.")] = 14,
    out: Annotated[Path, typer.Option(help="Folder for the demo's store, key and reports.")] = Path(
        "data/demo"
    ),
) -> None:
    """Start the embedded simulator, snapshot two simulated weeks, audit and write reports."""
    from toolkit.pipeline.demo import run_demo

    if not 5 <= services <= 50_000 or days < 1:
        raise fail("--services must be between 5 and 50000 and --days at least 1", ExitCode.CONFIG)
    run_demo(console, services=services, seed=seed, days=days, out=out)
