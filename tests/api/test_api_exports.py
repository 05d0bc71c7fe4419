"""The public surface: a tested `__all__`, and one documented exception tree."""

from __future__ import annotations

import inspect

import toolkit.api
from toolkit.api import _exceptions


def test_all_is_complete_and_importable() -> None:
    names = toolkit.api.__all__
    assert len(set(names)) == len(names)
    for name in names:
        assert getattr(toolkit.api, name) is not None
    public = {
        name
        for name, value in vars(toolkit.api).items()
        if not name.startswith("_") and not inspect.ismodule(value) and name != "annotations"
    }
    assert public == set(names)


def test_every_exception_is_in_the_tree_and_its_drawing() -> None:
    classes = [
        value
        for value in vars(_exceptions).values()
        if inspect.isclass(value) and issubclass(value, Exception)
    ]
    assert len(classes) == 23
    drawing = _exceptions.__doc__ or ""
    for cls in classes:
        assert issubclass(cls, _exceptions.PlatformError)
        assert cls.__name__ in drawing, cls.__name__
        assert cls.__name__ in toolkit.api.__all__, cls.__name__


def test_forbidden_variants_are_distinct_subclasses() -> None:
    assert issubclass(toolkit.api.ReadOnlyKey, toolkit.api.Forbidden)
    assert issubclass(toolkit.api.SessionOnlyEndpoint, toolkit.api.Forbidden)
    assert not issubclass(toolkit.api.ReadOnlyKey, toolkit.api.SessionOnlyEndpoint)
    assert issubclass(toolkit.api.OutcomeUnknown, toolkit.api.NetworkError)
