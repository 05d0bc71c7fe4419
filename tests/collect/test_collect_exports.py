"""The public surface: a tested `__all__`, and docstring examples that run and stay true."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import toolkit.collect

MODULES = [
    "toolkit.collect",
    *(f"toolkit.collect.{info.name}" for info in pkgutil.iter_modules(toolkit.collect.__path__)),
    "toolkit.snapshot.redaction",
]


def test_all_names_exist_and_are_sorted() -> None:
    names = toolkit.collect.__all__
    assert names == sorted(names)
    missing = [name for name in names if not hasattr(toolkit.collect, name)]
    assert missing == []
    assert {"crawl", "crawl_async", "CrawlResult", "CollectionAborted"} <= set(names)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
