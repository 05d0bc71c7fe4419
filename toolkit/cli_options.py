"""Options that several ``platform-audit`` commands share, declared once, and the one way
they fail (:func:`fail`).

Each command module imports what it needs, so ``--store`` or ``--config`` read the same
everywhere, and every error is one ``error:`` line with an :class:`ExitCode`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.text import Text

from toolkit.config import DEFAULT_CONFIG_NAME
from toolkit.exit_codes import ExitCode

__all__ = ["BaseUrlOpt", "ConfigOpt", "StoreOpt", "TokenEnvOpt", "fail"]

_err = Console(stderr=True, soft_wrap=True)  # messages stay whole, to copy and grep


def fail(message: str, code: ExitCode) -> typer.Exit:
    """Print ``error: <message>`` on stderr and return the exit to raise::

        raise fail(f"{path} exists; pass --force to overwrite it", ExitCode.CONFIG)

    The message is plain text, never read as markup: paths, values and platform errors
    may hold brackets (``[/]`` made rich raise instead of printing the error).
    """
    _err.print(Text.assemble(("error: ", "bold red"), message), highlight=False)
    return typer.Exit(int(code))


ConfigOpt = Annotated[
    Path | None,
    typer.Option("--config", help=f"TOML settings file (default ./{DEFAULT_CONFIG_NAME})."),
]
StoreOpt = Annotated[
    str | None,
    typer.Option(
        "--store",
        help=(
            "Store folder or s3://bucket/prefix; else $PLATFORM_AUDIT_STORE, else [store] url "
            "of the config file, else data/store."
        ),
    ),
]
BaseUrlOpt = Annotated[
    str | None,
    typer.Option("--base-url", help="API base URL with any prefix; else $PLATFORM_API_URL."),
]
TokenEnvOpt = Annotated[
    str | None,
    typer.Option(
        "--token-env", help="Environment variable holding the key (default PLATFORM_API_KEY)."
    ),
]
