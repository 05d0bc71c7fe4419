"""The documentation site: its generated reference pages list everything the code declares,
and `mkdocs build --strict` passes.

The pages are written by ``docs/reference_pages`` (called by the MkDocs hook
``docs/hooks.py``). Each test here lists the items from the code on its own (not through the
generator) and requires the page to show every one, so a generator that drops a command,
check, table, column, section or key fails. The strict build itself runs in `make test`
through `make docs`; the ``docs_build`` test repeats it for a run of pytest alone.
"""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import typer

from toolkit.audit import Catalogue
from toolkit.audit.check_run import VIEWS
from toolkit.cli import app
from toolkit.config.settings import _SCHEMA, _TABLES_OF_TABLES
from toolkit.errors import ExitCode
from toolkit.snapshot.schema_tables import DECLARED

if TYPE_CHECKING:
    from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _import(name: str) -> ModuleType:
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(DOCS))  # where mkdocs finds them: beside docs/hooks.py
        return importlib.import_module(name)


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    generated = _import("reference_pages").PAGES
    return {path: write() for path, write in generated.items()}


def _commands(group: Any, prefix: str) -> list[tuple[str, Any]]:
    found = []
    for name, command in getattr(group, "commands", {}).items():
        if not command.hidden:
            found += [(f"{prefix} {name}", command), *_commands(command, f"{prefix} {name}")]
    return found


def test_cli_page_shows_every_command_option_and_exit_code(pages: dict[str, str]) -> None:
    page = pages["reference/cli.md"]
    commands = _commands(typer.main.get_command(app), "platform-audit")
    assert len(commands) > 20
    for path, command in commands:
        assert re.search(rf"^## {re.escape(path)} \{{", page, re.MULTILINE), path
        section = page.split(f"## {path} {{", 1)[1].split("\n## ", 1)[0]
        for param in command.params:
            if getattr(param, "hidden", False):
                continue
            names = param.opts if param.opts[0].startswith("-") else [param.metavar or param.name]
            for name in names:  # in the first cell of a row: `-q, --quiet`, `CHECK <str>`
                cell = rf"^\| `([^`]*[ ,])?{re.escape(name)}[ `/,]"
                assert re.search(cell, section, re.MULTILINE | re.IGNORECASE), (path, name)
    for code in ExitCode:
        assert f"| {code.value} | `{code.name}` |" in page


def test_cli_page_shows_defaults_and_environment_variables(pages: dict[str, str]) -> None:
    page = pages["reference/cli.md"]
    audit = page.split("## platform-audit audit {", 1)[1].split("\n## ", 1)[0]
    assert re.search(r"^\| `--limit <[^>]*>` \| `50` \|", audit, re.MULTILINE)
    assert "Environment: `$PLATFORM_AUDIT_LOG_LEVEL`" in page
    assert "\\[store\\] url" in audit  # typer's escaped markup shown as the terminal shows it


def test_checks_page_shows_every_check_with_its_header(pages: dict[str, str]) -> None:
    page = pages["reference/checks.md"]
    specs = Catalogue.load().specs
    assert len(specs) > 40
    for spec in specs:
        heading = f"### {spec.id}: "
        assert heading in page, spec.id
        section = page.split(heading, 1)[1].split("\n### ", 1)[0]
        assert f"**Severity** {spec.severity} · **area** {spec.area}" in section
        assert f"**history** `{spec.history}`" in section
        for name, value in spec.bind().items():
            assert f"- `{name}` = `" in section, (spec.id, name)
            if isinstance(value, int | float):
                assert f"- `{name}` = `{value}`:" in section
        assert f"[{spec.id}](#{spec.id.lower()})" in page  # in the summary table


def test_schema_page_shows_every_table_and_column(pages: dict[str, str]) -> None:
    page = pages["reference/schema.md"]
    assert {"services", "check_results", "check_runs"} <= set(DECLARED)
    for name, table in DECLARED.items():
        section = page.split(f"\n## {name} {{", 1)[1].split("\n## ", 1)[0]
        for field in table.arrow_schema:
            null = "yes" if field.nullable else "no"
            assert f"| `{field.name}` | `{field.type}` | {null} |" in section, (name, field.name)


def test_schema_page_shows_every_derived_view(pages: dict[str, str]) -> None:
    page = pages["reference/schema.md"]
    section = page.split("## Derived views {", 1)[1].split("\n## ", 1)[0]
    names = set()
    for path in VIEWS.glob("*.sql"):
        text = path.read_text("utf-8")
        names |= set(re.findall(r"create or replace (?:view|macro) (\w+)", text, re.IGNORECASE))
    assert {"credential_reach", "oom_kills", "owner_of"} <= names
    for name in names:
        assert re.search(rf"`{name}(\([^)]*\))?` \((view|macro|table macro)\)", section), name


def test_schema_page_says_where_minus_one_means_not_set(pages: dict[str, str]) -> None:
    page = pages["reference/schema.md"]
    warning = page.split('!!! warning "-1 means not set"', 1)[1].split("\n\n|", 1)[0]
    assert "`services.memory_limits_megabytes`" in warning
    assert "`services.cpu_limits_millicores`" in warning
    assert "nullif(" in warning


def test_configuration_page_shows_every_section_and_key(pages: dict[str, str]) -> None:
    page = pages["reference/configuration.md"]
    for section in _TABLES_OF_TABLES:
        assert re.search(rf"^## \[{section}(\.[A-Z]+)?\] \{{", page, re.MULTILINE), section
    for section, keys in _SCHEMA.items():
        body = page.split(f"\n## [{section}] {{", 1)[1].split("\n## ", 1)[0]
        for key in keys:
            assert re.search(rf"^\| `{key}` \| [a-z ]+ \| ", body, re.MULTILINE), (section, key)
    # defaults as the file writes them, read from the toolkit's own values
    assert "| `concurrency` | integer | `16` |" in page
    assert '| `backoff_max` | string | `"15m"` |' in page
    assert "| `status_cache` | string or boolean |   | Refused: " in page


def test_configuration_page_refuses_a_key_the_example_does_not_explain(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A key the loader takes with no comment in the example file stops the build."""
    config_page = _import("reference_pages.config_page")
    example_file = _import("reference_pages.example_file")
    text = example_file.read_example()
    del text.settings["client"]["concurrency"]
    monkeypatch.setattr(config_page, "read_example", lambda: text)
    with pytest.raises(ValueError, match=r"\[client\] concurrency has no comment"):
        config_page.config_page()


def test_example_comments_belong_to_the_key_below_them() -> None:
    example_file = _import("reference_pages.example_file")
    parsed = example_file.parse_example(
        "# Opening words.\n\n[client]\n# Seconds to wait.\ntimeout_s = 30\ndeadline_s = 120\n"
        '# Tries.\n# max_attempts = 5\n\n[endpoints]\n# Paths.\n# "a.list" = "/b"\n'
        '[audit]\n# Waivers, each entry:\n#   [[waivers]]\n#   check = "RES002"\n'
        '# waivers = "w.toml"\n'
    )
    assert parsed.preamble == "Opening words."
    client = parsed.settings["client"]
    assert client["timeout_s"].prose == "Seconds to wait."
    assert parsed.shared == {("client", "deadline_s"): "timeout_s"}
    assert client["max_attempts"].prose == "Tries."
    assert parsed.notes["endpoints"].example == ('"a.list" = "/b"',)
    assert parsed.settings["audit"]["waivers"].example == ("  [[waivers]]", '  check = "RES002"')
    assert "check" not in parsed.settings["audit"]


def test_prose_keeps_table_cells_whole_and_code_as_code() -> None:
    markdown = _import("reference_pages.markdown")
    assert markdown.prose("a | b") == "a \\| b"
    assert markdown.prose("VAR0* and <b>") == "VAR0\\* and &lt;b&gt;"
    assert markdown.prose("run `platform-audit checks` now") == "run `platform-audit checks` now"
    assert markdown.prose("see :class:`Kind`") == "see `Kind`"
    assert markdown.prose("one ` tick") == "one \\` tick"
    assert markdown.code("a`b") == "`` a`b ``"


def test_lists_and_tables_under_a_paragraph_start_there_as_on_github() -> None:
    """The design and specification are written for GitHub: a table or list right under a
    paragraph's last line must not run into the paragraph."""
    markdown = _import("reference_pages.markdown")
    page = (
        "Rules:\n- one\ncontinued\n- two\n\nText\n| a | b |\n|---|---|\n"
        "```\nnot\n- code\n```\n  indented\n- item\n"
    )
    assert markdown.github_blocks(page) == (
        "Rules:\n\n- one\ncontinued\n- two\n\nText\n\n| a | b |\n|---|---|\n"
        "```\nnot\n- code\n```\n  indented\n- item\n"
    )


@pytest.mark.docs_build
def test_mkdocs_build_strict_passes(tmp_path: Path) -> None:
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    checks = (site / "reference" / "checks.html").read_text("utf-8")
    assert 'id="res005"' in checks
    assert not list(site.rglob("*.py"))  # the generators are not pages
    home = (site / "index.html").read_text("utf-8")
    assert "fonts.googleapis.com" not in home
    design = (site / "design.html").read_text("utf-8")
    assert "<td><code>toolkit/api/</code></td>" in design  # its GitHub table renders as one
