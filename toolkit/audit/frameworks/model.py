"""A framework's requirements and the checks that are evidence for each, as plain values.

A framework file (one per framework, in this folder or a configured one) maps each of its
requirements to checks, with a sentence per mapping saying why the check is evidence for it::

    soc2 = Framework(id="soc2", title="SOC 2 Trust Services Criteria", version="2017 (rev. 2022)",
                     requirements=(Requirement("CC6.1", "Logical access is restricted",
                                               (Mapping("KEY001", "an admin key ..."),)),))
    soc2.checks_of("CC6.1")   # ("KEY001",)
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Framework", "Mapping", "Requirement"]


@dataclass(frozen=True)
class Mapping:
    """One check as evidence for one requirement, and why it is."""

    check_id: str
    why: str


@dataclass(frozen=True)
class Requirement:
    """A requirement (a criterion, a control, a safeguard) in the framework's own numbering."""

    id: str
    title: str
    checks: tuple[Mapping, ...]


@dataclass(frozen=True)
class Framework:
    """A framework: its requirements, in the order the framework lists them."""

    id: str
    title: str
    version: str
    requirements: tuple[Requirement, ...]

    def checks_of(self, requirement_id: str) -> tuple[str, ...]:
        """The ids of the checks mapped to one requirement (KeyError if it has none)."""
        for requirement in self.requirements:
            if requirement.id == requirement_id:
                return tuple(m.check_id for m in requirement.checks)
        raise KeyError(requirement_id)

    def check_ids(self) -> tuple[str, ...]:
        """The ids of every check mapped to some requirement, once each, in file order."""
        return tuple(dict.fromkeys(m.check_id for r in self.requirements for m in r.checks))

    def requirements_of(self, check_id: str) -> tuple[str, ...]:
        """The ids of the requirements a check is evidence for."""
        return tuple(
            r.id for r in self.requirements if any(m.check_id == check_id for m in r.checks)
        )
