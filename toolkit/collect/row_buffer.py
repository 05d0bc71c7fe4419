"""The rows a crawl gathers, kept as Arrow columns once there are many of them.

A row as a Python dict costs 1 to 3 KB; the same row in Arrow columns about a fifth of that.
A 10,000-service crawl gathers some 270,000 rows, so once a crawl has gathered more than
`small` rows, `RowBuffer` turns each table's waiting dicts into one Arrow table of its
declared columns whenever more than `budget` of them are waiting. A smaller crawl (up to
some 1,500 services) converts nothing during the crawl: the writer converts its rows once.

The budget is small because the peak of waiting dicts stays with the process: the values
they free leave Python's small-object arenas fragmented, and those stay mapped. `small`
is a trade, measured at 10,000 services: converting from the first row peaked some 35 MB
lower than letting 50,000 rows wait first, but a 1,000-service crawl, which is CPU-bound,
would then spend 0.4 s of its 7 s converting.

`crawl_result.finish_tables` settles the rows for the snapshot writer: records that reached
the crawl twice are merged on the table's key, or dropped and reported where no record should
come twice (`duplicate_keys`), and each table comes back as a list of dicts or, when it was
converted, as an Arrow table (the writer takes both). `sources` names the endpoints whose
answers filled a table, for those reports.

>>> buffer = RowBuffer(budget=1, min_converted=1, small=0)
>>> buffer.extend("teams", [{"id": "t1", "name": "core"}, {"id": "t2", "name": "web"}])
>>> type(buffer.table("teams")).__name__, buffer["teams"][1]["name"]
('Table', 'web')
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

import pyarrow as pa

from toolkit.collect.conform import merge_rows
from toolkit.snapshot.schema import SNAPSHOT_AT, SNAPSHOT_ID
from toolkit.snapshot.schema_tables import TABLES

if TYPE_CHECKING:
    from collections.abc import Iterable

    from toolkit.collect.conform import Row

__all__ = ["DEFAULT_BUDGET", "RowBuffer", "TableData", "merge_table"]

logger = logging.getLogger("toolkit.collect")

TableData: TypeAlias = list["Row"] | pa.Table
"""One table's rows: dicts, or an Arrow table of its declared columns (no snapshot columns)."""

DEFAULT_BUDGET = 10_000
DEFAULT_SMALL = 50_000
_MERGE_SLICE = 4_096
_MIN_CONVERTED = 1_000  # fewer waiting rows stay dicts: converting them would save little
_ARROW_ERRORS = (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError)


def data_schema(table: str) -> pa.Schema:
    """The declared columns of `table` without the two the writer fills in."""
    declared = TABLES[table].arrow_schema
    return pa.schema([f for f in declared if f.name not in (SNAPSHOT_ID, SNAPSHOT_AT)])


class RowBuffer(Mapping[str, list["Row"]]):
    """Rows per table; reading `buffer[table]` gives dicts (converted back when needed).

    `budget`: dicts allowed to wait once converting; `min_converted`: a table's waiting
    rows below this stay dicts; `small`: rows a crawl gathers before converting anything.
    """

    def __init__(
        self,
        budget: int = DEFAULT_BUDGET,
        min_converted: int = _MIN_CONVERTED,
        small: int = DEFAULT_SMALL,
    ) -> None:
        self.budget = budget
        self.min_converted = min_converted
        self.small = small
        self._gathered = 0
        self._waiting: dict[str, list[Row]] = {}
        self._converted: dict[str, list[pa.Table]] = {}
        self._kept: dict[str, list[Row]] = {}  # rows Arrow refused; the writer will say why
        self._sources: dict[str, dict[str, None]] = {}
        self._count = 0

    def extend(self, table: str, rows: Iterable[Row], *, source: str | None = None) -> None:
        """Add `rows` to `table`; `source` is the endpoint that answered them, when known."""
        if source is not None:
            self._sources.setdefault(table, {})[source] = None
        waiting = self._waiting.setdefault(table, [])
        before = len(waiting)
        waiting.extend(rows)
        self._count += len(waiting) - before
        self._gathered += len(waiting) - before
        if self._count > self.budget and self._gathered > self.small:
            self._convert()

    def append(self, table: str, row: Row) -> None:
        self.extend(table, (row,))

    def sources(self, table: str) -> tuple[str, ...]:
        """The endpoints whose rows `table` received, in order of first arrival."""
        return tuple(self._sources.get(table, ()))

    def table(self, table: str) -> TableData:
        """All rows of `table`: an Arrow table when any were converted, else the dicts."""
        if table not in self._converted:
            return self._waiting.get(table, [])
        self._convert_table(table)
        if table in self._kept:
            return [*_pylist(self._converted[table]), *self._kept[table]]
        return pa.concat_tables(self._converted[table])

    def pop_table(self, table: str) -> TableData:
        """`table()`, leaving the buffer: its memory goes as soon as the caller lets go."""
        found = self.table(table)
        for held in (self._waiting, self._converted, self._kept):
            held.pop(table, None)
        return found

    def __getitem__(self, table: str) -> list[Row]:
        if table not in self._waiting and table not in self._converted:
            raise KeyError(table)
        found = self.table(table)
        return found if isinstance(found, list) else found.to_pylist()

    def __contains__(self, table: object) -> bool:
        # Mapping's own would call __getitem__, turning a converted table back into dicts.
        return table in self._waiting or table in self._converted

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*self._converted, *self._waiting]))

    def __len__(self) -> int:
        return len(set(self._converted) | set(self._waiting))

    def _convert(self) -> None:
        for table, waiting in self._waiting.items():
            if len(waiting) >= self.min_converted:
                self._convert_table(table)

    def _convert_table(self, table: str) -> None:
        waiting = self._waiting.get(table)
        if not waiting:
            return
        converted = self._converted.setdefault(table, [])
        try:
            converted.append(pa.Table.from_pylist(waiting, schema=data_schema(table)))
        except _ARROW_ERRORS as error:
            logger.debug("%s rows stay dicts: %s", table, type(error).__name__)
            self._kept.setdefault(table, []).extend(waiting)
        self._count -= len(waiting)
        self._waiting[table] = []


def _pylist(tables: list[pa.Table]) -> list[Row]:
    return [row for part in tables for row in part.to_pylist()]


def merge_table(table: str, data: pa.Table) -> pa.Table:
    """`merge_rows` for an Arrow table: only the rows whose key repeats go through Python,
    a slice of whole key groups at a time, so no more than a few thousand become dicts.

    The result keeps the order of first appearance, as `merge_rows` does. It is built by
    one `take` over `data` and the merged rows, so the table is copied once, not twice.
    """
    keys = [k for k in TABLES[table].keys if k != SNAPSHOT_ID]
    key_of = list(zip(*(data.column(k).to_pylist() for k in keys), strict=True))
    counts = Counter(key_of)
    if len(counts) == len(key_of):
        return data
    first: dict[Any, int] = {}
    for i, key in enumerate(key_of):
        if counts[key] > 1:
            first.setdefault(key, i)
    # Rows of one key side by side, keys in order of first appearance, rows in crawl order.
    repeated = sorted((i for i, key in enumerate(key_of) if counts[key] > 1),
                      key=lambda i: (first[key_of[i]], i))  # fmt: skip
    merged = []
    start = 0
    while start < len(repeated):
        end = min(start + _MERGE_SLICE, len(repeated))
        while end < len(repeated) and key_of[repeated[end]] == key_of[repeated[end - 1]]:
            end += 1  # never split a key's rows between slices
        rows = data.take(_indices(repeated[start:end])).to_pylist()
        merged.append(pa.Table.from_pylist(merge_rows(table, rows), schema=data.schema))
        start = end
    # Merged rows follow `data` in the concatenation, in order of their keys' first rows.
    next_merged = iter(range(len(key_of), len(key_of) + len(first)))
    order = [
        i if counts[key] == 1 else next(next_merged)
        for i, key in enumerate(key_of)
        if counts[key] == 1 or first[key] == i
    ]
    return pa.concat_tables([data, *merged]).take(_indices(order))


def _indices(positions: list[int]) -> pa.Array:
    return pa.array(positions, pa.int64())
