"""``platform-audit demo``: the embedded simulator, two simulated weeks, audits and reports.

Without any setting it shows what the toolkit sees of a platform: who each kind of key is,
what a key limited to one project can reach, that a crawl through a flaky platform still
gets everything; then it snapshots the simulated world once a day for ``days`` days while a
scripted operator changes some limits (:mod:`toolkit.pipeline.demo_steps`), audits the history and
writes the reports. Example::

    outcome = run_demo(Console(), services=40, days=14, out=Path("data/demo"))
    outcome.store, outcome.reports
"""

from __future__ import annotations

import shutil
import sys
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text

from toolkit.api import ClientConfig, PlatformClient, PlatformError, RequestError, Secret
from toolkit.collect.identity import parse_identity
from toolkit.errors import ToolkitError
from toolkit.pipeline.demo_steps import Operator, demo_settings, forget_tokens, write_reports
from toolkit.pipeline.snapshot_job import take_snapshot
from toolkit.sim import Simulator, SimulatorServer
from toolkit.sim.cli_serve import today_utc
from toolkit.snapshot import Store

if TYPE_CHECKING:
    from rich.console import Console

    from toolkit.config import Settings

__all__ = ["DEMO_DIR", "DemoOutcome", "Inventory", "run_demo", "snapshot_days", "walk_inventory"]


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


@dataclass(frozen=True)
class DemoOutcome:
    """What the demo left on disk, and how its days went."""

    store: Path
    reports: tuple[Path, ...]
    snapshots: int
    partial: int
    seconds: float
    days: tuple[str, str] = ("", "")
    """The first and last simulated day (YYYY-MM-DD), the period a review of the demo covers."""


DEMO_DIR = Path("data/demo")


def run_demo(
    console: Console,
    *,
    services: int = 40,
    seed: int = 7,
    days: int = 14,
    out: Path = DEMO_DIR,
    tour: bool = True,
) -> DemoOutcome:
    """Start the simulator on loopback, tour the client, then snapshot, audit and report.

    Never raises for what the platform does: a failed day or audit is said and skipped.
    ``tour=False`` skips the client tour (tests that only need the store).
    """
    started = time.perf_counter()
    first_day = today_utc()
    sim = Simulator(seed=seed, services=services, start=first_day)
    with SimulatorServer(sim) as server:
        console.rule("[bold]platform-audit demo")
        _say(console, f"Simulated platform: {server.base_url} (seed {seed}, {services} services)")
        if tour:
            _tour(console, sim, server.base_url)
        settings = demo_settings(sim, server.base_url, out)
        try:
            taken, partial = snapshot_days(console, sim, settings, days=days)
        finally:
            forget_tokens(settings)
    store = Store.open(settings.store_url)
    reports = _audit(console, store, out) if taken else ()
    last_day = first_day + timedelta(days=max(days, 1) - 1)
    outcome = DemoOutcome(
        Path(settings.store_url),
        reports,
        taken,
        partial,
        time.perf_counter() - started,
        (first_day.date().isoformat(), last_day.date().isoformat()),
    )
    _next_steps(console, outcome)
    return outcome


def _tour(console: Console, sim: Simulator, base_url: str) -> None:
    console.print(_keys_table(sim, base_url))
    console.print(_reach_table(sim, base_url))
    sim.set_faults("flaky")
    try:
        with PlatformClient(_config(base_url, sim.keys["viewer"])) as client:
            inventory = walk_inventory(client)
            stats = client.stats()
        _say(
            console,
            f"Through a flaky platform (5xx, 429 and dropped connections) the viewer key still "
            f"saw all {inventory.services} services in {stats.requests} requests, "
            f"{stats.retries_total} of them retries: {dict(sorted(stats.retries.items()))}.",
        )
    except PlatformError as exc:
        _say(console, f"The flaky platform won this time: {exc}")
    finally:
        sim.set_faults("none")


def snapshot_days(
    console: Console, sim: Simulator, settings: Settings, *, days: int
) -> tuple[int, int]:
    """One snapshot a simulated day into a fresh store (the :class:`Operator` changing
    limits on its days): (snapshots taken, partial ones). Tests use it for a history."""
    store_dir = Path(settings.store_url)
    if store_dir.exists():
        shutil.rmtree(store_dir)  # the demo's own folder: every run starts from nothing
    operator = Operator(sim, days=days)
    _say(
        console,
        f"Snapshotting {days} simulated days; the audited credentials: "
        f"{', '.join(c.name for c in settings.audited)}.",
    )
    taken = partial = 0
    for day in range(1, days + 1):
        for change in operator.act(day):
            _say(console, f"  operator, day {day}: {change}")
        try:
            run = take_snapshot(settings, as_of=sim.now)
        except (ToolkitError, PlatformError) as exc:
            _say(console, f"Day {day}: no snapshot ({exc}); the demo goes on")
        else:
            taken += 1
            info = run.info
            is_partial = info.status != "complete"
            partial += is_partial
            failed = f", {len(run.result.errors)} failed calls" if is_partial else ""
            _say(
                console,
                f"Day {day:>2} {info.snapshot_at:%Y-%m-%d} {info.status}: "
                f"{info.row_counts.get('services', 0)} services, "
                f"{sum(info.row_counts.values()):,} rows, {run.result.calls} calls, "
                f"{run.result.duration_s:.1f} s{failed}",
            )
        sim.advance(hours=24)
        operator.after_day()
    return taken, partial


def _audit(console: Console, store: Store, out: Path) -> tuple[Path, ...]:
    _say(console, f"Store {store.url}: {store.verify().summary()}")
    try:
        paths, line = write_reports(store, out)
    except Exception as exc:  # the demo finishes whatever the audit does; the error is shown
        _say(console, f"The audit and reports failed ({type(exc).__name__}: {exc}).")
        return ()
    _say(console, f"Audit of the newest snapshot against the day before: {line}.")
    return tuple(paths)


def _say(console: Console, line: str) -> None:
    """One line of the demo's story, as text: platform errors and paths may hold brackets,
    which rich would read as markup (``[/]`` raises)."""
    console.print(line, markup=False)


def _command() -> str:
    """How to call platform-audit from this shell: by name when it is on PATH, else by the
    path of this interpreter's script (`make demo` does not activate `.venv`)."""
    if shutil.which("platform-audit"):
        return "platform-audit"
    script = Path(sys.executable).parent / "platform-audit"
    try:
        return str(script.relative_to(Path.cwd()))
    except ValueError:  # the interpreter lives outside this folder
        return str(script)


def _next_steps(console: Console, outcome: DemoOutcome) -> None:
    partial = f" ({outcome.partial} partial: see collection_errors)" if outcome.partial else ""
    run = _command()
    lines = [
        f"Done in {outcome.seconds:.0f} s: {outcome.snapshots} snapshots{partial} in "
        f"{outcome.store}",
        *(f"  report: {path}" for path in outcome.reports),
        "Next:",
        "  make lab            # JupyterLab on notebooks/, reading this store",
        f"  {run} audit --store {outcome.store}",
        f"  {run} review --store {outcome.store} --from {outcome.days[0]} "
        f"--to {outcome.days[1]} --framework soc2",
        f"  {run} sql --store {outcome.store} "  # noqa: S608 - a command shown, not run
        '"select name, replicas from services_latest"',
    ]
    # soft_wrap: each command stays on one line at any width, to be copied or piped
    console.print("\n".join(lines), highlight=False, markup=False, soft_wrap=True)


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
        # role and access are the platform's words: text, not markup
        table.add_row(name, kind, Text(ident.role or "(user's own)"), Text(ident.access or "all"))
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
