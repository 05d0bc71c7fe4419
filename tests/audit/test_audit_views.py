"""Derived views are created each after the views it reads, whatever their names."""

from __future__ import annotations

from typing import TYPE_CHECKING

import duckdb
import pytest

from toolkit.audit import CheckDefinitionError, install_views
from toolkit.audit.check_run import view_files

if TYPE_CHECKING:
    from pathlib import Path


def test_a_view_is_created_after_the_views_it_reads_even_when_named_before(
    tmp_path: Path,
) -> None:
    (tmp_path / "a_top.sql").write_text(
        "-- reads m_middle, which reads z_base\n"
        "create or replace view a_top as select n + 1 as n from m_middle\n",
        encoding="utf-8",
    )
    (tmp_path / "m_middle.sql").write_text(
        "create or replace view m_middle as select n * 10 as n from z_base\n", encoding="utf-8"
    )
    (tmp_path / "z_base.sql").write_text(
        "-- a_top is not read here: a comment is no dependency\n"
        "create or replace view z_base as select 4 as n\n",
        encoding="utf-8",
    )

    assert [path.stem for path in view_files(tmp_path)] == ["z_base", "m_middle", "a_top"]
    con = duckdb.connect()
    install_views(con, tmp_path)
    assert con.sql("select n from a_top").fetchall() == [(41,)]


def test_views_reading_each_other_in_a_cycle_are_refused_naming_them(tmp_path: Path) -> None:
    (tmp_path / "one.sql").write_text("create view one as select * from two\n", encoding="utf-8")
    (tmp_path / "two.sql").write_text("create view two as select * from one\n", encoding="utf-8")
    (tmp_path / "three.sql").write_text("create view three as select 3\n", encoding="utf-8")

    with pytest.raises(CheckDefinitionError, match=r"cycle: .*one\.sql, .*two\.sql$"):
        view_files(tmp_path)
