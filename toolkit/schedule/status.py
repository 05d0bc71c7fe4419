"""The status file: what a monitor reads to know whether the job is healthy.

One JSON object, replaced atomically (written to a temporary file in the same folder,
flushed, then renamed over the old one), so a reader never sees half a file::

    {
      "state": "idle",                      # running | idle | stopped (died: see observed)
      "pid": 4242, "host": "audit-1", "store": "s3://team-bucket/platform-audit",
      "cadence": "every 1h", "next_run": "2026-03-01T13:17:00+00:00",
      "consecutive_failures": 0,
      "last_run":     {"run_id": ..., "outcome": "ok", "exit_code": 0, "snapshot_id": ...},
      "last_success": {"at": ..., "run_id": ..., "snapshot_id": ..., "findings": {...}},
      "last_failure": {"at": ..., "run_id": ..., "outcome": "auth", "exit_code": 4,
                       "reason": "the platform refused credential 'collector' ..."},
      "last_maintenance": {"at": ..., "pruned": 12, "duration_s": 3.1},
      "updated_at": ...
    }

A monitor alerts when ``last_success.at`` is older than two intervals, or on
``last_failure.at`` newer than ``last_success.at``.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from toolkit.errors import ConfigError

__all__ = [
    "STATUS_VERSION",
    "check_writable",
    "observed",
    "process_alive",
    "read_status",
    "write_status",
]

STATUS_VERSION = 1


def read_status(path: Path) -> dict[str, Any]:
    """The status file's object, or ``{}`` when it is missing or unreadable, or is not a
    regular file (read without following a link: its target's text is never copied into
    the file the job writes)."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return {}
    with os.fdopen(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return {}
        try:
            value = json.loads(handle.read().decode("utf-8"))
        except (OSError, ValueError):
            return {}
    return value if isinstance(value, dict) else {}


def check_writable(path: Path) -> None:
    """Refuse a status file that cannot be written, before the job's first run rather than
    in the middle of it (:class:`ConfigError` naming the setting); so is one that is a link
    or not a regular file: the job replaces the file whole, never writes through a link."""
    if path.is_symlink() or (path.exists() and not path.is_file()):
        what = "a symbolic link" if path.is_symlink() else "not a regular file"
        raise ConfigError(
            f"the status file {path} is {what}: the job replaces its status file whole and "
            "never writes through a link. Give the real path in [schedule] status_file or "
            "--status-file, or remove it"
        )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        os.close(handle)
        Path(temp).unlink()
    except OSError as exc:
        raise ConfigError(
            f"the status file {path} cannot be written ({exc.strerror or exc}): fix "
            "[schedule] status_file or --status-file"
        ) from None


def write_status(path: Path, status: dict[str, Any]) -> None:
    """Replace the status file atomically with ``status`` (plus version and time)."""
    body = {**status, "version": STATUS_VERSION, "updated_at": _now()}
    text = json.dumps(body, indent=2, sort_keys=True, default=str) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        Path(temp).chmod(0o644)
        Path(temp).replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            Path(temp).unlink()
        raise


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` of this host is running (someone else's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process, alive
    return True


def observed(status: dict[str, Any]) -> dict[str, Any]:
    """``status`` as it stands now: a job recorded ``running`` or ``idle`` on this host
    whose process has ended (``kill -9``, a crash, power loss) is ``died``, and ``died``
    says what it left behind. A job on another host is taken at its word."""
    state, pid = status.get("state"), status.get("pid")
    if state not in ("running", "idle") or not isinstance(pid, int):
        return status
    if status.get("host") != socket.gethostname() or process_alive(pid):
        return status
    current = status.get("current_run") or {}
    during = (
        f"during run {current.get('run_id')}, whose snapshot did not commit unless "
        "`platform-audit store ls` shows it (maintenance removes its leftover rows)"
        if state == "running"
        else "between runs"
    )
    died = (
        f"the job (pid {pid} on {status.get('host')}) is no longer running: it ended without "
        f"stopping {during}; the status file was last written at {status.get('updated_at')}. "
        "Start it again; its next run records this as a failure"
    )
    return {**status, "state": "died", "died": died}


def _now() -> str:
    return datetime.now(UTC).isoformat()
