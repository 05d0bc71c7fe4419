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

Anything else is judged again and the entry replaced. So is a check's every entry when
one of its files is torn or fails its page checksums (disk damage could otherwise decode as
other statuses). A cache folder that cannot be read or written never fails an audit: the
audit judges the whole history, as without a cache, and says why in ``warnings``. Example::

    cache = StatusCache(settings.status_cache)  # ~/.cache/platform-audit/status
    result = run_audit(store, cache=cache)      # a second audit reuses the first's statuses
"""

from __future__ import annotations

import hashlib
import itertools
import json
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from toolkit.audit.check_cache import CheckCache

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping, Sequence

    from toolkit.audit.check_file import CheckSpec

__all__ = ["CACHED_HISTORIES", "AuditCache", "Fresh", "StatusCache"]

CACHED_HISTORIES = ("snapshot", "previous")
"""The checks whose statuses are cached, by their ``-- history:`` line."""
_FORMAT = b"platform-audit status cache 1"
_UNUSED_DAYS = 30
"""A check's folder unused this long (another version, other thresholds) is removed."""
_JUDGING_CODE = (
    "check_cache.py",
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


def _shown(con: duckdb.DuckDBPyConnection) -> set[str]:
    """The committed snapshots whose rows ``con``'s table views show."""
    try:
        rows = con.execute("select snapshot_id from _visible_snapshots").fetchall()
    except duckdb.CatalogException:  # not a store's connection: it shows what it lists
        rows = con.execute(
            "select snapshot_id from snapshots where status in ('complete', 'partial')"
        ).fetchall()
    return {str(row[0]) for row in rows}


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
