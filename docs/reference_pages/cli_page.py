"""The command-line reference: every command of ``platform-audit``, from the typer application.

The commands, their arguments and options, defaults, environment variables and help are read
from the click command typer builds (``typer.main.get_command``), as ``--help`` shows them;
the exit codes from :class:`toolkit.errors.ExitCode` and the comment beside each member.
"""

from __future__ import annotations

import enum
import inspect
import re
from pathlib import PurePath
from typing import Any

import typer
from rich.text import Text

from reference_pages.markdown import code, prose, row
from toolkit.cli import app
from toolkit.errors import ExitCode

__all__ = ["cli_page", "command_paths"]

PROG = "platform-audit"
_MEMBER = re.compile(r"^\s*(?P<name>[A-Z_]+)\s*=\s*(?P<value>\d+)\s*#\s*(?P<doc>.+)$")


def cli_page() -> str:
    """The Markdown of ``reference/cli.md``."""
    root = typer.main.get_command(app)
    ctx = root.context_class(root, info_name=PROG)
    lines = [
        "# Command line",
        "",
        f"Every command of {code(PROG)}, generated from the command-line application "
        f"({code('toolkit.cli:app')}) when the site is built: what `--help` prints, in one "
        "page. Options whose default is empty take their value from the configuration file "
        "or the environment, as their description says (see [Configuration](configuration.md)).",
        "",
        *_usage(root, ctx),
        *_params(root, ctx),
        "## Commands",
        "",
        row("command", "what it does"),
        row("---", "---"),
    ]
    commands = list(_walk(root, ctx))
    for path, command, _ in commands:
        lines.append(row(f"[{code(path)}](#{_anchor(path)})", prose(_summary(command))))
    lines.append("")
    for path, command, sub_ctx in commands:
        lines += [f"## {path} {{ #{_anchor(path)} }}", ""]
        lines += [*_help(command), *_usage(command, sub_ctx), *_params(command, sub_ctx)]
    return "\n".join([*lines, *_exit_codes()]) + "\n"


def command_paths() -> list[str]:
    """Every command's full name (``platform-audit store ls``), as the page lists them."""
    root = typer.main.get_command(app)
    return [path for path, _, _ in _walk(root, root.context_class(root, info_name=PROG))]


def _walk(group: Any, ctx: Any) -> Any:
    """``(full name, command, context)`` of each visible command under ``group``, depth first
    in the order ``--help`` lists them."""
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        sub_ctx = command.context_class(command, info_name=name, parent=ctx)
        yield sub_ctx.command_path, command, sub_ctx
        if hasattr(command, "list_commands"):
            yield from _walk(command, sub_ctx)


def _anchor(path: str) -> str:
    return path.removeprefix(PROG).strip().replace(" ", "-") or "commands"


def _plain(text: str | None) -> str:
    """Help as the terminal shows it: typer reads it as rich markup (``\\[audit]`` is a
    literal bracket)."""
    return Text.from_markup(inspect.cleandoc(text or "")).plain


def _summary(command: Any) -> str:
    help_text = _plain(command.short_help or command.help)
    return help_text.split("\n\n")[0]


def _help(command: Any) -> list[str]:
    paragraphs = [p for p in _plain(command.help).split("\n\n") if p.strip()]
    return [line for p in paragraphs for line in (prose(p), "")]


def _usage(command: Any, ctx: Any) -> list[str]:
    usage = command.get_usage(ctx).removeprefix("Usage:").strip()
    return ["```text", usage, "```", ""]


def _params(command: Any, ctx: Any) -> list[str]:
    records = []
    for param in command.get_params(ctx):
        record = None if getattr(param, "hidden", False) else param.get_help_record(ctx)
        if record is not None:
            records.append((param, record[0]))
    if not records:
        return []
    lines = [row("argument or option", "default", "description"), row("---", "---", "---")]
    for param, declaration in records:
        lines.append(row(code(declaration), _default(param), _description(param)))
    return [*lines, ""]


def _default(param: Any) -> str:
    if param.required:
        return "*required*"
    value = param.default
    if value is None or value == () or value == []:
        return ""
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, bool):
        value = str(value).lower()
    if isinstance(value, PurePath):
        value = str(value)
    if isinstance(value, list | tuple):
        value = ", ".join(str(v) for v in value)
    return code(str(value))


def _description(param: Any) -> str:
    text = prose(_plain(param.help))
    envvar = param.envvar
    if isinstance(envvar, str):
        envvar = [envvar]
    if envvar:
        names = ", ".join(code(f"${name}") for name in envvar)
        text += f" Environment: {names}."
    return text


def _exit_codes() -> list[str]:
    """What each exit status means: the comment beside each member of :class:`ExitCode`."""
    docs = {}
    for line in inspect.getsource(ExitCode).splitlines():
        match = _MEMBER.match(line)
        if match:
            docs[match["name"]] = match["doc"].strip()
    lines = [
        "## Exit codes",
        "",
        prose(_plain(ExitCode.__doc__)),
        "",
        row("code", "name", "meaning"),
        row("---", "---", "---"),
    ]
    for member in ExitCode:
        lines.append(row(str(member.value), code(member.name), prose(docs.get(member.name, ""))))
    return [*lines, ""]
