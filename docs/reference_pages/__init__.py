"""The reference pages of the documentation site, generated from the code at build time.

``docs/hooks.py`` (an MkDocs hook) adds each page of :data:`PAGES` to the site when it is
built, so a command, option, setting, check, table or column added to the toolkit shows in
its page without anyone writing it down, and none can be documented that does not exist::

    from reference_pages import PAGES
    markdown = PAGES["reference/checks.md"]()
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reference_pages.checks_page import checks_page
from reference_pages.cli_page import cli_page
from reference_pages.config_page import config_page
from reference_pages.schema_page import schema_page

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

__all__ = ["PAGES"]

PAGES: Mapping[str, Callable[[], str]] = {
    "reference/cli.md": cli_page,
    "reference/configuration.md": config_page,
    "reference/checks.md": checks_page,
    "reference/schema.md": schema_page,
}
"""Each generated page's path under ``docs/`` and the function that writes its Markdown."""
