"""MkDocs hook: adds the reference pages generated from the code to the site being built.

``mkdocs.yml`` names this file under ``hooks:``. Each page of
:data:`reference_pages.PAGES` (the command line, the configuration, the checks, the tables)
is written from the toolkit as it is when the site is built, so none can drift from the
code. Every page, the specification and design copied as they are among them, is read as
GitHub reads Markdown (:func:`reference_pages.markdown.github_blocks`). Run from the
repository's root (``make docs``) with the toolkit importable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mkdocs.structure.files import File
from reference_pages import PAGES
from reference_pages.markdown import github_blocks

if TYPE_CHECKING:
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.structure.files import Files


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add each generated page; a file of the same path in docs/ is an error, not replaced."""
    for path, write in PAGES.items():
        if files.get_file_from_path(path) is not None:
            raise ValueError(f"docs/{path} is generated when the site is built: remove the file")
        files.append(File.generated(config, path, content=write()))
    return files


def on_page_markdown(markdown: str, **_: object) -> str:
    """A list or table right under a paragraph starts there, as on GitHub."""
    return github_blocks(markdown)
