"""The canonical form of a snapshot's content, and its SHA-256.

The hash must come out the same from the rows in memory at commit time and from the rows
read back years later by another version of the toolkit, pyarrow or deltalake. So it is
computed over a documented text form, never over Arrow or Parquet bytes.

Canonical rows (every version):

* Each row is a JSON object of its non-null columns, keys sorted, ASCII only, no spaces.
  ``snapshot_id`` and ``snapshot_at`` are left out (they are in the header). Leaving nulls
  out keeps old hashes valid when a nullable column is added to a table.
* Values: strings as JSON strings; integers in decimal; booleans ``true``/``false``; floats
  as Python's shortest round-trip ``repr``; timestamps as integer microseconds since the
  Unix epoch (UTC); lists as arrays; structs as objects without null members; maps as
  arrays of ``[key, value]`` pairs in stored order.
* The header is ``{"snapshot_at":<us>,"snapshot_id":"<id>"}\\n``.

Version 2 (:data:`CONTENT_HASH_VERSION`, written since schema version 2):

* A row's digest is the SHA-256 of its canonical text (UTF-8, no newline): 32 bytes.
* A table's digest is the SHA-256 of its row digests, sorted bytewise in ascending order
  and concatenated (a row that occurs twice contributes its digest twice).
* The hashed text is ``platform-audit content v2\\n``, then the header, then for each table
  with at least one row, in table-name order, the line
  ``<table> <row count> <table digest in lowercase hex>\\n``.

Sorting row digests instead of rows makes the hash independent of row order and of how a
table was split into batches, while each batch is reduced to 32 bytes a row as soon as it
is written (:func:`row_digests`): the writer never holds the text of a whole snapshot.

Version 1 (snapshots whose ``content_hash_version`` is null, written before it was
recorded): the hashed text is ``platform-audit content v1\\n``, then the header, then for
each table with at least one row, in table-name order, the line ``# <table> <row count>``
followed by its rows sorted by their UTF-8 bytes, each row ending in ``\\n``.

The encoding is vectorised with Arrow compute, a slice of rows at a time (a 100,000-row
table takes well under a second); values that need JSON escaping go through
:func:`json.dumps`.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from toolkit.snapshot.schema import SNAPSHOT_AT, SNAPSHOT_ID

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

__all__ = [
    "CONTENT_HASH_VERSION",
    "CONTENT_HASH_VERSIONS",
    "canonical_rows",
    "chain_hash",
    "content_hash",
    "content_hash_of_digests",
    "row_digests",
]

CONTENT_HASH_VERSION = 2
"""The definition new snapshots are hashed with (recorded in ``content_hash_version``)."""
CONTENT_HASH_VERSIONS = (1, 2)
"""Every definition this toolkit can recompute."""

_MAGIC = {1: b"platform-audit content v1\n", 2: b"platform-audit content v2\n"}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICRO = timedelta(microseconds=1)
# Printable ASCII except '"' and '\\': such strings are their own JSON body.
_NEEDS_ESCAPE = r"[^\x20\x21\x23-\x5b\x5d-\x7e]"
# Rows canonicalised at a time: bounds the text in memory to a few MB whatever the batch.
_SLICE_ROWS = 4_096


def _json(value: Any) -> str:
    return json.dumps(_plain(value), sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, datetime):
        return (value - _EPOCH) // _MICRO
    return value


def _python_fragments(arr: pa.Array) -> pa.Array:
    return pa.array([None if v is None else _json(v) for v in arr.to_pylist()], pa.string())


def _string_fragments(arr: pa.Array) -> pa.Array:
    arr = arr.cast(pa.string())
    quoted = pc.binary_join_element_wise('"', arr, '"', "")
    special = pc.fill_null(pc.match_substring_regex(arr, _NEEDS_ESCAPE), False)
    if not pc.any(special).as_py():
        return quoted
    escaped = _python_fragments(arr.filter(special))
    return pc.replace_with_mask(quoted, special, escaped)


def _children_in_view(arr: pa.Array, children: pa.Array) -> tuple[pa.Array, pa.Array]:
    """Offsets starting at 0 and the child values they cover, for a possibly sliced list.

    ``ListArray.values`` (and a map's ``keys`` and ``items``) ignore the slice, so encoding
    them whole would encode every slice's neighbours too. The offsets are always a new
    array: ``ListArray.from_arrays`` refuses sliced offsets together with a null mask.
    """
    offsets = arr.offsets
    start, end = offsets[0].as_py(), offsets[-1].as_py()
    rebased = pc.subtract(offsets, pa.scalar(start, offsets.type))
    return rebased, children.slice(start, end - start)


def _list_fragments(arr: pa.Array) -> pa.Array:
    offsets, values = _children_in_view(arr, arr.values)
    inner = pc.fill_null(_value_fragments(values), "null")
    lists = pa.ListArray.from_arrays(offsets, inner, mask=pc.is_null(arr))
    return pc.binary_join_element_wise("[", pc.binary_join(lists, ","), "]", "")


def _map_fragments(arr: pa.Array) -> pa.Array:
    offsets, keys = _children_in_view(arr, arr.keys)
    _, items = _children_in_view(arr, arr.items)
    items = pc.fill_null(_value_fragments(items), "null")
    pairs = pc.binary_join_element_wise("[", _value_fragments(keys), ",", items, "]", "")
    lists = pa.ListArray.from_arrays(offsets, pairs, mask=pc.is_null(arr))
    return pc.binary_join_element_wise("[", pc.binary_join(lists, ","), "]", "")


def _object_fragments(names: list[str], children: list[pa.Array], length: int) -> pa.Array:
    """``{"a":..,"b":..}`` per row from named children, null members left out."""
    parts = []
    for name, child in sorted(zip(names, children, strict=True), key=lambda nc: nc[0]):
        prefix = json.dumps(name, ensure_ascii=True) + ":"
        parts.append(pc.binary_join_element_wise(prefix, _value_fragments(child), ""))
    if not parts:
        return pa.array(["{}"] * length, pa.string())
    body = pc.binary_join_element_wise(*parts, ",", null_handling="skip")
    if len(body) != length:
        # pyarrow 26 leaves out the rows whose members are all null. Then each member
        # brings its own comma, nulls join as "", and the first comma is cut off.
        members = [pc.binary_join_element_wise(",", part, "") for part in parts]
        joined = pc.binary_join_element_wise(*members, "", null_handling="replace")
        body = pc.utf8_slice_codeunits(joined, 1)
    return pc.binary_join_element_wise("{", pc.fill_null(body, ""), "}", "")


def _value_fragments(arr: pa.Array) -> pa.Array:
    """JSON text of every value of ``arr`` (null stays null)."""
    t = arr.type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return _string_fragments(arr)
    if pa.types.is_integer(t):
        return arr.cast(pa.string())
    if pa.types.is_boolean(t):
        return pc.if_else(arr, "true", "false")
    if pa.types.is_timestamp(t):
        micros = arr.cast(pa.timestamp("us", tz=t.tz)).cast(pa.int64())
        return micros.cast(pa.string())
    if pa.types.is_map(t):
        return _map_fragments(arr)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _list_fragments(arr)
    if pa.types.is_struct(t):
        names = [t.field(i).name for i in range(t.num_fields)]
        objects = _object_fragments(names, arr.flatten(), len(arr))
        return pc.if_else(pc.is_valid(arr), objects, pa.scalar(None, pa.string()))
    return _python_fragments(arr)  # floats and anything rarer: json.dumps per value


def canonical_rows(data: pa.Table | pa.RecordBatch) -> pa.Array:
    """The canonical JSON text of every row of ``data`` (snapshot columns left out)."""
    names = [n for n in data.column_names if n not in (SNAPSHOT_ID, SNAPSHOT_AT)]
    children = [_array(data.column(n)) for n in names]
    return _object_fragments(names, children, data.num_rows)


def _array(column: pa.Array | pa.ChunkedArray) -> pa.Array:
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


def _slices(data: pa.Table | pa.RecordBatch) -> list[pa.RecordBatch]:
    table = data if isinstance(data, pa.Table) else pa.Table.from_batches([data])
    batches: list[pa.RecordBatch] = table.to_batches(max_chunksize=_SLICE_ROWS)
    return batches


def _text_of(rows: pa.Array) -> tuple[list[int], memoryview]:
    """Offsets and data of a string array, to cut each row's bytes out without copying."""
    _, offset_buffer, data = rows.buffers()
    offsets = pa.Array.from_buffers(
        pa.int32(), len(rows) + 1, [None, offset_buffer], offset=rows.offset
    )
    return offsets.to_pylist(), memoryview(data if data is not None else b"")


def _digests_of_canonical(rows: pa.Array) -> bytes:
    offsets, text = _text_of(rows)
    sha256 = hashlib.sha256
    return b"".join(sha256(text[a:b]).digest() for a, b in itertools.pairwise(offsets))


def row_digests(data: pa.Table | pa.RecordBatch) -> bytes:
    """The 32-byte SHA-256 of each row's canonical text, concatenated in row order.

    Canonicalises ``_SLICE_ROWS`` rows at a time, so only their text is ever in memory.
    Several batches of one table give the same digests as the whole table at once.
    """
    return b"".join(_digests_of_canonical(canonical_rows(part)) for part in _slices(data))


def _table_line(name: str, digests: Iterable[bytes]) -> bytes:
    blob = b"".join(digests)
    count = len(blob) // 32
    if not count:
        return b""
    rows = pa.Array.from_buffers(pa.binary(32), count, [None, pa.py_buffer(blob)])
    ordered = rows.take(pc.sort_indices(rows))
    sorted_bytes = ordered.buffers()[1].slice(32 * ordered.offset, 32 * count)
    table_digest = hashlib.sha256(sorted_bytes).hexdigest()
    return f"{name} {count} {table_digest}\n".encode()


def content_hash_of_digests(
    snapshot_id: str, snapshot_at: datetime, digests: Mapping[str, Iterable[bytes]]
) -> str:
    """Version 2 content hash from each table's :func:`row_digests` (any number of batches)."""
    digest = hashlib.sha256(_MAGIC[2])
    digest.update(_header(snapshot_id, snapshot_at))
    for name in sorted(digests):
        digest.update(_table_line(name, digests[name]))
    return digest.hexdigest()


def content_hash(
    snapshot_id: str,
    snapshot_at: datetime,
    tables: Mapping[str, Iterable[pa.Array]],
    *,
    version: int = CONTENT_HASH_VERSION,
) -> str:
    """SHA-256 (hex) of a snapshot's content; ``tables`` maps names to canonical rows.

    Pass the outputs of :func:`canonical_rows` (several arrays per table are fine: the
    writer may append a table in batches). ``version`` picks the definition (see the
    module docstring); the writer itself uses :func:`content_hash_of_digests`.

    >>> rows = canonical_rows(pa.table({"id": ["t1"], "name": ["core"]}))
    >>> at = datetime(2026, 1, 1, tzinfo=UTC)
    >>> content_hash("s1", at, {"teams": [rows]}) == content_hash("s1", at, {"teams": [rows]})
    True
    """
    if version == 2:
        digests = {name: [_digests_of_canonical(r) for r in rows] for name, rows in tables.items()}
        return content_hash_of_digests(snapshot_id, snapshot_at, digests)
    if version != 1:
        raise ValueError(f"content hash version {version} is not one of {CONTENT_HASH_VERSIONS}")
    digest = hashlib.sha256(_MAGIC[1])
    digest.update(_header(snapshot_id, snapshot_at))
    for name in sorted(tables):
        _hash_table_v1(digest, name, tables[name])
    return digest.hexdigest()


def _header(snapshot_id: str, snapshot_at: datetime) -> bytes:
    header = {"snapshot_at": (snapshot_at - _EPOCH) // _MICRO, "snapshot_id": snapshot_id}
    return _json(header).encode() + b"\n"


def _hash_table_v1(digest: Any, name: str, rows: Iterable[pa.Array]) -> None:
    arrays = [r for r in rows if len(r)]
    if not arrays:
        return
    merged = pa.concat_arrays(arrays)
    lines = pc.binary_join_element_wise(merged.take(pc.sort_indices(merged)), "\n", "")
    digest.update(f"# {name} {len(lines)}\n".encode())
    _, offset_buffer, data = lines.buffers()
    offsets = pa.Array.from_buffers(
        pa.int32(), len(lines) + 1, [None, offset_buffer], offset=lines.offset
    )
    start, end = offsets[0].as_py(), offsets[-1].as_py()
    digest.update(data.slice(start, end - start))


def chain_hash(prev_hash: str | None, content: str) -> str:
    """SHA-256 (hex) of the previous chain hash (empty for the first) and this content hash."""
    return hashlib.sha256(((prev_hash or "") + content).encode("ascii")).hexdigest()
