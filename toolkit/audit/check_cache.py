"""One check's entries in the status cache: the files that hold them, read and written.

A check's folder (named for everything its entries depend on: see
:meth:`toolkit.audit.status_cache.AuditCache.check`) holds Parquet files of
:data:`ENTRY_SCHEMA` rows, each file's metadata naming the snapshots it holds entries for
and the token each was judged under. :class:`CheckCache` finds the entries whose tokens
still match, gives them to the engine, and files what an audit judged::

    entries = audit_cache.check(spec, params).load()
    entries.missing(keep), entries.read()        # what must be judged, what is known
    entries.save(statuses, judged_ids, observed, replace=False)
"""

from __future__ import annotations

import contextlib
import json
import os
import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping, Sequence
    from pathlib import Path

    from toolkit.audit.status_cache import AuditCache

__all__ = ["ENTRY_SCHEMA", "CheckCache", "entries_of"]

ENTRY_SCHEMA = pa.schema(
    [("snapshot_id", pa.string()), ("resource_id", pa.string()), ("status", pa.string())]
)
_DICTIONARY = pa.dictionary(pa.int32(), pa.string())
_ENCODED = pa.schema([(name, _DICTIONARY) for name in ENTRY_SCHEMA.names])
"""The entries as :meth:`CheckCache.read` gives them."""
_COVERS = b"platform_audit.covers"
"""Parquet metadata key: the JSON object {snapshot id: token} a file holds entries for."""
_MAX_FILES = 8
"""A check's files are merged into one when a save would make more."""


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
                    table = pq.read_table(
                        path, read_dictionary=ENTRY_SCHEMA.names, page_checksum_verification=True
                    )
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
            # Page checksums: a damaged page must fail to read, not decode as other statuses
            pq.write_table(
                entries.replace_schema_metadata({_COVERS: covers}),
                temporary,
                write_page_checksum=True,
            )
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


def _encoded(table: pa.Table) -> pa.Table:
    """``table`` (:data:`ENTRY_SCHEMA`) with dictionary columns, as :meth:`CheckCache.read`
    gives them."""
    return pa.Table.from_arrays(
        [table.column(name).dictionary_encode() for name in ENTRY_SCHEMA.names], schema=_ENCODED
    )


def _compacted(table: pa.Table) -> pa.Table:
    """``table`` with each dictionary holding only the values its rows use: a filtered
    dictionary keeps them all, and a snapshot id the audit does not know (an entry of
    another store's) would then look like one of the rows (see check_output.require_values)."""
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
