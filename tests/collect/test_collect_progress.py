"""A crawl's progress where no terminal shows a bar: a line every few seconds, as text on
stderr or as a log record (one JSON object a line under ``--log-format json``)."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from typing import TYPE_CHECKING

import pytest
from rich.console import Console

from toolkit.api import CallStats
from toolkit.collect.progress import CrawlProgress
from toolkit.schedule.logs import install_log_handler

if TYPE_CHECKING:
    from collections.abc import Iterator


@pytest.fixture
def toolkit_logger() -> Iterator[logging.Logger]:
    """The ``toolkit`` logger as a test found it, restored afterwards."""
    logger = logging.getLogger("toolkit")
    handlers, level = list(logger.handlers), logger.level
    for handler in handlers:
        logger.removeHandler(handler)
    yield logger
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
    for handler in handlers:
        logger.addHandler(handler)
    logger.setLevel(level)


def piped() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=False, width=200), out


STATS = CallStats(requests=12, retries={"429": 2}, throttle_wait_s=1.5, retry_wait_s={"429": 4.0})


def test_a_pipe_gets_a_progress_line_with_calls_rate_retries_and_waits(toolkit_logger) -> None:
    console, out = piped()
    with CrawlProgress(console=console) as progress:
        progress.planned(40)
        for _ in range(10):
            progress.finished(ok=True)
        progress.finished(ok=False)
        progress.tick(STATS)
    line = out.getvalue()
    assert "crawl: 11 of 40 calls" in line
    assert "1 errors" in line and "2 retries" in line
    assert "waited 1.5 s on the rate limit and 4.0 s before retries" in line


def test_quiet_prints_no_line(toolkit_logger) -> None:
    console, out = piped()
    with CrawlProgress(console=console, quiet=True) as progress:
        progress.planned(2)
        progress.tick(STATS)
    assert out.getvalue() == ""


def test_json_log_format_gets_the_same_as_a_json_line(toolkit_logger) -> None:
    stream = io.StringIO()
    install_log_handler("json", stream=stream)
    console, out = piped()
    with CrawlProgress(console=console, quiet=True) as progress:  # the job crawls quietly
        progress.planned(5)
        progress.finished(ok=True)
        progress.tick(STATS)
    record = json.loads(stream.getvalue().strip().splitlines()[-1])
    assert record["logger"] == "toolkit.collect.progress"
    assert (record["calls_done"], record["calls_planned"], record["retries"]) == (1, 5, 2)
    assert (record["limiter_wait_s"], record["retry_wait_s"]) == (1.5, 4.0)
    assert out.getvalue() == ""  # said once, in the log's format


def test_a_terminal_shows_the_bar_not_lines(toolkit_logger) -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=120)
    with CrawlProgress(console=console) as progress:
        progress.planned(3)
        progress.tick(STATS)
    assert "crawl:" not in out.getvalue()


def test_ticking_reports_every_interval_until_cancelled(toolkit_logger) -> None:
    console, out = piped()

    async def crawl_for_a_while() -> None:
        with CrawlProgress(console=console, interval_s=0.01) as progress:
            progress.planned(3)
            ticker = asyncio.create_task(progress.ticking(lambda: STATS))
            await asyncio.sleep(0.1)
            ticker.cancel()
            await asyncio.gather(ticker, return_exceptions=True)

    asyncio.run(crawl_for_a_while())
    assert out.getvalue().count("crawl: 0 of 3 calls") >= 3
