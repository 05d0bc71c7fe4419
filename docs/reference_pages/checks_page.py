"""The checks reference: every built-in check, from the header of its SQL file.

The catalogue (:class:`toolkit.audit.Catalogue`) reads ``toolkit/audit/checks/<area>/<ID>.sql``
as an audit does; each check's id, title, severity, area, history scope, risk, remediation
and parameters (with the default DuckDB receives, shared defaults resolved) come from there.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from reference_pages.markdown import code, prose, row
from toolkit.audit import Catalogue
from toolkit.audit.check_file import BUILTIN_CHECKS, HISTORIES

if TYPE_CHECKING:
    from toolkit.audit.check_file import CheckSpec

__all__ = ["check_ids", "checks_page"]

# What each ``-- history:`` value lets the engine read (docs/checks.md says more).
_HISTORY = {
    "snapshot": "the judged snapshot's rows only",
    "previous": "the judged snapshot and the committed one before it",
    "all": "any earlier snapshot (first seen, streaks, as-of joins)",
}


def check_ids() -> list[str]:
    """The id of every built-in check, in the page's order."""
    return [spec.id for spec in _specs()]


def _specs() -> list[CheckSpec]:
    return sorted(Catalogue.load().specs, key=lambda spec: (spec.area, spec.id))


def checks_page() -> str:
    """The Markdown of ``reference/checks.md``."""
    specs = _specs()
    areas = sorted({spec.area for spec in specs})
    if set(HISTORIES) != set(_HISTORY):
        raise ValueError(f"history scopes {HISTORIES}: say what each means in {__file__}")
    lines = [
        "# Checks",
        "",
        f"The {len(specs)} built-in checks in {len(areas)} areas, generated from the headers "
        f"of their SQL files ({code('toolkit/audit/checks/<area>/<ID>.sql')}) when the site "
        "is built. `platform-audit checks` lists the same, with the thresholds your "
        "configuration sets ([`[checks.ID]`](configuration.md#checks)); "
        "[Writing checks](../checks.md) is the contract for adding your own.",
        "",
        "A check's *history* says which snapshots its verdict on one snapshot may read:",
        "",
        *(f"- {code(name)}: {meaning}" for name, meaning in _HISTORY.items()),
        "",
        row("id", "severity", "area", "title", "history"),
        row("---", "---", "---", "---", "---"),
    ]
    for spec in specs:
        lines.append(
            row(
                f"[{spec.id}](#{spec.id.lower()})",
                spec.severity,
                f"[{spec.area}](#{spec.area})",
                prose(spec.title),
                code(spec.history),
            )
        )
    lines.append("")
    for area in areas:
        lines += [f"## {area} {{ #{area} }}", ""]
        for spec in specs:
            if spec.area == area:
                lines += _check(spec)
    return "\n".join(lines) + "\n"


def _check(spec: CheckSpec) -> list[str]:
    source = Path("toolkit/audit/checks") / spec.path.relative_to(BUILTIN_CHECKS)
    lines = [
        f"### {spec.id}: {prose(spec.title)} {{ #{spec.id.lower()} }}",
        "",
        f"**Severity** {spec.severity} · **area** {spec.area} · **history** "
        f"{code(spec.history)} · {code(source.as_posix())}",
        "",
        f"**Risk.** {prose(spec.risk)}",
        "",
        f"**Remediation.** {prose(spec.remediation)}",
        "",
    ]
    values = spec.bind()
    if spec.params:
        lines += ["**Parameters** (`[checks." + spec.id + "]`):", ""]
        for name, param in spec.params.items():
            default = code(json.dumps(values[name]))
            lines.append(f"- {code(name)} = {default}: {prose(param.doc)}")
        lines.append("")
    return lines
