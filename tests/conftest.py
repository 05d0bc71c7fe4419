"""Every test runs with its own cache home (``XDG_CACHE_HOME``, a temporary folder removed
at the end): whatever the toolkit or a library it uses would cache under the user's cache
folder stays out of the real one.

Nor do they inherit the width of the terminal that started them: the commands' console is
made at import, and reads ``COLUMNS`` then (pytest-xdist's workers have ``COLUMNS=80``),
where a test sets the width it wants when it invokes a command.

Nor does a test inherit another's logging: a command run in-process (`--log-level`,
`--log-format`, the scheduled job) sets the ``toolkit`` logger's level and handler, and a
test that captures DEBUG records to prove no secret is logged would capture nothing after it
and pass without looking. Each test starts with the ``toolkit`` logger as pytest found it."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

_CACHE_HOME = tempfile.mkdtemp(prefix="platform-audit-tests-cache-")
os.environ["XDG_CACHE_HOME"] = _CACHE_HOME
for _name in ("COLUMNS", "LINES"):
    os.environ.pop(_name, None)


def pytest_unconfigure() -> None:
    """Remove the session's cache home, so test runs leave no folders behind."""
    shutil.rmtree(_CACHE_HOME, ignore_errors=True)


@pytest.fixture(autouse=True)
def _toolkit_logger_as_found() -> Iterator[None]:
    """Restore the ``toolkit`` logger's level, handlers and propagation after each test."""
    logger = logging.getLogger("toolkit")
    level, handlers, propagate = logger.level, list(logger.handlers), logger.propagate
    yield
    logger.setLevel(level)
    logger.propagate = propagate
    for handler in list(logger.handlers):
        if handler not in handlers:
            logger.removeHandler(handler)
    for handler in handlers:
        if handler not in logger.handlers:
            logger.addHandler(handler)


@pytest.fixture
def record_delta_opens(monkeypatch: pytest.MonkeyPatch) -> Callable[[], list[str]]:
    """Call it to start recording: the list it returns gets the name of each table whose
    Delta log a store opens (``Store._delta``) from then on, in order."""
    from toolkit.snapshot import Store

    def start() -> list[str]:
        opened: list[str] = []
        real = Store._delta

        def delta(self: Store, name: str) -> object:
            opened.append(name)
            return real(self, name)

        monkeypatch.setattr(Store, "_delta", delta)
        return opened

    return start
