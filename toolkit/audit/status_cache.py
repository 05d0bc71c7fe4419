"""What each check said of each committed snapshot, kept between full audits.

A committed snapshot never changes, and a check whose header says ``-- history: snapshot``
(or ``previous``) judges a snapshot from it (and the one before) alone. So a full audit
need not judge the whole history again to know the statuses of the snapshots an earlier
audit judged: it reads them here and judges only what is new, in the window of the judged
and compared snapshots that it reads for their full rows anyway, and the other snapshots
it has no entry for in a scope of their own (:meth:`AuditCache.fresh`; see
:mod:`toolkit.audit.check_rows`). ``history: all`` checks are never cached.

An entry is the status rows of one check for one snapshot: every row that is not ``ok``,
and every row of a partial snapshot (where a finding with no row may not have been
observed). It holds identity and status only (check id, snapshot id, resource id: what
every report shows), never a reason, evidence or value. It is used only while everything
it was judged from is the same:

* the check: its SQL, its parameters as bound, the production pattern, the derived views
  and the engine's own code that judges and files them (a hash of each);
* the snapshot: its id, content hash and status; for a ``previous`` check, those of the
  committed snapshot before it too (a pruned one changes which that is).

Anything else is judged again and the entry replaced. A cache folder that cannot be read
or written never fails an audit: the audit judges the whole history, as without a cache,
and says why in ``warnings``. Example::

    cache = StatusCache(settings.status_cache)  # ~/.cache/platform-audit/status
    result = run_audit(store, cache=cache)      # a second audit reuses the first's statuses
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
import shutil
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping, Sequence

    from toolkit.audit.check_file import CheckSpec

__all__ = [
    "CACHED_HISTORIES",
    "ENTRY_SCHEMA",
    "AuditCache",
    "CheckCache",
    "Fresh",
    "StatusCache",
    "entries_of",
]

CACHED_HISTORIES = ("snapshot", "previous")
"""The checks whose statuses are cached, by their ``-- history:`` line."""
ENTRY_SCHEMA = pa.schema(
    [("snapshot_id", pa.string()), ("resource_id", pa.string()), ("status", pa.string())]
)
_DICTIONARY = pa.dictionary(pa.int32(), pa.string())
_ENCODED = pa.schema([(name, _DICTIONARY) for name in ENTRY_SCHEMA.names])
"""The entries as :meth:`CheckCache.read` gives them."""
_FORMAT = b"platform-audit status cache 1"
_COVERS = b"platform_audit.covers"
"""Parquet metadata key: the JSON object {snapshot id: token} a file holds entries for."""
_MAX_FILES = 8
"""A check's files are merged into one when a save would make more."""
_UNUSED_DAYS = 30
"""A check's folder unused this long (another version, other thresholds) is removed."""
_JUDGING_CODE = (
    "check_rows.py",
    "engine.py",
    "scope.py",
    "snapshots_chosen.py",
    "status_cache.py",
    "store_connections.py",
)
"""The engine's files whose code decides what an entry holds (where each snapshot is
judged, and what is kept of its rows)."""


@dataclass(frozen=True)
class StatusCache:
    """A folder of cached statuses, one subfolder per store (by its URL).

    ``run_audit(store, cache=StatusCache(folder))`` binds it to the store; an audit of a
    connection (``store.duckdb()``) needs it bound by the caller, who knows the store:
    ``StatusCache(folder).bound(store.url)``.
    """

    folder: Path
    store_url: str | None = None

    def bound(self, store_url: str) -> StatusCache:
        """This cache, for the store at ``store_url``."""
        return StatusCache(self.folder, store_url)

    def for_audit(self, con: duckdb.DuckDBPyConnection, production: str | None) -> AuditCache:
        """One audit's use of the cache: the committed snapshots of ``con`` (a full view of
        the bound store) and what each entry must match."""
        if self.store_url is None:
            raise ValueError(
                "a status cache for a connection must name its store: cache.bound(store.url)"
            )
        rows = con.execute(
            "select snapshot_id, status, content_hash from snapshots "
            "where status in ('complete', 'partial') order by seq"
        ).fetchall()
        shown = _shown(con)
        tokens = {str(i): f"{i}:{h}:{st}" for i, st, h in rows}
        ordered = [str(i) for i, _, _ in rows]
        pairs = list(zip([None, *ordered], ordered, strict=False))
        previous = {now: f"{tokens[now]}|{tokens[was] if was else '-'}" for was, now in pairs}
        # A connection limited to some snapshots (store.duckdb(ids)) still lists them all:
        # only a snapshot whose rows it shows (and for previous, the one before's too) is
        # judged here as over the whole store, and may be filed.
        fileable = {
            "snapshot": frozenset(shown),
            "previous": frozenset(n for w, n in pairs if n in shown and (w is None or w in shown)),
        }
        partial = frozenset(str(i) for i, st, _ in rows if st == "partial")
        store = hashlib.sha256(self.store_url.encode()).hexdigest()[:16]
        return AuditCache(
            self.folder / store,
            {"snapshot": tokens, "previous": previous},
            fileable,
            frozenset(shown),
            partial,
            _judging_hash(production),
        )


@dataclass(frozen=True)
class Fresh:
    """Snapshots to judge outside the window because no entry holds them: ``judged``, and
    ``read`` (those and the one before each, what a scope of them needs)."""

    judged: tuple[str, ...]
    read: tuple[str, ...]


@dataclass
class AuditCache:
    """One full audit's entries: which it found, and the warnings of reading and writing."""

    folder: Path
    tokens: Mapping[str, Mapping[str, str]]
    """Per cached history kind, each committed snapshot's token."""
    fileable: Mapping[str, frozenset[str]]
    """Per cached history kind, the snapshots whose statuses this audit may file."""
    shown: frozenset[str]
    """The committed snapshots whose rows the audit reads."""
    partial: frozenset[str]
    judging: str
    """The hash of what every check's entries depend on beside the check itself."""
    warnings: list[str] = field(default_factory=list)
    reused: dict[str, int] = field(default_factory=dict)
    """Per check id, how many snapshots' statuses came from the cache."""
    checks: dict[str, CheckCache] = field(default_factory=dict)
    """The entries of each cached check, once :meth:`load` read them."""

    def load(
        self, specs: Sequence[CheckSpec], overrides: Mapping[str, Mapping[str, object]]
    ) -> None:
        """Read the entries of each check of ``specs`` that is cached."""
        for spec in specs:
            if spec.history in CACHED_HISTORIES:
                self.checks[spec.id] = self.check(spec, spec.bind(overrides.get(spec.id))).load()

    def fresh(self, ordered: Sequence[str], keep: Collection[str]) -> Fresh | None:
        """The snapshots some check has no entry for, besides the ``keep`` ones (judged in
        the window): judged in a scope of their own (with the one before each, in
        ``ordered``, the committed snapshots oldest first). None when there are none, or
        when they are half the history or more (then it is judged whole)."""
        missing: set[str] = set()
        for entries in self.checks.values():
            missing |= self.shown - entries.covered
        missing -= set(keep)
        if not missing or 2 * len(missing) >= len(self.shown):
            return None
        before = {now: was for was, now in itertools.pairwise(ordered)}
        read = missing | {before[i] for i in missing if i in before}
        return Fresh(tuple(sorted(missing)), tuple(i for i in ordered if i in read))

    def check(self, spec: CheckSpec, params: Mapping[str, object]) -> CheckCache:
        """The entries of one check, as bound with ``params``."""
        key = hashlib.sha256(
            json.dumps(
                [_FORMAT.decode(), self.judging, spec.id, spec.history, spec.sql, params],
                default=str,
                sort_keys=True,
            ).encode()
        ).hexdigest()[:32]
        kind = spec.history
        return CheckCache(self, self.folder / key, self.tokens[kind], self.fileable[kind], spec.id)

    def forget_unused(self) -> None:
        """Remove the store's check folders unused for :data:`_UNUSED_DAYS` days."""
        cutoff = time.time() - _UNUSED_DAYS * 86400
        try:
            folders = [p for p in self.folder.iterdir() if p.is_dir()]
            for path in folders:
                if path.stat().st_mtime < cutoff:
                    shutil.rmtree(path, ignore_errors=True)
        except OSError:
            return  # nothing there yet, or unreadable: load() says so if it matters


@dataclass
class CheckCache:
    """One check's entries in one audit: :meth:`load`, then :meth:`save` what was judged."""

    audit: AuditCache
    folder: Path
    tokens: Mapping[str, str]
    fileable: frozenset[str]
    check_id: str
    covered: frozenset[str] = frozenset()
    """The snapshots whose entries were found (:meth:`read` reads their rows)."""
    _parts: list[tuple[Path, frozenset[str]]] = field(default_factory=list)
    _rows: pa.Table | None = None
    _read: list[Path] = field(default_factory=list)
    _stale: bool = False

    def load(self) -> CheckCache:
        """Find the check's files and the entries in them whose tokens still match (each
        file's footer only: :meth:`read` reads the rows when they are needed)."""
        try:
            paths = sorted(self.folder.glob("*.parquet"))
        except OSError as exc:
            self.audit.warnings.append(f"status cache {self.folder} not read ({exc})")
            return self
        covered: set[str] = set()
        for path in paths:
            self._read.append(path)
            try:
                schema = pq.read_schema(path)
                covers = json.loads((schema.metadata or {})[_COVERS])
            except (OSError, KeyError, ValueError, pa.ArrowException):
                self._stale = True  # a torn or foreign file: replaced at the next save
                continue
            if schema.remove_metadata() != ENTRY_SCHEMA or not isinstance(covers, dict):
                self._stale = True
                continue
            valid = {i for i, t in covers.items() if self.tokens.get(i) == t} - covered
            self._stale = self._stale or len(valid) < len(covers)
            if valid:
                covered |= valid
                self._parts.append((path, frozenset(valid)))
        self.covered = frozenset(covered)
        if covered:  # in use: not one of the folders forget_unused() removes
            with contextlib.suppress(OSError):
                os.utime(self.folder)
        return self

    def read(self) -> pa.Table | None:
        """The entries found (:data:`ENTRY_SCHEMA` as dictionaries: ids repeat a lot), or
        None when a file can no longer be read (then none are used, and the next save
        replaces them all)."""
        if self._rows is None:
            parts = []
            for path, valid in self._parts:
                try:
                    table = pq.read_table(path, read_dictionary=ENTRY_SCHEMA.names)
                except (OSError, pa.ArrowException):
                    self._stale, self.covered, self._parts = True, frozenset(), []
                    return None
                wanted = pc.is_in(table.column("snapshot_id"), pa.array(sorted(valid), pa.string()))
                parts.append(_compacted(table.filter(wanted).replace_schema_metadata(None)))
            self._rows = pa.concat_tables([_ENCODED.empty_table(), *parts])
        return self._rows

    def missing(self, ids: Collection[str]) -> set[str]:
        """The snapshots the audit reads that no entry holds, besides ``ids``."""
        return set(self.audit.shown - self.covered - set(ids))

    def statuses(
        self,
        window: pa.Table,
        ids: Sequence[str],
        observed: Collection[str],
        judged: pa.Table | None = None,
    ) -> pa.Table | None:
        """The check's statuses over the history: the entries found, ``judged`` (the
        statuses of the snapshots :meth:`missing`, from a scope of their own) and the
        ``window`` rows (:data:`ENTRY_SCHEMA`, every row the window run gave) of the ``ids``
        snapshots; None when the cache holds one of ``ids`` and judged it otherwise than
        ``window`` does (then the history is judged again and the entries replaced). As
        the history pass keeps them: rows not ``ok``, and every row of the ``observed``
        ones."""
        cached = self.read()
        if cached is None:
            return None
        both = sorted(self.covered & set(ids))
        partial = self.audit.partial
        if both and not _sorted(entries_of(window, both, partial)).equals(
            _sorted(entries_of(cached, both, partial))
        ):
            return None
        older = sorted(self.covered & self.audit.shown - set(ids))  # not a hidden one
        snapshot = cached.column("snapshot_id")
        chosen = pc.and_(
            pc.is_in(snapshot, pa.array(older, pa.string())),
            pc.or_(
                pc.not_equal(cached.column("status"), "ok"),
                pc.is_in(snapshot, pa.array(sorted(observed), pa.string())),
            ),
        )
        self.audit.reused[self.check_id] = len(older)
        new = [window, *([judged] if judged is not None else [])]
        return pa.concat_tables([cached.filter(chosen), *(_encoded(t) for t in new)])

    def save(
        self,
        rows: pa.Table,
        snapshot_ids: Collection[str],
        observed: Collection[str],
        *,
        replace: bool,
    ) -> None:
        """File the entries of ``snapshot_ids`` from ``rows`` (every row that is not ``ok``;
        every row of the ``observed`` snapshots too, so a partial snapshot's entry is whole
        only when it is one of them). ``replace`` writes the found entries and the new ones
        as one file and removes the files read, as does a save after stale files or with
        :data:`_MAX_FILES` files already there."""
        partial, seen = self.audit.partial, set(observed)
        filed = {  # judged as over the whole store, with every row an entry holds
            i for i in snapshot_ids if i in self.fileable and (i not in partial or i in seen)
        }
        new = sorted(filed) if replace else sorted(filed - self.covered)
        merge = replace or self._stale or len(self._read) >= _MAX_FILES
        if not new and not merge:
            return
        entries = entries_of(rows, new, self.audit.partial)
        # kept: every other entry (when replacing, those of snapshots this audit did not see)
        kept = sorted(self.covered - set(new) - (self.audit.shown if replace else set()))
        cached = self.read() if merge and kept else None
        if cached is not None:
            entries = pa.concat_tables([entries_of(cached, kept, self.audit.partial), entries])
            new = sorted({*new, *kept})
        covers = json.dumps({i: self.tokens[i] for i in new}).encode()
        try:
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            name = f"{time.time_ns():020d}-{uuid.uuid4().hex[:8]}.parquet"
            temporary = self.folder / f".{name}.tmp"
            pq.write_table(entries.replace_schema_metadata({_COVERS: covers}), temporary)
            temporary.replace(self.folder / name)
            if merge:
                for path in self._read:
                    path.unlink(missing_ok=True)
        except OSError as exc:
            self.audit.warnings.append(f"status cache {self.folder} not written ({exc})")


def entries_of(rows: pa.Table, snapshot_ids: Sequence[str], partial: Collection[str]) -> pa.Table:
    """``rows`` (snapshot_id, resource_id, status as text) of ``snapshot_ids``, without the
    ok rows of the complete ones."""
    ids = pa.array(snapshot_ids, pa.string())
    in_partial = pc.is_in(rows.column("snapshot_id"), pa.array(sorted(partial), pa.string()))
    wanted = pc.and_(
        pc.is_in(rows.column("snapshot_id"), ids),
        pc.or_(pc.not_equal(rows.column("status"), "ok"), in_partial),
    )
    chosen = rows.filter(pc.fill_null(wanted, False))
    return pa.Table.from_arrays(
        [chosen.column(name).cast(pa.string()) for name in ENTRY_SCHEMA.names], schema=ENTRY_SCHEMA
    )


def _shown(con: duckdb.DuckDBPyConnection) -> set[str]:
    """The committed snapshots whose rows ``con``'s table views show."""
    try:
        rows = con.execute("select snapshot_id from _visible_snapshots").fetchall()
    except duckdb.CatalogException:  # not a store's connection: it shows what it lists
        rows = con.execute(
            "select snapshot_id from snapshots where status in ('complete', 'partial')"
        ).fetchall()
    return {str(row[0]) for row in rows}


def _encoded(table: pa.Table) -> pa.Table:
    """``table`` (:data:`ENTRY_SCHEMA`) with dictionary columns, as :meth:`CheckCache.read`
    gives them."""
    return pa.Table.from_arrays(
        [table.column(name).dictionary_encode() for name in ENTRY_SCHEMA.names], schema=_ENCODED
    )


def _compacted(table: pa.Table) -> pa.Table:
    """``table`` with each dictionary holding only the values its rows use: a filtered
    dictionary keeps them all, and a snapshot id the audit does not know (an entry of
    another store's) would then look like one of the rows (see check_rows._require_values)."""
    columns = []
    for column in table.columns:
        chunks = []
        for chunk in column.chunks:
            indices = chunk.indices.to_numpy(zero_copy_only=False)
            used = np.zeros(len(chunk.dictionary), dtype=bool)
            used[indices] = True
            places = (np.cumsum(used) - 1).astype(np.int32)
            chunks.append(
                pa.DictionaryArray.from_arrays(places[indices], chunk.dictionary.filter(used))
            )
        columns.append(pa.chunked_array(chunks, type=_DICTIONARY))
    return pa.Table.from_arrays(columns, schema=_ENCODED)


def _sorted(table: pa.Table) -> pa.Table:
    return table.sort_by([(name, "ascending") for name in table.column_names])


def _judging_hash(production: str | None) -> str:
    """What every entry depends on beside its check: the versions of the toolkit and of
    DuckDB, the production pattern, the derived views and the engine code that judges."""
    from toolkit import __version__
    from toolkit.audit.check_run import VIEWS

    digest = hashlib.sha256()
    for part in (__version__, duckdb.__version__, repr(production)):
        digest.update(part.encode() + b"\0")
    here = Path(__file__).parent
    for path in [*sorted(VIEWS.glob("*.sql")), *(here / name for name in _JUDGING_CODE)]:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()
