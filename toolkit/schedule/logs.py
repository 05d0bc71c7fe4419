"""The job's log: human lines or one JSON object per line, with no secret in any of them.

Structured fields travel in ``extra={"fields": {...}}`` (run id, snapshot id, counts,
durations); the JSON form puts them at the top level of the line, the text form after the
message as ``key=value``. :class:`Scrubber` replaces every configured secret (the tokens,
the webhook URL) by ``[redacted]`` in every record before it is formatted, so a secret that
reaches an exception message still never reaches a line. Example::

    install_log_handler("json", secrets=[settings.token()])
    logger.info("run finished", extra={"fields": {"run_id": rid, "duration_s": 1.2}})
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["LOG_FORMATS", "JsonFormatter", "Scrubber", "TextFormatter", "install_log_handler"]

LOG_FORMATS = ("text", "json")
REDACTED = "[redacted]"


class Scrubber(logging.Filter):
    """Replaces each secret (at least 8 characters long) in a record's text and fields."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self._secrets = sorted({s for s in secrets if len(s) >= 8}, key=len, reverse=True)

    def add(self, secret: str) -> None:
        if len(secret) >= 8 and secret not in self._secrets:
            self._secrets = sorted([*self._secrets, secret], key=len, reverse=True)

    def scrub(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, REDACTED)
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        if self._secrets:
            record.msg = self.scrub(record.getMessage())
            record.args = None
            if record.exc_info and record.exc_info[1] is not None:
                record.exc_text = self.scrub(logging.Formatter().formatException(record.exc_info))
                record.exc_info = None
            fields = getattr(record, "fields", None)
            if isinstance(fields, dict):
                record.fields = json.loads(self.scrub(json.dumps(fields, default=str)))
        return True


class JsonFormatter(logging.Formatter):
    """``{"ts", "level", "logger", "message", ...fields}`` on one line."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            line.update({k: v for k, v in fields.items() if k not in line})
        if record.exc_info:
            line["error"] = self.formatException(record.exc_info)
        elif record.exc_text:
            line["error"] = record.exc_text
        return json.dumps(line, default=str, sort_keys=False)


class TextFormatter(logging.Formatter):
    """``2026-03-01T12:00:00+00:00 INFO message key=value ...``."""

    def format(self, record: logging.LogRecord) -> str:
        stamp = datetime.fromtimestamp(record.created, UTC).isoformat(timespec="seconds")
        text = f"{stamp} {record.levelname} {record.getMessage()}"
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict) and fields:
            text += " " + " ".join(f"{k}={_plain(v)}" for k, v in fields.items())
        if record.exc_text:
            text += "\n" + record.exc_text
        return text


def _plain(value: Any) -> str:
    return json.dumps(value, default=str) if isinstance(value, dict | list) else str(value)


def install_log_handler(
    log_format: str, *, secrets: Iterable[str] = (), stream: IO[str] | None = None
) -> tuple[logging.Handler, Scrubber]:
    """Send the ``toolkit`` loggers to ``stream`` (stderr) in ``log_format``, scrubbed.

    Replaces any stream handler already on the ``toolkit`` logger (``--log-level``'s), so
    no line is written twice or in two formats; keeps its level when one was set, else INFO.
    """
    if log_format not in LOG_FORMATS:
        raise ValueError(f"log format {log_format!r}: use text or json")
    logger = logging.getLogger("toolkit")
    for existing in list(logger.handlers):
        if isinstance(existing, logging.StreamHandler):
            logger.removeHandler(existing)
    scrubber = Scrubber(secrets)
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.addFilter(scrubber)
    handler.setFormatter(JsonFormatter() if log_format == "json" else TextFormatter())
    logger.addHandler(handler)
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.INFO)
    return handler, scrubber
