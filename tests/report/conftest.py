"""One store of simulated days for every report test, the report gathered once, and Chromium.

The store holds three snapshots of one seeded world a simulated day apart, collected by the
editor key with every other planted key audited (so the key-scope heatmap has rows).
``chromium`` runs ``install_chromium.sh`` once per session; where Chromium cannot be
installed, the browser test skips and says why.
"""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from toolkit.config import load_settings
from toolkit.pipeline.snapshot_job import take_snapshot
from toolkit.report import gather_report
from toolkit.sim import Simulator, SimulatorServer
from toolkit.snapshot import Store

if TYPE_CHECKING:
    from collections.abc import Iterator

    from toolkit.report import ReportData

INSTALL_SCRIPT = Path(__file__).with_name("install_chromium.sh")
CHROMIUM = Path("/usr/bin/chromium")
INSTALL_TIMEOUT_S = 600


@dataclass(frozen=True)
class SimStore:
    """The simulated store, its snapshot ids (oldest first), the planted ids, the waivers."""

    store: Store
    path: Path
    snapshot_ids: tuple[str, ...]
    planted: dict[str, str]
    waivers: Path


@pytest.fixture(scope="session")
def sim_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimStore]:
    root = tmp_path_factory.mktemp("report")
    path = root / "store"
    sim = Simulator(seed=7, services=30)
    ids = []
    with pytest.MonkeyPatch.context() as env, SimulatorServer(sim) as server:
        env.setenv("PLATFORM_AUDIT_HMAC_KEY", "report-test-hmac-key-0123456789")
        tokens = {**sim.keys, **sim.extra_keys}
        for name, token in tokens.items():
            env.setenv(f"REPORT_KEY_{name.upper()}", token)
        settings = load_settings(
            base_url=server.base_url,
            store_url=str(path),
            token_env="REPORT_KEY_EDITOR",
            audited={n: f"REPORT_KEY_{n.upper()}" for n in tokens if n != "editor"},
        )
        settings = dataclasses.replace(settings, rate_per_minute=None)
        for day in range(3):
            if day:
                sim.advance(24)
            run = take_snapshot(settings, as_of=sim.now)
            assert run.info.status == "complete", run.result.errors
            ids.append(run.info.snapshot_id)
        planted = dict(sim.planted)
    yield SimStore(Store.open(path), path, tuple(ids), planted, _waivers(root, planted))


def _waivers(root: Path, planted: dict[str, str]) -> Path:
    """On the hostile service a waiver ending within days and its renewal, an expired one
    and a stale one."""
    today = date.today()
    later, soon, past = today + timedelta(days=30), today + timedelta(days=5), today - timedelta(3)
    path = root / "waivers.toml"
    path.write_text(
        f"""
[[waivers]]
check = "SEC001"
resources = ["{planted["service_privileged"]}"]
reason = "The worker needs <b>raw</b> sockets | see TICKET-1"
owner = "ops-team@example.com"
expires = {soon.isoformat()}

[[waivers]]
check = "BAK001"
service = "*"
reason = "Backups are taken by the database team's own job."
owner = "dba@example.com"
expires = {past.isoformat()}

[[waivers]]
check = "WEB001"
service = "no-such-service-*"
reason = "An old exception nobody removed."
owner = "former-owner@example.com"
expires = {later.isoformat()}

[[waivers]]
check = "SEC001"
resources = ["{planted["service_privileged"]}"]
reason = "Renewed until the worker moves to the new runtime."
owner = "ops-team@example.com"
expires = {later.isoformat()}
""",
        encoding="utf-8",
    )
    return path


@pytest.fixture(scope="session")
def report_data(sim_store: SimStore) -> ReportData:
    """The report of the newest snapshot against the one before, with the waivers."""
    return gather_report(sim_store.store, waivers=sim_store.waivers)


@pytest.fixture(scope="session")
def chromium() -> Path:
    """Debian's Chromium, installed by ``install_chromium.sh`` if missing; else a skip."""
    if not CHROMIUM.exists():
        try:
            done = subprocess.run(
                ["bash", str(INSTALL_SCRIPT)],
                capture_output=True,
                text=True,
                timeout=INSTALL_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired:
            pytest.skip(
                f"installing Chromium took over {INSTALL_TIMEOUT_S} s; browser test skipped"
            )
        if done.returncode != 0:
            reason = (done.stderr.strip().splitlines() or ["no message"])[-1]
            pytest.skip(f"Chromium is not installed and cannot be here ({reason})")
    if not CHROMIUM.exists() or shutil.which(str(CHROMIUM)) is None:
        pytest.skip(f"{CHROMIUM} is missing after the install step; browser test skipped")
    return CHROMIUM
