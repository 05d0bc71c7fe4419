"""The README's tour, run as written, so that it cannot rot.

Convention: every block fenced ```sh in README.md is part of the tour and runs here, in
order, in one bash shell under ``set -euo pipefail``; blocks meant only to be read use
another fence (```bash for `make demo`/`make test`, ```text, ```toml). The shell starts in
a fresh working folder that holds only ``.venv`` (a link to the environment running the
tests, which `make install` created), with no ``PLATFORM_*`` variable and its own home, as
a reader's fresh shell at the repository root after `make install` would be. ``PYTHONPATH``
points at this checkout, so the tour runs the code under test.

The tour starts the simulator in the background and stops it at its end; the shell runs in
a process group of its own, which the test ends whatever happened, so a failing tour never
leaves a simulator behind.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
UUID7 = r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}"
SNAPSHOT_LINE = re.compile(rf"^snapshot ({UUID7}) \(complete\)$", re.MULTILINE)

pytestmark = pytest.mark.slow


def tour_blocks(markdown: str) -> list[str]:
    """The bodies of the ```sh blocks, in order (see the module's docstring)."""
    return re.findall(r"^```sh\n(.*?)^```$", markdown, flags=re.DOTALL | re.MULTILINE)


def test_the_tour_blocks_are_found_and_only_they() -> None:
    text = "```sh\na\n```\n\n```bash\nmake demo\n```\n\n```sh\nb\nc\n```\n"
    assert tour_blocks(text) == ["a\n", "b\nc\n"]
    assert len(tour_blocks(README.read_text("utf-8"))) >= 5


def _fresh_environment(home: Path) -> dict[str, str]:
    """What a new login shell has: no PLATFORM_* variable, no activated environment."""
    keep = ("PATH", "LANG", "LC_ALL", "TMPDIR", "TERM")
    env = {name: os.environ[name] for name in keep if name in os.environ}
    venv_bin = str(Path(sys.prefix) / "bin")
    env["PATH"] = os.pathsep.join(
        p for p in env.get("PATH", "/usr/bin:/bin").split(os.pathsep) if p != venv_bin
    )
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), PYTHONPATH=str(ROOT))
    env["COLUMNS"] = "100"
    return env


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    venv = Path(sys.prefix)
    if not (venv / "bin" / "activate").is_file() or not (venv / "bin" / "platform-audit").is_file():
        pytest.fail(f"{venv} is not the environment `make install` creates: run `make install`")
    (tmp_path / ".venv").symlink_to(venv, target_is_directory=True)
    (tmp_path / "home").mkdir()
    return tmp_path


def _start(workdir: Path, script: str) -> subprocess.Popen[bytes]:
    """bash running ``script`` under ``set -euo pipefail`` in a process group of its own.

    Its output goes to ``tour.log``, not a pipe: a simulator the tour failed to stop would
    hold a pipe open, and reading it to the end would wait for the simulator."""
    with (workdir / "tour.log").open("wb") as log:
        return subprocess.Popen(
            ["bash", "-c", "set -euo pipefail\n" + script],
            cwd=workdir,
            env=_fresh_environment(workdir / "home"),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


@pytest.fixture
def tour_shell(workdir: Path) -> Iterator[subprocess.Popen[bytes]]:
    """The README's tour running; its process group is ended afterwards, whatever happened."""
    process = _start(workdir, "\n".join(tour_blocks(README.read_text("utf-8"))))
    try:
        yield process
    finally:
        _end_group(process)


def _end_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):  # else the tour stopped all it started
        os.killpg(process.pid, signal.SIGKILL)
    if process.poll() is None:
        process.kill()
    process.wait()


def _group_gone(pgid: int) -> bool:
    """Whether no process of the group is left, once those just killed have been reaped
    (by their parent, or by init for the orphans: polled, up to 30 s)."""
    for _ in range(300):
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def test_the_tour_runs_as_written(tour_shell: subprocess.Popen[bytes], workdir: Path) -> None:
    tour_shell.wait(timeout=280)
    output = (workdir / "tour.log").read_text("utf-8", errors="replace")
    assert tour_shell.returncode == 0, output[-6000:]
    assert "The credential works." in output
    ids = SNAPSHOT_LINE.findall(output)
    assert len(ids) == 2 and ids[0] < ids[1], output[-6000:]
    assert "46 checks;" in output  # the audit's summary line
    assert re.search(r"1 checks; 0 new, 0 regressed, \d+ open, 0 resolved, 1 waived", output)
    assert "waiver    active: you@example.com until" in output  # `finding` names the waiver
    assert "exit 1: critical findings" in output  # the --fail-on gate
    assert output.rstrip().endswith("simulator stopped")  # the tour waited for it
    tour = workdir / "data" / "tour"
    assert (tour / "report.html").stat().st_size > 100_000
    assert "CC6.1" in (tour / "review.html").read_text("utf-8")
    assert (tour / "keys.json").stat().st_mode & 0o077 == 0
    assert not (workdir / "keys.json").exists()
    with pytest.raises(ProcessLookupError):  # the tour's `kill` stopped the simulator
        os.killpg(tour_shell.pid, 0)


def test_a_tour_that_fails_leaves_no_simulator_behind(workdir: Path) -> None:
    script = (
        "source .venv/bin/activate\n"
        "platform-audit sim serve --services 5 > sim.url &\n"
        "for i in $(seq 300); do [ -s sim.url ] && break; sleep 0.2; done\n"
        "false\n"
    )
    process = _start(workdir, script)
    try:
        assert process.wait(timeout=120) == 1
        assert (workdir / "sim.url").read_text().startswith("http://127.0.0.1:")
        os.killpg(process.pid, 0)  # the simulator outlived the shell that started it
    finally:
        _end_group(process)
    assert _group_gone(process.pid)
