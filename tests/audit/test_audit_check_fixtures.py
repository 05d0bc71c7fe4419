"""Every check against its fixtures: found by folder, run by this one parametrised test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow.compute as pc
import pytest
from audit_fixtures import (
    alarmed_in_last_snapshot,
    fixture_connection,
    fixture_snapshot_ids,
)

from toolkit.audit.check_file import BUILTIN_CHECKS, STATUSES, discover_checks
from toolkit.audit.check_run import run_check

if TYPE_CHECKING:
    import pyarrow as pa

    from toolkit.audit.check_file import CheckSpec

FIXTURES = Path(__file__).with_name("fixtures")
CHECKS = {spec.id: spec for spec in discover_checks([BUILTIN_CHECKS])}
CASES = sorted(FIXTURES.glob("*/*.json"))


def test_every_check_has_pass_and_fail_fixtures() -> None:
    for check_id in CHECKS:
        names = [p.name for p in (FIXTURES / check_id).glob("*.json")]
        assert any(n.startswith("pass_") for n in names), f"{check_id} has no pass_*.json"
        assert any(n.startswith("fail_") for n in names), f"{check_id} has no fail_*.json"


def test_every_fixture_folder_names_a_check() -> None:
    assert {p.parent.name for p in CASES} <= set(CHECKS)


@pytest.mark.parametrize("path", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_check_fixture(path: Path) -> None:
    fixture = json.loads(path.read_text(encoding="utf-8"))
    spec = CHECKS[path.parent.name]
    con = fixture_connection(fixture, [spec])
    result = run_check(con, spec, fixture.get("params"))
    expected = set(fixture["expect_alarms"])
    # the fixture's last snapshot, not the newest one with rows: a last snapshot the check
    # returns nothing for would silently make the fixture judge the one before
    last = fixture_snapshot_ids(len(fixture["snapshots"]))[-1]
    judged = result.filter(pc.equal(result.column("snapshot_id"), last))
    assert alarmed_in_last_snapshot(judged) == expected
    if path.name.startswith("fail_"):
        assert expected, "a fail fixture must expect at least one alarm"
    else:
        assert not expected, "a pass fixture expects no alarm"
        assert judged.num_rows, "a pass fixture must make the check examine its last snapshot"
    if "expect_reason_contains" in fixture:  # every alarm's reason; a pass fixture's, every ok's
        reasons = [
            r["reason"] for r in result.to_pylist()
            if r["snapshot_id"] == last and r["status"] == ("alarm" if expected else "ok")
        ]  # fmt: skip
        assert reasons and all(fixture["expect_reason_contains"] in r for r in reasons), reasons
    owners = fixture.get("expect_owners", {})  # where a resource lives, as its rows say
    for row in (r for r in result.to_pylist() if r["resource_id"] in owners):
        assert {key: row[key] for key in owners[row["resource_id"]]} == owners[row["resource_id"]]
    assert set(owners) <= set(judged.column("resource_id").to_pylist()), "an owner of no row"
    unjudged = set(fixture.get("expect_no_row", []))  # resources the check cannot judge
    assert not unjudged & {r["resource_id"] for r in result.to_pylist() if r["snapshot_id"] == last}
    unknown = set(fixture.get("expect_unknown", []))  # resources it examined but cannot judge
    assert unknown == {
        r["resource_id"] for r in result.to_pylist()
        if r["snapshot_id"] == last and r["status"] == "unknown" and r["resource_id"] in unknown
    }, "expected 'unknown' rows"  # fmt: skip
    for hidden in fixture.get("expect_text_excludes", []):  # a secret no row may show
        texts = [f"{r['reason']} {r['evidence']}" for r in result.to_pylist()]
        assert not [t for t in texts if hidden in t], hidden
    statuses = set(result.column("status").to_pylist())
    assert statuses <= set(STATUSES)
    if spec.history != "all":
        _require_history_line(fixture, spec, result)


def _require_history_line(fixture: dict[str, Any], spec: CheckSpec, result: pa.Table) -> None:
    """A check saying ``-- history: snapshot`` judges the last snapshot from it alone, and
    one saying ``previous`` from it and the one before, exactly as from the whole history
    (the engine judges a new snapshot so, on a connection of those snapshots' files, and
    ``audit --latest-only`` relies on it)."""
    ids = fixture_snapshot_ids(len(fixture["snapshots"]))
    read = ids[-1:] if spec.history == "snapshot" else ids[-2:]
    few = fixture_connection(fixture, [spec], snapshot_ids=read)  # as the engine's
    windowed = run_check(few, spec, fixture.get("params"))

    def judged(table: pa.Table) -> list[tuple[str, str]]:
        rows = table.select(["snapshot_id", "resource_id", "status"]).to_pylist()
        return sorted((r["resource_id"], r["status"]) for r in rows if r["snapshot_id"] == ids[-1])

    assert judged(windowed) == judged(result), "the check reads further back than its history line"


_NAMED = ("teams", "projects", "environments", "services", "volumes")
"""Tables whose ``name`` is a label, not an identity: the platform may leave it out."""


@pytest.mark.parametrize("path", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_row_has_a_reason_without_names(path: Path) -> None:
    """A row whose resource has no name still says why (``'Service ' || name`` was null)."""
    fixture = json.loads(path.read_text(encoding="utf-8"))
    for snapshot in fixture["snapshots"]:
        for table, rows in (snapshot.get("tables") or {}).items():
            if table in _NAMED:
                for row in rows:
                    row["name"] = None
    spec = CHECKS[path.parent.name]
    result = run_check(fixture_connection(fixture, [spec]), spec, fixture.get("params"))
    missing = [r["resource_id"] for r in result.to_pylist() if not r["reason"]]
    assert not missing, f"rows without a reason: {missing}"
