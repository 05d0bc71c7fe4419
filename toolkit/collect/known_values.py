"""Variable values the crawl has read, masked wherever free text repeats them.

A value read from a variable is known to be a secret wherever else it shows up: a crash
reason that echoes a connection password, a start command with a key pasted in, an error
message quoting a token. The scrubber's forms (:mod:`toolkit.snapshot.text_scrub`) find a
credential by how it is written; these values are found by what they are.

The values live in memory only, for the length of one crawl: :class:`KnownValues` is fed by
the variables collector as it fingerprints each value, and applied by the crawl to every
free-text column (and the ``extra`` JSON of unknown fields) once all rows are in, so a
message collected before the variable that reveals its secret is masked too. Then the
crawl forgets them. A value is not worth masking when it is shorter than ``min_length``
(``[collect] value_mask_min_length``, default 8), a number, a plain lower-case word or
dotted name (``production``, ``db.internal``), or made of ``${{...}}`` references::

    >>> known = KnownValues()
    >>> known.add("hunter2-Xk9"); known.add("production"); known.add("8080")
    >>> known.mask("login failed with hunter2-Xk9 on production:8080")
    'login failed with *** on production:8080'
    >>> known
    KnownValues(1 value(s), min_length=8)
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from toolkit.snapshot.schema_tables import TABLES
from toolkit.snapshot.text_scrub import MASK, PLAIN_WORD

if TYPE_CHECKING:
    from collections.abc import MutableMapping

    from toolkit.collect.row_buffer import TableData

__all__ = ["DEFAULT_MIN_LENGTH", "MIN_LENGTH_FLOOR", "KnownValues"]

DEFAULT_MIN_LENGTH = 8
"""Values shorter than this are not masked: too many ordinary words and numbers are."""
MIN_LENGTH_FLOOR = 4
"""The least ``min_length`` accepted: below it, every short word a value holds would go."""
_NUMBER = re.compile(r"[+-]?\d+(?:[.,_]\d+)*")
_REFERENCE = re.compile(r"\$\{\{[^}]*\}\}")
# Tables whose text is not the platform's: the writer fills the snapshots row itself.
_NOT_PLATFORM_TEXT = frozenset({"snapshots"})
_STARTS = 5  # where a value's pieces may start: its first, its last, and three between


class KnownValues:
    """The values to mask; never shown.

    Each value is indexed under ``step`` consecutive ``gram``-character pieces of it
    (``gram + step - 1 == min_length``), so a text is looked up only at every ``step``-th
    position: any value of ``min_length`` or more characters in it spans one of those
    positions with an indexed piece, wherever its pieces start. A crawl's text is read five
    times faster than position by position, for some 170 bytes per value held.

    Values share prefixes (``postgres://app:``, a vendor's ``sk_live_``): each value's
    pieces are taken where the index holds the fewest values already (`_window`), so no
    piece gathers thousands of values that every add and every lookup would walk.
    """

    def __init__(self, min_length: int = DEFAULT_MIN_LENGTH) -> None:
        if min_length < MIN_LENGTH_FLOOR:
            raise ValueError(f"min_length must be {MIN_LENGTH_FLOOR} or more, not {min_length}")
        self.min_length = min_length
        self._gram = min_length // 2
        self._step = min_length - self._gram + 1
        self._index: dict[str, str | set[str]] = {}
        self._count = 0

    def __repr__(self) -> str:
        return f"KnownValues({self._count} value(s), min_length={self.min_length})"

    def __bool__(self) -> bool:
        return bool(self._index)

    def worth_masking(self, value: str) -> bool:
        """Whether ``value`` is long and particular enough to be masked where it appears."""
        text = value.strip()
        if len(text) < self.min_length or _REFERENCE.search(text):
            return False
        return not (PLAIN_WORD.fullmatch(text) or _NUMBER.fullmatch(text))

    def add(self, value: str) -> None:
        """Remember ``value`` (and its JSON-escaped form) when it is worth masking."""
        if not self.worth_masking(value):
            return
        text = value.strip()
        self._count += 1
        for form in {value, text, json.dumps(text)[1:-1]}:
            start = self._window(form)
            for offset in range(start, start + self._step):
                piece = form[offset : offset + self._gram]
                held = self._index.get(piece)
                if held is None:
                    self._index[piece] = form  # most pieces index one value: no set
                elif isinstance(held, str):
                    if held != form:
                        self._index[piece] = {held, form}
                else:
                    held.add(form)

    def _window(self, form: str) -> int:
        """Where ``form``'s indexed pieces start: of a few starts from its first to its
        last (``len - min_length``), the one whose pieces index the fewest values so far.
        Any start in that range finds the value at every position of a text."""
        last = len(form) - self.min_length
        if last <= 0:
            return 0
        index, gram = self._index, self._gram

        def crowd(start: int) -> int:
            pieces = (index.get(form[o : o + gram]) for o in range(start, start + self._step))
            return sum(
                0 if held is None else 1 if isinstance(held, str) else len(held) for held in pieces
            )

        return min(sorted({last * n // (_STARTS - 1) for n in range(_STARTS)}), key=crowd)

    def clear(self) -> None:
        """Forget every value."""
        self._index.clear()
        self._count = 0

    def mask(self, text: str) -> str:
        """``text`` with each exact occurrence of a known value as ``***`` (longest first)."""
        if not self._index or len(text) < self.min_length:
            return text
        gram, index = self._gram, self._index
        found: set[str] = set()
        for start in range(0, len(text) - gram + 1, self._step):
            held = index.get(text[start : start + gram])
            if held is None:
                continue
            if isinstance(held, str):
                if held in text:
                    found.add(held)
            else:
                found.update(v for v in held if v in text)
        if not found:
            return text
        ordered = sorted(found, key=len, reverse=True)
        return re.sub("|".join(map(re.escape, ordered)), MASK, text)

    def mask_tables(self, tables: MutableMapping[str, TableData]) -> None:
        """Mask every free-text column and ``extra`` of ``tables`` (dict rows in place,
        Arrow tables replaced)."""
        if not self:
            return
        for name, data in tables.items():
            columns = _text_columns(name)
            if not columns:
                continue
            if isinstance(data, pa.Table):
                tables[name] = self._mask_arrow(data, columns)
            else:
                memo: dict[str, str] = {}
                for row in data:
                    for column in columns:
                        row[column] = self._masked(row.get(column), memo)

    def _masked(self, value: object, memo: dict[str, str]) -> object:
        if isinstance(value, str):
            if value not in memo:
                memo[value] = self.mask(value)
            return memo[value]
        if isinstance(value, list):
            return [self._masked(item, memo) for item in value]
        return value

    def _mask_arrow(self, data: pa.Table, columns: tuple[str, ...]) -> pa.Table:
        for column in columns:
            index = data.schema.get_field_index(column)
            if index < 0:
                continue
            found = data.column(index).combine_chunks()
            if isinstance(found, pa.ListArray):
                values = self._mask_strings(found.values)
                masked: pa.Array = pa.ListArray.from_arrays(
                    found.offsets, values, type=found.type, mask=found.is_null()
                )
            else:
                masked = self._mask_strings(found)
            data = data.set_column(index, data.schema.field(index), masked)
        return data

    def _mask_strings(self, strings: pa.Array) -> pa.Array:
        """Each distinct string masked once; the column rebuilt only when one changed."""
        distinct = pc.unique(strings)
        texts = distinct.to_pylist()
        masked = [None if t is None else self.mask(t) for t in texts]
        if masked == texts:
            return strings
        return pc.take(pa.array(masked, strings.type), pc.index_in(strings, value_set=distinct))


def _text_columns(table: str) -> tuple[str, ...]:
    """The columns of ``table`` that hold the platform's text: free text and ``extra``."""
    declared = TABLES.get(table)
    if declared is None or table in _NOT_PLATFORM_TEXT:
        return ()
    return tuple(c.name for c in declared.columns if c.free_text or c.name == "extra")
