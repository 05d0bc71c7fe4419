"""Fixtures of the scheduler tests; their helpers live in ``job_harness`` (importable by name)."""

from __future__ import annotations

from job_harness import job, s3_endpoint, s3_env

__all__ = ["job", "s3_endpoint", "s3_env"]
