"""What the commands and the scheduled job share: take a snapshot, judge it, write reports.

:mod:`~toolkit.pipeline.snapshot_job` crawls the platform and commits a snapshot;
:mod:`~toolkit.pipeline.scheduled_job` runs one scheduled run (snapshot, audit, notify,
reports) and :mod:`~toolkit.pipeline.scheduler` repeats it on a cadence;
:mod:`~toolkit.pipeline.demo` runs the whole tour against the simulator. Example::

    from toolkit.config import load_settings
    from toolkit.pipeline.snapshot_job import take_snapshot
    run = take_snapshot(load_settings())
"""

from __future__ import annotations
