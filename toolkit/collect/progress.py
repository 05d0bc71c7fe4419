"""Progress of a crawl: a bar on a terminal, a line every few seconds anywhere else.

On a terminal (and not `quiet`) a rich bar shows calls done of planned, errors and the
request rate; the plan grows as the hierarchy is discovered, so the total moves. Elsewhere
(a pipe, a scheduled job) :meth:`CrawlProgress.tick` reports the same every `interval_s`
as an INFO record of the ``toolkit.collect.progress`` logger, with the figures as fields
(so ``--log-format json`` gives one JSON object a line); when no handler shows the toolkit's
INFO records and the crawl is not quiet, the line is written to stderr instead.

>>> with CrawlProgress(quiet=True) as progress:
...     progress.planned(3)
...     progress.finished(ok=True)
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import TracebackType

    from toolkit.api import CallStats

__all__ = ["CrawlProgress"]

logger = logging.getLogger("toolkit.collect.progress")


class CrawlProgress:
    """A rich progress bar, or periodic progress lines, fed by the crawl."""

    def __init__(
        self,
        *,
        quiet: bool = False,
        console: Console | None = None,
        interval_s: float = 10.0,
    ) -> None:
        self._console = console or Console(stderr=True)
        self.enabled = not quiet and self._console.is_terminal
        self._quiet = quiet
        self.interval_s = interval_s
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

    def _rate(self) -> float:
        return self._done / max(time.monotonic() - self._started, 1e-6)

    def _refresh(self) -> None:
        if self._progress is None or self._task is None:
            return
        self._progress.update(
            self._task,
            total=self._total,
            completed=self._done,
            errors=self._errors,
            rate=self._rate(),
        )

    def tick(self, stats: CallStats | None = None) -> None:
        """Report progress as a line (not on a terminal bar); see the module docstring."""
        if self.enabled:
            return
        fields: dict[str, Any] = {
            "calls_done": self._done,
            "calls_planned": self._total,
            "errors": self._errors,
            "rate_per_s": round(self._rate(), 1),
            "elapsed_s": round(time.monotonic() - self._started, 1),
        }
        if stats is not None:
            fields |= {
                "retries": stats.retries_total,
                "limiter_wait_s": round(stats.throttle_wait_s, 1),
                "retry_wait_s": round(stats.retry_wait_total_s, 1),
            }
        text = (
            f"crawl: {self._done:,} of {self._total:,} calls, {fields['rate_per_s']}/s, "
            f"{self._errors} errors"
        )
        if stats is not None:
            text += (
                f", {fields['retries']} retries, waited {fields['limiter_wait_s']} s on the rate "
                f"limit and {fields['retry_wait_s']} s before retries"
            )
        if _shown(logger):
            logger.info(text, extra={"fields": fields})
        elif not self._quiet:
            self._console.print(text, highlight=False, soft_wrap=True)

    async def ticking(self, stats: Callable[[], CallStats]) -> None:
        """Call :meth:`tick` every `interval_s` until cancelled (a task beside the crawl)."""
        if self.enabled:
            return
        while True:
            await asyncio.sleep(self.interval_s)
            self.tick(stats())

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


def _shown(log: logging.Logger) -> bool:
    """True when some handler of the toolkit's loggers would show `log`'s INFO records
    (the job's `--log-format`, or `--log-level info`); the root logger's are not asked."""
    if not log.isEnabledFor(logging.INFO):
        return False
    current: logging.Logger | None = log
    while current is not None and current.name != "root":
        if any(h.level <= logging.INFO for h in current.handlers):
            return True
        current = current.parent if current.propagate else None
    return False
