"""How DuckDB plans a check over many snapshots: which side of each join it builds its hash
table on (a structural test; the seconds are the benchmark's, benchmarks/audit.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from audit_fixtures import fixture_connection

from toolkit.audit.check_file import BUILTIN_CHECKS, discover_checks
from toolkit.audit.check_run import run_check

if TYPE_CHECKING:
    from collections.abc import Iterator

SNAPSHOTS = 20
"""More than the views write out as literal ids: they read the visible snapshots as a
store of 90 does (toolkit/snapshot/views.py)."""
SERVICES = 40
FIXTURES = Path(__file__).with_name("fixtures")


def _fixture() -> dict[str, Any]:
    owner = {"team_id": "t1", "project_id": "p1", "environment_id": "e1"}
    return {
        "snapshots": [
            {
                "at": f"2026-01-{day + 1:02d}T00:00:00Z",
                "tables": {
                    "services": [
                        {"id": f"s{i}", "name": f"web-{i}", **owner, **_limits(i, day)}
                        for i in range(SERVICES)
                    ],
                    "replicas": [
                        {"service_id": f"s{i}", "runtime_name": f"w-{i}", "restart_count": day}
                        | owner
                        for i in range(SERVICES)
                    ],
                },
            }
            for day in range(SNAPSHOTS)
        ]
    }


def _limits(service: int, day: int) -> dict[str, int | None]:
    """Limits and requests not reported (null), unset (-1 or 0) and set, changing by day."""
    values = (None, -1, 0, 100 * (service + day), 7 * (service + 1))
    return {name: values[(service + day + k) % len(values)] for k, name in enumerate(_LIMITS)}


def _joins(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    if node["name"] == "HASH_JOIN":
        yield node
    for child in node.get("children", []):
        yield from _joins(child)


def _scans(node: dict[str, Any]) -> Iterator[list[str]]:
    """The columns each table scan under ``node`` reads."""
    if node["name"].endswith("_SCAN") and "Projections" in node.get("extra_info", {}):
        projected = node["extra_info"]["Projections"]
        yield [projected] if isinstance(projected, str) else list(projected)
    for child in node.get("children", []):
        yield from _scans(child)


def _plan(check_id: str) -> list[dict[str, Any]]:
    spec = next(s for s in discover_checks([BUILTIN_CHECKS]) if s.id == check_id)
    con = fixture_connection(_fixture(), [spec])
    con.execute("PRAGMA explain_output = 'physical_only'")
    sql = f"explain (format json) select * from (\n{spec.sql}\n) as check_rows"  # noqa: S608
    plan: list[dict[str, Any]] = json.loads(
        con.sql(sql, params=dict(spec.bind(None))).fetchall()[0][1]
    )
    return plan


def test_rep003_builds_its_hash_tables_on_the_services_and_owners_not_the_history() -> None:
    joins = [join for root in _plan("REP003") for join in _joins(root)]
    # DuckDB builds on its right child and probes with the left. A left join it expects to
    # keep more rows than its right side reads is turned into a right join building on the
    # history (a row per service and snapshot): what its estimates of the history said
    # when each join with the snapshots cut them by a fifth.
    assert not [j for j in joins if j["extra_info"].get("Join Type") == "RIGHT"]
    names = [  # the join that gives each service its name: on its snapshot and id
        j for j in joins
        if {"service_id = id", "id = service_id"} & set(j["extra_info"].get("Conditions", []))
    ]  # fmt: skip
    assert len(names) == 1
    probe, build = names[0]["children"]
    assert any("name" in columns for columns in _scans(build))
    assert not any("name" in columns for columns in _scans(probe))


_LIMITS = ("cpu_limits_millicores", "cpu_requests_millicores", "memory_limits_megabytes",
           "memory_requests_megabytes")  # fmt: skip
_JSON = {  # each check's evidence as DuckDB's own JSON writer makes it from the same values
    "RES002": "select snapshot_id, id, to_json(struct_pack(memory_limits_megabytes, "
    "memory_requests_megabytes))::varchar from services",
    "RES005": "select snapshot_id, id, to_json(struct_pack(cpu_limits_millicores, "
    "cpu_requests_millicores, memory_limits_megabytes, memory_requests_megabytes, "
    "max_ratio := $max_ratio))::varchar from services",
    "REP003": "select snapshot_id, service_id, to_json(struct_pack(h.restarts, h.previous, "
    "h.increase, previous_at := to_json(h.previous_at), h.pods, new_or_reset := h.fresh, "
    "not_reported := h.uncounted, min_increase := $min_increase))::varchar "
    "from replica_restarts as h",
}


@pytest.mark.parametrize("check_id", sorted(_JSON))
def test_evidence_written_out_is_the_json_duckdb_would_write(check_id: str) -> None:
    spec = next(s for s in discover_checks([BUILTIN_CHECKS]) if s.id == check_id)
    paths = sorted((FIXTURES / check_id).glob("*.json"))
    compared = 0
    for fixture in [*(json.loads(p.read_text(encoding="utf-8")) for p in paths), _fixture()]:
        con = fixture_connection(fixture, [spec])
        params = dict(spec.bind(fixture.get("params")))
        rows = run_check(con, spec, fixture.get("params")).select(
            ["snapshot_id", "resource_id", "evidence"]
        )
        sql = _JSON[check_id]
        reference = con.sql(sql, params={k: v for k, v in params.items() if f"${k}" in sql})
        expected = sorted(reference.fetchall())
        assert sorted(zip(*rows.to_pydict().values(), strict=True)) == expected
        compared += len(expected)
    assert compared > SNAPSHOTS * SERVICES  # nulls, unset (-1) and first counts among them
