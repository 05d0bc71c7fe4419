"""Frameworks as data: a review's requirements (SOC 2, ISO/IEC 27001, CIS) mapped to checks.

One TOML file per framework in this folder (or a folder of ``[audit] frameworks``) maps
each requirement to the checks that are evidence for it, with why::

    soc2 = load_framework("soc2")
    soc2.checks_of("CC6.1")            # ("KEY001", "KEY004", ...)
"""

from __future__ import annotations

from toolkit.audit.frameworks.loader import (
    BUILTIN_FRAMEWORKS,
    FrameworkFile,
    available_frameworks,
    check_coverage,
    known_check_ids,
    load_framework,
    read_framework,
)
from toolkit.audit.frameworks.model import Framework, Mapping, Requirement

__all__ = [
    "BUILTIN_FRAMEWORKS",
    "Framework",
    "FrameworkFile",
    "Mapping",
    "Requirement",
    "available_frameworks",
    "check_coverage",
    "known_check_ids",
    "load_framework",
    "read_framework",
]
