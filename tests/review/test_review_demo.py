"""``platform-audit review`` over the demo's fourteen simulated days writes all four formats."""

from __future__ import annotations

import csv
import io
import json
from datetime import timedelta
from typing import TYPE_CHECKING

import pytest
from rich.console import Console
from typer.testing import CliRunner

from toolkit.cli import ExitCode, app
from toolkit.pipeline.demo import run_demo
from toolkit.snapshot import Store

if TYPE_CHECKING:
    from pathlib import Path

    from toolkit.pipeline.demo import DemoOutcome

pytestmark = pytest.mark.slow
runner = CliRunner()


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoOutcome:
    out = tmp_path_factory.mktemp("demo")
    printed = io.StringIO()
    outcome = run_demo(Console(file=printed, width=120), services=12, days=14, out=out, tour=False)
    assert outcome.snapshots == 14, printed.getvalue()
    return outcome


def test_review_of_the_demos_fourteen_days(
    demo: DemoOutcome, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("PLATFORM_AUDIT_STORE", "PLATFORM_AUDIT_CONFIG", "PLATFORM_API_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    snapshots = Store.open(demo.store, create=False).snapshots()
    first = snapshots[0].snapshot_at.date()
    last = first + timedelta(days=13)
    period = ["--from", first.isoformat(), "--to", last.isoformat()]
    for name in ("review.html", "review.md", "review.json", "review.csv"):
        outcome = runner.invoke(
            app, ["review", "--store", str(demo.store), *period, "--out", str(tmp_path / name)]
        )
        assert outcome.exit_code == ExitCode.OK, outcome.stderr
        assert (tmp_path / name).stat().st_size > 0
    document = json.loads((tmp_path / "review.json").read_text("utf-8"))
    assert len(document["evidence"]["snapshots"]) == 14
    partial_days = {s["snapshot_at"][:10] for s in document["evidence"]["snapshots"]
                    if s["status"] == "partial"}  # fmt: skip
    assert set(document["coverage_gaps"]) == partial_days  # one snapshot a day
    assert document["evidence"]["verify_ok"] is True
    assert sum(c["violation_days"] for c in document["checks"]) > 0
    assert {k["credential"] for k in document["keys"]} >= {"demo"}
    rows = list(csv.DictReader(io.StringIO((tmp_path / "review.csv").read_text("utf-8"))))
    assert {r["id"] for r in rows if r["kind"] == "check"} == {c["id"] for c in document["checks"]}
    html = (tmp_path / "review.html").read_text("utf-8")
    assert html.startswith("<!DOCTYPE html>") and "store verify: ok" in html
    markdown = (tmp_path / "review.md").read_text("utf-8")
    assert markdown.startswith(f"# Review {first} to {last}\n\n## Coverage")


def test_the_demo_suggests_a_review_of_its_own_days(
    demo: DemoOutcome, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The demo's "Next:" review line names the simulated days, and runs as printed."""
    monkeypatch.chdir(tmp_path)
    first = Store.open(demo.store, create=False).snapshots()[0].snapshot_at.date()
    assert demo.days == (first.isoformat(), (first + timedelta(days=13)).isoformat())
    args = ["review", "--store", str(demo.store), "--from", demo.days[0], "--to", demo.days[1]]
    outcome = runner.invoke(app, [*args, "--framework", "soc2", "--out", "r.md"])
    assert outcome.exit_code == ExitCode.OK, outcome.stderr
    assert "CC6.1" in (tmp_path / "r.md").read_text("utf-8")


def test_the_demos_next_steps_stay_whole_at_any_width(monkeypatch: pytest.MonkeyPatch) -> None:
    """Piped (rich's 80 columns), each suggested command is one line that can be pasted."""
    from pathlib import Path

    from toolkit.pipeline.demo import DemoOutcome, _next_steps

    monkeypatch.setattr("shutil.which", lambda name: f"/usr/bin/{name}")

    store = Path("/a/long/folder/name/to/pass/eighty/columns/data/demo/store")
    printed = io.StringIO()
    days = ("2026-11-28", "2026-12-11")
    _next_steps(Console(file=printed, width=80), DemoOutcome(store, (), 14, 0, 20.0, days))
    lines = printed.getvalue().splitlines()
    commands = [line for line in lines if line.startswith("  platform-audit ")]
    assert len(commands) == 3, lines
    assert all(line.rstrip().endswith(('"', "soc2", str(store))) for line in commands), lines


def test_the_demos_next_steps_name_the_script_when_it_is_not_on_path(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`make demo` runs .venv/bin/platform-audit without activating .venv: its Next lines
    name that script, so they work pasted into the same shell."""
    import sys
    from pathlib import Path

    from toolkit.pipeline.demo import DemoOutcome, _next_steps

    monkeypatch.setattr("shutil.which", lambda name: None)
    monkeypatch.setattr(sys, "executable", str(tmp_path / ".venv" / "bin" / "python"))
    monkeypatch.chdir(tmp_path)
    printed = io.StringIO()
    outcome = DemoOutcome(Path("data/demo/store"), (), 14, 0, 20.0, ("2026-11-28", "2026-12-11"))
    _next_steps(Console(file=printed, width=200), outcome)
    commands = [line for line in printed.getvalue().splitlines() if "--store" in line]
    assert len(commands) == 3
    assert all(line.startswith("  .venv/bin/platform-audit ") for line in commands), commands
