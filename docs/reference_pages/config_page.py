"""The configuration reference: every section and key of ``platform-audit.toml``.

The sections, keys and types are those the loader accepts (``toolkit.config.settings``'s
declarations, which refuse any other key); each default is read from the value the toolkit
is built with when the key is absent (``Settings``, ``ScheduleSettings``, ``NotifySettings``,
``CrawlOptions``); each meaning is the example file's comment on the key. A key with no
comment fails the build, unless the loader refuses it (a retired setting), which the page
says with the loader's own message.
"""

from __future__ import annotations

import json
import tempfile
import textwrap
from datetime import timedelta
from pathlib import Path, PurePath
from typing import Any

from reference_pages.example_file import Explained, read_example
from reference_pages.markdown import code, prose, row
from toolkit.api import CATALOGUE
from toolkit.audit import Catalogue
from toolkit.collect import CrawlOptions
from toolkit.collect.aliases import KINDS
from toolkit.config import DEFAULT_CONFIG_NAME, Settings, load_settings
from toolkit.config.settings import _SCHEMA, _TABLES_OF_TABLES
from toolkit.errors import ConfigError
from toolkit.schedule.settings import NotifySettings, format_duration

__all__ = ["config_page", "config_sections"]

# Where each section's defaults live, and the few keys stored under another name.
_DEFAULTS: dict[str, object] = {
    "platform": Settings(),
    "client": Settings(),
    "store": Settings(),
    "audit": Settings(),
    "schedule": Settings().schedule,
    "notify": NotifySettings(),
    "collect": CrawlOptions(),
    "review": Settings().review,
}
_STORED_AS = {
    ("store", "url"): "store_url",
    ("audit", "checks"): "audit_checks",
    ("audit", "skip"): "skip_checks",
    ("audit", "waivers"): "waivers_file",
}
_SAMPLES: dict[type, object] = {str: "x", bool: True, int: 1, float: 1.5, list: [], dict: {}}


def config_sections() -> list[str]:
    """Every section the file may hold, in the page's order."""
    return [*_SCHEMA, *sorted(_TABLES_OF_TABLES)]


def config_page() -> str:
    """The Markdown of ``reference/configuration.md``."""
    example = read_example()
    lines = [
        "# Configuration",
        "",
        f"Every setting of {code(DEFAULT_CONFIG_NAME)}, generated from the settings the "
        "toolkit declares when the site is built: the loader refuses any key not listed here. "
        "Each meaning is the comment `platform-audit init` writes above the key in the "
        "example file.",
        "",
        prose(example.preamble),
        "",
    ]
    for section, keys in _SCHEMA.items():
        lines += _section(section, keys, example.settings.get(section, {}), example.shared)
    lines += _credentials(example.settings.get("credentials", {}))
    lines += _endpoints(example.notes.get("endpoints"))
    lines += _fields(example.settings.get("fields", {}))
    lines += _checks()
    return "\n".join(lines) + "\n"


def _section(
    section: str,
    keys: dict[str, type | tuple[type, ...]],
    explained: dict[str, Explained],
    shared: dict[tuple[str, str], str],
) -> list[str]:
    lines = [f"## [{section}] {{ #{section} }}", ""]
    lines += [row("key", "type", "default", "meaning"), row("---", "---", "---", "---")]
    examples = []
    for key, kind in keys.items():
        block = explained.get(key)
        if block is None:
            meaning = _refused(section, key, kind)
        elif (section, key) in shared:
            meaning = f"See {code(shared[section, key])}."
        else:
            meaning = prose(block.prose)
            if block.example:
                examples.append((key, block.example))
        lines.append(row(code(key), _type_name(kind), _default(section, key), meaning))
    lines.append("")
    for key, example in examples:
        body = textwrap.dedent("\n".join(example))
        lines += [f"{code(key)}, for example:", "", "```toml", body, "```", ""]
    return lines


def _refused(section: str, key: str, kind: type | tuple[type, ...]) -> str:
    """The loader's message for a key it accepts in type but refuses (a retired setting);
    a key it takes that the example file does not explain stops the build."""
    sample = _SAMPLES[kind[0] if isinstance(kind, tuple) else kind]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder, DEFAULT_CONFIG_NAME)
        path.write_text(f"[{section}]\n{key} = {json.dumps(sample)}\n", "utf-8")
        try:
            load_settings(path, environ={})
        except ConfigError as exc:
            message = str(exc).removeprefix(f"{path}: ")
            return "Refused: " + prose(message)
    raise ValueError(
        f"[{section}] {key} has no comment in toolkit/config/platform-audit.example.toml: "
        "write one above it there (the configuration reference shows it)"
    )


def _type_name(kind: type | tuple[type, ...]) -> str:
    names = {
        str: "string",
        bool: "boolean",
        int: "integer",
        float: "number",
        list: "list",
        dict: "table",
    }
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if set(kinds) == {int, float}:
        return "number"
    return " or ".join(names[k] for k in kinds)


def _default(section: str, key: str) -> str:
    owner = _DEFAULTS.get(section)
    name = _STORED_AS.get((section, key), key)
    for attribute in (name, f"{name}_s"):
        if owner is not None and hasattr(owner, attribute):
            value = getattr(owner, attribute)
            if attribute.endswith("_s") and not name.endswith("_s") and value is not None:
                return code(json.dumps(format_duration(value).replace(" ", "")))
            return _toml(value)
    return ""


def _toml(value: Any) -> str:
    """A default as the file would write it; empty when unset."""
    if value is None:
        return ""
    if isinstance(value, timedelta):
        value = format_duration(value.total_seconds()).replace(" ", "")
    elif isinstance(value, PurePath):
        value = _home_as_tilde(str(value))
    elif isinstance(value, tuple):
        value = list(value)
    return code(json.dumps(value))


def _home_as_tilde(path: str) -> str:
    home = str(Path.home())
    return "~" + path.removeprefix(home) if path.startswith(home + "/") else path


def _credentials(explained: dict[str, Explained]) -> list[str]:
    default = Settings().collecting
    note = explained.get("token_env")
    meaning = "The environment variable that holds the credential's key. " + (
        prose(note.prose) if note else ""
    )
    return [
        "## [credentials.NAME] { #credentials }",
        "",
        "A named credential: the environment variable that holds its key, never the key "
        "itself. `[platform] credential` names the one that collects; every other is audited "
        f"(its `/users/me` is read). With none configured, one credential {code(default.name)} "
        f"reads {code('$' + default.token_env)}.",
        "",
        row("key", "type", "default", "meaning"),
        row("---", "---", "---", "---"),
        row(code("token_env"), "string", "*required*", meaning),
        "",
    ]


def _endpoints(note: Explained | None) -> list[str]:
    lines = ["## [endpoints] { #endpoints }", "", prose(note.prose) if note else "", ""]
    if note and note.example:
        lines += ["```toml", textwrap.dedent("\n".join(note.example)), "```", ""]
    lines += ["The endpoints, by name, with the path the specification gives:", ""]
    lines += [row("name", "method", "path"), row("---", "---", "---")]
    for name, endpoint in CATALOGUE.items():
        lines.append(row(code(name), endpoint.method, code(endpoint.path)))
    return [*lines, ""]


def _fields(explained: dict[str, Explained]) -> list[str]:
    block = next(iter(explained.values()), None)
    kinds = ", ".join(code(kind) for kind in sorted(KINDS))
    return [
        "## [fields.KIND] { #fields }",
        "",
        prose(block.prose.split(" Kinds: ")[0]) if block else "",
        "",
        f"Kinds: {kinds}.",
        "",
    ]


def _checks() -> list[str]:
    first = next(spec for spec in Catalogue.load().specs if spec.params)
    name, param = next(iter(first.params.items()))
    return [
        "## [checks.ID] { #checks }",
        "",
        "Thresholds of the checks: a table named for a check's id, setting the parameters "
        "its header declares; [Checks](checks.md) gives each parameter's default and meaning. "
        "A value must suit the default's kind; anything else is refused before the audit "
        "runs, naming the setting.",
        "",
        "```toml",
        f"[checks.{first.id}]  # {first.title}",
        f"{name} = {json.dumps(param.default)}  # {param.doc}",
        "```",
        "",
    ]
