"""Rows built from plans worked out once per shape are the rows built column by column.

`Conformer.row` takes a plan per (table, types of the record's values) and `FieldAliases`
a plan per (kind, member names in order); these tests hold that neither changes a row, a
drift report or a masked value, on the simulator's answers as specified and as the real
platform sends them, and when a record's shape changes between two records.
"""

from __future__ import annotations

import uuid
from collections import Counter
from typing import Any

import pytest
from collect_world import crawl_world

from toolkit.collect import aliases as aliases_module
from toolkit.collect import row_plan
from toolkit.collect.aliases import FieldAliases
from toolkit.collect.conform import Conformer, Owner
from toolkit.sim import Simulator, SimulatorServer
from toolkit.snapshot import column_masking
from toolkit.snapshot.schema import Kind

SECRET = "CANARYdeadbeefdeadbeef"


def _by_column(table: str, values: Any) -> tuple[Any, list[dict[str, Any]]]:
    conformer = Conformer("check", Owner())
    return conformer._row_by_column(table, values), conformer.drift_rows()


def _by_plan(table: str, values: Any) -> tuple[Any, list[dict[str, Any]]]:
    conformer = Conformer("check", Owner())
    return conformer.row(table, values), conformer.drift_rows()


def _without_times(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in row.items() if k != "occurred_at"} for row in rows]


def _assert_same(table: str, values: dict[str, Any]) -> None:
    planned, drift = _by_plan(table, values)
    expected, expected_drift = _by_column(table, values)
    assert planned == expected, table
    assert _without_times(drift) == _without_times(expected_drift), table


@pytest.mark.parametrize("variant", ["spec", "real"])
def test_every_row_of_a_crawl_is_the_row_built_column_by_column(
    variant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[str, dict[str, Any]]] = []
    original = Conformer.row

    def recording(self: Conformer, table: str, values: Any) -> Any:
        seen.append((table, dict(values)))
        return original(self, table, values)

    monkeypatch.setattr(Conformer, "row", recording)
    sim = Simulator(seed=11, services=12, variant=variant)
    with SimulatorServer(sim) as server:
        crawled = crawl_world(server, sim.keys["admin"])
    monkeypatch.setattr(Conformer, "row", original)
    assert crawled.rows["services"] and crawled.rows["deployments"]
    tables = Counter(table for table, _ in seen)
    assert tables["services"] >= 12 and tables["replica_events"] > 0
    for table, values in seen:
        _assert_same(table, values)


def test_a_plan_follows_the_shape_of_each_record() -> None:
    """One table, records of changing shapes: each is judged by its own value types."""
    good = {"id": "t1", "name": "core", "created_at": "2024-01-02T03:04:05Z"}
    records = [
        good,
        {**good, "name": 42},  # drift: a number where a string belongs
        good,
        {**good, "id": None},  # a required column missing
        {**good, "created_at": "not a time"},  # a string a timestamp cannot take
        {**good, "description": f"postgres://app:{SECRET}@db/app"},
        good,
    ]
    for record in records:
        _assert_same("teams", record)
    conformer = Conformer("teams.list", Owner())
    rows = [conformer.row("teams", record) for record in records]
    assert [row is None for row in rows] == [False, False, False, True, False, False, False]
    assert rows[1] is not None and rows[1]["name"] is None
    assert rows[4] is not None and rows[4]["created_at"] is None
    assert rows[5] is not None and SECRET not in str(rows[5]["description"])
    kinds = sorted((row["column_name"], row["error_type"]) for row in conformer.drift_rows())
    assert kinds == [("created_at", "schema_drift"), ("id", "missing_field"),
                     ("name", "schema_drift")]  # fmt: skip


class _CountingPattern:
    """Stands in for a compiled pattern, counting `fullmatch` calls."""

    def __init__(self, pattern: Any) -> None:
        self.pattern, self.calls = pattern, 0

    def fullmatch(self, value: str) -> Any:
        self.calls += 1
        return self.pattern.fullmatch(value)


def test_a_string_stored_as_it_came_is_not_matched_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    counting = _CountingPattern(column_masking._PLAIN)
    monkeypatch.setattr(column_masking, "_PLAIN", counting)
    team, name = str(uuid.uuid4()), f"n{uuid.uuid4().hex[:8]}"
    conformer = Conformer("projects.list", Owner(team_id=team))
    rows = conformer.rows(
        "projects", ({"id": f"p{i}", "team_id": team, "name": name} for i in range(50))
    )
    assert len(rows) == 50 and {row["name"] for row in rows} == {name}
    # 50 ids, one team id and one name: each checked once, not once per row (150)
    assert counting.calls <= 52


def test_a_masked_string_is_masked_every_time() -> None:
    """Only strings stored as they came are remembered: a credential is masked each time."""
    conformer = Conformer("teams.list", Owner())
    text = f"connect with postgres://app:{SECRET}@db/app"
    for _ in range(3):
        row = conformer.row("teams", {"id": "t1", "name": "core", "description": text})
        assert row is not None and SECRET not in row["description"]


def test_field_names_are_worked_out_once_per_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = Counter[str]()
    original = aliases_module._neutral_key

    def counting(key: str) -> str:
        calls[key] += 1
        return original(key)

    monkeypatch.setattr(aliases_module, "_neutral_key", counting)
    aliases = FieldAliases()
    real = [{"id": f"s{i}", "kubernetes_name": "web", "type": "github"} for i in range(40)]
    spec = [{"id": f"s{i}", "runtime_name": "web", "type": "gitprovider"} for i in range(40)]
    both = [{"id": "s", "kubernetes_name": "old", "runtime_name": "new"}]
    assert aliases.normalise("services.list", real) == spec
    assert aliases.normalise("services.list", spec) == spec
    # a new shape gets its own names: the specification's form wins when both come
    assert aliases.normalise("services.list", both) == both
    assert aliases.normalise("services.list", real[:1]) == spec[:1]
    assert calls["kubernetes_name"] == 2 and calls["runtime_name"] == 2


def test_what_is_remembered_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that never repeats a string or a shape cannot grow the plans without end."""
    monkeypatch.setattr(row_plan, "_KEPT_LIMIT", 3)
    monkeypatch.setattr(row_plan, "_SHAPES_LIMIT", 2)
    remembering = row_plan._remembering(column_masking.masker(Kind.NAME))
    assert remembering is not None
    kept, masked = remembering
    kept.clear()  # what earlier tests left
    for name in (f"n{uuid.uuid4().hex[:8]}" for _ in range(10)):
        assert masked(name) == name
        assert len(kept) <= 3
    plans = row_plan._plans("teams")
    plans.plans.clear()
    shapes = [{"id": "t", "name": name, "created_at": None} for name in ("a", None, 4, 2.5)]
    for values in shapes:
        Conformer("teams.list", Owner()).row("teams", values)
        assert len(plans.plans) <= 2


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-01-02T03:04:05Z", "2024-01-02T03:04:05+00:00"),
        ("2024-01-02T03:04:05+00:00", "2024-01-02T03:04:05+00:00"),
        ("2024-01-02T05:04:05+02:00", "2024-01-02T03:04:05+00:00"),
        ("2024-01-02T03:04:05", "2024-01-02T03:04:05+00:00"),
    ],
)
def test_every_time_is_stored_in_utc(text: str, expected: str) -> None:
    row = Conformer("teams.list", Owner()).row("teams", {"id": "t", "created_at": text})
    assert row is not None and row["created_at"].isoformat() == expected
    assert row["created_at"].utcoffset().total_seconds() == 0
