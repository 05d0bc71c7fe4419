"""``write_text``, behind ``audit --out`` and ``report --out``: a file is replaced whole,
while a symlink, a device, a named pipe, ``/dev/stdout`` and ``-`` are written through."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from toolkit.report.report_writer import write_text


def test_a_new_or_regular_file_is_replaced_whole(tmp_path: Path) -> None:
    out = tmp_path / "new" / "report.md"
    write_text(out, "one")
    write_text(out, "two")
    assert out.read_text(encoding="utf-8") == "two"
    assert sorted(p.name for p in out.parent.iterdir()) == ["report.md"]  # no temp file left


@pytest.mark.parametrize("target", ["target.json", "missing/target.json"])
def test_a_symlink_stays_and_its_target_gets_the_text(tmp_path: Path, target: str) -> None:
    link = tmp_path / "link.json"
    link.symlink_to(target)
    write_text(link, "report")
    assert link.is_symlink()
    assert (tmp_path / target).read_text(encoding="utf-8") == "report"


def test_a_named_pipe_is_written_in_place(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got: list[str] = []
    reader = threading.Thread(
        target=lambda: got.append(fifo.read_text(encoding="utf-8")), daemon=True
    )
    reader.start()
    write_text(fifo, "through the pipe")
    reader.join(timeout=10)
    assert got == ["through the pipe"]
    assert fifo.is_fifo()


def test_an_open_file_of_the_process_is_written_in_place(tmp_path: Path) -> None:
    """As ``--out /dev/stdout``: a link to ``/proc/self/fd/N`` reaches what N was opened on,
    a pipe or a file the shell opened (``>>`` appends, so the text is appended)."""
    read_end, write_end = os.pipe()
    log = tmp_path / "log.txt"
    log.write_text("before\n", encoding="utf-8")
    with log.open("a", encoding="utf-8") as appended:
        for fd, name in ((write_end, "pipe"), (appended.fileno(), "file")):
            link = tmp_path / f"stdout-{name}"
            link.symlink_to(f"/proc/self/fd/{fd}")
            write_text(link, f"to the {name}\n")
            assert link.is_symlink()
    os.close(write_end)
    with os.fdopen(read_end, encoding="utf-8") as pipe:
        assert pipe.read() == "to the pipe\n"
    assert log.read_text(encoding="utf-8") == "before\nto the file\n"


def test_a_dash_is_standard_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    write_text(Path("-"), "on stdout\n")
    assert capsys.readouterr().out == "on stdout\n"
    assert not (tmp_path / "-").exists()


def test_an_error_names_the_file_asked_for_never_the_temporary_one(tmp_path: Path) -> None:
    folder = tmp_path / "dir.json"
    folder.mkdir()
    with pytest.raises(IsADirectoryError) as raised:
        write_text(folder, "x")
    assert raised.value.filename == str(folder) and ".dir.json." not in str(raised.value)
    assert list(tmp_path.iterdir()) == [folder]
