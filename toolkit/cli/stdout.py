"""Standard output for the commands: a closed pipe ends it quietly, a write error is one line.

``platform-audit audit | head`` and ``audit > /dev/full`` must neither print a traceback nor
exit 1, which a CI gate reads as findings. A command prints through :data:`console` (or
``sys.stdout``) inside :func:`writing_stdout`::

    with writing_stdout():
        console.print(table)
"""

from __future__ import annotations

import errno
import os
import sys
from contextlib import contextmanager
from typing import TYPE_CHECKING

from rich.console import Console

from toolkit.cli.options import fail
from toolkit.errors import ExitCode

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["StdoutConsole", "console", "writing_stdout"]


class StdoutConsole(Console):
    """Standard output's console: a closed pipe raises :class:`BrokenPipeError` for
    :func:`writing_stdout` to handle, where rich would exit 1, the findings' status."""

    def on_broken_pipe(self) -> None:
        raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))


console = StdoutConsole()


@contextmanager
def writing_stdout() -> Iterator[None]:
    """Write a command's output to standard output, whatever becomes of it.

    A pipe closed by its reader (``| head``) ends the output quietly, as other command-line
    tools do, and the command goes on: an audit's exit status still says whether findings
    failed the gate. Any other error (a full disk) is one ``error:`` line and exit 2, never
    a traceback or 1.
    """
    try:
        yield
        sys.stdout.flush()  # else the error comes at exit, after the exit status is chosen
    except BrokenPipeError:
        _discard_stdout()
    except OSError as exc:
        _discard_stdout()
        message = f"cannot write the output: {exc.strerror or exc}; try --out FILE"
        raise fail(message, ExitCode.CONFIG) from None


def _discard_stdout() -> None:
    """Point standard output at the null device, so what Python still holds in its buffer
    cannot fail again (and print a traceback) when the process exits."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError):  # not a file descriptor: a test's captured output
        pass
