"""Package attributes imported on first use (PEP 562), so importing a package stays light.

In a package's ``__init__.py``::

    __getattr__ = lazy_exports(__name__, {"Store": "toolkit.snapshot.store"})

``from package import Store`` then imports ``toolkit.snapshot.store`` the first time only,
and caches the value in the package's namespace.
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

__all__ = ["lazy_exports"]


def lazy_exports(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` that imports ``exports[name]`` on demand."""
    namespace = vars(sys.modules[package])

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    return __getattr__
