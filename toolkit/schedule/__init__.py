"""What the scheduled job is made of: cadence, lock or lease, status file, notifications,
maintenance, and the ``[schedule]`` and ``[notify]`` settings.

The job that runs them (snapshot, audit, notify, maintain) is the pipeline's
(:mod:`toolkit.pipeline.scheduler`); ``platform-audit schedule`` (``toolkit.cli.schedule``)
is the command. From Python::

    from toolkit.pipeline.scheduler import Scheduler
    from toolkit.schedule import Cadence
    exit_code = Scheduler(load_settings(), cadence=Cadence.every(3600), max_runs=1).run()

Names are imported on first use: ``toolkit.config`` reads the ``[schedule]`` settings
from here without importing the lock or the notifications.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolkit.schedule.cadence import Cadence, backoff_delay
    from toolkit.schedule.lock import LeaseKeeper, StoreLock, acquire_lock
    from toolkit.schedule.logs import install_log_handler
    from toolkit.schedule.maintenance import MaintenanceReport, maintain
    from toolkit.schedule.notify import build_payload, post_payload
    from toolkit.schedule.settings import NotifySettings, ScheduleSettings, parse_duration
    from toolkit.schedule.status import read_status, write_status

_EXPORTS = {
    "Cadence": "toolkit.schedule.cadence",
    "LeaseKeeper": "toolkit.schedule.lock",
    "MaintenanceReport": "toolkit.schedule.maintenance",
    "NotifySettings": "toolkit.schedule.settings",
    "ScheduleSettings": "toolkit.schedule.settings",
    "StoreLock": "toolkit.schedule.lock",
    "acquire_lock": "toolkit.schedule.lock",
    "backoff_delay": "toolkit.schedule.cadence",
    "build_payload": "toolkit.schedule.notify",
    "install_log_handler": "toolkit.schedule.logs",
    "maintain": "toolkit.schedule.maintenance",
    "parse_duration": "toolkit.schedule.settings",
    "post_payload": "toolkit.schedule.notify",
    "read_status": "toolkit.schedule.status",
    "write_status": "toolkit.schedule.status",
}

__all__ = [
    "Cadence",
    "LeaseKeeper",
    "MaintenanceReport",
    "NotifySettings",
    "ScheduleSettings",
    "StoreLock",
    "acquire_lock",
    "backoff_delay",
    "build_payload",
    "install_log_handler",
    "maintain",
    "parse_duration",
    "post_payload",
    "read_status",
    "write_status",
]


def __getattr__(name: str) -> Any:
    """Import the module of ``name`` on first use (PEP 562) and keep the value here."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
