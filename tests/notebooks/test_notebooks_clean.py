"""What is committed under notebooks/: the six notebooks, without outputs, one store variable."""

from __future__ import annotations

import re
from itertools import pairwise
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"

REQUIRED = (
    "01_quickstart",
    "02_resource_limits",
    "03_crashing_replicas",
    "04_protected_variables",
    "05_key_scope_exposure",
    "06_drift",
)
PATHS = sorted(NOTEBOOKS.glob("*.ipynb"))


def test_every_required_notebook_exists() -> None:
    assert {p.stem for p in PATHS} >= set(REQUIRED)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_committed_without_outputs(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [], f"{path.name}: strip the outputs before committing"
            assert cell.execution_count is None, f"{path.name}: an execution count is left"
    assert notebook.metadata.kernelspec.name == "python3"


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_store_path_read_once_at_the_top(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    code = [c.source for c in notebook.cells if c.cell_type == "code"]
    assert "PLATFORM_AUDIT_STORE" in code[0]
    assert sum(c.count("PLATFORM_AUDIT_STORE") for c in code) == 1


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_every_figure_follows_a_sentence(path: Path) -> None:
    cells = nbformat.read(path, as_version=4).cells
    for before, cell in pairwise(cells):
        if cell.cell_type == "code" and "fig.show()" in cell.source:
            assert before.cell_type == "markdown", f"{path.name}: explain the figure above it"


def test_resource_limits_reads_unset_limits_through_the_limit_views() -> None:
    """Notebook 02 reads limits from ``service_limits`` (NULL: not set), and says why: a
    raw column compared with 0 by hand is the -1 trap the views exist to spare analysts."""
    cells = nbformat.read(NOTEBOOKS / "02_resource_limits.ipynb", as_version=4).cells
    code = "\n".join(c.source for c in cells if c.cell_type == "code")
    prose = "\n".join(c.source for c in cells if c.cell_type == "markdown")
    raw = re.compile(r"_(megabytes|millicores)\b\s*[<>=]|nullif", re.IGNORECASE)
    assert not raw.search(code), raw.search(code)
    assert "from service_limits " in code and "from service_limits_latest " in code
    assert "`service_limits`" in prose and "`-1`" in prose
