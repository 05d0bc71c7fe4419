"""An audit result written out: a terminal table, JSON, CSV, Markdown, SARIF and OCSF.

``platform-audit audit --format`` (or the suffix of ``--out``) picks one of :data:`FORMATS`;
every platform value is plain text in each (``formats`` escapes, ``sarif`` and ``ocsf``
build their documents)::

    from toolkit.audit import run_audit
    from toolkit.report.exports import render, findings_table, to_sarif
    result = run_audit(store)
    print(render(result, "markdown"))                  # or "json", "csv", "sarif", "ocsf"
    console.print(findings_table(result))
    json.dump(to_sarif(result), open("audit.sarif", "w"))
"""

from __future__ import annotations

from toolkit.report.exports.formats import (
    FORMATS,
    SUFFIXES,
    escape_markdown,
    findings_table,
    render,
)
from toolkit.report.exports.ocsf import to_ocsf
from toolkit.report.exports.sarif import to_sarif

__all__ = [
    "FORMATS",
    "SUFFIXES",
    "escape_markdown",
    "findings_table",
    "render",
    "to_ocsf",
    "to_sarif",
]
