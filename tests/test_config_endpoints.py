"""`[endpoints]` and `[fields.KIND]`: a server that differs is met by configuration.

An endpoint is named by its catalogue name, `group.verb`; TOML reads a bare dotted key as a
nested table, so `replicas.list = ...`, `"replicas.list" = ...`, `replicas_list = ...` and
`list_replicas = ...` all name the same endpoint. The documentation's (the configuration
sample of docs/getting-started.md, the real platform's block of docs/troubleshooting.md) and
the example file's blocks load as written.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from toolkit.config import Settings, example_config, load_settings
from toolkit.errors import ConfigError

GUIDES = [
    Path(__file__).resolve().parents[1] / "docs" / n
    for n in ("getting-started.md", "troubleshooting.md")
]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "platform-audit.toml"
    path.write_text(text, encoding="utf-8")
    return path


def endpoints(tmp_path: Path, text: str) -> dict[str, str]:
    return dict(load_settings(write(tmp_path, text), environ={}).endpoints)


@pytest.mark.parametrize(
    "line",
    [
        '"teams.list" = "/v2/teams"',
        'teams.list = "/v2/teams"',
        'teams_list = "/v2/teams"',
        'list_teams = "/v2/teams"',
    ],
)
def test_every_documented_spelling_names_the_catalogue_endpoint(tmp_path: Path, line: str) -> None:
    assert endpoints(tmp_path, f"[endpoints]\n{line}\n") == {"teams.list": "/v2/teams"}


def test_the_configured_paths_reach_the_client(tmp_path: Path) -> None:
    text = '[endpoints]\nlist_service_groups = "/groups/list"\nreplicas.health = "/i/h"\n'
    settings = load_settings(write(tmp_path, text), environ={"PLATFORM_API_KEY": "plat_x"})
    config = Settings(**{**vars(settings), "base_url": "http://h"}).client_config(
        environ={"PLATFORM_API_KEY": "plat_x"}
    )
    assert dict(config.endpoints) == {
        "service_groups.list": "/groups/list",
        "replicas.health": "/i/h",
    }


def test_an_unknown_name_is_refused_with_a_suggestion_and_every_valid_name(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        endpoints(tmp_path, '[endpoints]\nlist_replica = "/x"\n')
    message = str(caught.value)
    assert "unknown endpoint name 'list_replica'" in message
    assert "did you mean 'replicas.list'?" in message
    for name in ("replicas.list", "volumes.list", "webhooks.list", "teams.list"):
        assert name in message
    assert str(tmp_path) in message and "[endpoints]" in message


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('"teams.list" = "/a"\nlist_teams = "/b"', "teams.list is overridden twice"),
        ('"teams.list" = "teams/list"', 'must be a path such as "/teams/list"'),
        ('"teams.list" = 3', 'must be a path such as "/teams/list"'),
        ('teams.lists = "/x"', "unknown endpoint name 'teams.lists'"),
    ],
)
def test_bad_overrides_say_what_to_write(tmp_path: Path, text: str, words: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(words)):
        endpoints(tmp_path, f"[endpoints]\n{text}\n")


def test_the_documented_and_example_blocks_load_as_written(tmp_path: Path) -> None:
    text = "\n".join(page.read_text("utf-8") for page in GUIDES)
    found = re.findall(r"```toml\n(.*?)```", text, flags=re.DOTALL)
    blocks = [b for b in found if "[endpoints]" in b]  # the init sample and the real one
    assert len(blocks) == 2
    for block in blocks:
        load_settings(write(tmp_path, block), environ={})
    real = next(b for b in blocks if b.startswith("[endpoints]"))
    assert endpoints(tmp_path, real)["replicas.list"] == "/instances/list"
    example = example_config()
    section = example.split("[endpoints]\n", 1)[1].split("\n[collect]", 1)[0]
    uncommented = re.findall(r'^# ("[a-z_.]+" = "/.+")$', section, flags=re.MULTILINE)
    assert len(uncommented) == 5, section
    assert endpoints(tmp_path, "[endpoints]\n" + "\n".join(uncommented) + "\n") == endpoints(
        tmp_path, real
    )


def test_field_renames_are_read_per_kind(tmp_path: Path) -> None:
    text = '[fields.services]\nsvc_name = "name"\n[fields.replica_health]\npods = "replicas"\n'
    settings = load_settings(write(tmp_path, text), environ={})
    assert settings.fields == {
        "services": {"svc_name": "name"},
        "replica_health": {"pods": "replicas"},
    }
    assert load_settings(write(tmp_path, ""), environ={}).fields == {}


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('[fields.service]\na = "name"', "unknown kind of record 'service'; known kinds:"),
        ('[fields]\nservices = "name"', "[fields.services] must be a table of renames"),
        ("[fields.services]\na = 1", "[fields.services] a must name the specification's field"),
        ('fields = "x"', "fields is set to a value, but it is a section"),
    ],
)
def test_bad_field_renames_say_what_to_write(tmp_path: Path, text: str, words: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(words)) as caught:
        load_settings(write(tmp_path, text + "\n"), environ={})
    assert str(tmp_path) in str(caught.value)
