"""Every notebook runs top to bottom against a demo store, and its figures are labelled.

The kernel is `python3`; jupyter_client starts a spec whose command is `python` with this
interpreter (`sys.executable`), so the notebooks see the .venv's packages, which
`test_kernel_is_this_interpreter` proves. The notebooks run side by side (one kernel each)
once per session; each notebook's test then reads its outcome.
"""

from __future__ import annotations

import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import nbformat
import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

if TYPE_CHECKING:
    from toolkit.pipeline.demo import DemoOutcome

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
PATHS = sorted(NOTEBOOKS.glob("*.ipynb"))
PLOTLY = "application/vnd.plotly.v1+json"


def execute(notebook: Any, store: Path | None = None) -> Any:
    env = {**os.environ, "PLATFORM_AUDIT_STORE": str(store or "")}
    client = NotebookClient(
        notebook,
        timeout=60,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    return client.execute(env=env)


def figures(notebook: Any) -> list[dict[str, Any]]:
    return [
        output["data"][PLOTLY]
        for cell in notebook.cells
        for output in cell.get("outputs", [])
        if PLOTLY in output.get("data", {})
    ]


@pytest.fixture(scope="session")
def executed(demo_run: DemoOutcome) -> dict[str, tuple[Any, float]]:
    """Each notebook's stem -> (the executed notebook, or the error it raised; seconds)."""

    def run(path: Path) -> tuple[Any, float]:
        started = time.perf_counter()
        try:
            outcome = execute(nbformat.read(path, as_version=4), demo_run.store)
        except Exception as exc:  # reported by the notebook's own test
            outcome = exc
        return outcome, time.perf_counter() - started

    with ThreadPoolExecutor(max_workers=3) as pool:
        return dict(zip((p.stem for p in PATHS), pool.map(run, PATHS), strict=True))


def test_kernel_is_this_interpreter() -> None:
    notebook = new_notebook(cells=[new_code_cell("import sys; print(sys.prefix)")])
    executed = execute(notebook)
    assert executed.cells[0].outputs[0]["text"].strip() == sys.prefix


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_notebook_runs(path: Path, executed: dict[str, tuple[Any, float]]) -> None:
    notebook, seconds = executed[path.stem]
    if isinstance(notebook, Exception):
        raise notebook  # CellExecutionError names the cell and the traceback
    assert seconds < 60, f"{path.name} took {seconds:.0f} s"
    shown = figures(notebook)
    assert shown, f"{path.name} shows no figure"
    for figure in shown:
        layout = figure["layout"]
        assert layout.get("title", {}).get("text"), f"{path.name}: a figure without a title"
        for axis in ("xaxis", "yaxis"):
            titled = [
                value.get("title", {}).get("text")
                for key, value in layout.items()
                if key.startswith(axis) and isinstance(value, dict)
            ]
            if titled:  # a Sankey diagram has no axes
                assert any(titled), f"{path.name}: a figure whose {axis} has no title"


def test_demo_wrote_both_reports(demo_run: DemoOutcome) -> None:
    assert {p.name for p in demo_run.reports} == {"report.html", "report.md"}
    assert all(p.stat().st_size > 0 for p in demo_run.reports)


def test_quickstart_reads_unset_limits_as_not_set(
    executed: dict[str, tuple[Any, float]], demo_run: DemoOutcome
) -> None:
    """Notebook 01 says what -1 means and averages only the limits that are set."""
    from toolkit.snapshot import Store

    notebook, _ = executed["01_quickstart"]
    if isinstance(notebook, Exception):
        raise notebook
    cells = notebook.cells
    at = next(n for n, c in enumerate(cells) if "from service_limits_latest" in c.source)
    assert cells[at - 1].cell_type == "markdown" and "`-1`" in cells[at - 1].source
    # pandas wraps a wide frame into blocks: a header line, then the row "0 ..." under it
    lines = [line.rstrip(" \\") for line in cells[at].outputs[0]["data"]["text/plain"].splitlines()]
    lines = [line for line in lines if line.strip()]
    shown: dict[str, float] = {}
    for header, values in zip(lines[0::2], lines[1::2], strict=True):
        shown.update(zip(header.split(), map(float, values.split()[1:]), strict=True))
    con = Store.open(demo_run.store).duckdb()
    services, limited, naive, right = con.execute(
        "select count(*), count(*) filter (where memory_limits_megabytes > 0), "
        "round(avg(memory_limits_megabytes)), "
        "round(avg(memory_limits_megabytes) filter (where memory_limits_megabytes > 0)) "
        "from services_latest"
    ).fetchone()
    assert (shown["services"], shown["with_memory_limit"]) == (services, limited)
    assert (shown["naive_avg_mb"], shown["avg_memory_limit_mb"]) == (naive, right)
    assert services > limited  # the demo has services without a memory limit: -1
    assert shown["avg_memory_limit_mb"] > shown["naive_avg_mb"]
