"""Who holds a store's lock, what a second job is told, and what unlocking did: shared by
the lock file (:mod:`toolkit.schedule.lock`) and the S3 lease (:mod:`toolkit.schedule.lease`)."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from toolkit.schedule.status import process_alive

__all__ = ["Holder", "Unlocked", "held_message"]


@dataclass(frozen=True)
class Holder:
    """Who holds (or held) a lock."""

    owner: str
    pid: int
    host: str
    acquired_at: str
    expires_at: str | None = None

    @classmethod
    def me(cls, owner: str, ttl_s: float | None = None) -> Holder:
        now = datetime.now(UTC)
        expires = (now + timedelta(seconds=ttl_s)).isoformat() if ttl_s else None
        return cls(owner, os.getpid(), socket.gethostname(), now.isoformat(), expires)

    def describe(self) -> str:
        return f"pid {self.pid} on {self.host}, since {self.acquired_at}"

    def is_dead_here(self) -> bool:
        """True when this holder ran on this host and its process is gone."""
        return self.host == socket.gethostname() and not process_alive(self.pid)

    def is_expired(self, now: datetime) -> bool:
        return self.expires_at is not None and datetime.fromisoformat(self.expires_at) <= now


def held_message(store: str, holder: Holder | None) -> str:
    """What :class:`LockHeld` says when ``holder`` (None: unknown) holds ``store``'s lock."""
    who = holder.describe() if holder else "another process"
    return (
        f"another platform-audit job ({who}) holds the lock on store {store}: only one job "
        f"may write a store at a time. Let it finish, or stop it{_lease_hint(holder)}; this "
        "job exits without running"
    )


def _lease_hint(holder: Holder | None) -> str:
    """For a lease held from another machine: when it ends, and how to end it sooner."""
    if holder is None or holder.expires_at is None or holder.host == socket.gethostname():
        return ""
    return (
        f" (its lease ends at {holder.expires_at}; if its machine is gone, "
        "`platform-audit store unlock --force` frees the store now)"
    )


@dataclass(frozen=True)
class Unlocked:
    """What :func:`unlock` found and did: the lock's last ``holder`` (None when no job held
    it) and why its record was cleared (``gone``: the process has ended; ``expired``: the
    lease ran out; ``forced``: a live lease ended by ``force``), None when nothing was."""

    store: str
    holder: Holder | None
    cleared: str | None
