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
