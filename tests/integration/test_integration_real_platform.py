"""A server built like the real platform (`Simulator(variant="real")`), met by configuration.

The variant serves product words, moved paths, plain-text 404s and no request ids (see
`toolkit.sim.variant`). With the `[endpoints]` block docs/troubleshooting.md documents, a
snapshot of it is complete and the audit finds what it finds in the same world served as
specified; with no configuration the snapshot is partial and names every endpoint the
server lacks.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from typer.testing import CliRunner

from toolkit.audit import run_audit
from toolkit.audit.findings import ALARMING
from toolkit.cli import ExitCode, app
from toolkit.sim import Simulator, SimulatorServer
from toolkit.snapshot import Store

if TYPE_CHECKING:
    from click.testing import Result

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "troubleshooting.md"
FAST = "[client]\nrate_per_minute = 0\nmax_attempts = 2\n"
SEED, SERVICES = 7, 20
# Where the real platform serves what the crawl reads at the specification's paths.
MOVED = {
    "replicas.list": "/instances/list",
    "replicas.health": "/instances/health",
    "volumes.list": "/storage/pvc/list",
    "webhooks.list": "/unbindwebhooks/list",
}
# What the real platform's answers do not carry, so no audit of it can judge them alike:
# `/users/me` has no `api_key` (the key-scope area); a variable is `{type, name, value}`,
# without the `references[].resolved` that VAR005 reads nor the `updates` that VAR008
# dates a secret by.
UNSERVED_AREAS = frozenset({"key-scope"})
UNSERVED_CHECKS = frozenset({"VAR005", "VAR008"})


def readme_endpoints_block() -> str:
    """The ready-to-copy `[endpoints]` block of the troubleshooting page's section on a
    server that differs from the specification."""
    blocks = re.findall(r"```toml\n(.*?)```", GUIDE.read_text("utf-8"), flags=re.DOTALL)
    found = [b for b in blocks if b.startswith("[endpoints]") and "/instances/list" in b]
    assert len(found) == 1, "docs/troubleshooting.md documents one [endpoints] block for it"
    return found[0]


class Served:
    """One world served as `variant`, a store and a config file; runs the CLI against them."""

    def __init__(self, variant: str, tmp_path: Path, config: str) -> None:
        self.sim = Simulator(seed=SEED, services=SERVICES, variant=variant)
        self.server = SimulatorServer(self.sim)
        self.store = tmp_path / f"store-{variant}"
        self.config = tmp_path / f"{variant}.toml"
        self.config.write_text(FAST + config, encoding="utf-8")

    def snapshot(self) -> Result:
        env = {
            "PLATFORM_API_URL": self.server.base_url,
            "PLATFORM_API_KEY": self.sim.keys["admin"],
            "PLATFORM_AUDIT_STORE": str(self.store),
            "PLATFORM_AUDIT_HMAC_KEY": "real-platform-test-hmac-key-0123456789",
            "PLATFORM_AUDIT_CONFIG": str(self.config),
        }
        return CliRunner().invoke(app, ["snapshot", "--quiet"], env=env)

    def findings(self) -> set[tuple[str, str]]:
        """(check id, resource id) of every open finding of the newest snapshot."""
        frame = run_audit(Store.open(str(self.store)), latest_only=True).findings
        served = ~frame["area"].isin(UNSERVED_AREAS) & ~frame["check_id"].isin(UNSERVED_CHECKS)
        alarms = frame[frame["state"].isin(ALARMING) & served]
        return set(zip(alarms["check_id"], alarms["resource_id"], strict=True))


def run(variant: str, tmp_path: Path, config: str) -> tuple[Served, Result]:
    served = Served(variant, tmp_path, config)
    with served.server:
        result = served.snapshot()
    return served, result


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # no ./platform-audit.toml of the developer's is read
    for name in ("PLATFORM_AUDIT_CONFIG", "PLATFORM_AUDIT_LOG_LEVEL"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def test_the_readme_block_maps_every_moved_path() -> None:
    block = readme_endpoints_block()
    for name, path in MOVED.items():
        assert f'"{name}" = "{path}"' in block


def test_with_the_documented_configuration_the_snapshot_is_complete_and_finds_the_same(
    in_tmp: Path,
) -> None:
    real, result = run("real", in_tmp, readme_endpoints_block())
    assert result.exit_code == ExitCode.OK, result.output
    assert "(complete)" in " ".join(result.output.split())
    spec, reference = run("spec", in_tmp, "")
    assert reference.exit_code == ExitCode.OK, reference.output

    con = Store.open(str(real.store)).duckdb()

    def column(query: str) -> list[object]:
        return [row[0] for row in con.execute(query).fetchall()]

    counts = {
        table: column(f"select count(*) from {table}_latest")[0]  # noqa: S608 - fixed names
        for table in ("replicas", "replica_health", "volumes", "webhooks", "services")
    }
    assert counts["services"] == SERVICES
    assert all(counts.values()), counts  # the moved endpoints were read
    assert column("select count(*) from replicas_latest where runtime_name is null") == [0]
    types = set(column("select distinct type from services_latest"))
    assert "gitprovider" in types and types <= {"gitprovider", "container-image", "database"}
    builders = set(column("select distinct builder from services_latest"))
    assert builders <= {"buildpack", "container", "database", None}, builders

    found, expected = real.findings(), spec.findings()
    assert expected, "the world has planted problems outside the key-scope area"
    assert found == expected, (sorted(expected - found), sorted(found - expected))


def test_without_configuration_the_snapshot_is_partial_and_names_what_is_missing(
    in_tmp: Path,
) -> None:
    real, result = run("real", in_tmp, "")
    assert result.exit_code == ExitCode.PARTIAL, result.output
    output = " ".join(result.output.split())
    for name in MOVED:
        assert name in output, name
    con = Store.open(str(real.store)).duckdb()
    query = "select distinct endpoint from collection_errors where not not_visible"
    assert {row[0] for row in con.execute(query).fetchall()} >= set(MOVED)
