"""The loader refuses a check that breaks the contract, naming the file; users add folders."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from audit_fixtures import fixture_connection
from engine_world import ENGINE_CHECKS, history, write_store

from toolkit.audit import Catalogue, CheckDefinitionError, run_audit
from toolkit.config import load_settings

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

HEADER = {
    "id": "USR001",
    "title": "A user's check",
    "severity": "high",
    "area": "security",
    "risk": "Something goes wrong.",
    "remediation": "Do the right thing.",
}
GOOD_SQL = (
    "select snapshot_id, 'service' as resource_type, id as resource_id, name as resource_name,\n"
    "team_id, project_id, environment_id, id as service_id,\n"
    "case when privileged then 'alarm' else 'ok' end as status,\n"
    "'Service ' || name || ' checked.' as reason, json_object('p', privileged) as evidence\n"
    "from services"
)


def write_check(folder: Path, name: str, sql: str = GOOD_SQL, **header: str) -> Path:
    values = {**HEADER, **header}
    lines = [f"-- {key}: {value}" for key, value in values.items() if value]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.sql"
    path.write_text("\n".join(lines) + "\n" + sql + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("name", "header", "message"),
    [
        ("USR002", {}, "header id 'USR001' differs from the file name"),
        ("USR001", {"severity": "urgent"}, "severity 'urgent' is not one of"),
        ("USR001", {"area": "networking"}, "area 'networking' is not one of"),
        ("USR001", {"risk": ""}, "needs a '-- risk: ...' line"),
        ("USR001", {"owner": "me"}, "unknown header key"),
        ("USR001", {"history": "week"}, "history 'week' is not one of snapshot, previous, all"),
        ("USR001", {"param": "threshold 5"}, "must read 'name = default | one sentence'"),
        ("USR001", {"param": "names = {NAMES} | names"}, "no shared default; use one of {SEC"),
        ("usr001", {"id": "usr001"}, "must look like RES001"),
    ],
)
def test_bad_headers_are_refused_naming_the_file(
    tmp_path: Path, name: str, header: dict[str, str], message: str
) -> None:
    path = write_check(tmp_path / "mine", name, **header)
    with pytest.raises(CheckDefinitionError, match=message) as caught:
        Catalogue.load([tmp_path / "mine"], builtin=False)
    assert str(path) in str(caught.value)


@pytest.mark.parametrize(
    ("column", "renamed"),
    [("as evidence", "as details"), ("as status", "as state")],  # the second breaks the filter
)
def test_wrong_output_columns_are_refused(tmp_path: Path, column: str, renamed: str) -> None:
    path = write_check(tmp_path / "mine", "USR001", GOOD_SQL.replace(column, renamed))
    catalogue = Catalogue.load([tmp_path / "mine"], builtin=False)
    with pytest.raises(CheckDefinitionError, match="must return exactly") as caught:
        run_audit(fixture_connection(history()), checks=catalogue)
    assert str(path) in str(caught.value)


def test_sql_that_fails_is_refused_naming_the_file(tmp_path: Path) -> None:
    path = write_check(tmp_path / "mine", "USR001", "select * from no_such_table")
    catalogue = Catalogue.load([tmp_path / "mine"], builtin=False)
    with pytest.raises(CheckDefinitionError, match="failed to run") as caught:
        run_audit(fixture_connection(history()), checks=catalogue)
    assert str(path) in str(caught.value)


def test_evidence_that_is_not_text_is_refused(tmp_path: Path) -> None:
    sql = GOOD_SQL.replace("json_object('p', privileged)", "struct_pack(p := privileged)")
    write_check(tmp_path / "mine", "USR001", sql)
    catalogue = Catalogue.load([tmp_path / "mine"], builtin=False)
    with pytest.raises(CheckDefinitionError, match="return JSON text"):
        run_audit(fixture_connection(history()), checks=catalogue)


def test_a_duplicate_id_across_folders_is_refused(tmp_path: Path) -> None:
    write_check(tmp_path / "a", "USR001")
    write_check(tmp_path / "b" / "nested", "USR001")
    with pytest.raises(CheckDefinitionError, match="also defined in"):
        Catalogue.load([tmp_path / "a", tmp_path / "b"], builtin=False)


def test_a_check_with_a_built_in_id_says_how_to_replace_the_built_in(tmp_path: Path) -> None:
    write_check(tmp_path / "mine", "RES001", id="RES001")
    with pytest.raises(CheckDefinitionError) as raised:
        Catalogue.load([tmp_path / "mine"])
    message = str(raised.value)
    assert "RES001 is a built-in check" in message
    assert "an id of its own" in message and '`[audit] skip = ["RES001"]`' in message


def test_a_missing_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CheckDefinitionError, match="does not exist"):
        Catalogue.load([tmp_path / "nope"], builtin=False)


def test_users_add_checks_from_a_configured_folder(tmp_path: Path) -> None:
    write_check(tmp_path / "team-checks", "USR001")
    config = tmp_path / "platform-audit.toml"
    config.write_text(
        '[audit]\nchecks = ["team-checks"]\nbuiltin_checks = false\n', encoding="utf-8"
    )
    settings = load_settings(config, environ={})
    assert settings.audit_checks == (tmp_path / "team-checks",)  # relative to the file
    fixture = history()
    fixture["snapshots"][-1]["tables"]["services"][0]["privileged"] = True
    result = run_audit(fixture_connection(fixture), options=settings.audit_options())
    assert [s.id for s in result.checks] == ["USR001"]
    assert result.findings.resource_id.tolist() == ["svc-open"]


def test_builtin_checks_load_with_a_users_folder() -> None:
    catalogue = Catalogue.load([ENGINE_CHECKS])
    ids = {s.id for s in catalogue.specs}
    assert {"TST001", "TST002", "TST003"} < ids
    assert len(ids) > 3


def test_the_history_line_is_optional_and_defaults_to_the_whole_history(tmp_path: Path) -> None:
    write_check(tmp_path / "mine", "USR001")
    write_check(tmp_path / "mine", "USR002", id="USR002", history="snapshot")
    specs = {s.id: s for s in Catalogue.load([tmp_path / "mine"], builtin=False).specs}
    assert specs["USR001"].history == "all"
    assert specs["USR002"].history == "snapshot"


def test_a_check_reads_no_file_outside_the_store(tmp_path: Path) -> None:
    """A check is SQL anyone can drop in a folder: it must not carry a file's text (here a
    stand-in for /proc/self/environ, which holds the API key) into a finding."""
    secret = tmp_path / "environ"
    secret.write_text("PLATFORM_API_KEY=pk_live_not_for_reports", encoding="utf-8")
    quoted = str(secret).replace("'", "''")
    sql = GOOD_SQL.replace(
        "'Service ' || name || ' checked.'",
        f"(select content from read_text('{quoted}'))",  # noqa: S608 - the test's own file
    )
    path = write_check(tmp_path / "mine", "USR001", sql)
    store = write_store(tmp_path / "store", history())
    catalogue = Catalogue.load([tmp_path / "mine"], builtin=False)
    with pytest.raises(CheckDefinitionError, match="outside the store") as caught:
        run_audit(store, checks=catalogue)
    assert str(path) in str(caught.value)
    assert "pk_live" not in str(caught.value)
    assert run_audit(store, checks=Catalogue.load()).findings.size  # the store itself reads


@pytest.mark.parametrize("latest_only", [False, True])
def test_a_check_writes_no_file_and_runs_one_query(tmp_path: Path, latest_only: bool) -> None:
    """Only the query runs, also when the engine explains a failure: a second statement in
    the file (or a COPY) never does."""
    written = tmp_path / "written.csv"
    sql = f"{GOOD_SQL};\ncopy (select 1 as x) to '{written}'"
    path = write_check(tmp_path / "mine", "USR001", sql)
    store = write_store(tmp_path / "store", history())
    catalogue = Catalogue.load([tmp_path / "mine"], builtin=False)
    with pytest.raises(CheckDefinitionError) as caught:
        run_audit(store, checks=catalogue, latest_only=latest_only)
    assert str(path) in str(caught.value)
    assert not written.exists()
    write_check(tmp_path / "mine", "USR001", f"copy (select 1 as x) to '{written}'")
    with pytest.raises(CheckDefinitionError) as caught:
        run_audit(store, checks=Catalogue.load([tmp_path / "mine"], builtin=False))
    assert not written.exists()


def write_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "platform-audit.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_hidden_files_beside_checks_are_skipped(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    write_check(folder, "USR001")
    (folder / "._USR001.sql").write_bytes(b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X\xff")
    (folder / ".#USR001.sql").symlink_to(tmp_path / "user@host.1234")  # an Emacs lock: dangling
    write_check(folder / ".git", "USR002", id="USR002")
    specs = Catalogue.load([folder], builtin=False).specs
    assert [s.id for s in specs] == ["USR001"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"-- id: USR001\n\xff\xfe select", "not UTF-8 text, byte 14 cannot be read"),
    ],
)
def test_a_check_that_is_not_text_is_refused_naming_it(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "mine" / "USR001.sql"
    path.parent.mkdir()
    path.write_bytes(content)  # once a UnicodeDecodeError traceback
    with pytest.raises(CheckDefinitionError, match=message) as caught:
        Catalogue.load([path.parent], builtin=False)
    assert str(path) in str(caught.value)


def test_a_byte_order_mark_before_the_header_is_read_past(tmp_path: Path) -> None:
    path = write_check(tmp_path / "mine", "USR001")
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert [s.id for s in Catalogue.load([path.parent], builtin=False).specs] == ["USR001"]


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda d: d.mkdir(), "which holds no check file: a check is one <ID>.sql file"),
        (lambda d: (d.mkdir(), (d / "USR001.SQL").write_text("x"), (d / "x.sql.bak").touch()),
         "which holds no check file (USR001.SQL, x.sql.bak do not end in .sql)"),
        (lambda d: d.write_text("x"), "which is a file; name the folder that holds the check"),
        (lambda d: None, "which does not exist; fix the path (relative to the config file)"),
    ],
)  # fmt: skip
def test_a_checks_folder_that_is_empty_missing_or_a_file_is_refused_naming_the_setting(
    tmp_path: Path, make: Callable[[Path], object], said: str
) -> None:
    make(tmp_path / "mine")
    config = write_config(tmp_path, '[audit]\nchecks = ["mine"]\n')
    with pytest.raises(CheckDefinitionError) as caught:
        Catalogue.from_options(load_settings(config, environ={}).audit_options())
    prefix = f"{config}: [audit] checks names {tmp_path / 'mine'}, "
    assert str(caught.value).startswith(prefix + said)


def test_a_folder_listed_twice_is_read_once(tmp_path: Path) -> None:
    write_check(tmp_path / "mine", "USR001")
    config = write_config(
        tmp_path, '[audit]\nchecks = ["mine", "./mine/"]\nbuiltin_checks = false\n'
    )
    catalogue = Catalogue.from_options(load_settings(config, environ={}).audit_options())
    assert [s.id for s in catalogue.specs] == ["USR001"]


def test_a_folder_inside_another_listed_is_read_once(tmp_path: Path) -> None:
    write_check(tmp_path / "checks" / "sub", "USR001")
    write_check(tmp_path / "checks", "USR002", id="USR002")
    config = write_config(
        tmp_path, '[audit]\nchecks = ["checks", "checks/sub"]\nbuiltin_checks = false\n'
    )
    catalogue = Catalogue.from_options(load_settings(config, environ={}).audit_options())
    assert [s.id for s in catalogue.specs] == ["USR001", "USR002"]


PARAM_SQL = GOOD_SQL.replace("when privileged", "when name like $pattern")


@pytest.mark.parametrize(
    ("params", "sql", "message"),
    [
        (["pattern = 'docs%' | a", "pattern = 'web%' | b"], PARAM_SQL,
         "param 'pattern' is declared twice; keep one '-- param:' line"),
        (["pattern = 'docs%' | a", "unused = 5 | b"], PARAM_SQL,
         r"declares param 'unused', but the SQL never reads \$unused; use it or remove"),
        ([], PARAM_SQL, r"the SQL reads \$pattern, which no '-- param:' line declares; add "
         r"'-- param: pattern = <default> \| <one sentence>'"),
    ],
)  # fmt: skip
def test_params_declared_twice_unused_or_undeclared_are_refused(
    tmp_path: Path, params: list[str], sql: str, message: str
) -> None:
    folder = tmp_path / "mine"
    path = write_check(folder, "USR001", sql)
    header, body = path.read_text().split("\nselect", 1)
    lines = "".join(f"\n-- param: {p}" for p in params)
    path.write_text(f"{header}{lines}\nselect{body}", encoding="utf-8")
    with pytest.raises(CheckDefinitionError, match=message) as caught:
        Catalogue.load([folder], builtin=False)
    assert str(path) in str(caught.value)


def test_dollars_in_text_and_comments_are_not_params(tmp_path: Path) -> None:
    sql = GOOD_SQL.replace("' checked.'", "' costs $5 or $$ $x$ ok $x$; -- $nope'") + "\n-- $y\n"
    path = write_check(tmp_path / "mine", "USR001", sql)
    assert Catalogue.load([path.parent], builtin=False).specs[0].params == {}


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("then 'alarm' else 'ok'", "then 'ALARM' else 'fine'", "status 'ALARM', 'fine', where"),
        ("id as resource_id", "null::varchar as resource_id", "no resource_id"),
        ("select snapshot_id,", "select 'bogus' as snapshot_id,", "snapshot_id 'bogus'"),
    ],
)
def test_rows_the_lifecycle_would_drop_are_refused(
    tmp_path: Path, old: str, new: str, message: str
) -> None:
    """A user check's rows that name no finding would vanish, and the gate pass, silently."""
    assert old in GOOD_SQL
    path = write_check(tmp_path / "mine", "USR001", GOOD_SQL.replace(old, new))
    catalogue = Catalogue.load([tmp_path / "mine"], builtin=False)
    fixture = history()
    fixture["snapshots"][-1]["tables"]["services"][0]["privileged"] = True  # an alarm too
    with pytest.raises(CheckDefinitionError, match=message) as caught:
        run_audit(fixture_connection(fixture), checks=catalogue)
    assert str(path) in str(caught.value)


HEADER_LINES = [f"-- {key}: {value}" for key, value in HEADER.items()]
PARAM_LINE = "-- param: pattern = 'docs%' | names like this are flagged"


@pytest.mark.parametrize(
    ("lines", "said"),
    [
        ([*HEADER_LINES, "", PARAM_LINE],
         ["the header ended at line 7 (a blank line), so line 8 (\"-- param: pattern = 'docs%' "
          "| names like this are flagged\") is not read as a header line; the header is one "
          "block of '-- key: value' lines at the top of the file: remove line 7"]),
        ([*HEADER_LINES[:3], "--", *HEADER_LINES[3:], PARAM_LINE],
         ["the header ended at line 4 ('--'), so line 5 ('-- area: security') is not read",
          ": remove line 4"]),
        ([*HEADER_LINES, "-- Note: a remark", PARAM_LINE],
         ["the header ended at line 7 ('-- Note: a remark'), so line 8 (",
          ": move line 8 above line 7 (free comments go below the header)"]),
        ([*HEADER_LINES, PARAM_LINE, "-- a free comment", "-- history: snapshot"],
         ["the header ended at line 8 ('-- a free comment'), so line 9 ('-- history: snapshot') "
          "is not read as a header line"]),
        ([HEADER_LINES[0], "-- Severity: medium", *HEADER_LINES[1:], PARAM_LINE],
         ["line 2 ('-- Severity: medium') spells the header key 'severity' as 'Severity'; "
          "header keys are lower case: write '-- severity: ...'"]),
        ([*HEADER_LINES, PARAM_LINE, "", "-- PARAM: other = 1 | b"],
         ["line 9 ('-- PARAM: other = 1 | b') spells the header key 'param' as 'PARAM'"]),
    ],
)  # fmt: skip
def test_a_header_line_after_the_header_ended_is_refused_naming_the_break(
    tmp_path: Path, lines: list[str], said: list[str]
) -> None:
    """Once "the SQL reads $pattern, which no '-- param:' line declares" or "needs a '--
    area:' line", though the line is in the file; a history line there was ignored."""
    path = tmp_path / "mine" / "USR001.sql"
    path.parent.mkdir()
    path.write_text("\n".join([*lines, PARAM_SQL]) + "\n", encoding="utf-8")
    with pytest.raises(CheckDefinitionError) as caught:
        Catalogue.load([path.parent], builtin=False)
    message = str(caught.value)
    assert message.startswith(f"{path}: ")
    for text in said:
        assert text in message


def test_free_comments_after_the_header_and_in_the_sql_still_load(tmp_path: Path) -> None:
    """As the built-in checks write them (KEY006): comments below the header, before the SQL,
    even one that reads like a key, and in the SQL a comment that names a header key."""
    comments = ["-- Note: the pattern is a LIKE pattern", "--", "-- see: docs/checks.md", ""]
    sql = PARAM_SQL.replace("from services", "from services\n-- param: not a header line here")
    path = tmp_path / "mine" / "USR001.sql"
    path.parent.mkdir()
    path.write_text("\n".join([*HEADER_LINES, PARAM_LINE, *comments, sql]), encoding="utf-8")
    (spec,) = Catalogue.load([path.parent], builtin=False).specs
    assert list(spec.params) == ["pattern"] and spec.history == "all"
    assert spec.sql.startswith("-- Note: the pattern")
