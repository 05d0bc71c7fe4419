"""Derived views are created each after the views it reads, whatever their names, and a
connection for some checks gets only the views they read."""

from __future__ import annotations

from typing import TYPE_CHECKING

import duckdb
import pytest
from audit_fixtures import fixture_connection
from engine_world import history

from toolkit.audit import Catalogue, CheckDefinitionError, install_views
from toolkit.audit.check_run import (
    ensure_views,
    run_check,
    schema_views,
    view_files,
    views_read,
    views_reading,
)

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


def test_a_view_follows_the_file_defining_a_macro_it_calls(tmp_path: Path) -> None:
    (tmp_path / "a_view.sql").write_text(
        "create view a_view as select double(4) as n\n", encoding="utf-8"
    )
    (tmp_path / "z_macros.sql").write_text(
        "create or replace macro double(x) as x * 2;\ncreate or replace macro triple(x) as x * 3\n",
        encoding="utf-8",
    )

    assert [path.stem for path in view_files(tmp_path)] == ["z_macros", "a_view"]
    assert [path.stem for path in views_reading(tmp_path, {"triple"})] == ["z_macros", "a_view"]
    con = duckdb.connect()
    install_views(con, tmp_path)
    assert con.sql("select n from a_view").fetchall() == [(8,)]


def test_views_reading_each_other_in_a_cycle_are_refused_naming_them(tmp_path: Path) -> None:
    (tmp_path / "one.sql").write_text("create view one as select * from two\n", encoding="utf-8")
    (tmp_path / "two.sql").write_text("create view two as select * from one\n", encoding="utf-8")
    (tmp_path / "three.sql").write_text("create view three as select 3\n", encoding="utf-8")

    with pytest.raises(CheckDefinitionError, match=r"cycle: .*one\.sql, .*two\.sql$"):
        view_files(tmp_path)


def _chained(folder: Path) -> Path:
    """Views and macros reading tables t and u and each other, one file each."""
    files = {
        "a": "create view a as select x from t",
        "b": "create view b as select x from a  -- not c",
        "c": "create view c as select y from u",
        "m": "create macro m() as table select x from t",
        "d": "create view d as select x from m()",
        "e": "create macro e(v) as v + 1; create macro other_name(v) as v - 1",
        "f": "create view f as select other_name(x) as x from b",
    }
    for name, sql in files.items():
        (folder / f"{name}.sql").write_text(sql + "\n", encoding="utf-8")
    return folder


def test_the_views_reading_some_names_follow_them_through_views_and_macros(
    tmp_path: Path,
) -> None:
    folder = _chained(tmp_path)
    assert [p.stem for p in views_reading(folder, {"t"})] == ["a", "m", "b", "d", "f"]
    assert [p.stem for p in views_reading(folder, {"c"})] == ["c"]
    assert [p.stem for p in views_reading(folder, {"other_name"})] == ["e", "f"]
    assert views_reading(folder, {"nothing"}) == []


def test_the_views_some_sql_reads_are_followed_through_views_and_macros(tmp_path: Path) -> None:
    folder = _chained(tmp_path)
    assert [p.stem for p in views_read(folder, ["select * from f"])] == ["a", "e", "b", "f"]
    assert [p.stem for p in views_read(folder, ["select 1 from c", "from d"])] == ["c", "m", "d"]
    assert views_read(folder, ["select x from t -- from a"]) == []


def test_a_view_file_edited_since_the_last_reading_is_read_again(tmp_path: Path) -> None:
    folder = _chained(tmp_path)
    assert [p.stem for p in views_reading(folder, {"u"})] == ["c"]
    # the same size, written at once (the same modification time on a coarse clock)
    (folder / "c.sql").write_text("create view c as select y from t\n", encoding="utf-8")
    assert [p.stem for p in views_reading(folder, {"u"})] == []
    assert [p.stem for p in views_reading(folder, {"t"})] == ["a", "c", "m", "b", "d", "f"]
    (folder / "g.sql").write_text("create view g as select * from c\n", encoding="utf-8")
    assert "g" in [p.stem for p in views_reading(folder, {"t"})]


def _derived_in(con: duckdb.DuckDBPyConnection, schema: str) -> set[str]:
    """The derived views and macros (named for their files) in ``schema``."""
    return schema_views(con, schema) & {path.stem for path in view_files()}


def test_a_connection_for_some_checks_has_only_the_views_they_read() -> None:
    checks = {spec.id: spec for spec in Catalogue.load().specs}
    con = fixture_connection(history(), [checks["RES006"]])
    assert _derived_in(con, "main") == {
        "error_covers",
        "oom_kills",
        "replica_events_uncollected",
        "memory_at_oom",
        "judging",
    }
    assert run_check(con, checks["RES006"]).num_rows > 0  # it has what it reads
    ensure_views(con, checks=[checks["REP004"]])
    assert _derived_in(con, "main") == {
        "error_covers",
        "oom_kills",
        "replica_events_uncollected",
        "memory_at_oom",
        "judging",
        "all_resources",
    }


def test_ensure_views_runs_no_file_whose_views_and_macros_the_connection_has(
    tmp_path: Path,
) -> None:
    (tmp_path / "helpers.sql").write_text(
        "create or replace macro plus_one(x) as x + 1;\n"
        "create or replace macro plus_two(x) as x + 2\n",
        encoding="utf-8",
    )
    (tmp_path / "v.sql").write_text("create view v as select plus_one(1) as n\n", encoding="utf-8")
    con = duckdb.connect()
    ensure_views(con, tmp_path)
    con.execute("create or replace macro plus_one(x) as x + 10")  # as a notebook might
    ensure_views(con, tmp_path)
    assert con.sql("select plus_one(1), n from v").fetchall() == [(11, 11)]
