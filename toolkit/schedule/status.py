"""The status file: what a monitor reads to know whether the job is healthy.

One JSON object, replaced atomically (written to a temporary file in the same folder,
flushed, then renamed over the old one), so a reader never sees half a file::

    {
      "state": "idle",                      # running | idle | stopped
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
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from toolkit.errors import ConfigError

__all__ = ["STATUS_VERSION", "check_writable", "read_status", "write_status"]

STATUS_VERSION = 1


def read_status(path: Path) -> dict[str, Any]:
    """The status file's object, or ``{}`` when it is missing or unreadable."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def check_writable(path: Path) -> None:
    """Refuse a status file that cannot be written, before the job's first run rather than
    in the middle of it (:class:`ConfigError` naming the setting)."""
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


def _now() -> str:
    return datetime.now(UTC).isoformat()
