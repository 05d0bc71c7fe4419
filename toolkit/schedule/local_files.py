"""Files the toolkit keeps in a local store's folder (the lock) or beside it (the status
file), opened so that nobody else who can write there can turn a write against another file.

Opened the usual way, a symbolic link named like the lock file makes the job truncate the
link's target, a file of the job's user such as the HMAC key; a hard link does the same.
So these files are opened without following a link (``O_NOFOLLOW``) and must be regular
files with one name, and a store folder that other users may write is refused outright:
they could replace the store's own files as well. An S3 store has no folder mode; its
lock is a leased object (:mod:`toolkit.schedule.lease`). Example::

    refuse_shared_folder(Path("data/store"), store="data/store")   # StoreUnavailable
    descriptor = open_unlinked(Path("data/store/_schedule.lock"), what="the store's lock file")
"""

from __future__ import annotations

import errno
import grp
import os
import pwd
import stat
from typing import TYPE_CHECKING

from toolkit.errors import StoreUnavailable

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["open_unlinked", "refuse_shared_folder", "shared_with"]

_FLAGS = os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK  # a FIFO must not block the open


def open_unlinked(path: Path, *, what: str, create: bool = True) -> int:
    """A read-write descriptor of ``path``, created (mode 0644) when missing unless
    ``create`` is False (then :class:`FileNotFoundError`).

    :class:`StoreUnavailable` when ``path`` is a symbolic link, is not a regular file, or
    has another name (a hard link): writing it would change a file it stands in for.
    """
    flags = os.O_RDWR | _FLAGS | (os.O_CREAT if create else 0)
    try:
        descriptor = os.open(path, flags, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # O_NOFOLLOW met a link
            raise _refused(path, what, f"is a symbolic link{_target(path)}") from None
        raise
    info = os.fstat(descriptor)
    problem = (
        "is not a regular file"
        if not stat.S_ISREG(info.st_mode)
        else f"has {info.st_nlink} names (hard links)"
        if info.st_nlink != 1
        else None
    )
    if problem is not None:
        os.close(descriptor)
        raise _refused(path, what, problem)
    os.set_blocking(descriptor, True)
    return descriptor


def _target(link: Path) -> str:
    try:
        return f" (to {link.readlink()})"
    except OSError:  # gone or changed since: the link itself is the problem named
        return ""


def _refused(path: Path, what: str, problem: str) -> StoreUnavailable:
    return StoreUnavailable(
        f"{what} {path} {problem}: the toolkit never writes through one, since it would "
        f"change another file. Someone who can write {path.parent} put it there: remove it "
        f"(`rm {path}`), make the folder writable by its owner only (`chmod go-w "
        f"{path.parent}`), and try again"
    )


def refuse_shared_folder(folder: Path, *, store: str) -> None:
    """:class:`StoreUnavailable` when users other than ``folder``'s owner may write it
    (:func:`shared_with`), naming them and the ``chmod`` that fixes it."""
    info = folder.stat()
    who = shared_with(info.st_mode, info.st_uid, info.st_gid)
    if who is None:
        return
    named = "" if str(folder) == store else f" of store {store}"
    raise StoreUnavailable(
        f"the store folder {folder}{named} is writable by {who} (mode "
        f"{stat.S_IMODE(info.st_mode):04o}): any of them could replace its files, or leave "
        "a link there that the toolkit would write through. Make it writable by its owner "
        f"only (`chmod go-w {folder}`) and try again"
    )


def shared_with(mode: int, uid: int, gid: int) -> str | None:
    """Who besides the owner ``uid`` may write a folder of ``mode`` and group ``gid``:
    ``"every user"``, ``"group NAME"``, or None. A group-writable folder whose group is the
    owner's own private group (same name, the owner's primary group, no other member: what
    ``umask 002`` systems give each user) is not shared."""
    if mode & stat.S_IWOTH:
        return "every user"
    if not mode & stat.S_IWGRP or _private_group(uid, gid):
        return None
    try:
        return f"group {grp.getgrgid(gid).gr_name}"
    except KeyError:
        return f"group {gid}"


def _private_group(uid: int, gid: int) -> bool:
    try:
        user, group = pwd.getpwuid(uid), grp.getgrgid(gid)
    except KeyError:
        return False
    others = set(group.gr_mem) - {user.pw_name}
    return user.pw_gid == gid and group.gr_name == user.pw_name and not others
