"""``platform-audit review``: the four formats written and read back, escaping, and the
errors for bad dates (exit 2)."""

from __future__ import annotations

import csv
import io
import json
from html.parser import HTMLParser
from typing import TYPE_CHECKING

import pytest
from review_world import HOSTILE, config_text
from typer.testing import CliRunner

from toolkit.cli import ExitCode, app
from toolkit.review.text_formats import CSV_COLUMNS

if TYPE_CHECKING:
    from pathlib import Path

    from toolkit.snapshot import Store

runner = CliRunner()


@pytest.fixture(autouse=True)
def _no_ambient_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("PLATFORM_AUDIT_STORE", "PLATFORM_AUDIT_CONFIG", "PLATFORM_API_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)


def review(world: tuple[Store, Path], tmp_path: Path, *args: str) -> tuple[int, str, str]:
    store, waivers = world
    config = tmp_path / "platform-audit.toml"
    config.write_text(config_text(), encoding="utf-8")
    outcome = runner.invoke(
        app,
        ["review", "--store", store.url, "--config", str(config), "--waivers", str(waivers),
         *args],
    )  # fmt: skip
    return outcome.exit_code, outcome.stdout, outcome.stderr


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: object) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


PERIOD = ("--from", "2026-01-05", "--to", "2026-01-10")


def test_the_four_formats_are_written_and_read_back(
    world: tuple[Store, Path], tmp_path: Path
) -> None:
    for name in ("review.html", "review.md", "review.json", "review.csv"):
        code, _, err = review(world, tmp_path, *PERIOD, "--out", str(tmp_path / name))
        assert code == ExitCode.OK, err
        assert "2 day(s) of the period have no complete snapshot" in err
    document = json.loads((tmp_path / "review.json").read_text(encoding="utf-8"))
    assert next(iter(document)) == "coverage_gaps"  # said first
    assert document["coverage_gaps"] == ["2026-01-07", "2026-01-08"]
    checks = {c["id"]: c for c in document["checks"]}
    assert checks["RVW001"]["violation_days"] == 13.25 and checks["RVW002"]["opened"] == 1
    assert document["time_to_fix_days"] == {"critical": 2, "high": 5, "medium": 90, "low": 180}
    assert [b["resource_id"] for b in document["breaches"]] == ["svc-e", "svc-a"]
    assert document["breaches"][1]["resource_name"] == HOSTILE  # JSON keeps the value as it is

    rows = list(csv.DictReader(io.StringIO((tmp_path / "review.csv").read_text("utf-8"))))
    assert tuple(rows[0]) == CSV_COLUMNS
    assert [(r["kind"], r["id"]) for r in rows[:2]] == [
        ("coverage_gap", "2026-01-07"), ("coverage_gap", "2026-01-08")]  # fmt: skip
    high = next(r for r in rows if r["id"] == "RVW001")
    assert (high["open_at_start"], high["opened"], high["resolved"], high["open_at_end"],
            high["regressions"], high["violation_days"], high["previous_days"],
            high["time_to_fix_days"], high["breaches"]) == (
        "2", "3", "3", "2", "1", "13.2500", "6.0000", "5", "1")  # fmt: skip

    markdown = (tmp_path / "review.md").read_text(encoding="utf-8")
    assert markdown.index("## Coverage") < markdown.index("## By check")
    assert "2026-01-07 to 2026-01-08" in markdown and "<script>" not in markdown
    assert "\\<script\\>" in markdown

    html = (tmp_path / "review.html").read_text(encoding="utf-8")
    parsed = _Tags()
    parsed.feed(html)
    assert "script" not in parsed.tags and "b" not in parsed.tags
    assert "&lt;script&gt;" in html and "migration &lt;b&gt;planned&lt;/b&gt;" in html
    assert html.index('id="coverage"') < html.index('id="checks"')
    assert HOSTILE in "".join(parsed.text)  # shown as text, whole


def test_html_goes_to_review_html_by_default(world: tuple[Store, Path], tmp_path: Path) -> None:
    code, out, err = review(world, tmp_path, *PERIOD)
    assert code == ExitCode.OK, err
    assert (tmp_path / "review.html").read_text("utf-8").startswith("<!DOCTYPE html>")
    assert out == ""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--from", "2026-01-10", "--to", "2026-01-05"), "--to 2026-01-05 is before --from"),
        (("--from", "2026-13-01", "--to", "2026-01-05"), "--from '2026-13-01' is not a date"),
        (("--from", "last monday", "--to", "2026-01-05"), "write it as YYYY-MM-DD"),
        (("--from", "2026-01-01", "--to", "01/05/2026"), "--to '01/05/2026' is not a date"),
        (("--from", "2025-01-01", "--to", "2025-01-31"), "no snapshot was taken before the end"),
    ],
)
def test_bad_periods_exit_2_and_say_what_to_do(
    world: tuple[Store, Path], tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    code, out, err = review(world, tmp_path, *args, "--format", "json")
    assert code == ExitCode.CONFIG, err
    assert message in " ".join(err.split()) and out == ""


def test_a_bad_time_to_fix_is_refused(world: tuple[Store, Path], tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text("[review]\ntime_to_fix_days = { urgent = 3 }\n", encoding="utf-8")
    store, _ = world
    outcome = runner.invoke(
        app, ["review", "--store", store.url, "--config", str(config), *PERIOD, "--format", "csv"]
    )
    assert outcome.exit_code == ExitCode.CONFIG
    assert "names 'urgent'" in outcome.stderr


def test_framework_adds_requirements_to_every_format(
    world: tuple[Store, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--framework`` goes through ``toolkit.audit.frameworks.load_framework`` (the loader
    of the framework files); here a stand-in returns a framework over the review checks."""
    from toolkit.audit import frameworks
    from toolkit.audit.frameworks import Framework, Mapping, Requirement

    asked: list[str] = []

    def load_framework(name: str, extra_dirs: object = (), **_: object) -> Framework:
        asked.append(name)
        return Framework(
            id="test", title="Test <framework>", version="1",
            requirements=(Requirement("R1", "Limits", (Mapping("RVW001", "memory"),)),
                          Requirement("R2", "Both", (Mapping("RVW001", "x"),
                                                     Mapping("RVW002", "y")))),
        )  # fmt: skip

    monkeypatch.setattr(frameworks, "load_framework", load_framework, raising=False)
    known = lambda folders=(): frozenset()  # noqa: E731 - the stand-in's known check ids
    monkeypatch.setattr(frameworks, "known_check_ids", known, raising=False)
    for name in ("review.csv", "review.html"):
        out = str(tmp_path / name)
        code, _, err = review(world, tmp_path, *PERIOD, "--framework", "test", "--out", out)
        assert code == ExitCode.OK, err
    assert asked == ["test", "test"]
    rows = list(csv.DictReader(io.StringIO((tmp_path / "review.csv").read_text("utf-8"))))
    both = next(r for r in rows if r["kind"] == "requirement" and r["id"] == "R2")
    # RVW001's 13.25 resource-days and RVW002's 6; its breaches: a (RVW001) and e (RVW002).
    assert (both["mapped"], both["violation_days"], both["breaches"]) == (
        "RVW001;RVW002", "19.2500", "2")  # fmt: skip
    assert next(r for r in rows if r["id"] == "RVW001")["mapped"] == "R1;R2"
    html = (tmp_path / "review.html").read_text("utf-8")
    assert 'id="requirements"' in html and "Test &lt;framework&gt;" in html
