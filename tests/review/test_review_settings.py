"""``[review]``: days to fix per severity, the defaults kept for a severity left out."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from toolkit.config import Settings, example_config, load_settings
from toolkit.errors import ConfigError
from toolkit.review import DEFAULT_TIME_TO_FIX

if TYPE_CHECKING:
    from pathlib import Path


def settings_of(tmp_path: Path, text: str) -> Settings:
    path = tmp_path / "platform-audit.toml"
    path.write_text(text, encoding="utf-8")
    return load_settings(path, environ={})


def test_defaults_without_the_section(tmp_path: Path) -> None:
    assert settings_of(tmp_path, "").review.time_to_fix_days == {
        "critical": 7, "high": 30, "medium": 90, "low": 180}  # fmt: skip
    assert DEFAULT_TIME_TO_FIX["critical"] == 7


def test_a_severity_left_out_keeps_its_default(tmp_path: Path) -> None:
    days = settings_of(tmp_path, "[review]\ntime_to_fix_days = { high = 14, info = 365 }\n")
    assert days.review.time_to_fix_days == {
        "critical": 7, "high": 14, "medium": 90, "low": 180, "info": 365}  # fmt: skip


def test_the_example_file_documents_the_defaults(tmp_path: Path) -> None:
    section = example_config().split("[review]\n", 1)[1].split("\n[", 1)[0]
    line = next(x for x in section.splitlines() if "time_to_fix_days" in x)
    settings = settings_of(tmp_path, "[review]\n" + line.lstrip("# ") + "\n")
    assert settings.review.time_to_fix_days == DEFAULT_TIME_TO_FIX


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("time_to_fix_days = { high = 0 }", "at least 1"),
        ("time_to_fix_days = { high = 2.5 }", "whole number of days"),
        ("time_to_fix_days = { urgent = 3 }", "names 'urgent'"),
        ("time_to_fix_days = 7", "must be a table"),
        ("time_to_fix = 7", "time_to_fix"),
    ],
)
def test_bad_values_are_refused(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        settings_of(tmp_path, f"[review]\n{text}\n")
