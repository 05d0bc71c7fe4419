"""`platform-audit snapshot`, `sql` and `store` end to end against a live simulator.

Every command runs through typer's `CliRunner` with its settings in the environment
(`PLATFORM_API_URL`, `PLATFORM_API_KEY`, `PLATFORM_AUDIT_STORE`, `PLATFORM_AUDIT_HMAC_KEY`);
most tests add a small TOML file only to switch the client-side rate limit off, so the
crawls take a fraction of a second. Exit codes are those of `ExitCode`.
"""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pytest
from typer.testing import CliRunner

from toolkit.cli import ExitCode, app
from toolkit.sim import FaultProfile, Simulator, SimulatorServer
from toolkit.snapshot import Store
from toolkit.snapshot.redaction import Fingerprinter

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from click.testing import Result

HMAC_KEY = "integration-test-hmac-key-0123456789"
FAST = "[client]\nrate_per_minute = 0\nmax_attempts = 2\n"
# Variables a developer's shell might hold; unset for every run unless a test sets them.
_UNSET = ("PLATFORM_AUDIT_CONFIG", "PLATFORM_AUDIT_LOG_LEVEL", "CI_KEY", "VIEWER_KEY")


class Platform:
    """A served world, a store folder and a config file; runs the CLI against them."""

    def __init__(self, sim: Simulator, server: SimulatorServer, tmp_path: Path) -> None:
        self.sim, self.server = sim, server
        self.store = tmp_path / "store"
        self.config = tmp_path / "platform-audit-test.toml"
        self.config.write_text(FAST, encoding="utf-8")

    def env(self, key: str = "admin", **extra: str | None) -> dict[str, str | None]:
        values: dict[str, str | None] = dict.fromkeys(_UNSET)
        values.update(
            PLATFORM_API_URL=self.server.base_url,
            PLATFORM_API_KEY=self.sim.keys[key],
            PLATFORM_AUDIT_STORE=str(self.store),
            PLATFORM_AUDIT_HMAC_KEY=HMAC_KEY,
            PLATFORM_AUDIT_CONFIG=str(self.config),
        )
        values.update(extra)
        return values

    def run(self, *args: str, key: str = "admin", **env: str | None) -> Result:
        return CliRunner().invoke(app, list(args), env=self.env(key, **env))

    def snapshot(self, *args: str, key: str = "admin", **env: str | None) -> Result:
        return self.run("snapshot", "--quiet", *args, key=key, **env)

    def sql(self, query: str, **env: str | None) -> list[dict[str, Any]]:
        result = self.run("sql", query, "--format", "json", **env)
        assert result.exit_code == 0, result.output
        rows: list[dict[str, Any]] = json.loads(result.stdout)
        return rows

    def snapshot_count(self) -> int:
        return len(Store.open(str(self.store)).snapshots()) if self.store.exists() else 0


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[Simulator, SimulatorServer]]:
    """One small world for the tests that do not change it."""
    sim = Simulator(seed=21, services=6)
    with SimulatorServer(sim) as server:
        yield sim, server


@pytest.fixture
def platform(
    served: tuple[Simulator, SimulatorServer], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Platform:
    monkeypatch.chdir(tmp_path)  # no ./platform-audit.toml of the developer's is read
    return Platform(*served, tmp_path)


@pytest.fixture
def faulty(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Platform]:
    """A world of its own, whose fault profile a test may change."""
    monkeypatch.chdir(tmp_path)
    sim = Simulator(seed=22, services=5)
    with SimulatorServer(sim) as server:
        yield Platform(sim, server, tmp_path)


def flat(text: str) -> str:
    """Output with rich's line wrapping undone."""
    return " ".join(text.split())


def test_complete_snapshot_from_the_environment_alone(platform: Platform) -> None:
    # No config file at all: the four variables are enough (the default rate limit applies).
    result = platform.run("snapshot", PLATFORM_AUDIT_CONFIG=None)
    assert result.exit_code == ExitCode.OK, result.output
    out = flat(result.output)
    assert "(complete)" in out
    for table in ("teams", "projects", "environments", "services", "deployments", "credentials"):
        assert f"│ {table} " in result.output
    assert "crawl " in out and " s, write " in out  # the duration of both phases
    assert "calls (" in out and "needed)" in out
    assert "retries none" in out and "0 failed calls" in out
    [only] = platform.sql("select snapshot_id from snapshots")
    snapshot_id = only["snapshot_id"]
    assert f"snapshot {snapshot_id} (complete)" in result.output  # whole, to be copied
    [row] = platform.sql("select status, credential_name, credential_role from snapshots")
    assert row == {"status": "complete", "credential_name": "default", "credential_role": "admin"}
    services = platform.sql("select count(*) as n from services_latest")[0]["n"]
    assert services == len(platform.sim.world.services) > 0


def test_partial_snapshot_is_committed_and_its_errors_are_queryable(faulty: Platform) -> None:
    faulty.sim.set_faults(FaultProfile(rate_5xx=1.0, paths=("/replicas/list",)))
    result = faulty.snapshot()
    assert result.exit_code == ExitCode.PARTIAL, result.output
    out = flat(result.output)
    assert "(partial)" in out and "partial snapshot:" in out
    [snap] = faulty.sql("select snapshot_id, status from snapshots")
    assert snap["status"] == "partial"
    assert f"collection_errors where snapshot_id = '{snap['snapshot_id']}'" in out

    errors = faulty.sql(
        "select e.endpoint, e.status, e.error_type, e.attempts from collection_errors e "
        "join snapshots s using (snapshot_id) where s.status = 'partial'"
    )
    assert errors, "the failed calls are rows of collection_errors"
    assert {e["endpoint"] for e in errors} == {"replicas.list"}
    assert all(e["status"] in (502, 503, 504) and e["attempts"] == 2 for e in errors)
    # everything else was still collected, and a partial snapshot never becomes "latest"
    assert faulty.sql("select count(*) as n from services")[0]["n"] > 0
    assert faulty.sql("select count(*) as n from services_latest")[0]["n"] == 0
    listed = faulty.run("store", "ls")
    assert listed.exit_code == 0 and "partial" in listed.output


def test_a_server_repeating_ids_gives_a_partial_snapshot_with_one_row_per_id(
    faulty: Platform,
) -> None:
    faulty.sim.set_faults(FaultProfile(rate_duplicate=1.0, paths=("/services/list",)))
    result = faulty.snapshot()
    assert result.exit_code == ExitCode.PARTIAL, result.output
    assert "(partial)" in flat(result.output)
    rows = faulty.sql("select id, count(*) as n from services group by id")
    assert sorted(r["id"] for r in rows) == sorted(faulty.sim.world.services)
    assert {r["n"] for r in rows} == {1}
    errors = faulty.sql(
        "select endpoint, service_id, column_name, message from collection_errors "
        "where error_type = 'duplicate_id' and table_name = 'services'"
    )
    assert sorted(e["service_id"] for e in errors) == sorted(faulty.sim.world.services)
    for error in errors:
        assert error["endpoint"] == "services.list" and error["column_name"] == "id"
        assert f"2 rows share the key id={error['service_id']}" in error["message"]
        assert "kept the first received, dropped 1" in error["message"]


def test_failing_first_calls_are_retried_into_a_complete_snapshot(faulty: Platform) -> None:
    faulty.sim.set_faults(FaultProfile(fail_first=1, paths=("/teams/list",)))
    result = faulty.snapshot()
    assert result.exit_code == ExitCode.OK, result.output
    assert "retries 503: 1" in flat(result.output)


@pytest.mark.parametrize("key", ["revoked", "expired"])
def test_refused_key_commits_nothing(faulty: Platform, key: str) -> None:
    assert faulty.snapshot().exit_code == ExitCode.OK
    result = faulty.snapshot(key=key)
    assert result.exit_code == ExitCode.AUTH, result.output
    out = flat(result.output)
    assert "Create a new key" in out and "Nothing was committed" in out
    assert faulty.sim.keys[key] not in result.output
    assert faulty.snapshot_count() == 1
    verified = faulty.run("store", "verify")
    assert verified.exit_code == 0, verified.output


def test_platform_down_commits_nothing_and_exits_unreachable(faulty: Platform) -> None:
    assert faulty.snapshot().exit_code == ExitCode.OK
    faulty.sim.set_faults(FaultProfile(fail_first=1000, fail_status=503))
    result = faulty.snapshot()
    assert result.exit_code == ExitCode.UNREACHABLE, result.output
    assert "nothing was committed" in flat(result.output)
    assert faulty.snapshot_count() == 1
    unreachable = faulty.snapshot(PLATFORM_API_URL="http://127.0.0.1:9")
    assert unreachable.exit_code == ExitCode.UNREACHABLE, unreachable.output
    assert faulty.snapshot_count() == 1


def test_refused_key_on_an_empty_store_leaves_no_snapshot(faulty: Platform) -> None:
    result = faulty.snapshot(key="revoked")
    assert result.exit_code == ExitCode.AUTH, result.output
    assert faulty.snapshot_count() == 0


def test_a_manual_snapshot_is_refused_while_a_job_writes_the_store(platform: Platform) -> None:
    """Two writers would link their snapshots to the same predecessor and fork the chain:
    while a scheduled job holds the store's lock, a manual snapshot exits 6 and writes
    nothing; afterwards it runs."""
    from toolkit.schedule import acquire_lock

    assert platform.snapshot().exit_code == ExitCode.OK
    with acquire_lock(str(platform.store), owner="scheduled-job"):
        held = platform.snapshot()
    assert held.exit_code == ExitCode.LOCKED, held.output
    assert "holds the lock on store" in " ".join(held.stderr.split())
    assert platform.snapshot_count() == 1
    assert platform.snapshot().exit_code == ExitCode.OK
    assert platform.snapshot_count() == 2
    assert Store.open(str(platform.store)).verify().ok


def test_a_store_that_cannot_be_written_exits_7_with_what_to_do(
    platform: Platform, tmp_path: Path
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x", encoding="utf-8")
    result = platform.snapshot(PLATFORM_AUDIT_STORE=str(blocker / "store"))
    assert result.exit_code == ExitCode.STORE, result.output  # once a traceback, exit 1
    message = " ".join(result.stderr.split())
    assert f"the store {blocker / 'store'} could not be written" in message
    assert "nothing of this run was committed" in message


@pytest.mark.parametrize(
    ("args", "env", "advice"),
    [
        ((), {"PLATFORM_API_URL": None}, "export PLATFORM_API_URL"),
        ((), {"PLATFORM_API_URL": "platform.example"}, "must start with http://"),
        ((), {"PLATFORM_API_KEY": None}, "export PLATFORM_API_KEY=<your API key>"),
        (("--credential", "ci"), {}, "must be NAME=ENV_VAR"),
        (("--credential", "=CI_KEY"), {}, "must be NAME=ENV_VAR"),
        (("--credential", "ci=CI_KEY"), {}, "export CI_KEY=<your API key>"),
        (("--token-env", "NOT_SET_ANYWHERE"), {}, "export NOT_SET_ANYWHERE="),
        ((), {"PLATFORM_API_URL": "http://user:pw@127.0.0.1:9"}, "must not carry credentials"),
    ],
    ids=[
        "no-url",
        "url-without-scheme",
        "no-token",
        "credential-without-variable",
        "credential-without-name",
        "credential-variable-unset",
        "token-env-unset",
        "url-with-credentials",
    ],
)
def test_bad_configuration_exits_2_with_advice(
    platform: Platform, args: tuple[str, ...], env: dict[str, str | None], advice: str
) -> None:
    result = platform.snapshot(*args, **env)
    assert result.exit_code == ExitCode.CONFIG, result.output
    out = flat(result.output)
    assert out.startswith("error:") and advice in out
    assert platform.snapshot_count() == 0


def test_unknown_setting_in_the_file_exits_2(platform: Platform) -> None:
    platform.config.write_text("[client]\nrate_per_minut = 0\n", encoding="utf-8")
    result = platform.snapshot()
    assert result.exit_code == ExitCode.CONFIG
    assert "did you mean 'rate_per_minute'" in flat(result.output)


def test_as_of_stamps_snapshot_at(platform: Platform) -> None:
    result = platform.snapshot("--as-of", "2026-01-02T03:04:05")
    assert result.exit_code == ExitCode.OK, result.output
    assert "taken at 2026-01-02T03:04:05+00:00" in flat(result.output)
    store = Store.open(str(platform.store))
    [info] = store.snapshots()
    assert info.snapshot_at == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    [row] = platform.sql("select min(snapshot_at) = max(snapshot_at) as one from services")
    assert row["one"] is True


def test_credential_option_audits_another_key(platform: Platform) -> None:
    result = platform.snapshot("--credential", "ci=CI_KEY", CI_KEY=platform.sim.keys["editor"])
    assert result.exit_code == ExitCode.OK, result.output
    rows = platform.sql("select name, role from credentials_latest order by name")
    assert rows == [{"name": "ci", "role": "editor"}, {"name": "default", "role": "admin"}]


def test_credentials_named_in_the_file_are_audited(platform: Platform) -> None:
    platform.config.write_text(
        FAST + '[platform]\ncredential = "collector"\n'
        '[credentials.collector]\ntoken_env = "PLATFORM_API_KEY"\n'
        '[credentials.dashboards]\ntoken_env = "VIEWER_KEY"\n',
        encoding="utf-8",
    )
    result = platform.snapshot(VIEWER_KEY=platform.sim.keys["viewer"])
    assert result.exit_code == ExitCode.OK, result.output
    rows = platform.sql("select name, role from credentials_latest order by name")
    assert rows == [
        {"name": "collector", "role": "admin"},
        {"name": "dashboards", "role": "viewer"},
    ]
    [snap] = platform.sql("select credential_name from snapshots")
    assert snap["credential_name"] == "collector"


def test_one_key_under_two_names_is_taken_and_said(platform: Platform) -> None:
    """Each name is audited as a key of its own: every finding of the key would show twice."""
    platform.config.write_text(
        FAST + '[platform]\ncredential = "collector"\n'
        '[credentials.collector]\ntoken_env = "PLATFORM_API_KEY"\n'
        '[credentials.dashboards]\ntoken_env = "VIEWER_KEY"\n'
        '[credentials.reports]\ntoken_env = "CI_KEY"\n',
        encoding="utf-8",
    )
    viewer = platform.sim.keys["viewer"]
    result = platform.snapshot(VIEWER_KEY=viewer, CI_KEY=viewer)
    assert result.exit_code == ExitCode.OK, result.output
    said = " ".join(result.stderr.split())
    assert "the credentials 'dashboards' and 'reports' hold the same key" in said
    assert viewer not in result.output and "collector" not in said
    apart = platform.snapshot(VIEWER_KEY=viewer, CI_KEY=platform.sim.keys["editor"])
    assert apart.exit_code == ExitCode.OK and "same key" not in apart.stderr


def test_verify_scope_probes_the_audited_keys_for_one_run(platform: Platform) -> None:
    def probes(*args: str) -> int:
        """`credential_probes` rows of a snapshot auditing the limited key as `ci`."""
        result = platform.snapshot("--credential", "ci=CI_KEY", *args, CI_KEY=limited)
        assert result.exit_code == ExitCode.OK, result.output
        [row] = platform.sql("select count(*) as n from credential_probes_latest")
        return int(row["n"])

    limited = platform.sim.keys["limited"]
    assert probes() == 0  # verified mode is off by default
    assert probes("--verify-scope") > 0
    platform.config.write_text(FAST + "[collect]\nverify_scope = true\n", encoding="utf-8")
    assert probes() > 0  # the file turns it on
    assert probes("--no-verify-scope") == 0  # the option wins for one run


def test_verify_scope_without_an_audited_key_says_it_probes_nothing(platform: Platform) -> None:
    result = platform.snapshot("--verify-scope")
    assert result.exit_code == ExitCode.OK, result.output
    assert "verified mode probes the audited keys, and none is configured" in flat(result.output)
    assert "none is configured" not in flat(platform.snapshot().output)


def test_a_bad_collect_setting_exits_2_naming_the_file(platform: Platform) -> None:
    platform.config.write_text(FAST + '[collect]\nverify_scope = "yes"\n', encoding="utf-8")
    result = platform.snapshot()
    assert result.exit_code == ExitCode.CONFIG, result.output
    out = flat(result.output)
    assert f"{platform.config}: [collect] verify_scope must be true or false" in out
    assert platform.snapshot_count() == 0


def test_an_audited_key_that_is_refused_is_recorded_not_fatal(platform: Platform) -> None:
    result = platform.snapshot("--credential", "old=CI_KEY", CI_KEY=platform.sim.keys["revoked"])
    assert result.exit_code == ExitCode.OK, result.output
    names = {r["name"] for r in platform.sql("select name from credentials_latest")}
    assert names == {"default", "old"}
    [error] = platform.sql("select endpoint, status, message from collection_errors_latest")
    assert error["endpoint"] == "users.me" and error["status"] == 401
    assert "audited credential 'old'" in error["message"]
    assert platform.sim.keys["revoked"] not in result.output


def test_two_snapshots_verify_and_list(platform: Platform) -> None:
    assert platform.snapshot().exit_code == ExitCode.OK
    assert platform.snapshot().exit_code == ExitCode.OK
    verified = platform.run("store", "verify")
    assert verified.exit_code == 0, verified.output
    listed = platform.run("store", "ls")
    assert listed.exit_code == 0, listed.output
    assert "2 snapshot(s)" in listed.output
    ids = [s.snapshot_id for s in Store.open(str(platform.store)).snapshots()]
    assert len(set(ids)) == 2
    assert all(i[:8] in listed.output for i in ids)
    seqs = platform.sql("select seq, prev_hash is null as first from snapshots order by seq")
    assert seqs == [{"seq": 1, "first": True}, {"seq": 2, "first": False}]


def test_a_snapshot_under_another_hmac_key_is_taken_and_says_so(platform: Platform) -> None:
    """A key file lost and made again: every fingerprint changes, so every secret would look
    rotated. Each snapshot records its key's id (never the key); the next one warns."""
    assert platform.snapshot().exit_code == ExitCode.OK
    other = "another-integration-hmac-key-9876543210"
    result = platform.snapshot(PLATFORM_AUDIT_HMAC_KEY=other)
    assert result.exit_code == ExitCode.OK, result.output
    first, second = Store.open(str(platform.store)).snapshots()
    assert first.fingerprint_key == Fingerprinter(HMAC_KEY.encode()).key_id
    assert second.fingerprint_key == Fingerprinter(other.encode()).key_id
    said = flat(result.stderr)
    assert f"under another HMAC key (id {second.fingerprint_key})" in said
    assert f"snapshot {first.snapshot_id}'s (id {first.fingerprint_key})" in said
    assert HMAC_KEY not in said and other not in said
    again = platform.snapshot(PLATFORM_AUDIT_HMAC_KEY=other)  # the same key again: no warning
    assert again.exit_code == ExitCode.OK and "HMAC key" not in again.stderr


def test_sql_table_prints_values_and_names_as_text(platform: Platform) -> None:
    """Values are the platform's (a service may be named "[/]") and column names the
    query's: a table cell read as markup lost "[bold]" or raised on "[/]"."""
    assert platform.snapshot().exit_code == ExitCode.OK
    query = """select '[/]' as "[bold]name", '[red]x' as v from snapshots"""
    result = platform.run("sql", query)
    assert result.exit_code == 0, result.output
    assert "[bold]name" in result.stdout and "[/]" in result.stdout and "[red]x" in result.stdout


def test_a_wrong_query_is_a_usage_error_not_a_traceback(platform: Platform) -> None:
    assert platform.snapshot().exit_code == ExitCode.OK
    for query, said in (("selec 1", "syntax error"), ("select * from nosuch", "nosuch")):
        result = platform.run("sql", query)
        assert result.exit_code == ExitCode.CONFIG, result.output
        message = " ".join(result.stderr.split())
        assert "error: the query failed:" in message and said in message
        assert "Traceback" not in result.output


def test_sql_prints_json_and_csv(platform: Platform) -> None:
    assert platform.snapshot().exit_code == ExitCode.OK
    query = "select count(*) as n from services_latest"
    as_json = platform.run("sql", query, "--format", "json")
    assert as_json.exit_code == 0, as_json.output
    assert json.loads(as_json.stdout) == [{"n": len(platform.sim.world.services)}]
    as_csv = platform.run("sql", query, "--format", "csv")
    assert as_csv.exit_code == 0, as_csv.output
    assert list(csv.reader(io.StringIO(as_csv.stdout))) == [
        ["n"],
        [str(len(platform.sim.world.services))],
    ]
