"""The toolkit's version: a leaf, so any floor can record it (snapshot rows, SARIF, reports)
without importing the package root, which names every floor."""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
