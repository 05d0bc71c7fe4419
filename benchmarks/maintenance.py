"""Does a store that ran hourly for a year stay fast? Query times before and after maintenance.

    .venv/bin/python benchmarks/maintenance.py                    # 8,760 snapshots, 200 services
    .venv/bin/python benchmarks/maintenance.py --hours 720 --json # a month, figures only

The year is built once and cached under ``data/bench/maintenance-<services>x<hours>-s<seed>``:

- one real crawl of a simulated world (``Simulator`` served on loopback, the toolkit's own
  collectors and snapshot writer) gives every table the rows and shapes a real snapshot has;
- those rows are repeated for every hour of a year with pyarrow at the declared schemas
  (new ``snapshot_id``/``snapshot_at`` per hour, replica counts and volume use varying), and
  written in large batches (a week of snapshots per Delta commit, so one file per table per
  week); the ``snapshots`` table gets one row per hour. Its hashes are placeholders: this
  store measures speed, ``store verify`` would (rightly) refuse it.

Then, on a copy of the cached year, it times ``services_latest`` and every check in the
latest-only mode the scheduled job uses (``--full-history`` adds every check over the whole
history, which takes minutes per thousand snapshots); runs the job's maintenance (retention
with the default policy: everything for 2 days, hourly for 7, daily for 365; gc; compaction;
vacuum) as of the hour after the last snapshot; and times the same queries again.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from deltalake import write_deltalake

from toolkit.snapshot import SNAPSHOT_TABLES, TABLES, Store, new_snapshot_id

ROOT = Path(__file__).resolve().parent.parent
START = datetime(2025, 1, 1, tzinfo=UTC)
BATCH_HOURS = 168  # snapshots per Delta commit while building: a week


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--services", type=int, default=200)
    parser.add_argument("--hours", type=int, default=8760, help="Hourly snapshots (a year).")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--rebuild", action="store_true", help="Build the year again.")
    parser.add_argument("--json", action="store_true", help="Print only the JSON figures.")
    parser.add_argument(
        "--full-history",
        action="store_true",
        help="Also time every check over the whole history (slow: about 0.3 s per snapshot).",
    )
    args = parser.parse_args()
    say = (lambda _: None) if args.json else (lambda text: print(text, file=sys.stderr))
    cache = ROOT / "data" / "bench" / f"maintenance-{args.services}x{args.hours}-s{args.seed}"
    year = cache / "year"
    if args.rebuild or not (cache / "built.json").exists():
        shutil.rmtree(cache, ignore_errors=True)
        started = time.perf_counter()
        template = crawl_template(cache / "template", args.services, args.seed)
        say(f"template crawl: {sum(t.num_rows for t in template.values()):,} rows per snapshot")
        build_year(year, template, args.hours, say)
        built = {"build_s": round(time.perf_counter() - started, 1)}
        (cache / "built.json").write_text(json.dumps(built))
        say(f"built in {built['build_s']} s")
    work = cache / "work"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(year, work)
    store = Store.open(work)
    figures: dict[str, Any] = {"services": args.services, "hours": args.hours}
    figures["before"] = measure(store, say, "before", full=args.full_history)
    from toolkit.schedule.maintenance import maintain
    from toolkit.schedule.settings import ScheduleSettings

    now = START + timedelta(hours=args.hours)
    started = time.perf_counter()
    report = maintain(store, ScheduleSettings(vacuum_retention_hours=0), now=now)
    figures["maintenance"] = {
        **report.as_fields(),
        "wall_s": round(time.perf_counter() - started, 1),
    }
    say(f"maintenance: {json.dumps(figures['maintenance'])}")
    figures["after"] = measure(store, say, "after", full=args.full_history)
    shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(figures, indent=None if args.json else 2))


def crawl_template(folder: Path, services: int, seed: int) -> dict[str, pa.Table]:
    """One real snapshot of a simulated world, as Arrow tables (snapshot columns included)."""
    from toolkit.config import load_settings
    from toolkit.pipeline.snapshot_job import take_snapshot
    from toolkit.sim import Simulator, SimulatorServer

    sim = Simulator(seed=seed, services=services)
    config = folder / "bench.toml"
    folder.mkdir(parents=True, exist_ok=True)
    config.write_text("[client]\nrate_per_minute = 0\n", encoding="utf-8")
    with SimulatorServer(sim) as server:
        os.environ.update(
            PLATFORM_API_URL=server.base_url,
            PLATFORM_API_KEY=sim.keys["admin"],
            PLATFORM_AUDIT_HMAC_KEY="maintenance-benchmark-key-0123456789",
        )
        settings = load_settings(config, store_url=str(folder / "store"))
        take_snapshot(settings)
    store = Store.open(folder / "store")
    return {name: store._read(name) for name in SNAPSHOT_TABLES if store._read(name).num_rows}


def build_year(root: Path, template: dict[str, pa.Table], hours: int, say: Any) -> None:
    """``hours`` hourly snapshots of ``template`` in week-sized commits, then their rows."""
    moments = [START + timedelta(hours=h) for h in range(hours)]
    ids = [new_snapshot_id(int(m.timestamp() * 1000)) for m in moments]
    for name, rows in template.items():
        started = time.perf_counter()
        for first in range(0, hours, BATCH_HOURS):
            last = min(hours, first + BATCH_HOURS)
            batch = _repeat(rows, ids[first:last], moments[first:last], first)
            write_deltalake(str(root / name), batch, mode="append", schema_mode="merge")
        say(f"{name}: {rows.num_rows * hours:,} rows in {time.perf_counter() - started:.1f} s")
    counts = sorted((name, rows.num_rows) for name, rows in template.items())
    snapshot_rows = [
        {
            "snapshot_id": sid,
            "snapshot_at": at,
            "seq": seq + 1,
            "status": "complete",
            "started_at": at,
            "finished_at": at + timedelta(seconds=40),
            "base_url": "http://127.0.0.1/bench",
            "toolkit_version": "bench",
            "schema_version": 1,
            "credential_name": "default",
            "credential_role": "admin",
            "row_counts": counts,
            "content_hash": f"{seq:064x}",
            "prev_hash": f"{seq - 1:064x}" if seq else None,
            "chain_hash": f"{seq:064x}",
        }
        for seq, (sid, at) in enumerate(zip(ids, moments, strict=True))
    ]
    schema = TABLES["snapshots"].arrow_schema
    write_deltalake(str(root / "snapshots"), pa.Table.from_pylist(snapshot_rows, schema=schema))


def _repeat(rows: pa.Table, ids: list[str], moments: list[datetime], offset: int) -> pa.Table:
    """``rows`` once per snapshot, with that snapshot's id and time, a few values varied."""
    n = rows.num_rows
    repeated = pa.concat_tables([rows] * len(ids))
    index = pa.array(range(len(ids))).to_numpy().repeat(n)
    columns = {
        "snapshot_id": pa.array([i for i in ids for _ in range(n)], pa.string()),
        "snapshot_at": pa.array(
            [m for m in moments for _ in range(n)], repeated.schema.field("snapshot_at").type
        ),
    }
    if "replicas" in repeated.column_names and pa.types.is_integer(
        repeated.schema.field("replicas").type
    ):
        base = pc.fill_null(repeated.column("replicas"), 1)
        bump = pa.array((index + offset) % 3, base.type)
        columns["replicas"] = pc.add(base, bump)
    for name, values in columns.items():
        position = repeated.schema.get_field_index(name)
        repeated = repeated.set_column(position, repeated.schema.field(name), values)
    return repeated


def measure(store: Store, say: Any, label: str, *, full: bool) -> dict[str, Any]:
    """Files, snapshots and the query times that a notebook and the job feel."""
    from toolkit.audit import run_audit

    figures: dict[str, Any] = {
        "data_files": sum(
            len(delta.file_uris()) for name in TABLES if (delta := store._delta(name)) is not None
        ),
        "visible_snapshots": sum(s.status == "complete" for s in store.snapshots()),
    }
    started = time.perf_counter()
    con = store.duckdb()
    figures["open_views_s"] = round(time.perf_counter() - started, 2)
    started = time.perf_counter()
    services = con.sql("select * from services_latest").to_arrow_table().num_rows
    figures["services_latest_s"] = round(time.perf_counter() - started, 2)
    figures["services_latest_rows"] = services
    started = time.perf_counter()
    latest = run_audit(store, latest_only=True)  # what the scheduled job runs after each run
    figures["all_checks_latest_only_s"] = round(time.perf_counter() - started, 2)
    figures["findings"] = len(latest.findings)
    if full:
        started = time.perf_counter()
        run_audit(store)
        figures["all_checks_full_history_s"] = round(time.perf_counter() - started, 2)
    say(f"{label}: {json.dumps(figures)}")
    return figures


if __name__ == "__main__":
    main()
