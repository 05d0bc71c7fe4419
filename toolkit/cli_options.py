"""Options that several ``platform-audit`` commands share, declared once.

Each command module imports what it needs, so ``--store`` or ``--config`` read the same
everywhere.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from toolkit.config import DEFAULT_CONFIG_NAME

__all__ = ["BaseUrlOpt", "ConfigOpt", "StoreOpt", "TokenEnvOpt"]

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
