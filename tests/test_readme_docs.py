"""The README stays short and every link in it and in the documentation pages lands.

The README is the front page (at most 10 KB); the rest lives in ``docs/``, which MkDocs
builds with ``--strict``. So a relative link must name a file that exists (or a page the
site provides, :data:`PROVIDED`), a ``#fragment`` a heading of the page it names, and a
page of ``docs/`` must not link out of ``docs/``, which the site would not hold.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README_LIMIT = 10 * 1024
# Pages the documentation site provides beside the ones below: the references are generated
# at build time (docs/hooks.py), the others copied into docs/ by the site's build setup. A
# checkout may lack them; a link to them is taken as landing, and its anchor is not checked.
PROVIDED = frozenset(
    {
        "docs/index.md",
        "docs/reference/cli.md",
        "docs/reference/configuration.md",
        "docs/reference/checks.md",
        "docs/reference/schema.md",
        "docs/design.md",
        "docs/spec/platform-api.md",
        "docs/spec/api-facts.md",
    }
)
# The pages these tests hold to (the README links each of them).
PAGES = (
    "getting-started.md",
    "concepts.md",
    "scheduling.md",
    "notebooks.md",
    "performance.md",
    "troubleshooting.md",
)
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.DOTALL | re.MULTILINE)
CODE_SPAN = re.compile(r"`[^`\n]*`")


def prose(markdown: str) -> str:
    """The text outside code blocks and code spans, where links are links."""
    return CODE_SPAN.sub("", FENCE.sub("", markdown))


def slug(heading: str) -> str:
    """A heading's anchor as Python-Markdown's toc extension makes it (MkDocs' default),
    which is also GitHub's for the headings these pages use."""
    text = unicodedata.normalize("NFKD", CODE_SPAN.sub(lambda m: m.group(0)[1:-1], heading))
    text = re.sub(r"[^\w\s-]", "", text.encode("ascii", "ignore").decode()).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(page: Path) -> set[str]:
    headings = re.findall(r"^#{1,6} +(.+?) *#*$", FENCE.sub("", page.read_text("utf-8")), re.M)
    return {slug(h) for h in headings}


def links(page: Path) -> list[str]:
    return [t for t in LINK.findall(prose(page.read_text("utf-8"))) if ":" not in t.split("/")[0]]


def test_the_readme_is_at_most_10_kb() -> None:
    size = len((ROOT / "README.md").read_bytes())
    assert size <= README_LIMIT, f"README.md is {size} bytes: move detail into docs/"


def test_slugs_match_the_site_s_anchors() -> None:
    assert slug("Secrets: what is never stored") == "secrets-what-is-never-stored"
    assert slug("`make lab`") == "make-lab"
    assert slug("Exit codes by command") == "exit-codes-by-command"


def test_links_skip_code_and_urls() -> None:
    text = "[a](b.md) `[c](d.md)` [e](https://x.org/f.md)\n```\n[g](h.md)\n```\n"
    assert LINK.findall(prose(text)) == ["b.md", "https://x.org/f.md"]


@pytest.mark.parametrize("name", ["README.md", *(f"docs/{p}" for p in PAGES)])
def test_every_relative_link_lands(name: str) -> None:
    page = ROOT / name
    broken = []
    for target in links(page):
        path, _, fragment = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        where = file.relative_to(ROOT).as_posix() if file.is_relative_to(ROOT) else str(file)
        if page.is_relative_to(DOCS) and not file.is_relative_to(DOCS):
            broken.append(f"{target}: outside docs/, which the site does not hold")
        elif where in PROVIDED and not file.is_file():
            continue
        elif not file.is_file():
            broken.append(f"{target}: no file {where}")
        elif fragment and fragment not in anchors(file):
            broken.append(f"{target}: no heading of {where} has the anchor #{fragment}")
    assert not broken, f"{name}: " + "; ".join(broken)


@pytest.mark.parametrize("name", PAGES)
def test_the_readme_links_every_page(name: str) -> None:
    linked = {(ROOT / t.partition("#")[0]).resolve() for t in links(ROOT / "README.md")}
    assert (DOCS / name).resolve() in linked, f"the README does not link docs/{name}"
