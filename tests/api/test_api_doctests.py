"""The examples in the docstrings of `toolkit.api` run and stay true."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import toolkit.api

PRIVATE = sorted(info.name for info in pkgutil.iter_modules(toolkit.api.__path__))
MODULES = ["toolkit.api", *(f"toolkit.api.{name}" for name in PRIVATE)]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
