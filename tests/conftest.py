"""Every test runs with its own cache home: a full audit keeps statuses in the user's cache
folder by default (``[audit] status_cache``), and tests must not write to the real one.

Nor do they inherit the width of the terminal that started them: the commands' console is
made at import, and reads ``COLUMNS`` then (pytest-xdist's workers have ``COLUMNS=80``),
where a test sets the width it wants when it invokes a command."""

from __future__ import annotations

import os
import shutil
import tempfile

_CACHE_HOME = tempfile.mkdtemp(prefix="platform-audit-tests-cache-")
os.environ["XDG_CACHE_HOME"] = _CACHE_HOME
for _name in ("COLUMNS", "LINES"):
    os.environ.pop(_name, None)


def pytest_unconfigure() -> None:
    """Remove the session's cache home, so test runs leave no folders behind."""
    shutil.rmtree(_CACHE_HOME, ignore_errors=True)
