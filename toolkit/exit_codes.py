"""The exit status of every ``platform-audit`` command, and of each scheduled run.

Stable numbers, so a job runner or a CI pipeline can act on them::

    platform-audit audit --fail-on high || echo "exit $? (1: findings, 2: fix the setting)"

A leaf module: the command line and the scheduler both import it.
"""

from __future__ import annotations

import enum

__all__ = ["ExitCode"]


class ExitCode(enum.IntEnum):
    """What the command's exit status means; stable, so jobs can alert on it."""

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
