"""One snapshot: crawl the platform, then write every table and commit, the snapshots row last.

The crawl (``toolkit.collect``) knows the API and nothing of files; the store
(``toolkit.snapshot``) knows files and nothing of the API; this is the one place that joins
them. A refused credential (401) raises :class:`~toolkit.errors.CollectionAborted` before
anything is written, so nothing is committed. Example::

    run = take_snapshot(load_settings())
    run.info.status, run.info.row_counts, run.result.calls
"""

from __future__ import annotations

import logging
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from rich.console import Group
from rich.table import Table
from rich.text import Text

from toolkit.collect import crawl
from toolkit.collect.aliases import FieldAliases
from toolkit.errors import CollectionAborted, ConfigError, PlatformUnavailable
from toolkit.snapshot import Store
from toolkit.snapshot.coverage import NOT_COLLECTED, not_collected
from toolkit.snapshot.redaction import ENV_HMAC_KEY, load_fingerprinter

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sized
    from datetime import datetime

    from rich.console import RenderableType

    from toolkit.api import CallStats
    from toolkit.collect import CrawlOptions, CrawlOutput, CrawlResult
    from toolkit.config import Settings
    from toolkit.snapshot import FaultHook, SnapshotInfo

__all__ = ["SnapshotRun", "crawl_settings", "describe_run", "store_failure", "take_snapshot"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SnapshotRun:
    """A committed snapshot's record and how its crawl went."""

    info: SnapshotInfo
    result: CrawlResult
    write_s: float
    warnings: tuple[str, ...] = ()
    """What to know of the snapshot, though it was taken: two credentials holding one key,
    fingerprints under another HMAC key than the snapshot before."""


def take_snapshot(
    settings: Settings,
    *,
    as_of: datetime | None = None,
    options: CrawlOptions | None = None,
    quiet: bool = True,
    fault_hook: FaultHook | None = None,
) -> SnapshotRun:
    """Crawl with the configured credentials and commit one snapshot to the store.

    ``as_of`` stamps the snapshot with another time than now (the demo's simulated days).
    The snapshot is ``partial`` when any call failed; its ``collection_errors`` say which.
    """
    with _arrow_from_malloc():
        base_url = settings.require_base_url()
        same = _same_key(settings)
        output = crawl_settings(settings, options=options, quiet=quiet)
        result, tables = output.result, dict(output.tables)
        _refuse_if_unreachable(result, base_url)
        del output  # each table is let go once written: a large crawl's rows are most of memory
        _return_freed_memory()
        started = time.perf_counter()
        store = Store.open(settings.store_url)
        warning = _another_key(store, result.extra.get("fingerprint_key"), settings)
        meta = {**result.snapshot_meta(), "base_url": base_url}
        meta["extra"] = {**meta["extra"], "not_collected": _not_collected(result, tables)}
        writer = store.begin(snapshot_at=as_of, meta=meta, fault_hook=fault_hook)
        for name in list(tables):
            data = tables.pop(name)
            for start in range(0, len(data), _WRITE_ROWS):
                writer.write(name, data[start : start + _WRITE_ROWS])
                _return_freed_memory()
            del data
        info = writer.commit(status=result.status)
    warnings = tuple(w for w in (same, warning) if w is not None)
    for text in warnings:  # once committed: the scheduled job's log (the CLI prints them)
        logger.warning("%s", text)
    return SnapshotRun(
        info=info, result=result, write_s=time.perf_counter() - started, warnings=warnings
    )


def _same_key(settings: Settings) -> str | None:
    """What to say when configured credentials hold the same key: each name is audited as a
    key of its own, so every key-scope finding of that key is reported once per name. The
    tokens are compared in memory only; the message names the credentials."""
    names: dict[str, list[str]] = {}
    for name, credential in settings.credentials.items():
        try:
            names.setdefault(credential.token(), []).append(name)
        except ConfigError:
            continue  # a variable not set: the crawl refuses it with its own message
    shared = [" and ".join(repr(n) for n in group) for group in names.values() if len(group) > 1]
    if not shared:
        return None
    return (
        f"the credentials {'; '.join(shared)} hold the same key, so each of its key-scope "
        "findings is reported once per name; keep one name for a key in [credentials]"
    )


def _another_key(store: Store, key_id: str | None, settings: Settings) -> str | None:
    """What to say when the snapshot's fingerprints are under another HMAC key than the
    newest committed snapshot's (None when they are not): no value will match its
    fingerprint there (a key file lost and created again, a new machine without it), so
    every secret would look rotated. VAR008 counts ages from the change as lower bounds."""
    committed = [s for s in store.snapshots() if s.status in ("complete", "partial")]
    before = committed[-1].fingerprint_key if committed else None
    if key_id is None or before is None or before == key_id:
        return None
    return (
        f"this snapshot's fingerprints are under another HMAC key (id {key_id}) than snapshot "
        f"{committed[-1].snapshot_id}'s (id {before}), so no value compares with earlier "
        f"snapshots; if the key was lost, restore the key file {settings.hmac_key_file} (or "
        f"${ENV_HMAC_KEY}) from a backup before the next snapshot"
    )


# Rows appended at a time (one Delta commit each): the Parquet writer holds a batch's
# pages until its file is written; 145,000 deployments at once peaked 75 MB higher.
_WRITE_ROWS = 25_000


@contextmanager
def _arrow_from_malloc() -> Iterator[None]:
    """Arrow's buffers come from the C library's allocator while a snapshot is taken.

    The crawl builds and drops tables of tens of MB (conversions, merges, the writer's
    copies); malloc hands such blocks back to the system when they are freed, while
    Arrow's default mimalloc pool keeps them mapped in per-thread heaps, which put 110 MB
    on a 10,000-service snapshot's peak. Buffers keep the pool they came from, so
    switching back afterwards is safe.
    """
    previous = pa.default_memory_pool()
    pa.set_memory_pool(pa.system_memory_pool())
    try:
        yield
    finally:
        pa.set_memory_pool(previous)


def _return_freed_memory() -> None:
    """Hand Arrow's freed memory back to the system (for malloc: ``malloc_trim``).

    Merging a crawl's tables and appending each to the store free a few hundred MB that
    no later step reuses.
    """
    pa.default_memory_pool().release_unused()


# The calls everything else hangs from: if they failed for lack of a platform, the snapshot
# would hold nothing, and committing it would only hide the previous one from `_latest`.
_ROOT_ENDPOINTS = frozenset({"users.me", "teams.list"})


def _refuse_if_unreachable(result: CrawlResult, base_url: str) -> None:
    """Raise PlatformUnavailable when the root calls failed with no answer, 429 or 5xx."""
    for error in result.errors:
        status = error.get("status")
        unavailable = status is None or status == 429 or status >= 500
        if error.get("endpoint") in _ROOT_ENDPOINTS and unavailable:
            raise PlatformUnavailable(
                f"the platform at {base_url} did not answer {error.get('endpoint')} "
                f"({error.get('error_type')}, status {status or 'none'}): nothing was committed. "
                "Check the URL and the network, then run the snapshot again."
            )


def _not_collected(result: CrawlResult, tables: Mapping[str, Sized]) -> list[str]:
    """The tables with no row that the crawl's failed calls left short (recorded in the
    snapshots row's ``extra``, so ``store ls`` and the audit need not work it out again)."""
    failures = [
        (str(e["endpoint"]), e.get("table_name")) for e in result.errors if not e.get("not_visible")
    ]
    return not_collected(failures, {name: len(data) for name, data in tables.items()})


def describe_run(run: SnapshotRun, store_url: str) -> RenderableType:
    """The snapshot command's summary: rows per table (a table the failed calls left
    without a row says "not collected", never 0), the endpoints the server lacks,
    duration, calls, retries, errors."""
    info, result = run.info, run.result
    # the id on a line of its own: a table's title wraps to the table's width, mid-id
    heading = Text(f"snapshot {info.snapshot_id} ({info.status})", no_wrap=True)
    table = Table()
    table.add_column("table")
    table.add_column("rows", justify="right")
    uncollected = set(info.not_collected or ())
    for name, count in sorted(info.row_counts.items()):
        if name in uncollected:
            table.add_row(name, Text(NOT_COLLECTED, style="yellow"))
        elif count:
            table.add_row(name, f"{count:,}")
    retries = ", ".join(f"{k}: {v}" for k, v in sorted(result.stats.retries.items())) or "none"
    facts = (
        f"store {store_url}; taken at {info.snapshot_at.isoformat()}; credential "
        f"{result.credential} ({result.role or 'unknown role'})\n"
        f"crawl {result.duration_s:.1f} s, write {run.write_s:.1f} s; {result.calls} calls "
        f"({result.min_calls} needed), retries {retries}; {len(result.errors)} failed calls\n"
        f"{describe_waits(result.stats)}"
    )
    return Group(heading, table, Text(facts), *_missing_lines(result))


def _missing_lines(result: CrawlResult) -> list[Text]:
    """One line per endpoint the server lacks: the path called, what came back, and the
    ``[endpoints]`` setting to change (from the first of its ``collection_errors`` rows)."""
    first: dict[str, Mapping[str, Any]] = {}
    for error in result.errors:
        if error.get("error_type") == "endpoint_missing":
            first.setdefault(str(error["endpoint"]), error)
    return [
        Text.assemble(("endpoint missing: ", "yellow"), f"{name}: {row.get('message')}")
        for name, row in sorted(first.items())
    ]


def describe_waits(stats: CallStats) -> str:
    """How long the crawl waited on the client's rate limit and before retries (429s apart),
    so a slow crawl says whether the platform or the client held it back."""
    on_429 = stats.retry_wait_s.get("429", 0.0)
    other = stats.retry_wait_total_s - on_429
    return (
        f"waited {stats.throttle_wait_s:.1f} s on the rate limit, {on_429:.1f} s on 429 "
        f"answers (Retry-After), {other:.1f} s before other retries"
    )


def store_failure(store_url: str, exc: BaseException) -> str:
    """What to say when a snapshot could not be written to the store (full disk,
    permissions, an unreachable bucket): the writer commits a snapshot whole or not at all."""
    if isinstance(exc, OSError) and exc.strerror:
        cause = exc.strerror
    else:
        cause = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
    return (
        f"the store {store_url} could not be written ({cause}): free space or fix its "
        "permissions or credentials; nothing of this run was committed and earlier snapshots "
        "are intact"
    )


def crawl_settings(
    settings: Settings, *, options: CrawlOptions | None = None, quiet: bool = False
) -> CrawlOutput:
    """Crawl with the configured collecting credential; audit every other configured one.

    Without `options`, the crawl uses the configured ones (``[collect]``, `settings.collect`),
    or the defaults when none are configured; `options` given here replace them whole.

    >>> rows, result = crawl_settings(load_settings())                 # doctest: +SKIP
    """
    fingerprints = load_fingerprinter(settings.hmac_key_file, store_root=settings.store_url)
    audited = {cred.name: settings.client_config(cred) for cred in settings.audited}
    try:
        return crawl(
            settings.client_config(),
            fingerprints=fingerprints,
            options=options if options is not None else settings.collect,
            credential=settings.credential,
            audited=audited,
            quiet=quiet,
            aliases=FieldAliases(settings.fields),
        )
    except CollectionAborted as abort:
        raise CollectionAborted(
            abort.credential,
            endpoint=abort.endpoint,
            status=abort.status,
            request_id=abort.request_id,
            token_env=settings.collecting.token_env,
        ) from None
