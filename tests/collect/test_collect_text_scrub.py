"""The free-text scrubber's table of credential forms, and the one definition of a secret's
name that it shares with the variable checks (VAR004, VAR007, VAR008)."""

from __future__ import annotations

import duckdb
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from toolkit.audit.check_file import BUILTIN_CHECKS, CheckSpec
from toolkit.audit.check_run import VIEWS
from toolkit.collect.conform import extra_json
from toolkit.snapshot.secret_names import (
    CREDENTIAL_WORDS,
    NOT_SECRET_NAMES,
    SECRET_NAMES,
    secret_name,
)
from toolkit.snapshot.text_scrub import (
    _HINT,
    FORMS,
    REFERENCE_MARK,
    Form,
    may_write_credential,
    scrub_text,
    writes_credential,
)


@pytest.mark.parametrize("form", FORMS, ids=[form.name for form in FORMS])
def test_each_form_masks_its_own_example(form: Form) -> None:
    assert form.pattern.search(form.example), "the example is written in the form it samples"
    assert form.scrubbed != form.example
    assert scrub_text(form.example) == form.scrubbed
    assert writes_credential(form.example)


@pytest.mark.parametrize(
    ("text", "scrubbed"),
    [
        # the forms free text was found to keep
        ("PGPASSWORD=x1 psql -h db", "PGPASSWORD=*** psql -h db"),
        ("DBPASSWORD=x1", "DBPASSWORD=***"),
        ("redis-server --requirepass x1", "redis-server --requirepass ***"),
        ("redis-cli -a x1", "redis-cli -a ***"),
        ("mysql -px1", "mysql -p***"),
        ("sshpass -p x1", "sshpass -p ***"),
        ("curl -u a:x1 h", "curl -u a:*** h"),
        ('password = "x1"', 'password = "***"'),
        ("Authorization: Token x1", "Authorization: Token ***"),
        ("Authorization: Bearer x1", "Authorization: Bearer ***"),
        # their neighbours
        (
            "export SOMETHING_SECRET_KEY='s3cr3t value' && ./run",
            "export SOMETHING_SECRET_KEY='***' && ./run",
        ),
        ("MYTOKEN=x1 ./job", "MYTOKEN=*** ./job"),
        (
            "docker run -e POSTGRES_PASSWORD=x1 postgres",
            "docker run -e POSTGRES_PASSWORD=*** postgres",
        ),
        ('api_key := "x1"', 'api_key := "***"'),
        ("'secret' => 'x1',", "'secret' => '***',"),
        ("Driver={ODBC};Server=db;UID=sa;PWD=P@ss;", "Driver={ODBC};Server=db;UID=sa;PWD=***;"),
        ("requirepass x1", "requirepass ***"),
        ("CONFIG SET masterauth x1", "CONFIG SET masterauth ***"),
        ("keytool -list -storepass x1 -keypass x2", "keytool -list -storepass *** -keypass ***"),
        ("mysqldump -h db -u root -p'x y' app", "mysqldump -h db -u root -p*** app"),
        ("sshpass -px1 ssh -p 2222 deploy@h", "sshpass -p*** ssh -p 2222 deploy@h"),
        ("redis-cli -h cache -p 6380 -a x1 ping", "redis-cli -h cache -p 6380 -a *** ping"),
        ("podman login -u ci -p x1 r.example", "podman login -u ci -p *** r.example"),
        ("curl -s --user 'ci:x1' https://h", "curl -s --user 'ci:***' https://h"),
        ("curl --user=ci:x1 https://h", "curl --user=ci:*** https://h"),
        ("wget --http-password=x1 https://h", "wget --http-password=*** https://h"),
        ("openssl pkcs12 -in a.p12 -passout pass:x1", "openssl pkcs12 -in a.p12 -passout pass:***"),
        (
            "--password-file=/run/secrets/db --password x1",
            "--password-file=/run/secrets/db --password ***",
        ),
        ('"Proxy-Authorization": "Basic x1"', '"Proxy-Authorization": "Basic ***"'),
        ('./app --password "two words" -v', "./app --password *** -v"),
    ],
)
def test_credential_forms_are_masked(text: str, scrubbed: str) -> None:
    assert scrub_text(text) == scrubbed


@pytest.mark.parametrize(
    "text",
    [
        "app --password-file /run/secrets/db",
        "app --password-file=/run/secrets/db",
        "SECRET_KEY_FILE=/run/secrets/key TOKEN_TTL=3600 PWD=/srv/app",
        "mysql -p appdb",  # -p then a space: mysql asks for the password
        "mysql -h db -P 3306 -u app",
        "ssh -p 2222 deploy@h",
        "docker run -p 8080:80 -u 1000:1000 nginx",
        "curl -u admin https://h",  # no password: curl asks for it
        "redis-cli -h cache ping; ls -a /tmp",
        "openssl rsa -passin env:KEY_PASS -passout file:/run/pass",
        "Authorization failed for user bob",
        "Token expired, sign in again",
        "exit code = 137",
        "npm ci --no-audit && node server.js --port 8080",
        "the compass points north",
        "bypass the cache with -a",
    ],
)
def test_look_alikes_are_kept(text: str) -> None:
    assert scrub_text(text) == text
    assert not writes_credential(text)


def _every_form(text: str) -> str:
    """What the forms make of ``text``, each run whatever the text holds."""
    for form in FORMS:
        text = form.scrub(text)
    return text


# Pieces of credentials and of their look-alikes, for texts near every form's edges.
_PIECES = st.sampled_from(
    [
        *("pass", "PWD", "tok", "en", "Token", "secret", "key", "k_ey", "s-ig", "Sig", "auth"),
        *("Authorization", "credential", "jwt", "hmac", "code", "CODE", "sign", "compass"),
        *("?", "&", "=", ":", ":=", "=>", " ", "  ", "\t", "\n", "-", "--", "_", ".", "'", '"'),
        *("x1", "S3cr3t", "Bearer ", "Basic ", "://", "@", "/", "h.example", "mysql", "mariadb"),
        *("sshpass", "redis-cli", "docker login", "sqlcmd", "bcp", "osql", "curl", "-p", "-P"),
        *("-a", "-u", "--user", "requirepass", "masterauth", "-storepass", "-passin", "pass:"),
        *("\u017f", "\u212a", "\u0131", "\u0130", REFERENCE_MARK),  # letters case-folded to ASCII
    ]
)
_WORDS = st.sampled_from(["pass", "PWD", "token", "secret", "key", "sig", "auth", "code", "db"])
_NAMES = st.lists(st.one_of(_WORDS, st.sampled_from(["-", "_", ".", "x"])), min_size=1, max_size=4)
# A pair or a flag: a lead, a name of credential words and separators, a separator, a value.
_PAIRS = st.tuples(
    st.sampled_from(["", " ", "?", "&", ";", "-", "--", " -D", "mysql -u a ", "curl -s "]),
    _NAMES.map("".join),
    st.sampled_from(["=", ": ", ":=", " => ", '"="', " ", "\t", "=='", "://"]),
    st.sampled_from(["x1", "S3cr3t-v4lue", "'two words'", "/run/secrets/db", "3600", "a:b@h"]),
).map("".join)
_TEXTS = st.one_of(
    st.lists(_PIECES, max_size=14).map("".join),
    st.lists(st.one_of(_PAIRS, _PIECES), max_size=5).map("".join),
    st.text(max_size=40),
)


@settings(max_examples=3000, deadline=None)
@given(_TEXTS)
@example("https://h.example/f?code=abc")
@example("s-ig=x1 k_ey: x1 P_W_D=x1")
def test_a_text_without_the_hint_is_one_no_form_changes(text: str) -> None:
    """`scrub_text` skips the forms for a text `may_write_credential` rejects: that is only
    safe if no form would have masked anything in it."""
    if not may_write_credential(text):
        assert _every_form(text) == text
        assert not writes_credential(text)
    assert scrub_text(text) == _every_form(text)
    assert may_write_credential(text) is (_HINT.search(text) is not None)  # ASCII fast path


@pytest.mark.parametrize(
    "text",
    [
        "Build step 'install' exited with code 1",
        "mysql:8.0",
        "ghcr.io/acme/api:2.4.1",
        "Bump dependencies",
        "gunicorn app:app",
        "Liveness probe failed: HTTP probe failed with statuscode: 503",
    ],
)
def test_common_platform_text_skips_the_forms(text: str) -> None:
    assert not may_write_credential(text)


def test_a_form_matched_through_unicode_case_folding_is_still_masked() -> None:
    text = "redis-server --requirepa\u017fs x1"  # the long s folds to s, as the form reads
    assert may_write_credential(text)
    assert scrub_text(text) == _every_form(text) == "redis-server --requirepa\u017fs ***"


@pytest.mark.parametrize(
    ("text", "writes"),
    [
        ("mysql -uroot -px1", True),
        (f"mysql -uroot -p{REFERENCE_MARK}", False),
        (f"redis-server --requirepass {REFERENCE_MARK}", False),
        (f"curl -u ci:{REFERENCE_MARK} https://h", False),
        ("curl -u ci:x1 https://h", True),
        ("DBPASSWORD=x1", True),
        (f"Authorization: Bearer {REFERENCE_MARK}", False),
    ],
)
def test_writes_credential_reads_the_same_forms(text: str, writes: bool) -> None:
    assert writes_credential(text) is writes


_NAMES = [
    "DB_PASS", "DBPWD", "APP_KEY", "PGPASSWORD", "DBPASSWORD", "SOMETHING_SECRET_KEY",
    "STRIPE_API_KEYS", "JWT_KEY_PREVIOUS", "GITHUB_TOKEN", "MASTER_KEY", "CLIENT_CREDENTIAL",
    "PASSPHRASE", "OAUTH_TOKEN_URL", "API_KEY_HEADER", "SECRET_NAME", "PWD", "OLDPWD",
    "TOKEN_TTL", "PASSWORD_FILE", "GOOGLE_APPLICATION_CREDENTIALS", "MONKEY", "PORT",
    "SESSION_TIMEOUT_SECONDS", "db-password", "spring.datasource.password",
]  # fmt: skip


def _checks_judge(spec: CheckSpec, names: list[str]) -> dict[str, bool]:
    """What the check's SQL macro says of each name, with the check's default parameters."""
    con = duckdb.connect()
    con.execute((VIEWS / "secret_name.sql").read_text(encoding="utf-8"))
    params = spec.params
    rows = con.execute(
        "select n, secret_name(n, $s, $ns) from unnest($names) t(n)",
        {"names": names, "s": params["secret_names"].default,
         "ns": params["not_secret_names"].default},
    ).fetchall()  # fmt: skip
    return dict(rows)


@pytest.mark.parametrize("check", ["VAR004", "VAR007", "VAR008"])
def test_the_variable_checks_and_the_scrubber_share_one_secret_name(check: str) -> None:
    spec = CheckSpec.load(next(BUILTIN_CHECKS.rglob(f"{check}.sql")))
    assert spec.params["secret_names"].default == ",".join(SECRET_NAMES)
    assert spec.params["not_secret_names"].default == ",".join(NOT_SECRET_NAMES)
    judged = _checks_judge(spec, [n.replace("-", "_").replace(".", "_") for n in _NAMES])
    for name in _NAMES:
        secret = judged[name.replace("-", "_").replace(".", "_")]
        assert secret_name(name) is secret, name
        if secret:  # every name the checks call a secret's has its value masked in free text
            assert scrub_text(f"retry with {name}=s3cr3t-v4lue") == f"retry with {name}=***"
    assert sum(judged.values()) >= 10 and not all(judged.values())


def _sql(*views: str) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    for view in views:
        con.execute((VIEWS / f"{view}.sql").read_text(encoding="utf-8"))
    return con


@pytest.mark.parametrize("form", FORMS, ids=[form.name for form in FORMS])
def test_the_sql_scrubber_of_older_stores_masks_every_form(form: Form) -> None:
    match = form.pattern.search(form.example)
    assert match is not None
    con = _sql("credential_words", "scrubbed")
    [(scrubbed,)] = con.execute("select scrubbed($t)", {"t": form.example}).fetchall()
    assert match["value"] not in scrubbed, scrubbed


def test_the_sql_credential_words_stem_every_credential_word_and_secret_name() -> None:
    [(words,)] = _sql("credential_words").execute("select credential_words()").fetchall()
    stems = words.split("|")
    assert all(any(stem in word for stem in stems) for word in CREDENTIAL_WORDS)
    assert all(any(stem in word for word in CREDENTIAL_WORDS) for stem in stems)
    assert all(any(stem in pattern for stem in stems) for pattern in SECRET_NAMES)


def test_unknown_fields_named_as_the_checks_name_secrets_lose_their_value() -> None:
    stored = extra_json({"app_key": "k7P2xR9s", "settings": {"MASTER_KEY": "x1", "port": 80}})
    assert stored == '{"app_key":"***","settings":{"MASTER_KEY":"***","port":80}}'
