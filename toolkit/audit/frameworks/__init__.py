"""Frameworks as data: a review's requirements (SOC 2, ISO/IEC 27001, CIS) mapped to checks."""

from __future__ import annotations

from toolkit.audit.frameworks.model import Framework, Mapping, Requirement

__all__ = ["Framework", "Mapping", "Requirement"]
