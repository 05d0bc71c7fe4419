"""``platform-audit schedule``: snapshot, audit, notify and maintain the store on a cadence.

Run it as a long-lived service (``--every 1h``), or once per tick of cron, a systemd timer
or a Kubernetes CronJob (``--max-runs 1``); ``deploy/`` has all four recipes. The exit
code is the last run's (``ExitCode``): 0 ok, 3 partial, 4 credential refused, 5 platform
unavailable, 6 another job holds the store's lock, 7 store not writable, 2 configuration,
8 an unexpected error (a bug; the status file and the log say where), 130 interrupted::

    platform-audit schedule --every 1h --jitter 2m --log-format json
    platform-audit schedule --cron "17 * * * *"
    platform-audit schedule --max-runs 1 --config /etc/platform-audit/platform-audit.toml
"""

from __future__ import annotations

import contextlib
import json
import logging
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from toolkit.cli.options import ConfigOpt, StoreOpt, fail
from toolkit.cli.stdout import writing_stdout
from toolkit.config import load_settings
from toolkit.errors import ConfigError, ExitCode, LockHeld, StoreError

if TYPE_CHECKING:
    from collections.abc import Iterator
    from types import FrameType

    from toolkit.config import Settings
    from toolkit.schedule.cadence import Cadence

__all__ = ["register", "schedule_command"]

logger = logging.getLogger("toolkit.schedule")


EveryOpt = Annotated[
    str | None, typer.Option("--every", help='Run at this interval, e.g. "1h", "15m", "0.5s".')
]
CronOpt = Annotated[
    str | None,
    typer.Option("--cron", help='Run at the times of this cron expression (UTC), "17 * * * *".'),
]
MaxRunsOpt = Annotated[
    int | None,
    typer.Option("--max-runs", min=1, help="Stop after this many runs (1 for cron/timers)."),
]
JitterOpt = Annotated[
    str | None, typer.Option("--jitter", help="Delay each run by a random time up to this long.")
]
StatusFileOpt = Annotated[
    Path | None,
    typer.Option(
        "--status-file", help="Where to write the JSON status (default: \\[schedule] status_file)."
    ),
]
LogFormatOpt = Annotated[
    str, typer.Option("--log-format", help="text or json (one object per line), on stderr.")
]
StatusOpt = Annotated[
    bool,
    typer.Option(
        "--status",
        help="Print the job's status file (a job whose process ended is 'died') and exit "
        "with its last run's code (130 when it died); runs nothing.",
    ),
]


def register(app: typer.Typer) -> None:
    """Add ``schedule`` to the ``platform-audit`` command."""
    app.command("schedule")(schedule_command)


def schedule_command(
    every: EveryOpt = None,
    cron: CronOpt = None,
    max_runs: MaxRunsOpt = None,
    config: ConfigOpt = None,
    store: StoreOpt = None,
    jitter: JitterOpt = None,
    status_file: StatusFileOpt = None,
    log_format: LogFormatOpt = "text",
    status: StatusOpt = False,
) -> None:
    """Snapshot, audit and maintain the store on a schedule; one job per store at a time."""
    from toolkit.pipeline.scheduler import Scheduler
    from toolkit.schedule.logs import LOG_FORMATS, install_log_handler

    if status:
        raise typer.Exit(_show_status(config, status_file, every or cron or max_runs))
    if log_format not in LOG_FORMATS:
        raise fail(f"--log-format {log_format!r}: use text or json", ExitCode.CONFIG)
    try:
        settings = load_settings(config, store_url=store)
        settings.require_base_url()
        cadence = _cadence(settings, every, cron, jitter)
        secrets = _secrets(settings)
    except ConfigError as exc:
        raise fail(str(exc), ExitCode.CONFIG) from None
    handler, _ = install_log_handler(log_format, secrets=secrets)
    try:
        scheduler = Scheduler(settings, cadence=cadence, max_runs=max_runs, status_file=status_file)
        with _signals(scheduler.stop):
            code = scheduler.run()
    except (LockHeld, ConfigError, StoreError) as exc:  # the job cannot start
        code = (
            ExitCode.LOCKED if isinstance(exc, LockHeld)
            else ExitCode.CONFIG if isinstance(exc, ConfigError)
            else ExitCode.STORE
        )  # fmt: skip
        if log_format == "json":  # the log stream stays one JSON object per line
            logger.error("%s", exc, extra={"fields": {"exit_code": int(code)}})
            raise typer.Exit(int(code)) from None
        raise fail(str(exc), code) from None
    except Exception as exc:  # a bug before the first run (the runs record their own)
        logger.error(
            "the job could not start: an unexpected error (%s); please report it as a bug "
            "with this traceback",
            type(exc).__name__,
            exc_info=exc,
            extra={"fields": {"exit_code": int(ExitCode.ERROR)}},
        )
        raise typer.Exit(int(ExitCode.ERROR)) from None
    finally:
        logging.getLogger("toolkit").removeHandler(handler)
    raise typer.Exit(code)


def _show_status(config: Path | None, status_file: Path | None, running: object) -> int:
    """``schedule --status``: the status file on stdout, as it stands now
    (:func:`~toolkit.schedule.status.observed`); the exit code of its last run, or 130
    (``INTERRUPTED``) when the job's process ended without stopping."""
    from toolkit.schedule.status import observed, read_status

    if running:
        message = "--status runs nothing: give it without --every, --cron or --max-runs"
        raise fail(message, ExitCode.CONFIG)
    try:
        path = status_file or load_settings(config).schedule.status_file
    except ConfigError as exc:
        raise fail(str(exc), ExitCode.CONFIG) from None
    if not path.is_file():
        raise fail(
            f"no status file at {path}: no job has run with it yet (give --status-file or "
            "[schedule] status_file as the job has it)",
            ExitCode.CONFIG,
        )
    now = observed(read_status(path))
    with writing_stdout():
        sys.stdout.write(json.dumps(now, indent=2, sort_keys=True, default=str) + "\n")
    if now.get("state") == "died":
        typer.echo(f"died: {now['died']}", err=True)
        return int(ExitCode.INTERRUPTED)
    last = now.get("last_run") or {}
    code = last.get("exit_code", 0)
    return code if isinstance(code, int) else int(ExitCode.ERROR)


def _cadence(
    settings: Settings, every: str | None, cron: str | None, jitter: str | None
) -> Cadence:
    from toolkit.schedule.cadence import Cadence
    from toolkit.schedule.settings import parse_duration

    if every and cron:
        raise ConfigError("give --every or --cron, not both")
    spread = parse_duration(jitter, setting="--jitter") if jitter else settings.schedule.jitter_s
    if every:
        seconds = parse_duration(every, setting="--every")
        if seconds <= 0:
            raise ConfigError('--every must be longer than 0, e.g. "1h"')
        return Cadence.every(seconds, jitter_s=spread)
    if cron:
        return Cadence.cron(cron, jitter_s=spread)
    if settings.schedule.cron:
        return Cadence.cron(settings.schedule.cron, jitter_s=spread)
    return Cadence.every(settings.schedule.every_s or 3600.0, jitter_s=spread)


def _secrets(settings: Settings) -> list[str]:
    """Every token and the webhook URL, to scrub from the log (missing ones are skipped)."""
    import os

    found = [os.environ.get(c.token_env, "") for c in settings.credentials.values()]
    if settings.notify.url_env:
        found.append(os.environ.get(settings.notify.url_env, ""))
    settings.token()  # the collecting credential must be set: a clear error now, not later
    return [s.strip() for s in found if s.strip()]


@contextlib.contextmanager
def _signals(stop: threading.Event) -> Iterator[None]:
    """SIGTERM/SIGINT: the first lets the current run finish, the second interrupts it."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set from the main thread
        return

    def on_signal(signum: int, frame: FrameType | None) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()
        logger.warning(
            "%s received: stopping after the current run (again to interrupt it)",
            signal.Signals(signum).name,
        )

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
