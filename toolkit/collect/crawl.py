"""The crawl: discover the hierarchy, run every collector concurrently, record what failed.

Jobs (see `plan.py`) go through a priority queue to a pool of workers as large as the
client's concurrency; the client keeps its own semaphore, rate limit and retries. The
hierarchy is listed first so that work spreads out early. Each distinct GET is made once
per crawl. A failed call becomes a `collection_errors` row and makes the result `partial`,
except a 404 carrying the error object `not_found` (not visible to this credential, spec
part 5 rule 6). An endpoint the server lacks (`EndpointMissing`: a plain-text 404, 405,
501...) is a failure of type `endpoint_missing` whose row names the path called, what came
back and the `[endpoints]` setting to change. A 401 on the collecting credential stops
everything with `CollectionAborted`; `users.me` or `teams.list` missing stops it with
`PlatformUnavailable` (the base URL is wrong); either way nothing is returned for committing.
Once every row is in, free text that repeats a variable value the crawl read is masked
(`toolkit.collect.known_values`), and the values are forgotten.

>>> from toolkit.snapshot.redaction import load_fingerprinter          # doctest: +SKIP
>>> rows, result = crawl(settings.client_config(),                     # doctest: +SKIP
...                      fingerprints=load_fingerprinter(settings.hmac_key_file))
>>> result.status, result.calls, result.min_calls                      # doctest: +SKIP
('complete', 1203, 1203)
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import gc
import logging
import time
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from toolkit.api import (
    AsyncPlatformClient,
    RequestError,
)
from toolkit.collect.aliases import FieldAliases
from toolkit.collect.conform import Owner, error_row
from toolkit.collect.crawl_result import CrawlOutput, CrawlResult, finish_tables
from toolkit.collect.crawler import ME, Crawler
from toolkit.collect.credentials import map_credential, map_failed_credential
from toolkit.collect.known_values import KnownValues
from toolkit.collect.plan import CrawlOptions, Job, Planner
from toolkit.collect.progress import CrawlProgress
from toolkit.collect.scope_probe import probe_scopes

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

    from rich.console import Console

    from toolkit.api import ClientConfig
    from toolkit.collect.conform import Rows
    from toolkit.snapshot.redaction import Fingerprinter

__all__ = ["crawl", "crawl_async"]

logger = logging.getLogger("toolkit.collect")


async def _audit_credential(
    name: str, client: AsyncPlatformClient, fingerprints: Fingerprinter, aliases: FieldAliases
) -> Rows:
    """`/users/me` of an audited credential: its only call. A refusal is data, not an abort."""
    token = client.config.token
    try:
        payload = await client.me()
    except RequestError as error:
        rows = map_failed_credential(name, error, token=token, fingerprints=fingerprints)
        rows["collection_errors"] = [
            error_row(
                error.endpoint,
                Owner(),
                error_type=error.type,
                message=f"audited credential {name!r}: {token.scrub(error.message)}",
                status=error.status,
                request_id=error.request_id,
                attempts=error.attempts,
            )
        ]
        return rows
    payload = aliases.normalise(ME.endpoint, payload)
    return map_credential(name, payload, token=token, fingerprints=fingerprints)


async def crawl_async(
    client: AsyncPlatformClient,
    *,
    fingerprints: Fingerprinter,
    options: CrawlOptions | None = None,
    credential: str = "default",
    audited: Mapping[str, AsyncPlatformClient] | None = None,
    quiet: bool = False,
    console: Console | None = None,
    aliases: FieldAliases | None = None,
) -> CrawlOutput:
    """Crawl everything `client`'s credential can see; see the module docstring.

    `audited` maps credential names to clients that only answer `/users/me`. `aliases`
    rewrites a real server's field names and values into the specification's (the
    built-in product words by default; `[fields.KIND]` renames through `crawl_settings`).

    >>> async with AsyncPlatformClient(config) as client:               # doctest: +SKIP
    ...     rows, result = await crawl_async(client, fingerprints=fingerprints)
    """
    known = KnownValues((options or CrawlOptions()).value_mask_min_length)
    planner = Planner(fingerprints=fingerprints, options=options, known=known)
    started, clock = datetime.now(UTC), time.monotonic()
    before = client.stats()
    with _older_objects_frozen(), CrawlProgress(quiet=quiet, console=console) as progress:
        crawler = Crawler(client, credential, progress, aliases or FieldAliases())
        audited_rows = await _run(crawler, planner, fingerprints, audited or {})
    probed: Rows = {}
    if planner.options.verify_scope and audited:
        probed = await probe_scopes(crawler.rows, audited_rows, audited)
    for rows in (*audited_rows, probed):
        for table, found in rows.items():
            crawler.rows.extend(table, found)
    after = client.stats()
    extra_calls = sum(c.stats().requests for c in (audited or {}).values())
    tables, duplicates = finish_tables(crawler.rows)
    known.mask_tables(tables)  # all rows are in: text read before its variable is masked too
    known.clear()
    errors = tables["collection_errors"]
    result = CrawlResult(
        status="partial" if crawler.failed or duplicates else "complete",
        credential=credential,
        role=crawler.role,
        started_at=started,
        finished_at=datetime.now(UTC),
        duration_s=time.monotonic() - clock,
        calls=after.requests - before.requests + extra_calls,
        planned=(*crawler.planned, *(ME for _ in audited_rows)),
        critical_path=crawler.depth,
        errors=tuple(errors if isinstance(errors, list) else errors.to_pylist()),
        stats=after,
        retries=after.retries_total - before.retries_total,
        extra={"fingerprint_key": fingerprints.key_id},  # which key its fingerprints are under
    )
    logger.info(
        "crawl %s: %d calls (%d needed), %d errors, %.1fs",
        *(result.status, result.calls, result.min_calls, len(result.errors), result.duration_s),
    )
    return CrawlOutput(tables, result)


@contextmanager
def _older_objects_frozen() -> Iterator[None]:
    """Keep the garbage collector's full passes off the objects alive before the crawl.

    A full pass (the oldest generation) walks every tracked object: the imports' hundreds
    of thousands along with the crawl's rows, and it stops the event loop while it walks, so
    every answer in flight waits. `gc.freeze` sets the older objects aside until the crawl
    ends; garbage among them is collected after it. A process that froze objects itself
    keeps its own arrangement.
    """
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


async def _run(
    crawler: Crawler,
    planner: Planner,
    fingerprints: Fingerprinter,
    audited: Mapping[str, AsyncPlatformClient],
) -> list[Rows]:
    """Crawl from ``/users/me`` and the hierarchy's roots, with each audited credential's
    ``/users/me`` beside it and the progress ticking; the audited credentials' rows."""
    me = Job(ME, Owner(), lambda p: crawler.on_me(p, fingerprints), priority=0)
    audits = [_audit_credential(n, c, fingerprints, crawler.aliases) for n, c in audited.items()]
    gathered = asyncio.gather(*audits)
    ticker = asyncio.create_task(crawler.progress.ticking(crawler.client.stats))
    try:
        await crawler.run([me, *planner.roots()])
    finally:
        ticker.cancel()
        audited_rows = await gathered
        await asyncio.gather(ticker, return_exceptions=True)
    return list(audited_rows)


def crawl(
    config: ClientConfig,
    *,
    fingerprints: Fingerprinter,
    options: CrawlOptions | None = None,
    credential: str = "default",
    audited: Mapping[str, ClientConfig] | None = None,
    quiet: bool = False,
    console: Console | None = None,
    aliases: FieldAliases | None = None,
) -> CrawlOutput:
    """Blocking crawl, for scripts and notebooks (safe inside Jupyter's running loop).

    >>> rows, result = crawl(settings.client_config(), fingerprints=fingerprints)  # doctest: +SKIP
    >>> len(rows["services"]), result.status                                       # doctest: +SKIP
    (200, 'complete')
    """

    async def main() -> CrawlOutput:
        clients = {name: AsyncPlatformClient(c) for name, c in (audited or {}).items()}
        try:
            async with AsyncPlatformClient(config) as client:
                return await crawl_async(
                    client,
                    fingerprints=fingerprints,
                    options=options,
                    credential=credential,
                    audited=clients,
                    quiet=quiet,
                    console=console,
                    aliases=aliases,
                )
        finally:
            for other in clients.values():
                await other.aclose()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(main())
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, main()).result()
