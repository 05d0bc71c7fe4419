"""The crawl's engine: a priority queue of jobs, a pool of workers as large as the client's
concurrency, and what the calls gathered (rows, errors, the calls planned, the credential's
role). :mod:`toolkit.collect.crawl` starts it from ``/users/me`` and the hierarchy's roots
and turns what it gathered into tables and a :class:`~toolkit.collect.CrawlResult`.

A worker hands the answer it received to the event loop to be mapped into rows and further
jobs, and sends its next request first: the request's wait for the network then covers the
mapping, where it used to follow it. A job counts as done once its answer is mapped, so the
crawl ends only when every child job has been planned.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from typing import TYPE_CHECKING, Any

from toolkit.api import (
    AsyncPlatformClient,
    EndpointMissing,
    InvalidRequest,
    NotFound,
    RequestError,
    Unauthorized,
    prefix_suggestion,
)
from toolkit.collect.calls import Call
from toolkit.collect.conform import error_row
from toolkit.collect.credentials import map_credential
from toolkit.collect.row_buffer import RowBuffer
from toolkit.errors import CollectionAborted, PlatformUnavailable

if TYPE_CHECKING:
    from toolkit.collect.aliases import FieldAliases
    from toolkit.collect.conform import Row, Rows
    from toolkit.collect.plan import Job
    from toolkit.collect.progress import CrawlProgress
    from toolkit.snapshot.redaction import Fingerprinter

__all__ = ["ME", "Crawler"]

logger = logging.getLogger("toolkit.collect")
ME = Call.of("users.me")
_FAILED = object()  # what `Crawler._fetch` returns for a call whose failure it recorded
# The calls everything hangs from: if the server lacks them, the base URL is wrong.
_ROOTS = frozenset({"users.me", "teams.list"})


class Crawler:
    """One crawl's state: the queue, the calls made, the rows and errors gathered."""

    def __init__(
        self,
        client: AsyncPlatformClient,
        credential: str,
        progress: CrawlProgress,
        aliases: FieldAliases,
    ):
        self.client = client
        self.aliases = aliases
        self.credential = credential
        self.progress = progress
        self.queue: asyncio.PriorityQueue[tuple[int, int, int, Job]] = asyncio.PriorityQueue()
        self.order = itertools.count()
        self.planned: dict[Call, None] = {}
        self.rows = RowBuffer()
        self.failed: list[Row] = []  # errors that make the snapshot partial
        self.depth = 0
        self.role: str | None = None
        self.aborted: CollectionAborted | None = None
        self.refused: PlatformUnavailable | None = None
        self.missing: set[str] = set()  # endpoints the server lacks (logged once each)
        self.stop = asyncio.Event()
        self.closing = False  # set once the crawl cancels its workers
        self.unmapped = 0  # answers received, waiting on the event loop to be mapped

    def submit(self, jobs: list[Job], depth: int) -> None:
        fresh = []
        for job in jobs:
            if job.call in self.planned:
                logger.debug("not repeating %s (already planned)", job.call)
                continue
            self.planned[job.call] = None
            fresh.append(job)
            self.queue.put_nowait((job.priority, next(self.order), depth, job))
        self.progress.planned(len(fresh))

    async def run(self, roots: list[Job]) -> None:
        self.submit(roots, depth=1)
        workers = [
            asyncio.create_task(self._worker()) for _ in range(self.client.config.concurrency)
        ]
        drained = asyncio.create_task(self.queue.join())
        stopped = asyncio.create_task(self.stop.wait())
        try:
            await self._watch(set(workers), drained, stopped)
        finally:
            self.closing = True
            for task in (*workers, drained, stopped):
                task.cancel()
            await asyncio.gather(*workers, drained, stopped, return_exceptions=True)
        if self.aborted is not None:
            raise self.aborted
        if self.refused is not None:
            raise self.refused

    async def _watch(
        self,
        workers: set[asyncio.Task[None]],
        drained: asyncio.Task[None],
        stopped: asyncio.Task[Any],
    ) -> None:
        """Wait until every job is done or the crawl stops. Workers never end on their own;
        when every one has (cancelled from outside), the jobs still queued become failed
        calls, so the crawl ends partial instead of waiting on a queue nobody reads."""
        alive = set(workers)
        while alive:
            done, _ = await asyncio.wait(
                {drained, stopped, *alive}, return_when=asyncio.FIRST_COMPLETED
            )
            if drained in done or stopped in done:
                return
            alive -= done
            logger.error("%d crawl worker(s) ended early; %d left", len(done), len(alive))
        if self.unmapped:  # answers received before the end, mapped first: they plan jobs
            await asyncio.sleep(0)  # their callbacks were queued before this task's turn
        while not self.queue.empty():
            _, _, _, job = self.queue.get_nowait()
            self._crashed(job, "not called: every crawl worker had ended")
            self.queue.task_done()

    async def _worker(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            _, _, depth, job = await self.queue.get()
            self.depth = max(self.depth, depth)
            mapping = False  # whether the job is done once its answer is mapped
            try:
                payload = await self._fetch(job)
                if payload is not _FAILED:
                    # at most `concurrency` answers wait: never a backlog of payloads
                    if self.unmapped >= self.client.config.concurrency:
                        self._map(job, depth, payload)
                    else:
                        self.unmapped += 1
                        loop.call_soon(self._mapped, job, depth, payload)
                        mapping = True
            except CollectionAborted as abort:
                self.aborted = self.aborted or abort
                self.stop.set()
            except asyncio.CancelledError as error:
                if not self.closing:  # the crawl is not over: this job is lost, say so
                    self._crashed(job, _failure(error))
                task = asyncio.current_task()
                if task is not None and task.cancelling():  # asked to stop, not a stray error
                    raise
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException as error:  # any other failure is one failed call too
                self._crashed(job, _failure(error))
            finally:
                if not mapping:
                    self.queue.task_done()

    def _mapped(self, job: Job, depth: int, payload: Any) -> None:
        """Map an answer a worker handed over (run by the event loop); the job is done."""
        self.unmapped -= 1
        try:
            self._map(job, depth, payload)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as error:  # any failure is one failed call, as in a worker
            self._crashed(job, _failure(error))
        finally:
            self.queue.task_done()

    async def _fetch(self, job: Job) -> Any:
        """The job's answer, or `_FAILED` once its failure is recorded."""
        try:
            payload = await job.call.fetch(self.client)
        except Unauthorized as error:
            self.progress.finished(ok=False)
            raise CollectionAborted(
                self.credential,
                endpoint=error.endpoint,
                status=error.status,
                request_id=error.request_id,
            ) from None
        except (RequestError, InvalidRequest) as error:
            self.progress.finished(ok=False)
            self._failed(job, error)
            return _FAILED
        except Exception as error:  # a failure the client did not expect: still one failed call
            self.progress.finished(ok=False)
            self._crashed(job, _failure(error))
            return _FAILED
        self.progress.finished(ok=True)
        return payload

    def _map(self, job: Job, depth: int, payload: Any) -> None:
        """Turn `job`'s answer into rows and the jobs it leads to, which are queued."""
        try:
            rows, children = job.handle(self.aliases.normalise(job.call.endpoint, payload))
        except Exception as error:  # a mapping bug must not lose the rest of the crawl
            logger.warning("mapping %s failed: %s", job.call.endpoint, type(error).__name__)
            self._record(
                error_row(
                    job.call.endpoint,
                    job.owner,
                    error_type="mapping_error",
                    message=f"the answer could not be mapped ({type(error).__name__})",
                ),
            )
            return
        counts = {table: len(found) for table, found in rows.items() if found}
        logger.debug("%s -> %s", job.call, counts or "no rows")
        for table, found in rows.items():
            if table == "collection_errors":
                for row in found:
                    self._record(row)
            else:
                self.rows.extend(table, found, source=job.call.endpoint)
        self.submit(children, depth + 1)

    def _failed(self, job: Job, error: RequestError | InvalidRequest) -> None:
        if isinstance(error, InvalidRequest):
            row = error_row(
                job.call.endpoint, job.owner, error_type="invalid_request", message=str(error)
            )
            self._record(row)
            return
        # Only the error object's not_found is scope (spec part 5 rule 6, part 7 rule 1).
        not_visible = isinstance(error, NotFound) and (error.status, error.type) == (
            404,
            "not_found",
        )
        message = error.message
        if error.details:
            message += "; " + "; ".join(error.details)
        if not_visible:
            message = f"not visible to credential {self.credential!r}: {message}"
        if isinstance(error, EndpointMissing):
            message = self._missing(job, error)
        logger.debug("%s failed: %s (request_id %s)", job.call, error.type, error.request_id)
        row = error_row(
            job.call.endpoint,
            job.owner,
            error_type=error.type,
            message=message,
            status=error.status,
            request_id=error.request_id,
            attempts=error.attempts,
            not_visible=not_visible,
        )
        self._record(row, partial=not not_visible)

    def _crashed(self, job: Job, message: str) -> None:
        """Record a call that failed outside the client's error tree; the crawl goes on."""
        logger.warning("%s failed: %s", job.call.endpoint, message)
        self._record(
            error_row(job.call.endpoint, job.owner, error_type="client_error", message=message)
        )

    def _missing(self, job: Job, error: EndpointMissing) -> str:
        """The row's message for an endpoint the server lacks; logged once per endpoint.
        A root endpoint missing means a wrong base URL: the crawl stops, nothing is kept."""
        endpoint = job.call.endpoint
        message = (
            f"not collected: the server has no endpoint {endpoint} (GET {error.path} answered "
            f"{error.status}, {error.content_type or 'no content type'}); set "
            f'{error.setting} = "/its/path" if it serves it elsewhere'
        )
        if endpoint not in self.missing:
            self.missing.add(endpoint)
            logger.warning("%s", message)
        if endpoint in _ROOTS and self.refused is None:
            base_url = self.client.config.base_url
            self.refused = PlatformUnavailable(
                f"{base_url} does not serve the platform API: GET {error.path} ({endpoint}) "
                f"answered {error.status} ({error.content_type or 'no content type'}), as a "
                "server without that endpoint does. Nothing was committed. Check the base URL: "
                f"try --base-url {prefix_suggestion(base_url)}; if this server serves "
                f'{endpoint} at another path, set {error.setting} = "/its/path".'
            )
            self.stop.set()
        return message

    def _record(self, row: Row, *, partial: bool = True) -> None:
        self.rows.append("collection_errors", row)
        if partial:
            self.failed.append(row)

    def on_me(self, payload: Any, fingerprints: Fingerprinter) -> tuple[Rows, list[Job]]:
        rows = map_credential(
            self.credential, payload, token=self.client.config.token, fingerprints=fingerprints
        )
        found = rows["credentials"]
        self.role = found[0]["role"] if found else None
        return rows, []


def _failure(error: BaseException) -> str:
    """What a failed call's row says: the exception's type only (its text may quote a secret)."""
    return f"the call failed in the client ({type(error).__name__}); the crawl went on without it"
