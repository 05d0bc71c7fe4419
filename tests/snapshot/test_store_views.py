"""Views: only committed snapshots are visible; *_latest is the newest complete one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

from store_harness import T0, WriteSnapshot, fetch, sample_rows

from toolkit.snapshot import SNAPSHOT_TABLES, Store


def test_nothing_is_visible_before_commit(store: Store) -> None:
    writer = store.begin(snapshot_at=T0)
    for name, rows in sample_rows().items():
        writer.write(name, rows)
    assert fetch(store, "select count(*) as n from services") == [{"n": 0}]
    assert fetch(store, "select count(*) as n from snapshots") == [{"n": 0}]
    writer.commit()
    assert fetch(store, "select count(*) as n from services") == [{"n": 3}]
    assert fetch(store, "select count(*) as n from services_latest") == [{"n": 3}]


def test_every_table_has_both_views_even_when_never_written(store: Store) -> None:
    con = store.duckdb()
    for name in SNAPSHOT_TABLES:
        assert con.execute(f"select count(*) from {name}").fetchone() == (0,)  # noqa: S608
        assert con.execute(f"select count(*) from {name}_latest").fetchone() == (0,)  # noqa: S608


def test_latest_is_the_newest_complete_snapshot_not_a_partial_one(
    store: Store, write_snapshot: WriteSnapshot
) -> None:
    old = write_snapshot(store, at=T0, version=1)
    newest_complete = write_snapshot(store, at=T0 + timedelta(hours=1), version=2)
    write_snapshot(store, at=T0 + timedelta(hours=2), status="partial", version=3)
    rows = fetch(store, "select distinct snapshot_id, replicas from services_latest")
    assert rows == [{"snapshot_id": newest_complete.snapshot_id, "replicas": 3}]
    history = fetch(store, "select count(distinct snapshot_id) as n from services")
    assert history == [{"n": 3}]  # partial snapshots are part of history
    latest = fetch(store, "select snapshot_id from snapshots_latest")
    assert latest == [{"snapshot_id": newest_complete.snapshot_id}]
    assert old.snapshot_id != newest_complete.snapshot_id


def test_views_take_parameters_and_keep_unknown_fields(
    store: Store, write_snapshot: WriteSnapshot
) -> None:
    write_snapshot(store)
    rows = fetch(
        store,
        "select name, json_extract(extra, '$.future_field') as f from services_latest "
        "where memory_limits_megabytes = ? order by name",
        [-1],
    )
    assert [r["name"] for r in rows] == ["api-0"]
    caps = fetch(
        store, "select id from services where list_contains(capabilities_add, 'NET_ADMIN')"
    )
    assert caps == [{"id": "svc-1"}]
    counts = fetch(store, "select row_counts['services'] as n from snapshots")
    assert counts == [{"n": 3}]


_IN_ANOTHER_ZONE = """
import json, sys
from pathlib import Path
from toolkit.audit import Catalogue
from toolkit.audit.check_run import run_check
sys.path.insert(0, "tests")  # the fixtures' loader is the tests'
from audit_fixtures import fixture_connection
fixture = json.loads(Path("tests/audit/fixtures/REP002/fail_oom_in_window.json").read_text())
con = fixture_connection(fixture)
spec = next(s for s in Catalogue.load().specs if s.id == "REP002")
rows = run_check(con.cursor(), spec).to_pylist()  # a cursor: what the engine's workers use
print(json.dumps({
    "zone": con.cursor().sql("select current_setting('TimeZone')").fetchall()[0][0],
    "text": con.sql("select strftime(timestamptz '2026-01-18 00:00+00', '%H:%M')").fetchall()[0][0],
    "reasons": [r["reason"] for r in rows if r["resource_id"] == "s1"],
}))
"""


def test_times_read_as_utc_whatever_the_machines_zone() -> None:
    # DuckDB takes its zone from the machine: under New York's, a kill at 00:00 UTC was
    # reported "at 19:00 UTC" the day before, and day counts moved with the zone.
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "TZ": "America/New_York"}
    done = subprocess.run(
        [sys.executable, "-c", _IN_ANOTHER_ZONE],
        cwd=root, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    seen = json.loads(done.stdout)
    assert seen["zone"] == "UTC"
    assert seen["text"] == "00:00"
    assert len(seen["reasons"]) == 1
    assert "2026-01-18 00:00 UTC" in seen["reasons"][0]


def test_service_limits_read_minus_one_as_not_set(
    store: Store, write_snapshot: WriteSnapshot
) -> None:
    """-1 means "not set" (platform API 2.3): a naive avg() counts it as a 1 MB limit."""
    old = write_snapshot(store, at=T0, version=1)
    write_snapshot(store, at=T0 + timedelta(hours=1), version=2)
    rows = fetch(
        store,
        "select name, memory_limits_megabytes as raw, memory_limit_mb, cpu_limit_mcpu "
        "from service_limits_latest order by name",
    )
    assert [(r["name"], r["raw"], r["memory_limit_mb"]) for r in rows] == [
        ("api-0", -1, None), ("api-1", 512, 512), ("api-2", 512, 512)
    ]  # fmt: skip
    assert {r["cpu_limit_mcpu"] for r in rows} == {None}  # not collected: not known
    naive, right = (
        store.duckdb()
        .execute(
            "select avg(memory_limits_megabytes), avg(memory_limit_mb) from service_limits_latest"
        )
        .fetchone()
    )
    assert (naive, right) == (341.0, 512.0)
    history = fetch(store, "select distinct snapshot_id from service_limits order by 1")
    assert {r["snapshot_id"] for r in history} > {old.snapshot_id}
    # the raw views keep exactly their declared columns; their limits say how to read them
    comments = dict(
        store.duckdb()
        .execute(
            "select column_name, comment from duckdb_columns() "
            "where table_name = 'services' and comment is not null"
        )
        .fetchall()
    )
    assert set(comments) == {
        "cpu_limits_millicores", "cpu_requests_millicores",
        "memory_limits_megabytes", "memory_requests_megabytes",
    }  # fmt: skip
    assert "-1 (or 0) means not set" in comments["memory_limits_megabytes"]
    assert "service_limits.memory_limit_mb" in comments["memory_limits_megabytes"]
