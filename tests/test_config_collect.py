"""``[collect]``: the crawl's options from the settings file, refused with the file and key."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest

from toolkit.collect import CrawlOptions
from toolkit.config import example_config, load_settings
from toolkit.config.collect_section import COLLECT_KEYS
from toolkit.errors import ConfigError

if TYPE_CHECKING:
    from pathlib import Path


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "platform-audit.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_section_sets_the_crawl_options(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        '[collect]\ndeployment_depth = 0\nreplica_level = "service"\n'
        'volume_level = "team"\nverify_scope = true\n',
    )
    assert load_settings(path, environ={}).collect == CrawlOptions(
        deployment_depth=0, replica_level="service", volume_level="team", verify_scope=True
    )
    one_key = load_settings(write(tmp_path, "[collect]\nverify_scope = true\n"), environ={})
    assert one_key.collect == CrawlOptions(verify_scope=True)  # the others keep their defaults


def test_without_the_section_the_crawl_keeps_its_defaults(tmp_path: Path) -> None:
    assert load_settings(write(tmp_path, "[client]\nconcurrency = 4\n"), environ={}).collect is None
    assert load_settings(write(tmp_path, "[collect]\n"), environ={}).collect is None


def test_the_example_documents_the_defaults(tmp_path: Path) -> None:
    """Each [collect] key of the example, uncommented, is the crawl's default."""
    section = example_config().split("[collect]\n", 1)[1].split("\n[", 1)[0]
    settings = re.findall(r"^# ([a-z_]+ = .+)$", section, flags=re.MULTILINE)
    assert len(settings) == len(COLLECT_KEYS), section  # every key, once
    path = write(tmp_path, "[collect]\n" + "\n".join(settings) + "\n")
    assert load_settings(path, environ={}).collect == CrawlOptions()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('verify_scope = "yes"', "[collect] verify_scope must be true or false"),
        ("verify_scope = 1", "[collect] verify_scope must be true or false"),
        ("deployment_depth = -1", "[collect] deployment_depth must be 0 or more"),
        ("deployment_depth = 2.5", "[collect] deployment_depth must be a whole number"),
        ("deployment_depth = true", "[collect] deployment_depth must be a whole number"),
        (
            'replica_level = "region"',
            "[collect] replica_level must be one of team, project, environment, service",
        ),
        (
            'volume_level = "service"',
            "[collect] volume_level must be one of team, project, environment",
        ),
        ("replica_level = 3", "[collect] replica_level must be a string"),
        ("verify_scopes = true", "[collect]: unknown setting 'verify_scopes'; did you mean"),
    ],
)
def test_bad_values_are_refused_naming_the_file_and_key(
    tmp_path: Path, text: str, message: str
) -> None:
    path = write(tmp_path, f"[collect]\n{text}\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(path, environ={})
    assert message in str(caught.value) and str(path) in str(caught.value)


def test_the_section_written_as_a_value_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "collect = true\n")
    with pytest.raises(ConfigError, match=r"write \[collect\] on a line of its own"):
        load_settings(path, environ={})
