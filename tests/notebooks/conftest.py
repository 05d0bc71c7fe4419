"""A small demo store, built once per session in a temporary folder, for the notebooks to read.

The same path as `make demo` (simulator, scripted operator, one snapshot a simulated day,
audit, reports), at a size that keeps every notebook quick: 12 services, 6 days.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

import pytest
from rich.console import Console

from toolkit.pipeline.demo import run_demo

if TYPE_CHECKING:
    from toolkit.pipeline.demo import DemoOutcome


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> DemoOutcome:
    out = tmp_path_factory.mktemp("demo")
    printed = io.StringIO()
    outcome = run_demo(Console(file=printed, width=120), services=12, days=6, out=out, tour=False)
    assert outcome.snapshots == 6, printed.getvalue()
    return outcome
