"""Progress of a crawl on a terminal: calls done of planned, errors, request rate.

Quiet when the console is not a terminal (a scheduled job, a pipe) or with `quiet=True`;
the plan grows as the hierarchy is discovered, so the total moves during the crawl.

>>> with CrawlProgress(quiet=True) as progress:
...     progress.planned(3)
...     progress.finished(ok=True)
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

if TYPE_CHECKING:
    from types import TracebackType

__all__ = ["CrawlProgress"]


class CrawlProgress:
    """A rich progress bar fed by the crawl; does nothing when quiet."""

    def __init__(self, *, quiet: bool = False, console: Console | None = None) -> None:
        self._console = console or Console(stderr=True)
        self.enabled = not quiet and self._console.is_terminal
        self._total = 0
        self._done = 0
        self._errors = 0
        self._started = time.monotonic()
        self._progress: Progress | None = None
        self._task = None
        if self.enabled:
            self._progress = Progress(
                TextColumn("[bold]crawl"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("calls  {task.fields[errors]} errors  {task.fields[rate]:.1f}/s"),
                TimeElapsedColumn(),
                console=self._console,
                transient=False,
            )
            self._task = self._progress.add_task("crawl", total=0, errors=0, rate=0.0)

    def planned(self, count: int) -> None:
        """`count` more calls were planned."""
        self._total += count
        self._refresh()

    def finished(self, *, ok: bool) -> None:
        """One call ended, successfully or not."""
        self._done += 1
        self._errors += 0 if ok else 1
        self._refresh()

    def _refresh(self) -> None:
        if self._progress is None or self._task is None:
            return
        rate = self._done / max(time.monotonic() - self._started, 1e-6)
        self._progress.update(
            self._task, total=self._total, completed=self._done, errors=self._errors, rate=rate
        )

    def __enter__(self) -> CrawlProgress:
        self._started = time.monotonic()
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._progress is not None:
            self._refresh()
            self._progress.stop()
