"""Build a report from a store in one call: HTML, Markdown, JSON or CSV, to text or a file.

>>> from toolkit.report import write_report
>>> from toolkit.snapshot import Store
>>> write_report(Store.open("data/store"), Path("audit.html"))          # doctest: +SKIP
PosixPath('audit.html')
>>> text = render_report(store, format="markdown", compare_to="0193e1")  # doctest: +SKIP
"""

from __future__ import annotations

import errno
import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.report.report_data import ReportData, gather_report
from toolkit.report.report_formats import REPORT_FORMATS

if TYPE_CHECKING:
    from datetime import datetime
    from typing import Unpack

    from toolkit.audit import AuditRequest
    from toolkit.audit.engine import AuditFields
    from toolkit.snapshot import Store

__all__ = ["REPORT_FORMATS", "render_report", "render_report_data", "write_report", "write_text"]


def write_report(
    store: Store,
    out: Path,
    request: AuditRequest | None = None,
    *,
    format: str = "html",
    since: datetime | None = None,
    **changes: Unpack[AuditFields],
) -> Path:
    """Audit the newest snapshot of ``store`` (partial or not) and write the report to ``out``.

    The file is replaced atomically (written beside it, then renamed), so a reader never
    sees half a report; see :func:`write_text` for symlinks, devices and ``-``, and
    :func:`render_report` for the arguments. Returns ``out``.
    """
    text = render_report(store, request, format=format, since=since, **changes)
    write_text(out, text)
    return out


def write_text(out: Path | str, text: str) -> None:
    """Write ``text`` to ``out`` whole or not at all, whatever ``out`` names.

    ``-`` is standard output. A regular file or a new name is replaced atomically (written
    beside it, then renamed), so a reader never sees half a report; missing parent folders
    are created. A symlink is followed: its target is replaced, and the link stays. A
    device, FIFO or socket (``/dev/null``, a named pipe) is opened and written in place, as
    are ``/dev/stdout`` and ``/dev/fd/N`` (appended to: the shell opened, and may have
    truncated, the file they lead to). An :class:`OSError` names ``out``, never the
    temporary file.
    """
    if str(out) == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    out = Path(out)
    if _opened_by_the_shell(out):
        _write_in_place(out, text, mode="a")
        return
    target = out.resolve()  # a symlink's target, or ``out`` itself
    if target.is_dir():
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(out))
    if target.exists() and not target.is_file():
        _write_in_place(target, text, mode="w")
        return
    _replace(target, text, shown=out)


def _opened_by_the_shell(out: Path) -> bool:
    """Whether ``out`` is one of the process's open files (``/dev/stdout``, ``/dev/fd/1``,
    ``/proc/self/fd/1``): a link, through a folder of ``/proc``, to whatever it was opened
    on (a file, a pipe, a terminal), which only writing in place reaches."""
    path = out.absolute()
    for _ in range(40):  # the kernel's own limit on links in a row
        if path.parent.resolve().parts[:2] == ("/", "proc"):
            return True
        if not path.is_symlink():
            return False
        path = path.parent / path.readlink()
    return False


def _write_in_place(target: Path, text: str, *, mode: str) -> None:
    with target.open(mode, encoding="utf-8", newline="") as handle:
        handle.write(text)


def _replace(out: Path, text: str, *, shown: Path) -> None:
    """Replace ``out`` with ``text`` atomically (written beside it, then renamed); an error
    names ``shown`` (what the user asked for), not the temporary file."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError as exc:  # a file where a folder should be: say so
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), exc.filename) from exc
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        Path(tmp).chmod(0o644)  # mkstemp's 0600 would hide a report meant to be shared
        Path(tmp).replace(out)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise type(exc)(exc.errno, exc.strerror or str(exc), str(shown)) from exc
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def render_report(
    store: Store,
    request: AuditRequest | None = None,
    *,
    format: str = "html",
    since: datetime | None = None,
    **changes: Unpack[AuditFields],
) -> str:
    """The report as text in ``format`` (html, markdown, json or csv).

    ``request`` (a :class:`~toolkit.audit.AuditRequest`; keyword arguments change its
    fields: ``compare_to``, ``waivers``, ``options``, ``checks``) is what
    :func:`toolkit.audit.run_audit` is asked; ``since`` limits the trends and the evidence
    appendix to snapshots taken at or after it. Raises
    ``ValueError`` for an unknown format and :class:`~toolkit.errors.AuditError` when the
    store has no complete snapshot or the id is unknown.
    """
    _check_format(format)
    data = gather_report(store, request, since=since, **changes)
    return render_report_data(data, format)


def render_report_data(data: ReportData, format: str) -> str:
    """Gathered report data as text in ``format`` (to render one gathering several ways)."""
    _check_format(format)
    if format == "html":
        from toolkit.report.html_report import render_html

        return render_html(data)
    from toolkit.report.text_reports import render_csv, render_json, render_markdown

    renderers = {"markdown": render_markdown, "json": render_json, "csv": render_csv}
    return renderers[format](data)


def _check_format(format: str) -> None:
    if format not in REPORT_FORMATS:
        raise ValueError(f"format must be one of {', '.join(REPORT_FORMATS)}, not {format!r}")
