"""The scheduled job: snapshot, audit, notify and maintain a store on a cadence.

``platform-audit schedule`` (``toolkit.cli.schedule``) is the command; from Python::

    from toolkit.schedule import Cadence, Scheduler
    exit_code = Scheduler(load_settings(), cadence=Cadence.every(3600), max_runs=1).run()

Names are imported on first use: ``toolkit.config`` reads the ``[schedule]`` settings
from here without importing the job itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolkit._lazy import lazy_exports

if TYPE_CHECKING:
    from toolkit.pipeline.scheduled_job import EXIT_CODES, RunOutcome, run_job
    from toolkit.pipeline.scheduler import Scheduler
    from toolkit.schedule.cadence import Cadence, backoff_delay
    from toolkit.schedule.lock import LeaseKeeper, StoreLock, acquire_lock
    from toolkit.schedule.logs import install_log_handler
    from toolkit.schedule.maintenance import MaintenanceReport, maintain
    from toolkit.schedule.notify import build_payload, post_payload
    from toolkit.schedule.settings import NotifySettings, ScheduleSettings, parse_duration
    from toolkit.schedule.status import read_status, write_status

_EXPORTS = {
    "Cadence": "toolkit.schedule.cadence",
    "EXIT_CODES": "toolkit.pipeline.scheduled_job",
    "LeaseKeeper": "toolkit.schedule.lock",
    "MaintenanceReport": "toolkit.schedule.maintenance",
    "NotifySettings": "toolkit.schedule.settings",
    "RunOutcome": "toolkit.pipeline.scheduled_job",
    "ScheduleSettings": "toolkit.schedule.settings",
    "Scheduler": "toolkit.pipeline.scheduler",
    "StoreLock": "toolkit.schedule.lock",
    "acquire_lock": "toolkit.schedule.lock",
    "backoff_delay": "toolkit.schedule.cadence",
    "build_payload": "toolkit.schedule.notify",
    "install_log_handler": "toolkit.schedule.logs",
    "maintain": "toolkit.schedule.maintenance",
    "parse_duration": "toolkit.schedule.settings",
    "post_payload": "toolkit.schedule.notify",
    "read_status": "toolkit.schedule.status",
    "run_job": "toolkit.pipeline.scheduled_job",
    "write_status": "toolkit.schedule.status",
}

__all__ = [
    "EXIT_CODES",
    "Cadence",
    "LeaseKeeper",
    "MaintenanceReport",
    "NotifySettings",
    "RunOutcome",
    "ScheduleSettings",
    "Scheduler",
    "StoreLock",
    "acquire_lock",
    "backoff_delay",
    "build_payload",
    "install_log_handler",
    "maintain",
    "parse_duration",
    "post_payload",
    "read_status",
    "run_job",
    "write_status",
]


__getattr__ = lazy_exports(__name__, _EXPORTS)
