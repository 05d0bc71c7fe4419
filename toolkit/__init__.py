"""platform-audit: collect, audit and report on a hosted deployment platform."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
