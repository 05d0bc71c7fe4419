"""Crawl a served simulator through a counting transport (helpers of the collect tests).

`crawl_world(server, token)` runs one crawl and returns its output, the number of times
each (path, query) was requested, and what the progress bar printed.
"""

from __future__ import annotations

import io
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

import httpx
from rich.console import Console

from toolkit.api import AsyncPlatformClient, ClientConfig
from toolkit.collect import CrawlOptions, CrawlOutput, crawl_async
from toolkit.snapshot.redaction import Fingerprinter

if TYPE_CHECKING:
    from toolkit.sim import SimulatorServer

HMAC_KEY = b"test-hmac-key-0123456789abcdef"


class CountingTransport(httpx.AsyncBaseTransport):
    """Counts requests per (path, sorted query) before handing them to the real transport.

    Paths in `missing` answer as a router without them does: `404 page not found`, as text.
    """

    def __init__(self, missing: tuple[str, ...] = ()) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.counts: Counter[tuple[str, tuple[tuple[str, str], ...]]] = Counter()
        self.missing = missing

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        query = tuple(sorted(parse_qsl(request.url.query.decode(), keep_blank_values=True)))
        self.counts[(request.url.path, query)] += 1
        if request.url.path in self.missing:
            headers = {"content-type": "text/plain; charset=utf-8"}
            return httpx.Response(404, content=b"404 page not found\n", headers=headers)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


@dataclass
class Crawled:
    """One crawl: its output, the requests it sent, and what the progress bar printed."""

    output: CrawlOutput
    counts: Counter[tuple[str, tuple[tuple[str, str], ...]]]
    progress: str

    @property
    def rows(self) -> dict[str, list[dict[str, Any]]]:
        return self.output.rows


def config_for(server: SimulatorServer, token: str, **overrides: Any) -> ClientConfig:
    settings: dict[str, Any] = {
        "rate_per_minute": None,
        "concurrency": 16,
        "backoff_base_s": 0.01,
        "backoff_cap_s": 0.05,
        **overrides,
    }
    base_url = settings.pop("base_url", server.base_url)
    return ClientConfig(base_url=base_url, token=token, **settings)


def crawl_world(
    server: SimulatorServer,
    token: str,
    *,
    audited: dict[str, str] | None = None,
    options: CrawlOptions | None = None,
    within_s: float | None = None,
    missing: tuple[str, ...] = (),
    transport: CountingTransport | None = None,
    **config: Any,
) -> Crawled:
    """Crawl the served world with `token`, auditing the named `audited` tokens; the paths
    in `missing` answer a plain-text 404 (see `CountingTransport`); `transport`, a
    CountingTransport or a subclass that changes answers, replaces the default one.

    `within_s`: fail with `TimeoutError` if the crawl has not ended by then (a hang).
    `server` is anything with a `base_url`: a `SimulatorServer`, or a proxy in front of one.
    """
    import asyncio

    transport = transport or CountingTransport(missing)
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=120)

    async def main() -> CrawlOutput:
        others = {
            name: AsyncPlatformClient(config_for(server, t)) for name, t in (audited or {}).items()
        }
        try:
            async with AsyncPlatformClient(
                config_for(server, token, **config), transport=transport
            ) as client:
                return await crawl_async(
                    client,
                    fingerprints=Fingerprinter(HMAC_KEY),
                    options=options,
                    audited=others,
                    console=console,
                )
        finally:
            for other in others.values():
                await other.aclose()

    output = asyncio.run(asyncio.wait_for(main(), within_s))
    return Crawled(output, transport.counts, out.getvalue())
