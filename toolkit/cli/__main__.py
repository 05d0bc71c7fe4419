"""``python -m toolkit.cli``: the ``platform-audit`` command."""

from __future__ import annotations

from toolkit.cli.main import app

app(prog_name="platform-audit")
