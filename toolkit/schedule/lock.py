"""One job per store: a lock file for a local store, a leased lock object on S3.

A local store is locked with ``flock`` on ``<store>/_schedule.lock``: the kernel releases
it when the process dies, even on ``kill -9``. The file also names its holder (pid, host,
start), so a second job can say who holds the lock, and the next job can say that it
recovered the lock of a process that is gone.

An S3 store has no ``flock``. Its lock (:mod:`toolkit.schedule.lease`) is a one-row Delta
table, ``<store>/_schedule_lock``, changed only by compare-and-swap: the new row is written
against the table version that was read, and the commit lands through the same conditional
put (``If-None-Match: *``, ``aws_conditional_put=etag``) that protects the store's own
commits, so of two jobs racing for it exactly one wins. The row is a lease: it expires
after ``ttl_s`` unless renewed, so a job killed on another machine blocks the store for at
most that long (or until ``platform-audit store unlock --force``, :func:`unlock`); one
killed on this machine is recognised at once by its dead pid. Example::

    with acquire_lock("data/store", ttl_s=7200) as lock:   # LockHeld when taken
        ...
        lock.renew()                                       # S3: extend the lease
        with LeaseKeeper(lock, every_s=2400) as keeper:    # renewed while a run goes on
            ...
        keeper.lost                                        # why it was lost, or None
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import threading
from dataclasses import asdict
from pathlib import Path
from typing import IO, TYPE_CHECKING, Protocol

from toolkit.errors import LockHeld, ScheduleError, StoreUnavailable
from toolkit.schedule.local_files import open_unlinked, refuse_shared_folder
from toolkit.schedule.lock_holder import Holder, Unlocked, held_message

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from types import TracebackType

__all__ = [
    "LOCAL_LOCK_NAME",
    "S3_LOCK_NAME",
    "Holder",
    "LeaseKeeper",
    "StoreLock",
    "Unlocked",
    "acquire_lock",
    "held_message",
    "holding_lock",
    "renew_every_s",
    "renew_or_warn",
    "unlock",
]

logger = logging.getLogger(__name__)

LOCAL_LOCK_NAME = "_schedule.lock"
S3_LOCK_NAME = "_schedule_lock"
_S3_OPTIONS = {"aws_conditional_put": "etag"}  # as the store's own commits


class StoreLock(Protocol):
    """A held lock; release it (or leave the ``with`` block) when the job ends."""

    def renew(self) -> None: ...

    def release(self) -> None: ...

    def __enter__(self) -> StoreLock: ...

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...


def acquire_lock(
    store_url: str,
    *,
    owner: str,
    ttl_s: float = 7200.0,
    storage_options: Mapping[str, str] | None = None,
) -> StoreLock:
    """Take the store's lock or raise :class:`LockHeld` naming the job that holds it."""
    if "://" in store_url and not store_url.startswith("file://"):
        options = {**_S3_OPTIONS, **(storage_options or {})}
        from toolkit.schedule.lease import LeaseLock

        return LeaseLock(f"{store_url.rstrip('/')}/{S3_LOCK_NAME}", owner, ttl_s, options)
    root = Path(store_url.removeprefix("file://")).expanduser()
    try:
        root.mkdir(mode=0o755, parents=True, exist_ok=True)
        refuse_shared_folder(root, store=store_url)
        return _FileLock(root / LOCAL_LOCK_NAME, owner, store_url)
    except OSError as exc:  # a path that cannot be a folder, or no permission
        raise StoreUnavailable(
            f"cannot lock the store {store_url} ({exc.strerror or exc}): give a folder this "
            "job can write (--store, $PLATFORM_AUDIT_STORE or [store] url)"
        ) from None


def renew_every_s(ttl_s: float) -> float:
    """How often a lease of ``ttl_s`` is renewed: a third of it, so two renewals may fail
    before it ends (at least once a second)."""
    return max(1.0, ttl_s / 3)


@contextlib.contextmanager
def holding_lock(store_url: str, *, owner: str, ttl_s: float) -> Iterator[LeaseKeeper]:
    """The store's lock for one command that writes it: taken (:class:`LockHeld` when a
    job holds it), renewed on a thread while the block runs, released after."""
    with (
        acquire_lock(store_url, owner=owner, ttl_s=ttl_s) as lock,
        LeaseKeeper(lock, every_s=renew_every_s(ttl_s)) as keeper,
    ):
        yield keeper


def renew_or_warn(lock: StoreLock) -> None:
    """Renew ``lock``; a failure to reach the store is logged and left to the next renewal
    (the lease lasts ``ttl_s``), a lease another job took raises :class:`ScheduleError`."""
    try:
        lock.renew()
    except ScheduleError:
        raise
    except Exception as exc:  # S3 errors come as OSError, DeltaError and others
        logger.warning(
            "could not renew the store's lock (%s: %s); trying again before the lease ends",
            type(exc).__name__,
            exc,
        )


class LeaseKeeper:
    """Renews a lock every ``every_s`` seconds on a thread while the ``with`` block runs.

    An S3 lease ends ``ttl_s`` after its last renewal: without this, a run longer than that
    would let another job take the store. ``lost`` is why the lease was lost (another job
    took it after renewals kept failing), else None; the keeper stops renewing then.
    """

    def __init__(self, lock: StoreLock, *, every_s: float) -> None:
        self._lock, self._every_s = lock, every_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._keep, name="lease-keeper", daemon=True)
        self.lost: str | None = None

    def _keep(self) -> None:
        while not self._stop.wait(self._every_s):
            try:
                renew_or_warn(self._lock)
            except ScheduleError as exc:
                self.lost = str(exc)
                logger.error("%s", exc)
                return

    def __enter__(self) -> LeaseKeeper:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def unlock(
    store_url: str, *, force: bool = False, storage_options: Mapping[str, str] | None = None
) -> Unlocked:
    """Free the store's lock when the job that took it is gone; :class:`LockHeld` while a
    live job holds it.

    A local lock is the kernel's and ends with its process: only the record it left is
    cleared. An S3 lease of a process that has ended on this machine, or one that expired,
    is cleared. A live lease held from another machine is ended only with ``force``: for a
    job whose machine is known to be gone, which would otherwise block writers until its
    lease expires. Were it still running, it stops at its next renewal (exit 6). A job
    running on this machine is never forced out: stop it instead.
    """
    if "://" in store_url and not store_url.startswith("file://"):
        options = {**_S3_OPTIONS, **(storage_options or {})}
        from toolkit.schedule.lease import unlock_lease

        return unlock_lease(store_url, f"{store_url.rstrip('/')}/{S3_LOCK_NAME}", options, force)
    path = Path(store_url.removeprefix("file://")).expanduser() / LOCAL_LOCK_NAME
    try:
        handle = _open_lock_file(path, create=False)
    except FileNotFoundError:
        return Unlocked(store_url, None, None)  # no job has ever locked this store
    with handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(handle)
            who = holder.describe() if holder else "another process"
            raise LockHeld(
                f"a running platform-audit job ({who}) holds the lock on store {store_url}. "
                "A local store's lock ends with the process that holds it, so none is ever "
                "left behind (--force changes nothing here): let the job finish, or stop it"
            ) from None
        try:
            previous = _read_holder(handle)
            if previous is not None:
                handle.seek(0)
                handle.truncate()
                handle.flush()
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
    return Unlocked(store_url, previous, "gone" if previous else None)


def _open_lock_file(path: Path, *, create: bool = True) -> IO[str]:
    """The lock file, never through a link (:func:`open_unlinked`)."""
    descriptor = open_unlinked(path, what="the store's lock file", create=create)
    return os.fdopen(descriptor, "r+", encoding="utf-8")


class _FileLock:
    def __init__(self, path: Path, owner: str, store: str) -> None:
        self._path = path
        self._handle: IO[str] | None = _open_lock_file(path)
        try:
            fcntl.flock(self._handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(self._handle)
            self._handle.close()
            raise LockHeld(held_message(store, holder)) from None
        previous = _read_holder(self._handle)
        if previous is not None and previous.pid != os.getpid():
            logger.warning(
                "recovered a stale lock on store %s left by %s, which is no longer running",
                store,
                previous.describe(),
                extra={"fields": {"stale_pid": previous.pid, "stale_owner": previous.owner}},
            )
        self._handle.seek(0)
        self._handle.truncate()
        self._handle.write(json.dumps(asdict(Holder.me(owner))))
        self._handle.flush()

    def renew(self) -> None:
        """Nothing to do: the kernel holds the lock as long as the process lives."""

    def release(self) -> None:
        if self._handle is None:
            return
        self._handle.seek(0)
        self._handle.truncate()  # an empty file: released cleanly, nothing to recover
        self._handle.flush()
        fcntl.flock(self._handle.fileno(), fcntl.LOCK_UN)
        self._handle.close()
        self._handle = None

    def __enter__(self) -> _FileLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _read_holder(handle: IO[str]) -> Holder | None:
    handle.seek(0)
    try:
        return Holder(**json.loads(handle.read()))
    except (ValueError, TypeError):
        return None
