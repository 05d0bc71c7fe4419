"""Audits over history: SQL checks, findings over time, waivers (docs/checks.md)."""
