"""Fixtures of the store tests; their helpers live in ``store_harness`` (importable by name)."""

from __future__ import annotations

from store_harness import store, write_snapshot

__all__ = ["store", "write_snapshot"]
