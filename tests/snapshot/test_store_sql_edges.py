"""``platform-audit sql`` at its edges: names DuckDB reads its own way, several statements,
no statement at all."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from typer.testing import CliRunner

from toolkit.cli import ExitCode, app
from toolkit.snapshot import Store

if TYPE_CHECKING:
    from pathlib import Path

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
