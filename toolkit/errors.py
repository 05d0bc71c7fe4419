"""Errors of the toolkit outside the HTTP layer, as one tree.

The API client has its own tree (``toolkit.api``: every error object of the platform's
part 7 and every network failure). Everything else a user can run into lands here::

    ToolkitError
     ├── ConfigError         a setting is missing, malformed or contradicts another
     │    └── WaiverError      a waivers file or one of its entries is malformed (names it)
     ├── CollectionAborted   the collecting credential was refused (401): nothing committed
     ├── PlatformUnavailable  the platform did not answer the root calls: nothing committed
     ├── CheckDefinitionError  an audit check file breaks the contract (docs/checks.md)
     ├── AuditError            an audit cannot run as asked (no snapshot, unknown snapshot id)
     ├── ScheduleError         the scheduled job cannot go on (``platform-audit schedule``)
     │    └── LockHeld           another job holds the store's lock (names it and since when)
     └── StoreError              anything the store refuses or cannot do
          ├── StoreNotFound        no store where a reading command was pointed (also a
          │                        ConfigError: the path setting is what is wrong)
          ├── SchemaMismatchError  rows do not fit a table's declared schema (names table
          │                        and column); extra keys are a programming error
          ├── WriterStateError     a writer used after commit, or for the snapshots table
          └── UnsafeIdError        a snapshot id that does not match the strict pattern,
                                   so it is never put into a Delta predicate

Every message says what to do next, so the command line can print it as it is, and
exits with the :class:`ExitCode` that names the kind of failure, stable so a job runner or
a CI pipeline can act on it::

    platform-audit audit --fail-on high || echo "exit $? (1: findings, 2: fix the setting)"

A file people edit (configuration, waivers, checks, frameworks) is read by :func:`read_utf8`,
so a file that is not UTF-8 gets one message wherever it is read; each reader adds what to
do in its own terms::

    try:
        text = read_utf8(path)
    except NotUtf8 as exc:
        raise ConfigError(f"{exc}, or pass --config the right file") from None
"""

from __future__ import annotations

import enum
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "AuditError",
    "CheckDefinitionError",
    "CollectionAborted",
    "ConfigError",
    "ExitCode",
    "LockHeld",
    "NotUtf8",
    "PlatformUnavailable",
    "ScheduleError",
    "SchemaMismatchError",
    "StoreError",
    "StoreNotFound",
    "StoreUnavailable",
    "ToolkitError",
    "UnsafeIdError",
    "WaiverError",
    "WriterStateError",
    "read_utf8",
    "storage_message",
]


class ExitCode(enum.IntEnum):
    """What a command's exit status means (and a scheduled run's); stable, so jobs can
    alert on it."""

    OK = 0
    FINDINGS = 1  # an audit found something at or above --fail-on
    CONFIG = 2  # bad configuration or usage: fix the setting named
    PARTIAL = 3  # a snapshot was committed but marked partial
    AUTH = 4  # the credential was refused (missing, expired or revoked)
    UNREACHABLE = 5  # the platform could not be reached or kept failing
    LOCKED = 6  # another job holds the store's lock (platform-audit schedule)
    STORE = 7  # the store could not be read or written: URL, credentials, disk, permissions
    ERROR = 8  # a scheduled run failed on an unexpected error (a bug): the status file says which
    INTERRUPTED = 130  # a scheduled run stopped by a signal, or killed, before it finished


class ToolkitError(Exception):
    """Base class of the toolkit's own errors (not the platform's)."""


class ConfigError(ToolkitError):
    """A setting is missing or wrong; the message names it and says how to fix it."""


class CollectionAborted(ToolkitError):
    """The collecting credential was refused (401); nothing was collected for committing.

    `credential` is the configured name, `endpoint` the call that was refused, and
    `request_id` the platform's id of that request.
    """

    def __init__(
        self,
        credential: str,
        *,
        endpoint: str,
        status: int | None,
        request_id: str | None,
        token_env: str | None = None,
    ) -> None:
        where = f"${token_env}" if token_env else "the credential's token variable"
        super().__init__(
            f"collection stopped: the platform refused credential {credential!r} on "
            f"{endpoint} (status {status}, request_id {request_id or 'unknown'}); the key is "
            f"missing, revoked or expired. Create a new key and export it in {where}. "
            "Nothing was committed."
        )
        self.credential = credential
        self.endpoint = endpoint
        self.status = status
        self.request_id = request_id


class WaiverError(ConfigError):
    """A waivers file cannot be used; the message names the file and the entry."""


class PlatformUnavailable(ToolkitError):
    """The platform did not answer the calls everything hangs from; nothing was committed."""


class CheckDefinitionError(ToolkitError):
    """A check file (or its configuration) breaks the contract; the message names the file."""


class AuditError(ToolkitError):
    """An audit cannot run as asked: no complete snapshot, or a snapshot id that is not there."""


class ScheduleError(ToolkitError):
    """The scheduled job cannot go on; the message says why and what to do."""


class LockHeld(ScheduleError):
    """Another job holds the lock of this store: only one job may write a store at a time."""


class StoreError(ToolkitError):
    """Base class of the store's errors."""


class StoreUnavailable(StoreError):
    """A store table could not be opened: the URL, the network, the credentials or the
    folder's permissions; the message says which table and what the storage answered."""


class StoreNotFound(StoreError, ConfigError):
    """No store at the folder a reading command was given; opening it would have created
    an empty one, and a mistyped path would have read as a store with no snapshot."""


class SchemaMismatchError(StoreError):
    """Rows that do not fit the declared schema; ``table`` and ``column`` say where."""

    def __init__(self, table: str, column: str | None, message: str) -> None:
        where = f"table {table}" + (f", column {column}" if column else "")
        super().__init__(f"{where}: {message}")
        self.table = table
        self.column = column


class WriterStateError(StoreError):
    """The writer cannot do this now (already committed, or a reserved table)."""


class UnsafeIdError(StoreError):
    """A snapshot id that is not a well-formed UUIDv7 string; it is never used in a query."""


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def storage_message(exc: BaseException) -> str:
    """A storage library's error on one line, for a message: without terminal colours (the
    S3 client colours the arrows of its "caused by" chain, and DuckDB passes them on),
    without the line breaks of an S3 error's XML body, and at most 400 characters."""
    text = " ".join(_ANSI.sub("", str(exc) or type(exc).__name__).split())
    return text if len(text) <= 400 else text[:399] + "…"


class NotUtf8(ValueError):
    """The file is not UTF-8 text; the message names it, the byte and what to do. Not a
    :class:`ToolkitError`: the reader raises its own error (``ConfigError``, ``WaiverError``,
    ``CheckDefinitionError``) with it."""


def read_utf8(path: Path) -> str:
    """The file's text. A UTF-8 byte-order mark (Windows editors write one) is dropped; a
    file in another encoding raises :class:`NotUtf8` (UTF-16 is named as such), and one
    that cannot be read, :class:`OSError`."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        utf16 = " (it is UTF-16)" if data[:2] in (b"\xff\xfe", b"\xfe\xff") else ""
        raise NotUtf8(
            f"{path} is not UTF-8 text{utf16}, byte {exc.start} cannot be read: save it as UTF-8"
        ) from None
