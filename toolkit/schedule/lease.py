"""The lock of an S3 store: a one-row Delta table, ``<store>/_schedule_lock``, changed only
by compare-and-swap commits (:mod:`toolkit.schedule.lock` says why, and takes it).

The row is a lease: it names its holder (:class:`~toolkit.schedule.lock_holder.Holder`) and ends
at ``expires_at`` unless renewed. Each change is written against the table version read,
through the conditional put that protects the store's own commits, so of two jobs racing
for it exactly one wins (:func:`_swap_lease` returns False for the other).
"""

from __future__ import annotations

import contextlib
import logging
import socket
from dataclasses import asdict
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from toolkit.errors import LockHeld, ScheduleError
from toolkit.schedule.lock_holder import Holder, Unlocked, held_message

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["LeaseLock", "unlock_lease"]

logger = logging.getLogger(__name__)

_LEASE_SCHEMA = pa.schema(
    [
        ("owner", pa.string()),
        ("pid", pa.int64()),
        ("host", pa.string()),
        ("acquired_at", pa.string()),
        ("expires_at", pa.string()),
    ]
)


def unlock_lease(store: str, uri: str, options: Mapping[str, str], force: bool) -> Unlocked:
    """:func:`~toolkit.schedule.lock.unlock` for an S3 store: the lease at ``uri``."""
    table = _lease_table(uri, options, create=False)
    current = _lease_row(table) if table is not None else None
    if current is None:
        return Unlocked(store, None, None)
    if current.is_expired(datetime.now(UTC)):
        why = "expired"
    elif current.is_dead_here():
        why = "gone"
    elif current.host == socket.gethostname():
        raise LockHeld(
            f"a platform-audit job running on this machine ({current.describe()}) holds the "
            f"lock on store {store}: let it finish, or stop it; --force does not end the "
            "lease of a live process here"
        )
    elif not force:
        raise LockHeld(
            f"another platform-audit job ({current.describe()}) holds the lock on store "
            f"{store}; its lease ends at {current.expires_at}. If that job's machine is gone, "
            "`platform-audit store unlock --force` ends the lease now (were the job still "
            "running, it would stop at its next renewal)"
        )
    else:
        why = "forced"
    if not _swap_lease(table, None):  # the lease changed since it was read: read it again
        raise LockHeld(held_message(store, _lease_row(_lease_table(uri, options))))
    if why == "forced":
        logger.warning(
            "ended the lease of %s on store %s by force",
            current.describe(),
            store,
            extra={"fields": {"forced_pid": current.pid, "forced_owner": current.owner}},
        )
    return Unlocked(store, current, why)


class LeaseLock:
    """The S3 lock: a one-row Delta table changed by compare-and-swap commits."""

    def __init__(self, uri: str, owner: str, ttl_s: float, options: dict[str, str]) -> None:
        self._uri, self._owner, self._ttl_s, self._options = uri, owner, ttl_s, options
        self._held = False
        table = _lease_table(self._uri, self._options)
        current = _lease_row(table)
        now = datetime.now(UTC)
        if current is not None and current.owner != owner:
            if not (current.is_expired(now) or current.is_dead_here()):
                raise LockHeld(held_message(uri.rsplit("/", 1)[0], current))
            logger.warning(
                "recovered a stale lock on %s left by %s (%s)",
                uri,
                current.describe(),
                "its process is gone" if current.is_dead_here() else "its lease expired",
                extra={"fields": {"stale_pid": current.pid, "stale_owner": current.owner}},
            )
        if not _swap_lease(table, Holder.me(owner, ttl_s)):
            raise LockHeld(
                held_message(
                    uri.rsplit("/", 1)[0], _lease_row(_lease_table(self._uri, self._options))
                )
            )
        self._held = True

    def renew(self) -> None:
        """Extend the lease; ScheduleError when another job took it (ours had expired)."""
        table = _lease_table(self._uri, self._options)
        current = _lease_row(table)
        if (
            current is None
            or current.owner != self._owner
            or not _swap_lease(table, Holder.me(self._owner, self._ttl_s))
        ):
            self._held = False
            raise ScheduleError(
                f"lost the lock on {self._uri}: another job took it after this job's lease "
                "expired, as renewing it failed for longer than [schedule] lock_ttl (the "
                "warnings before this say why)"
            )

    def release(self) -> None:
        if not self._held:
            return
        self._held = False
        table = _lease_table(self._uri, self._options)
        current = _lease_row(table)
        if current is not None and current.owner == self._owner:
            _swap_lease(table, None)

    def __enter__(self) -> LeaseLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _lease_table(uri: str, options: Mapping[str, str], *, create: bool = True) -> Any:
    """The lease table at ``uri`` (created empty when missing, unless ``create`` is False:
    then None)."""
    from deltalake import DeltaTable, write_deltalake
    from deltalake.exceptions import DeltaError, TableNotFoundError

    try:
        return DeltaTable(uri, storage_options=dict(options))
    except TableNotFoundError:
        if not create:
            return None
    with contextlib.suppress(DeltaError):  # another job created it first: fine
        write_deltalake(
            uri, _LEASE_SCHEMA.empty_table(), mode="error", storage_options=dict(options)
        )
    return DeltaTable(uri, storage_options=dict(options))


def _swap_lease(table: Any, holder: Holder | None) -> bool:
    """Replace the row read at ``table``'s version; False when another commit came first."""
    from deltalake import write_deltalake
    from deltalake.exceptions import CommitFailedError

    rows = [asdict(holder)] if holder else []
    data = pa.Table.from_pylist(rows, schema=_LEASE_SCHEMA)
    try:
        write_deltalake(table, data, mode="overwrite")
    except CommitFailedError:
        return False
    return True


def _lease_row(table: Any) -> Holder | None:
    rows = table.to_pyarrow_table().to_pylist()
    return Holder(**rows[0]) if rows else None
