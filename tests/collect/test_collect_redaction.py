"""The HMAC key (from the environment or a private key file, never next to the store), URL
redaction, and webhook findings that never echo what an older store may still hold."""

from __future__ import annotations

import json
import re
import stat
from typing import TYPE_CHECKING

import pyarrow as pa
import pytest
from audit_fixtures import fixture_connection

from toolkit.audit.check_file import BUILTIN_CHECKS, discover_checks
from toolkit.audit.check_run import run_check
from toolkit.collect.conform import Conformer, Owner, extra_json
from toolkit.collect.deployments import map_deployment_page
from toolkit.collect.webhooks import map_webhooks
from toolkit.errors import ConfigError
from toolkit.snapshot import TABLES
from toolkit.snapshot.redaction import Fingerprinter, load_fingerprinter, redact_url, scrub_text

if TYPE_CHECKING:
    from pathlib import Path

SLACK = "Xy12ab34cd56ef78gh90ij12"
DISCORD = "Abc-def_GHIjkl1234567890mnopQRSTuvwx-yz0123456789abcdefghijklmnopq"
UUID = "0f8fad5b-d9cb-469f-a165-70867728950e"
HEX32 = "8f2f9c0d1e2a4b5c6d7e8f9a0b1c2d3e"


def test_a_key_file_is_created_private_and_reused(tmp_path: Path) -> None:
    path = tmp_path / "conf" / "hmac.key"
    first = load_fingerprinter(path, environ={})
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert load_fingerprinter(path, environ={}).of("x") == first.of("x")
    assert repr(first) == "Fingerprinter(key=********)"


def test_a_readable_key_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "hmac.key"
    load_fingerprinter(path, environ={})
    path.chmod(0o644)
    with pytest.raises(ConfigError, match="chmod 600"):
        load_fingerprinter(path, environ={})


def test_the_environment_wins(tmp_path: Path) -> None:
    env = {"PLATFORM_AUDIT_HMAC_KEY": "an-environment-key-of-some-length"}
    fingerprints = load_fingerprinter(tmp_path / "never.key", environ=env)
    assert fingerprints.of("v") == Fingerprinter(env["PLATFORM_AUDIT_HMAC_KEY"].encode()).of("v")
    assert not (tmp_path / "never.key").exists()


def test_a_key_inside_the_store_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="inside the store"):
        load_fingerprinter(
            tmp_path / "store" / "hmac.key", environ={}, store_root=tmp_path / "store"
        )


def test_a_key_id_names_the_key_and_nothing_else(tmp_path: Path) -> None:
    """Snapshots record it to tell whether their fingerprints compare (VAR008)."""
    path = tmp_path / "hmac.key"
    first = load_fingerprinter(path, environ={})
    assert re.fullmatch(r"[0-9a-f]{16}", first.key_id)
    assert load_fingerprinter(path, environ={}).key_id == first.key_id  # the same key again
    path.unlink()  # lost: a new key is made on first use
    assert load_fingerprinter(path, environ={}).key_id != first.key_id
    key = path.read_text(encoding="ascii").strip()
    assert first.key_id not in key and key[:16] != load_fingerprinter(path, environ={}).key_id


def test_a_short_key_is_refused() -> None:
    with pytest.raises(ConfigError, match="too short"):
        Fingerprinter(b"short")


@pytest.mark.parametrize(
    ("url", "safe", "credentials"),
    [
        ("https://deploy:pw@hooks.example.net/notify", "https://hooks.example.net/notify", True),
        (
            "https://h.example/in?token=abc&channel=x",
            "https://h.example/in?token=***&channel=***",
            True,
        ),
        ("http://10.0.12.7:8080/hook", "http://10.0.12.7:8080/hook", False),
        ("https://h.example/p?k8sJ2x9#frag", "https://h.example/p?***=***", False),
        # what cannot be parsed keeps nothing, and is not called clean: unknown (None), or
        # true where an "@" shows userinfo before the host
        ("not a url at all", None, None),
        ("https://deploy:s3cr3t@hooks.example.com:99999/x", None, True),
        ("https://deploy:pw@[fd00::1/notify", None, True),
        ("https://hooks.example.com:99999/x?token=abc", None, None),
        ("https://[fd00::1/notify?a=b@c", None, None),
        # tokens in the path: Slack, Discord, Teams / Office 365 connector, a generic /hooks/<uuid>
        (
            f"https://hooks.slack.com/services/T0123ABCD/B0456EFGH/{SLACK}",
            "https://hooks.slack.com/services/T0123ABCD/B0456EFGH/***",
            True,
        ),
        (
            f"https://discord.com/api/webhooks/123456789012345678/{DISCORD}",
            "https://discord.com/api/webhooks/***/***",
            True,
        ),
        (
            f"https://contoso.webhook.office.com/webhookb2/{UUID}@{UUID}/IncomingWebhook/"
            f"{HEX32}/{UUID}",
            "https://contoso.webhook.office.com/webhookb2/***/IncomingWebhook/***/***",
            True,
        ),
        (f"https://ci.example.com/hooks/{UUID}", "https://ci.example.com/hooks/***", True),
        # Zapier's secret is its short account and hook ids: masked on that host only
        (
            "https://hooks.zapier.com/hooks/catch/123456/abcdef1/",
            "https://hooks.zapier.com/hooks/catch/***/***/",
            True,
        ),
        (
            "https://ci.example.com/hooks/catch/123456/abcdef1/",
            "https://ci.example.com/hooks/catch/123456/abcdef1/",
            False,
        ),
        # harmless paths stay whole, short ids included
        ("https://ci.example.com/api/v1/notify", "https://ci.example.com/api/v1/notify", False),
        (
            "https://h.example/deployment-notifications/team_a/3f9a0b12c4de",
            "https://h.example/deployment-notifications/team_a/3f9a0b12c4de",
            False,
        ),
        # credential-named query values (Azure Functions' ?code=, ?key=), not ?channel=
        (
            "https://f.azurewebsites.net/api/h?code=abc",
            "https://f.azurewebsites.net/api/h?code=***",
            True,
        ),
        ("https://h.example/in?key=abc", "https://h.example/in?key=***", True),
        ("https://h.example/in?apiKey=abc", "https://h.example/in?apiKey=***", True),
        (
            "https://h.example/in?X-Amz-Signature=abc",
            "https://h.example/in?X-Amz-Signature=***",
            True,
        ),
        (
            "https://h.example/in?hub.verify_token=a",
            "https://h.example/in?hub.verify_token=***",
            True,
        ),
        (
            "https://h.example/in?channel=ops&keyword=x",
            "https://h.example/in?channel=***&keyword=***",
            False,
        ),
        (
            "https://h.example/in?country_code=fr&author=a",
            "https://h.example/in?country_code=***&author=***",
            False,
        ),
        ("https://h.example/in?token=", "https://h.example/in?***=***", False),
        (f"https://h.example/in?{HEX32}", "https://h.example/in?***=***", True),
        # path parameters (RFC 3986 ";name=value", in any segment) are masked as query ones
        (
            f"https://hooks.example.com/notify;token={HEX32}",
            "https://hooks.example.com/notify;token=***",
            True,
        ),
        (
            f"https://h.example/{HEX32};apiKey=k/in;v=2",
            "https://h.example/***;apiKey=***/in;v=***",
            True,
        ),
        (f"https://h.example/in;{HEX32}", "https://h.example/in;***=***", True),
        ("https://h.example/a;v=1.1;lang=en/b", "https://h.example/a;v=***;lang=***/b", False),
        ("https://h.example/in;token=", "https://h.example/in;***=***", False),
    ],
)
def test_urls_are_redacted(url: str, safe: str | None, credentials: bool | None) -> None:
    redacted = redact_url(url)
    assert redacted.url == safe
    assert redacted.has_credentials is credentials


def test_a_repository_url_keeps_its_path() -> None:
    url = f"https://bot:pw@git.example.com/acme/deployment-service-{HEX32}.git"
    assert redact_url(url, mask_path=False).url == url.replace("bot:pw@", "")


def test_a_repository_url_loses_its_path_parameters() -> None:
    redacted = redact_url(f"https://git.example.com/acme/app.git;token={HEX32}", mask_path=False)
    assert redacted.url == "https://git.example.com/acme/app.git;token=***"
    assert redacted.has_credentials is True


def test_web002_on_rows_collected_from_unparsed_urls_and_path_parameters() -> None:
    """WEB002 alarms where userinfo showed in a URL too broken to store, else says 'unknown',
    never 'ok'; a path parameter token, masked, alarms; no row shows either secret."""
    (spec,) = [s for s in discover_checks([BUILTIN_CHECKS]) if s.id == "WEB002"]
    urls = {
        "w-port": "https://deploy:s3cr3t@hooks.example.com:99999/x",
        "w-v6": "https://deploy:s3cr3t@[fd00::1/notify",
        "w-bare": f"https://hooks.example.com:99999/x?token={HEX32}",
        "w-param": f"https://hooks.example.com/notify;token={HEX32}",
        "w-clean": "https://hooks.example.com/notify;v=2",
    }
    payload = [{"id": hook, "type": "team", "url": url} for hook, url in urls.items()]
    rows = map_webhooks(payload, level="team", owner=Owner("t1"))
    fixture = {"snapshots": [{"at": "2026-01-01T00:00:00Z", "tables": rows}]}
    judged = run_check(fixture_connection(fixture, [spec]), spec).to_pylist()
    assert {r["resource_id"]: r["status"] for r in judged} == {
        "w-port": "alarm", "w-v6": "alarm", "w-bare": "unknown", "w-param": "alarm", "w-clean": "ok"
    }  # fmt: skip
    assert not [s for s in ("s3cr3t", HEX32) if s in json.dumps(judged, default=str)]


@pytest.mark.parametrize("check_id", ["WEB001", "WEB002", "WEB003"])
def test_no_webhook_finding_echoes_the_stored_path(check_id: str) -> None:
    """A store written before path masking holds the Slack token in `url`: no finding shows it."""
    (spec,) = [s for s in discover_checks([BUILTIN_CHECKS]) if s.id == check_id]
    legacy = f"https://hooks.slack.com/services/T0123ABCD/B0456EFGH/{SLACK}"
    webhooks = [
        {"id": "w-old", "team_id": "t1", "url": legacy, "url_scheme": "http", "url_port": 8080,
         "url_host": "hooks.slack.com", "has_credentials_in_url": False},
        {"id": "w-ip", "team_id": "t1", "url": legacy.replace("hooks.slack.com", "[::1]"),
         "url_scheme": "https", "url_host": "::1", "has_credentials_in_url": True},
    ]  # fmt: skip
    fixture = {"snapshots": [{"at": "2026-01-01T00:00:00Z", "tables": {"webhooks": webhooks}}]}
    rows = run_check(fixture_connection(fixture), spec).to_pylist()
    assert {r["resource_id"] for r in rows} == {"w-old", "w-ip"}
    assert SLACK not in json.dumps(rows, default=str)
    origins = {r["resource_id"]: json.loads(r["evidence"])["origin"] for r in rows}
    assert origins == {"w-old": "http://hooks.slack.com:8080", "w-ip": "https://[::1]"}


@pytest.mark.parametrize(
    ("text", "scrubbed"),
    [
        ("dial postgres://app:p@ss@db:5432/app failed", "dial postgres://***@db:5432/app failed"),
        ("redis://:pw@cache:6379 and amqp://u:p@mq/", "redis://***@cache:6379 and amqp://***@mq/"),
        (
            "host=db user=app password=xyz sslmode=require",
            "host=db user=app password=*** sslmode=require",
        ),
        ("Server=db;User Id=sa;Password=P@ss;", "Server=db;User Id=sa;Password=***;"),
        (
            "GET https://f.example/api?code=abc&channel=y",
            "GET https://f.example/api?code=***&channel=y",
        ),
        (
            "exit code=137; see https://docs.example/a@b",
            "exit code=137; see https://docs.example/a@b",
        ),
        ("Back-off restarting failed container", "Back-off restarting failed container"),
        (
            "401: Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.x9 rejected",
            "401: Authorization: Bearer *** rejected",
        ),
        ("proxy sent Basic dXNlcjpwYXNz", "proxy sent Basic ***"),
        ("Basic authentication failed", "Basic authentication failed"),
        ('body {"password": "hunter2", "user": "app"}', 'body {"password": "***", "user": "app"}'),
        ("password: hunter2 (from env)", "password: *** (from env)"),
        ("./server --password hunter2 --port 80 -v", "./server --password *** --port 80 -v"),
        ("gunicorn --api-key=abc app:app", "gunicorn --api-key=*** app:app"),
        (
            "java -Dpassword=a1 -Dfile.encoding=UTF-8 -jar a.jar --spring.datasource.password a2",
            "java -Dpassword=*** -Dfile.encoding=UTF-8 -jar a.jar --spring.datasource.password ***",
        ),
        (
            "error: dial tcp 10.0.0.7:5432 at 10:32:01; exit code: 137; see https://h:8443/x",
            "error: dial tcp 10.0.0.7:5432 at 10:32:01; exit code: 137; see https://h:8443/x",
        ),
        ("npm run build -- --mode production", "npm run build -- --mode production"),
    ],
)
def test_free_text_is_scrubbed(text: str, scrubbed: str) -> None:
    assert scrub_text(text) == scrubbed


def test_deployment_messages_are_scrubbed_before_storing() -> None:
    record = {
        "id": "d1",
        "status": "crashing",
        "error": "dial postgres://app:hunter2@db/app",
        "status_message": "retrying with password=hunter2",
        "crashing_reasons": ["exit code 1", "mysql://root:hunter2@db/x refused"],
    }
    rows = map_deployment_page([record], owner=Owner("t", "p", "e", "s"))
    (row,) = rows["deployments"]
    assert "hunter2" not in json.dumps(rows, default=str)
    assert row["error"] == "dial postgres://***@db/app"
    assert row["crashing_reasons"] == ["exit code 1", "mysql://***@db/x refused"]


def test_deployment_commands_commit_messages_and_events_are_scrubbed() -> None:
    record = {
        "id": "d1",
        "status": "crashing",
        "commit_message": "use DATABASE_URL=postgres://app:hunter2@db/app",
        "run_command": "./worker --redis-password=hunter2",
        "replica_events": [
            {"type": "crash_loop_back_off", "reason": "BackOff", "count": 3,
             "message": "dial amqp://jobs:hunter2@mq:5672/ refused"},
        ],
    }  # fmt: skip
    rows = map_deployment_page([record], owner=Owner("t", "p", "e", "s"))
    assert "hunter2" not in json.dumps(rows, default=str)
    (row,) = rows["deployments"]
    assert row["run_command"] == "./worker --redis-password=***"
    assert rows["replica_events"][0]["message"] == "dial amqp://***@mq:5672/ refused"


_FREE_TEXT_COLUMNS = sorted(
    (table.name, column.name)
    for table in TABLES.values()
    for column in table.columns
    if column.free_text
)


@pytest.mark.parametrize(("table", "column"), _FREE_TEXT_COLUMNS)
def test_every_free_text_column_is_scrubbed_when_conformed(table: str, column: str) -> None:
    declared = TABLES[table]
    values: dict[str, object] = {
        c.name: "x" for c in declared.columns if not c.nullable and c.type == pa.string()
    }
    leaked = "retry postgres://app:hunter2@db/app with token=hunter2"
    many = pa.types.is_list(declared.column(column).type)
    values[column] = [leaked] if many else leaked
    row = Conformer("test", Owner()).row(table, values)
    assert row is not None
    stored = row[column][0] if many else row[column]
    assert stored == "retry postgres://***@db/app with token=***"


def test_columns_named_like_free_text_are_declared_free_text() -> None:
    """A new message, command or description column is scrubbed too, or this fails."""
    named = {
        (table.name, column.name)
        for table in TABLES.values()
        for column in table.columns
        if re.search(r"(^|_)(message|command|description|error|reason|reasons)$", column.name)
    }
    assert named <= set(_FREE_TEXT_COLUMNS)
    assert ("deployments", "commit_message") in named


def test_plain_names_and_images_are_stored_as_they_came() -> None:
    """Names, images and ids are masked by their kind's rule, which leaves plain values be;
    a name that writes out a credential (`password=...`) does not keep it."""
    row = Conformer("test", Owner()).row(
        "services", {"id": "s1", "name": "web api", "image": "r.example/a:b"}
    )
    assert row is not None
    assert (row["name"], row["image"]) == ("web api", "r.example/a:b")
    row = Conformer("test", Owner()).row("services", {"id": "s1", "name": "password=hunter2"})
    assert row is not None and row["name"] == "password=***"


def test_unknown_string_fields_are_scrubbed_in_extra() -> None:
    extra = extra_json({"database_url": "postgres://app:hunter2@db/app", "note": "ok"})
    assert extra is not None
    assert "hunter2" not in extra
    assert json.loads(extra) == {"database_url": "postgres://***@db/app", "note": "ok"}
