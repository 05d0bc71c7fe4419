"""The demo's simulated weeks: its credentials, a scripted operator, the audit and the reports.

:func:`toolkit.pipeline.demo.run_demo` walks through these steps; each is usable on its own, e.g. to
build a demo store in a test::

    settings = demo_settings(sim, server.base_url, out)
    operator = Operator(sim, days=14)
    for day in range(1, 15):
        operator.act(day)                     # limit changes the simulator never makes itself
        take_snapshot(settings, as_of=sim.now)
        sim.advance(hours=24)
        operator.after_day()                  # what those changes cost: OOM kills, restarts
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING

from toolkit.config import Credential, Settings

if TYPE_CHECKING:
    from pathlib import Path

    from toolkit.sim import Simulator
    from toolkit.sim.world import Service
    from toolkit.snapshot import Store

__all__ = ["DEMO_CREDENTIALS", "Operator", "demo_settings", "forget_tokens", "write_reports"]

DEMO_CREDENTIALS = {
    "demo": "editor",  # collects: an editor sees values, so fingerprints exist
    "viewer": "viewer",
    "limited": "limited",
    "ci_deploy": "ci_deploy",
    "viewer_env": "viewer_env",
}
"""Configured credential name -> simulator key; the first collects, the rest are audited."""

_TOKEN_VAR = "PLATFORM_AUDIT_DEMO_KEY_{}"  # noqa: S105 - a variable name, not a token


def demo_settings(sim: Simulator, base_url: str, out: Path) -> Settings:
    """Settings for a fresh store under ``out``; the keys go to this process's environment only."""
    tokens = {**sim.keys, **sim.extra_keys}
    credentials = {}
    for name, key in DEMO_CREDENTIALS.items():
        variable = _TOKEN_VAR.format(name.upper())
        os.environ[variable] = tokens[key]  # never written anywhere
        credentials[name] = Credential(name=name, token_env=variable)
    return Settings(
        base_url=base_url,
        credentials=credentials,
        credential="demo",
        rate_per_minute=None,  # a local simulator: no need to pace requests
        store_url=str(out / "store"),
        hmac_key_file=out / "hmac.key",
    )


def forget_tokens(settings: Settings) -> None:
    """Remove the keys that :func:`demo_settings` put in this process's environment."""
    for credential in settings.credentials.values():
        os.environ.pop(credential.token_env, None)


@dataclass
class Operator:
    """Changes to resource limits that a busy team makes between snapshots.

    The simulator evolves deployments, crashes, rotations and scopes on its own, but nobody
    edits limits there (the API has no endpoint for it), so the demo's operator edits the
    simulated world directly, on days scaled to the demo's length (4, 5 and 9 of 14):

    - ``squeeze``: a service's memory limit is cut to 128 MB; until it is raised again the
      service is OOM-killed a few times a day and crash-loops;
    - ``unbound``: another service loses its CPU and memory limits (an audit finding);
    - ``relief``: the squeezed service gets 1024 MB and recovers.
    """

    sim: Simulator
    days: int
    squeezed: Service | None = field(init=False, default=None)
    unbounded: Service | None = field(init=False, default=None)
    _rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.sim.seed)
        candidates = [
            s
            for s in self.sim.world.services.values()
            if not s.pinned and s.kind != "database" and s.memory[1] > 0 and s.cpu[1] > 0
        ]
        if len(candidates) >= 2:
            self.squeezed, self.unbounded = candidates[0], candidates[1]

    @property
    def schedule(self) -> dict[str, int]:
        """The day of each change (a day beyond ``days`` never comes)."""
        squeeze = max(2, self.days // 4 + 1)
        return {
            "squeeze": squeeze,
            "unbound": squeeze + 1,
            "relief": max(squeeze + 1, self.days * 2 // 3),
        }

    def act(self, day: int) -> list[str]:
        """Apply the changes of ``day`` (1-based); one sentence for each."""
        if self.squeezed is None or self.unbounded is None:
            return []
        done = []
        with self.sim.lock:
            squeezed, unbounded = self.squeezed, self.unbounded
            if day == self.schedule["squeeze"]:
                old = squeezed.memory[1]
                squeezed.memory = (min(squeezed.memory[0], 128), 128)
                squeezed.updated_at = self.sim.now  # as the platform stamps a change
                done.append(f"memory limit of {squeezed.name} cut from {old} to 128 MB")
            if day == self.schedule["unbound"]:
                unbounded.cpu = (unbounded.cpu[0], -1)
                unbounded.memory = (unbounded.memory[0], -1)
                unbounded.updated_at = self.sim.now
                done.append(f"CPU and memory limits of {unbounded.name} removed")
            if day == self.schedule["relief"]:
                squeezed.memory = (squeezed.memory[0], 1024)
                squeezed.updated_at = self.sim.now
                squeezed.crashing, squeezed.crash_reasons = False, ()
                done.append(f"memory limit of {squeezed.name} raised to 1024 MB")
        return done

    def after_day(self) -> None:
        """A day under 128 MB: a few OOM kills, as many restarts, a crash loop."""
        service = self.squeezed
        if service is None or service.memory[1] != 128:
            return
        with self.sim.lock:
            kills = self._rng.randint(3, 6)
            service.oom_kills += kills
            service.restart_count += kills
            service.last_oom_at = self.sim.now - timedelta(hours=self._rng.randint(1, 12))
            service.crashing = True
            service.crash_reasons = ("Back-off restarting failed container",)


def write_reports(store: Store, out: Path) -> tuple[list[Path], str]:
    """Audit the store once; write ``report.html`` and ``report.md``; the paths and a summary.

    The same as ``write_report`` for each format, with one audit behind both files.
    """
    from toolkit.report import gather_report, render_report_data

    data = gather_report(store)
    paths = []
    for name, fmt in (("report.html", "html"), ("report.md", "markdown")):
        path = out / name
        path.write_text(render_report_data(data, fmt), encoding="utf-8")
        paths.append(path)
    summary = data.result.summary()
    alarming = summary[["new", "regressed", "open"]].sum(axis=1)
    counts = ", ".join(f"{int(n)} {sev}" for sev, n in alarming.items() if n)
    resolved = int(summary["resolved"].sum())
    line = f"{int(alarming.sum())} unresolved findings ({counts or 'none'}), {resolved} resolved"
    return paths, line
