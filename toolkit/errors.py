"""Errors of the toolkit outside the HTTP layer, as one tree.

The API client has its own tree (``toolkit.api``: every error object of the platform's
part 7 and every network failure). Everything else a user can run into lands here::

    ToolkitError
     └── ConfigError       a setting is missing, malformed or contradicts another

Every message says what to do next, so the command line can print it as it is.
"""

from __future__ import annotations

__all__ = ["ConfigError", "ToolkitError"]


class ToolkitError(Exception):
    """Base class of the toolkit's own errors (not the platform's)."""


class ConfigError(ToolkitError):
    """A setting is missing or wrong; the message names it and says how to fix it."""
