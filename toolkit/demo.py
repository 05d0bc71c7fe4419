"""``platform-audit demo``: the embedded simulator, walked through by the API client.

It shows, in under a minute and without any setting, what the toolkit sees of a platform:
who each kind of key is, what a key limited to one project can reach, and that a crawl
through a flaky platform still gets everything, with the retries it took. Example::

    run_demo(Console(), services=40, seed=7)
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rich.table import Table

from toolkit.api import ClientConfig, PlatformClient, RequestError, Secret
from toolkit.config import Credential, Settings
from toolkit.identity import parse_identity
from toolkit.sim import Simulator, SimulatorServer
from toolkit.sim.cli_serve import today_utc
from toolkit.snapshot import Store
from toolkit.snapshot_job import take_snapshot

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["Inventory", "run_demo", "walk_inventory"]


@dataclass(frozen=True)
class Inventory:
    """What one credential can see of the hierarchy."""

    teams: int
    projects: int
    environments: int
    services: int


def walk_inventory(client: PlatformClient) -> Inventory:
    """Count the hierarchy a credential can see, one list call per level and parent."""
    teams = client.list_teams()
    projects = [(t["id"], p) for t in teams for p in client.list_projects(t["id"])]
    envs = [(t, p["id"], e) for t, p in projects for e in client.list_environments(t, p["id"])]
    services = sum(len(client.list_services(t, p, e["id"])) for t, p, e in envs)
    return Inventory(len(teams), len(projects), len(envs), services)


DEMO_DIR = Path("data/demo")
_DEMO_KEY_VAR = "PLATFORM_AUDIT_DEMO_KEY"
_SAMPLE_QUERY = '`platform-audit sql "select name, replicas from services_latest"`'


def run_demo(
    console: Console, *, services: int = 40, seed: int = 7, days: int = 3, out: Path = DEMO_DIR
) -> None:
    """Start the simulator on loopback and show the client against it, step by step."""
    started = time.perf_counter()
    sim = Simulator(seed=seed, services=services, start=today_utc())
    with SimulatorServer(sim) as server:
        console.rule("[bold]platform-audit demo")
        console.print(f"Simulated platform: {server.base_url} (seed {seed}, {services} services)")
        console.print(_keys_table(sim, server.base_url))
        console.print(_reach_table(sim, server.base_url))
        sim.set_faults("flaky")
        with PlatformClient(_config(server.base_url, sim.keys["viewer"])) as client:
            inventory = walk_inventory(client)
            stats = client.stats()
        sim.set_faults("none")
        console.print(
            f"Through a flaky platform (5xx, 429 and dropped connections) the viewer key still "
            f"saw all {inventory.services} services in {stats.requests} requests, "
            f"{stats.retries_total} of them retries: {dict(sorted(stats.retries.items()))}."
        )
        store_url = _snapshot_days(console, sim, server.base_url, days=days, out=out)
    console.print(
        f"Done in {time.perf_counter() - started:.1f} s. Next: explore the snapshots with "
        f"{_SAMPLE_QUERY} --store {store_url}, `platform-audit store verify --store "
        f"{store_url}`; keep a platform running with `platform-audit sim serve --keys-out "
        "keys.json`."
    )


def _snapshot_days(console: Console, sim: Simulator, base_url: str, *, days: int, out: Path) -> str:
    """One snapshot a simulated day into a fresh demo store, then what the store holds."""
    store_dir = out / "store"
    if store_dir.exists():
        shutil.rmtree(store_dir)  # the demo's own folder: every run starts from nothing
    os.environ[_DEMO_KEY_VAR] = sim.keys["editor"]  # this process only; never written
    settings = Settings(
        base_url=base_url,
        credentials={"demo": Credential(name="demo", token_env=_DEMO_KEY_VAR)},
        credential="demo",
        rate_per_minute=None,  # a local simulator: no need to pace requests
        store_url=str(store_dir),
        hmac_key_file=out / "hmac.key",
    )
    for day in range(days):
        run = take_snapshot(settings, as_of=sim.now)
        console.print(
            f"Day {day + 1}: snapshot {run.info.snapshot_id} ({run.info.status}) of "
            f"{run.info.row_counts.get('services', 0)} services, "
            f"{sum(run.info.row_counts.values()):,} rows, {run.result.calls} calls "
            f"in {run.result.duration_s:.1f} s"
        )
        sim.advance(hours=24)
    store = Store.open(store_dir)
    report = store.verify()
    console.print(
        f"Store {store_dir}: {len(store.snapshots())} snapshots; verify: {report.summary()}"
    )
    return str(store_dir)


def _config(base_url: str, token: str) -> ClientConfig:
    # The demo's platform is local and fast: short waits keep the flaky walk quick.
    return ClientConfig(
        base_url=base_url,
        token=Secret(token),
        backoff_base_s=0.05,
        backoff_cap_s=0.5,
        max_attempts=8,
    )


def _keys_table(sim: Simulator, base_url: str) -> Table:
    table = Table(title="Who is each key? (GET /users/me)", title_justify="left")
    for column in ("credential", "answer", "role", "access"):
        table.add_column(column)
    for name in ("admin", "editor", "viewer", "limited", "session", "revoked", "expired"):
        try:
            with PlatformClient(_config(base_url, sim.keys[name])) as client:
                ident = parse_identity(client.me())
        except RequestError as exc:
            table.add_row(name, f"refused: {exc.type} ({exc.status})", "", "")
            continue
        kind = "API key" if ident.is_api_key else "access token"
        table.add_row(name, kind, ident.role or "(user's own)", ident.access or "all")
    return table


def _reach_table(sim: Simulator, base_url: str) -> Table:
    table = Table(title="What can each key see?", title_justify="left")
    for column in ("credential", "teams", "projects", "environments", "services"):
        table.add_column(column, justify="right")
    for name in ("admin", "viewer", "limited"):
        with PlatformClient(_config(base_url, sim.keys[name])) as client:
            inv = walk_inventory(client)
        table.add_row(
            name, *(str(n) for n in (inv.teams, inv.projects, inv.environments, inv.services))
        )
    return table
