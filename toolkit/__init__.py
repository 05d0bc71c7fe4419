"""platform-audit: collect, audit and report on a hosted deployment platform.

The small public API that notebooks and the command line share::

    import toolkit
    settings = toolkit.load_settings()                 # TOML file + environment
    run = toolkit.take_snapshot(settings)              # crawl the platform, commit a snapshot
    store = toolkit.Store.open(settings.store_url)
    store.duckdb().sql("select name, replicas from services_latest").df()
    result = toolkit.run_audit(store)                  # findings, summary(), history
    toolkit.write_report(store, Path("audit.html"))    # or format="markdown", "json", "csv"

Names are imported on first use, so ``import toolkit`` stays fast for the command line.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from toolkit._version import __version__

if TYPE_CHECKING:
    from toolkit.api import AsyncPlatformClient, ClientConfig, PlatformClient
    from toolkit.audit import run_audit
    from toolkit.collect import crawl
    from toolkit.config import Settings, load_settings
    from toolkit.pipeline.snapshot_job import take_snapshot
    from toolkit.report import write_report
    from toolkit.sim import Simulator, SimulatorServer
    from toolkit.snapshot import Store

_EXPORTS = {
    "AsyncPlatformClient": "toolkit.api",
    "ClientConfig": "toolkit.api",
    "PlatformClient": "toolkit.api",
    "Settings": "toolkit.config",
    "Simulator": "toolkit.sim",
    "SimulatorServer": "toolkit.sim",
    "Store": "toolkit.snapshot",
    "crawl": "toolkit.collect",
    "load_settings": "toolkit.config",
    "run_audit": "toolkit.audit",
    "take_snapshot": "toolkit.pipeline.snapshot_job",
    "write_report": "toolkit.report",
}

__all__ = [
    "AsyncPlatformClient",
    "ClientConfig",
    "PlatformClient",
    "Settings",
    "Simulator",
    "SimulatorServer",
    "Store",
    "__version__",
    "crawl",
    "load_settings",
    "run_audit",
    "take_snapshot",
    "write_report",
]


def __getattr__(name: str) -> Any:
    """Import the module of ``name`` on first use (PEP 562) and keep the value here."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
