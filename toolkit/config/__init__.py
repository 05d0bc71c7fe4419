"""Configuration: one TOML file plus environment variables, built into the value each
package is configured with.

>>> from toolkit.config import load_settings
>>> settings = load_settings()            # ./platform-audit.toml when present, and the environment

:mod:`toolkit.config.settings` reads the file and the environment; each section is checked
by the module named for it (``audit_section``, ``collect_section``, ``server_sections``),
which builds the value its package owns (``CrawlOptions`` for ``[collect]``).
"""

from __future__ import annotations

from toolkit.config.settings import (
    DEFAULT_CONFIG_NAME,
    FAIL_ON,
    Credential,
    Settings,
    example_config,
    load_settings,
)

__all__ = [
    "DEFAULT_CONFIG_NAME",
    "FAIL_ON",
    "Credential",
    "Settings",
    "example_config",
    "load_settings",
]
