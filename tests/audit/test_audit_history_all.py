"""The checks that read the whole history (``-- history: all``) judge a new snapshot as a
full-history evaluation does: the judge names the snapshots judged in the variable
``views/judging.sql`` reads, so their views compute rows for those snapshots alone and
read the rest of the history for what the past holds.

A seeded world evolves snapshot by snapshot (services crash and recover and change their
configuration, volumes wait on resizes, secrets rotate, OOM kills come and go, a key's
role and scope change, listings fail, resources vanish for a snapshot and come back).
Each snapshot is judged as it arrives, then compared with the check run from scratch over
the history up to it; the same judging over a window of the last two snapshots differs
somewhere for every check, so the world makes each of them read its history.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pyarrow.compute as pc
import pytest
from audit_fixtures import fixture_connection, fixture_snapshot_ids

from toolkit.audit import Catalogue
from toolkit.audit.judge import judge, versioned
from toolkit.audit.snapshots_chosen import committed_snapshots
from toolkit.errors import CheckDefinitionError

if TYPE_CHECKING:
    from pathlib import Path

    import duckdb
    import pyarrow as pa

    from toolkit.audit.judge import Versioned

HISTORY_ALL = ("DEP001", "KEY007", "RES006", "VAR008", "VOL003")
SNAPSHOTS = 9
START = datetime(2026, 1, 1, tzinfo=UTC)
_SERVICES = [f"s{n}" for n in range(6)]
_VOLUMES = [f"v{n}" for n in range(5)]
_SECRETS = ["SECRET_KEY", "DB_PASSWORD", "API_TOKEN", "STRIPE_KEY"]


def _when(day: int, hours: float = 0) -> str:
    return (START + timedelta(days=day, hours=hours)).isoformat().replace("+00:00", "Z")


def _maybe(rng: random.Random, chance: float) -> bool:
    return rng.random() < chance


def _services(rng: random.Random, day: int) -> tuple[list[dict[str, Any]], ...]:
    services, health, replicas, events = [], [], [], []
    for n, sid in enumerate(_SERVICES):
        if day and _maybe(rng, 0.12):  # missing from this snapshot, back later
            continue
        env = "e-prod" if n % 2 else "e-stg"
        services.append(
            {"id": sid, "name": f"svc-{n}", "team_id": "t1", "project_id": "p1",
             "environment_id": env, "created_at": _when(-30 if n < 4 else day),
             "updated_at": _when(day - rng.choice([0, 1, 3, 40]), 1),
             "image": rng.choice([f"app:{n}", f"app:{n}", f"app:{n}-new"]),
             "memory_limits_megabytes": rng.choice([256, 512, 512, 1024, None]),
             "current_deployment_status": rng.choice(["running", "running", "crashing", None])}
        )  # fmt: skip
        state = rng.choice(["crashing", "crashing", "active", "pending", "odd", None])
        if state is not None:
            health.append({"service_id": sid, "health": state, "team_id": "t1"})
        if _maybe(rng, 0.2):
            replicas.append({"service_id": sid, "runtime_name": f"{sid}-r0", "status": "crashing"})
        if _maybe(rng, 0.35):
            seen = _when(day - rng.choice([0, 0, 2, 9]), -rng.choice([1, 5]))
            events.append(
                {"service_id": sid, "source": rng.choice(["replica", "deployment"]),
                 "type": "oom_killed", "count": rng.randint(1, 4), "replica_name": f"{sid}-r0",
                 "first_seen": _when(day - 12), "last_seen": seen}
            )  # fmt: skip
    return services, health, replicas, events


def _volumes(rng: random.Random, day: int) -> list[dict[str, Any]]:
    return [
        {"id": vid, "name": f"vol-{vid}", "team_id": "t1", "capacity_gb": 10.0,
         "requested_gb": 20.0, "mounted_on_service_id": _SERVICES[n],
         "is_pending_resize": rng.choice([True, True, False, None]), "status": "ok"}
        for n, vid in enumerate(_VOLUMES)
        if not day or not _maybe(rng, 0.15)
    ]  # fmt: skip


def _variables(rng: random.Random, day: int, prints: dict[str, int]) -> list[dict[str, Any]]:
    rows = []
    for name in _SECRETS:
        if _maybe(rng, 0.25):
            prints[name] += 1  # rotated
        redacted = _maybe(rng, 0.15)
        rows.append(
            {"name": name, "level": "service", "team_id": "t1", "project_id": "p1",
             "environment_id": "e-prod", "service_id": "s1", "is_reference": False,
             "is_protected": name != "API_TOKEN", "values_redacted": redacted,
             "value_length": None if redacted else rng.choice([8, 40]),
             "fingerprint": None if redacted else f"{name}-{prints[name]}",
             "updates": rng.choice([[], [_when(-100)], [_when(day - 1)]])}
        )  # fmt: skip
    return rows


def _keys(rng: random.Random) -> tuple[list[dict[str, Any]], ...]:
    access = rng.choice(["all", "limited", "limited"])
    credentials = [
        {"name": "personal", "is_api_key": False, "user_id": "u1", "problems": []},
        {"name": "deploy", "is_api_key": True, "key_id": "k1", "access": access,
         "role": rng.choice(["viewer", "editor", "admin", None])},
    ]  # fmt: skip
    listed = rng.sample(["e-prod", "e-stg", "s0", "s3"], rng.randint(0, 3))
    resources = [
        {"credential_name": "deploy", "key_id": "k1",
         "resource_type": "environment" if r.startswith("e-") else "service", "resource_id": r}
        for r in listed
        if access == "limited"
    ]  # fmt: skip
    errors = []
    if _maybe(rng, 0.15):
        errors.append({"endpoint": "services.list", "status": 500, "message": "down"})
    if _maybe(rng, 0.15):
        errors.append({"endpoint": "replicas.list", "status": 500, "service_id": "s2"})
    return credentials, resources, errors


def evolving_world(seed: int) -> dict[str, Any]:
    """A fixture of SNAPSHOTS daily snapshots, each evolved at random from the seed."""
    rng = random.Random(seed)
    prints = dict.fromkeys(_SECRETS, 0)
    snapshots = []
    for day in range(SNAPSHOTS):
        services, health, replicas, events = _services(rng, day)
        credentials, resources, errors = _keys(rng)
        tables = {
            "teams": [{"id": "t1", "name": "acme"}],
            "projects": [{"id": "p1", "team_id": "t1", "name": "shop"}],
            "environments": [
                {"id": "e-prod", "team_id": "t1", "project_id": "p1", "name": "production"},
                {"id": "e-stg", "team_id": "t1", "project_id": "p1", "name": "staging"},
            ],
            "services": services,
            "replica_health": health,
            "replicas": replicas,
            "replica_events": events,
            "volumes": _volumes(rng, day),
            "variables": _variables(rng, day, prints),
            "credentials": credentials,
            "credential_resources": resources,
            "collection_errors": errors,
        }
        # a new fingerprint key once in a while, as a lost key file made again
        entry = {"at": _when(day), "credential_name": "personal", "tables": tables,
                 "fingerprint_key": f"key-{day // 5}"}  # fmt: skip
        snapshots.append(entry)
    return {"snapshots": snapshots}


def _checks() -> list[Versioned]:
    catalogue = Catalogue.load()
    return [c for c in versioned(catalogue, None) if c.spec.id in HISTORY_ALL]


def _rows(table: pa.Table) -> list[dict[str, Any]]:
    return sorted(table.drop_columns(["check_version"]).to_pylist(), key=str)


def _judged_alone(con: duckdb.DuckDBPyConnection, check: Versioned, snapshot: str) -> pa.Table:
    return judge(con, [check], {check.spec.id: [snapshot]}, committed_snapshots(con))


def _from_scratch(con: duckdb.DuckDBPyConnection, check: Versioned, snapshot: str) -> pa.Table:
    """The rows of ``snapshot`` when every snapshot of the history is judged at once (as
    a store's first judgement does): the views compute every snapshot's rows."""
    every = [s.snapshot_id for s in committed_snapshots(con)]
    judged = judge(con, [check], {check.spec.id: every}, committed_snapshots(con))
    return judged.filter(pc.equal(judged["snapshot_id"], snapshot))


@pytest.mark.parametrize("seed", [1, 2])
def test_each_snapshot_judged_as_it_comes_equals_the_whole_history_evaluation(seed: int) -> None:
    world = evolving_world(seed)
    checks = _checks()
    assert sorted(c.spec.id for c in checks) == list(HISTORY_ALL)
    ids = fixture_snapshot_ids(SNAPSHOTS)
    compared = dict.fromkeys(HISTORY_ALL, 0)
    for seen in range(1, SNAPSHOTS + 1):
        so_far = {"snapshots": world["snapshots"][:seen]}
        con = fixture_connection(so_far, [c.spec for c in checks])
        for check in checks:
            alone = _judged_alone(con, check, ids[seen - 1])
            assert _rows(alone) == _rows(_from_scratch(con, check, ids[seen - 1])), (
                f"{check.spec.id} judged snapshot {seen} alone otherwise than over the history"
            )
            compared[check.spec.id] += alone.num_rows
        con.close()
    assert all(compared.values()), compared  # every check judged rows


def test_a_window_of_the_last_snapshots_would_judge_otherwise() -> None:
    """The world is one where the history matters to every check: judging a snapshot over
    only itself and the one before (a wrong window) differs for each of them somewhere."""
    checks = _checks()
    ids = fixture_snapshot_ids(SNAPSHOTS)
    differs: set[str] = set()
    worlds = [evolving_world(seed) for seed in (1, 2)]
    for world, seen in ((w, n) for w in worlds for n in range(SNAPSHOTS, 2, -1)):
        so_far = {"snapshots": world["snapshots"][:seen]}
        full = fixture_connection(so_far, [c.spec for c in checks])
        window = fixture_connection(so_far, [c.spec for c in checks], ids[seen - 2 : seen])
        for check in (c for c in checks if c.spec.id not in differs):
            whole = _rows(_judged_alone(full, check, ids[seen - 1]))
            if whole != _rows(_judged_alone(window, check, ids[seen - 1])):
                differs.add(check.spec.id)
        full.close()
        window.close()
        if differs == set(HISTORY_ALL):
            break
    assert differs == set(HISTORY_ALL)


def test_the_views_of_history_all_checks_compute_the_snapshots_judged_alone() -> None:
    """With snapshots named to them, the views give rows of those snapshots only (their
    history is read, not judged again); unnamed, of every snapshot."""
    world = evolving_world(1)
    specs = [c.spec for c in _checks()]
    con = fixture_connection(world, specs)
    ids = fixture_snapshot_ids(SNAPSHOTS)
    queries = {
        "crash_streaks": "select snapshot_id from crash_streaks",
        "credential_reach_growth": "select snapshot_id from credential_reach_growth",
        "memory_at_oom": "select snapshot_id from memory_at_oom(7)",
        "secret_ages": "select snapshot_id from secret_ages(12, 'SECRET,PASSWORD,TOKEN,KEY', 'x^')",
    }
    for name, sql in queries.items():
        every = {row[0] for row in con.execute(sql).fetchall()}
        assert len(every) > 1, name
        con.execute("SET VARIABLE audit_judged_ids = ?", [[ids[-1]]])
        assert {row[0] for row in con.execute(sql).fetchall()} == {ids[-1]}, name
        con.execute("RESET VARIABLE audit_judged_ids")
    con.close()


def test_a_history_all_check_row_of_a_snapshot_not_read_is_refused(tmp_path: Path) -> None:
    """Naming the snapshots judged to the views filters the views' table rows, never the
    check's output: a row of a snapshot the audit did not read is refused, not dropped."""
    (tmp_path / "TST901.sql").write_text(
        "-- id: TST901\n-- title: Rows of a snapshot nobody committed\n-- severity: low\n"
        "-- area: volumes\n-- risk: None.\n-- remediation: None.\n-- history: all\n"
        "select snapshot_id, 'volume' as resource_type, id as resource_id, name as "
        "resource_name, team_id, project_id, environment_id, null as service_id, 'ok' as "
        "status, 'r' as reason, '{}' as evidence from volumes\n"
        "union all select 'not-a-snapshot', 'volume', 'v-x', null, null, null, null, null, "
        "'ok', 'r', '{}'\n",
        encoding="utf-8",
    )
    check = versioned(Catalogue.load([tmp_path], builtin=False), None)[0]
    con = fixture_connection(evolving_world(1), [check.spec])
    with pytest.raises(CheckDefinitionError, match="'not-a-snapshot', not a snapshot the audit"):
        _judged_alone(con, check, fixture_snapshot_ids(SNAPSHOTS)[-1])
