"""The public API of ``toolkit``: every name in ``__all__`` resolves, and nothing else leaks."""

from __future__ import annotations

import subprocess
import sys

import pytest

import toolkit


@pytest.mark.parametrize("name", toolkit.__all__)
def test_every_public_name_resolves(name: str) -> None:
    assert getattr(toolkit, name) is not None


def test_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        toolkit.nope  # noqa: B018 - the attribute access is the test


def test_import_stays_light() -> None:
    heavy = "('pandas', 'duckdb', 'deltalake')"
    code = f"import sys, toolkit; print(sorted(m for m in {heavy} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
