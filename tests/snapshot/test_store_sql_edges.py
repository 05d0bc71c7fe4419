"""``platform-audit sql`` at its edges: names DuckDB reads its own way, several statements,
no statement at all."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from typer.testing import CliRunner

from toolkit.cli import ExitCode, app
from toolkit.snapshot import Store

if TYPE_CHECKING:
    from store_harness import WriteSnapshot

runner = CliRunner()


@pytest.fixture
def store_url(tmp_path: Path, write_snapshot: WriteSnapshot) -> str:
    store = Store.open(tmp_path / "s")
    write_snapshot(store)
    return store.url


def sql(store_url: str, query: str, *options: str) -> tuple[int, str, str]:
    outcome = runner.invoke(app, ["sql", "--store", store_url, *options, "--", query])
    return outcome.exit_code, outcome.stdout, outcome.stderr


@pytest.mark.parametrize(
    "query",
    ["describe variables", 'DESCRIBE "variables";', "/* the view */ show variables -- please"],
)
def test_describe_variables_describes_the_store_view(store_url: str, query: str) -> None:
    # DuckDB alone reads `describe variables` as its session variables: name, value, type.
    code, out, err = sql(store_url, query, "--format", "json")
    assert code == ExitCode.OK, err
    columns = {row["column_name"] for row in json.loads(out)}
    assert {"snapshot_id", "name", "service_id"} <= columns, columns


def test_summarize_variables_summarizes_the_store_view(store_url: str) -> None:
    code, out, err = sql(store_url, "summarize variables", "--format", "json")
    assert code == ExitCode.OK, err
    assert "snapshot_id" in {row["column_name"] for row in json.loads(out)}


def test_describe_of_another_view_is_unchanged(store_url: str) -> None:
    code, out, err = sql(store_url, "describe services_latest", "--format", "json")
    assert code == ExitCode.OK, err
    assert "capabilities_add" in {row["column_name"] for row in json.loads(out)}


@pytest.mark.parametrize("query", ["select 1; select 2", "select 1;\nselect 2;"])
def test_several_statements_are_refused(store_url: str, query: str) -> None:
    code, out, err = sql(store_url, query)
    assert code == ExitCode.CONFIG, out
    assert out == ""
    assert "2 statements" in err and "one query per call" in err


@pytest.mark.parametrize("query", ["", "   \n ", "-- nothing\n", "/* nothing */", ";"])
def test_an_empty_query_is_a_usage_error(store_url: str, query: str) -> None:
    code, out, err = sql(store_url, query)
    assert code == ExitCode.CONFIG, out
    assert "no query" in err and "show tables" in err


def test_one_statement_with_a_trailing_semicolon_runs(store_url: str) -> None:
    code, out, err = sql(store_url, "select 41 + 1 as n;", "--format", "json")
    assert code == ExitCode.OK, err
    assert json.loads(out) == [{"n": 42}]


def _delta_log_files(store_url: str) -> list[str]:
    return sorted(p.name for p in (Path(store_url) / "services" / "_delta_log").iterdir())


@pytest.mark.parametrize(
    "query",
    [
        "COPY (select 'x') TO '{log}/00000000000000000001.json' (FORMAT csv, HEADER false)",
        "explain analyze copy (select 'x') to '{log}/00000000000000000001.json'",
        "copy (pivot services on name using count(*)) to '{log}/00000000000000000001.json'",
        "export database '{log}/exported'",
        "attach '{log}/x.db'",
        "load '{log}/x.duckdb_extension'",
        "set temp_directory = '{log}'",
    ],
)
def test_sql_never_writes_into_the_store_by_default(store_url: str, query: str) -> None:
    """A COPY into the Delta log once made every later command exit 7."""
    log = Path(store_url) / "services" / "_delta_log"
    before = _delta_log_files(store_url)
    code, _, err = sql(store_url, query.format(log=log))
    assert code == ExitCode.CONFIG, err
    said = " ".join(err.split())
    assert "`sql` only reads unless --allow-writes is given" in said
    assert _delta_log_files(store_url) == before
    code, out, err = sql(store_url, "select count(*) as n from services_latest", "--format", "json")
    assert code == ExitCode.OK and json.loads(out) == [{"n": 3}], err


def test_reads_run_and_writes_need_the_option(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "beside.csv").write_text("a\n1\n", encoding="utf-8")
    for query in (
        "select * from read_csv('beside.csv')",  # reading a file beside the store stays
        "explain select * from services",
        "EXPLAIN (FORMAT json) select 1",
        "pivot services on name in ('api-0') using count(*)",
        "with n as (select 1 as x) from n",
    ):
        code, _, err = sql(store_url, query)
        assert code == ExitCode.OK, (query, err)
    copy = "copy (select name from services) to 'out.csv'"
    code, _, err = sql(store_url, copy)
    assert code == ExitCode.CONFIG and not (tmp_path / "out.csv").exists()
    code, _, err = sql(store_url, copy, "--allow-writes")
    assert code == ExitCode.OK, err
    assert (tmp_path / "out.csv").read_text(encoding="utf-8").splitlines()[0] == "name"
