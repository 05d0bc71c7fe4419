"""The canonical form of a snapshot's content, and its SHA-256.

The hash must come out the same from the rows in memory at commit time and from the rows
read back years later by another version of the toolkit, pyarrow or deltalake. So it is
computed over a documented text form, never over Arrow or Parquet bytes:

* Each row is a JSON object of its non-null columns, keys sorted, ASCII only, no spaces.
  ``snapshot_id`` and ``snapshot_at`` are left out (they are in the header). Leaving nulls
  out keeps old hashes valid when a nullable column is added to a table.
* Values: strings as JSON strings; integers in decimal; booleans ``true``/``false``; floats
  as Python's shortest round-trip ``repr``; timestamps as integer microseconds since the
  Unix epoch (UTC); lists as arrays; structs as objects without null members; maps as
  arrays of ``[key, value]`` pairs in stored order.
* The hashed text is ``platform-audit content v1\\n``, then the header
  ``{"snapshot_at":<us>,"snapshot_id":"<id>"}\\n``, then for each table with at least one
  row, in table-name order, the line ``# <table> <row count>`` followed by its rows sorted
  by their UTF-8 bytes, each row ending in ``\\n``.

The encoding is vectorised with Arrow compute (a 100,000-row table takes well under a
second); values that need JSON escaping go through :func:`json.dumps`.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from toolkit.snapshot.schema import SNAPSHOT_AT, SNAPSHOT_ID

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

__all__ = ["canonical_rows", "chain_hash", "content_hash"]

_MAGIC = b"platform-audit content v1\n"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICRO = timedelta(microseconds=1)
# Printable ASCII except '"' and '\\': such strings are their own JSON body.
_NEEDS_ESCAPE = r"[^\x20\x21\x23-\x5b\x5d-\x7e]"


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


def _list_fragments(arr: pa.Array) -> pa.Array:
    inner = pc.fill_null(_value_fragments(arr.values), "null")
    lists = pa.ListArray.from_arrays(arr.offsets, inner, mask=pc.is_null(arr))
    return pc.binary_join_element_wise("[", pc.binary_join(lists, ","), "]", "")


def _map_fragments(arr: pa.Array) -> pa.Array:
    keys = _value_fragments(arr.keys)
    items = pc.fill_null(_value_fragments(arr.items), "null")
    pairs = pc.binary_join_element_wise("[", keys, ",", items, "]", "")
    lists = pa.ListArray.from_arrays(arr.offsets, pairs, mask=pc.is_null(arr))
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


def canonical_rows(data: pa.Table) -> pa.Array:
    """The canonical JSON text of every row of ``data`` (snapshot columns left out)."""
    names = [n for n in data.column_names if n not in (SNAPSHOT_ID, SNAPSHOT_AT)]
    children = [data.column(n).combine_chunks() for n in names]
    return _object_fragments(names, children, data.num_rows)


def _hash_table(digest: Any, name: str, rows: Iterable[pa.Array]) -> None:
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


def content_hash(
    snapshot_id: str, snapshot_at: datetime, tables: Mapping[str, Iterable[pa.Array]]
) -> str:
    """SHA-256 (hex) of a snapshot's content; ``tables`` maps names to canonical rows.

    Pass the outputs of :func:`canonical_rows` (several arrays per table are fine: the
    writer may append a table in batches).
    """
    digest = hashlib.sha256(_MAGIC)
    header = {"snapshot_at": (snapshot_at - _EPOCH) // _MICRO, "snapshot_id": snapshot_id}
    digest.update(_json(header).encode() + b"\n")
    for name in sorted(tables):
        _hash_table(digest, name, tables[name])
    return digest.hexdigest()


def chain_hash(prev_hash: str | None, content: str) -> str:
    """SHA-256 (hex) of the previous chain hash (empty for the first) and this content hash."""
    return hashlib.sha256(((prev_hash or "") + content).encode("ascii")).hexdigest()
