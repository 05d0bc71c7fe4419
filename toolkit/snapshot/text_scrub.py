"""Free text without credentials: the forms a credential is written in, as a table.

Platform free text (a deployment's error, crash reasons, a start or health-check command,
a commit message) may quote a connection string, a shell command or a config line. Each
way of writing a credential the scrubber knows is one :class:`Form` of :data:`FORMS`: a
regular expression whose ``value`` group is the credential, and a sample with what it
becomes. The forms follow the keyword and command rules of detect-secrets and gitleaks::

    >>> scrub_text("PGPASSWORD=x1 psql -h db; mysql -uroot -px1; curl -u a:x1 https://h")
    'PGPASSWORD=*** psql -h db; mysql -uroot -p***; curl -u a:*** https://h'
    >>> scrub_text("mysql -p appdb; ssh -p 2222 h; app --password-file /run/secrets/db")
    'mysql -p appdb; ssh -p 2222 h; app --password-file /run/secrets/db'

A ``NAME=value`` pair or a ``--name value`` flag is masked when its name has a credential
word (:func:`~toolkit.snapshot.secret_names.credential_name`) or is a secret's name as the
variable checks judge it (:func:`~toolkit.snapshot.secret_names.secret_name`), unless the
name is a setting about a secret and its value reads as a setting's (a path, a URL, a
number): ``--password-file /run/secrets/db``, ``PWD=/app`` and ``TOKEN_TTL=3600`` stay.

:func:`writes_credential` reads the same table: a text writes out a credential where one
of the forms finds a value written in it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from toolkit.snapshot.secret_names import credential_name, secret_name, secret_setting

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "FORMS",
    "MASK",
    "REFERENCE_MARK",
    "Form",
    "may_write_credential",
    "scrub_text",
    "writes_credential",
]

MASK = "***"
REFERENCE_MARK = "\ue000"
"""What stands for a ``${{...}}`` reference in text given to :func:`writes_credential`: a
private-use character, never in a value's own text, that no pattern reads as a letter."""
PLAIN_WORD = re.compile(r"[a-z]+([._-][a-z]+)*")
"""A plain lower-case word (``deployment-notifications``): prose, not a generated secret."""

# A setting's value (of a name such as --password-file or TOKEN_TTL): a path, a URL, a
# number or a duration, or an environment variable's name.
_SETTING_VALUE = re.compile(
    r"(?:~|\.{1,2})?/\S*|[A-Za-z][A-Za-z0-9+.-]*://\S*|\d+(?:\.\d+)?[a-z]{0,3}|\$\{?\w+\}?"
)
# HTTP authentication schemes (the IANA registry's, and the usual API ones).
_SCHEMES = (
    r"Bearer|Basic|Token|Digest|Negotiate|NTLM|HOBA|Mutual|SCRAM-SHA-\d+|Hawk|OAuth|Bot|ApiKey"
    r"|AWS4-HMAC-SHA256"
)
_AUTHORIZATION = frozenset({"authorization", "proxy-authorization"})
# A value as shell commands and config lines write it: quoted, or up to a space or separator.
_ARGUMENT = r"""(?:'[^'\n]*'|"[^"\n]*"|[^\s;|&'"]+)"""
# The arguments of one command before the one sought: no ; | & or new line in between.
_ARGUMENTS = r"""(?:[ \t]+(?:'[^'\n]*'|"[^"\n]*"|[^\s;|&'"]+))*?"""


def _always(match: re.Match[str]) -> bool:
    return True


def _value(match: re.Match[str]) -> str:
    return match["value"]


@dataclass(frozen=True)
class Form:
    """One way free text writes a credential.

    ``pattern``'s ``value`` group is masked when ``judge`` accepts the match; ``written``
    is the part of the match that is the credential (for :func:`writes_credential`: a URL's
    user name is not one). ``example`` becomes ``scrubbed``: the form's test row.
    """

    name: str
    pattern: re.Pattern[str]
    example: str
    scrubbed: str
    judge: Callable[[re.Match[str]], bool] = _always
    written: Callable[[re.Match[str]], str] = _value

    def scrub(self, text: str) -> str:
        """``text`` with the value of each match this form accepts masked."""
        return self.pattern.sub(self._masked, text)

    def _masked(self, match: re.Match[str]) -> str:
        if not self.judge(match):
            return match[0]
        start, end = match.span("value")
        offset = match.start()
        return f"{match[0][: start - offset]}{MASK}{match[0][end - offset :]}"


def _command(commands: str, flag: str, *, attached: bool = False) -> re.Pattern[str]:
    """The value given to ``flag`` of one of ``commands`` (an alternation), anywhere among
    the command's arguments: after a space, or directly (``-pS3cret``) when ``attached``."""
    gap = "" if attached else "[ \t]*"
    value = rf"(?P<value>(?!-){_ARGUMENT})"
    return re.compile(rf"(?<![\w-])(?:{commands})\b{_ARGUMENTS}[ \t]+{flag}{gap}{value}")


def _credential_scheme(match: re.Match[str]) -> bool:
    return not PLAIN_WORD.fullmatch(match["value"])  # "Bearer token" is prose


def _credential_pair(match: re.Match[str]) -> bool:
    name = match["name"]
    if name.lower() in _AUTHORIZATION:
        return False  # the Authorization form's: its value is the scheme's credential
    if name.lower() == "code":
        return match["lead"] in ("?", "&")  # Azure Functions' ?code=, not "exit code=137"
    return _secret_named(name, match["value"])


def _credential_flag(match: re.Match[str]) -> bool:
    return match["name"].lower() != "code" and _secret_named(match["name"], match["value"])


def _secret_named(name: str, value: str) -> bool:
    if not (credential_name(name) or secret_name(name)):
        return False
    return not (secret_setting(name) and _SETTING_VALUE.fullmatch(value))


_PAIR = re.compile(
    r"(?P<lead>[?&;]|(?<![\w-])-D|\b)(?P<name>[A-Za-z][A-Za-z0-9_.-]*)"  # -D: a Java property
    r"(?P<sep>[\"']?[ \t]*(?::=|=>|==?|:)[ \t]*[\"']?)(?!//)"  # not a URL's ://
    r"(?P<value>(?<=\")[^\"\n]+(?=\")|(?<=')[^'\n]+(?=')|[^\s&;,'\"]+)"
)

FORMS: tuple[Form, ...] = (
    Form(  # up to its last @, so a password with an @ goes whole
        "URL userinfo",
        re.compile(r"(?<=://)(?P<value>[^/\s]+)@"),
        "dial postgres://app:p@ss@db:5432/app",
        "dial postgres://***@db:5432/app",
        written=lambda match: match["value"].partition(":")[2],
    ),
    Form(
        "Authorization header",
        re.compile(
            r"\b(?P<name>(?:Proxy-)?Authorization)[\"']?[ \t]*[:=][ \t]*[\"']?"
            rf"(?:(?P<scheme>{_SCHEMES}) +)?(?P<value>[^\s\"',;]+)",
            re.IGNORECASE,
        ),
        "401 for Authorization: Token x1",
        "401 for Authorization: Token ***",
    ),
    Form(
        "Bearer or Basic credential",
        re.compile(r"\b(?P<scheme>Bearer|Basic) +(?P<value>[A-Za-z0-9._~+/=-]{8,})"),
        "proxy sent Basic dXNlcjpwYXNz",
        "proxy sent Basic ***",
        judge=_credential_scheme,
    ),
    Form(
        "name=value, name: value, JSON pair",
        _PAIR,
        'PGPASSWORD=x1 psql; password = "x1"; {"token": "t0k3n"}',
        'PGPASSWORD=*** psql; password = "***"; {"token": "***"}',
        judge=_credential_pair,
    ),
    Form(
        "--name value flag",
        re.compile(
            r"(?P<flag>(?<![\w-])--?(?P<name>[A-Za-z][A-Za-z0-9_.-]*)) +"
            r"(?P<value>\"[^\"\n]*\"|'[^'\n]*'|[^\s-]\S*)"
        ),
        "./worker --api-key k3y --queue jobs -v",
        "./worker --api-key *** --queue jobs -v",
        judge=_credential_flag,
    ),
    Form(
        "Redis and keytool password options",
        re.compile(
            r"(?<![\w-])(?:(?:--)?(?:requirepass|masterauth)|-(?:src|dest)?(?:store|key)pass)"
            rf"[ \t]+(?P<value>{_ARGUMENT})",
            re.IGNORECASE,
        ),
        "redis-server --requirepass x1 --port 6379",
        "redis-server --requirepass *** --port 6379",
    ),
    Form(
        "OpenSSL pass phrase argument",
        re.compile(r"(?<![\w-])-pass(?:in|out)?[ \t]+pass:(?P<value>\S+)"),
        "openssl rsa -in k.pem -passin pass:x1",
        "openssl rsa -in k.pem -passin pass:***",
    ),
    Form(
        "MySQL -p<password>",
        _command(r"mysql\w*|mariadb[\w-]*", "-p", attached=True),
        "mysql -h db -uroot -px1 app",
        "mysql -h db -uroot -p*** app",
    ),
    Form(
        "sshpass -p",
        _command("sshpass", "-p"),
        "sshpass -p x1 ssh deploy@h",
        "sshpass -p *** ssh deploy@h",
    ),
    Form(
        "redis-cli -a",
        _command("redis-cli", "-a"),
        "redis-cli -h cache -a x1 ping",
        "redis-cli -h cache -a *** ping",
    ),
    Form(
        "registry login -p",
        _command(r"(?:docker|podman|buildah|skopeo|helm(?:[ \t]+registry)?)[ \t]+login", "-p"),
        "docker login -u ci -p x1 registry.example",
        "docker login -u ci -p *** registry.example",
    ),
    Form(
        "SQL Server tools -P",
        _command("sqlcmd|bcp|osql", "-P"),
        "sqlcmd -S db -U sa -P x1 -Q 'select 1'",
        "sqlcmd -S db -U sa -P *** -Q 'select 1'",
    ),
    Form(
        "curl -u user:password",
        re.compile(
            rf"(?<![\w-])curl\b{_ARGUMENTS}[ \t]+(?:-u[ \t]*|--user(?:[ \t]+|=))"
            r"[\"']?[^\s:\"']*:(?P<value>[^\s\"']+)"
        ),
        "curl -u a:x1 https://h",
        "curl -u a:*** https://h",
    ),
)
"""Every form the scrubber masks, applied in this order, each to what the one before left."""

# The stems of every credential word and secret name (`credential_words.sql` holds the same):
# `credential_name` reads `s_ig` as `sig`, so a `-` or `_` may stand between their letters.
_STEMS = ("pass", "pwd", "token", "secret", "key", "sig", "auth", "credential", "jwt", "hmac")
_COMMANDS = ("mysql", "mariadb", "sshpass", "redis-cli", "login", "sqlcmd", "bcp", "osql", "curl")
_HINT = re.compile(
    "|".join(
        (
            r"://[^/\s]*@",  # URL userinfo
            r"(?:bearer|basic) ",  # a scheme and its credential
            # a pair, a flag, a header or an option whose name holds a stem: the stem, the
            # rest of the name, then a separator or a blank (the value follows)
            "(?:" + "|".join("[-_]*".join(stem) for stem in _STEMS) + ")"
            r"[^\s\"':=]*(?:[\"']?[ \t]*[:=]|[ \t])",
            r"[?&]code[\"']?[ \t]*[:=]",  # Azure Functions' ?code=
            # a command and, later on its line, one of its flags
            "(?:" + "|".join(map(re.escape, _COMMANDS)) + r")[^\n]*[ \t]-",
        )
    ),
    re.IGNORECASE,
)
"""Found in every text where one of :data:`FORMS` masks something (a necessary condition,
not a sufficient one): a text without it is kept as it is without running the forms. Most
platform text (names, images, commit messages) has none."""
# The same, for ASCII text lowered first: six times faster than matching case-insensitively.
# (Only ASCII: Unicode case folding matches the long s, U+017F, with `s`; lowering does not.)
_HINT_LOWERED = re.compile(_HINT.pattern)


def may_write_credential(text: str) -> bool:
    """Whether ``text`` has what one of :data:`FORMS` needs to mask something; False proves
    that none can (``tests/collect/test_collect_text_scrub.py`` holds it to that).

    >>> [may_write_credential(t) for t in ("Bump dependencies", "exit code 1", "token=x1")]
    [False, False, True]
    """
    if text.isascii():
        return _HINT_LOWERED.search(text.lower()) is not None
    return _HINT.search(text) is not None


def scrub_text(text: str) -> str:
    """Free text without URL userinfo or credential values: each of :data:`FORMS` masked
    (names as :func:`~toolkit.snapshot.secret_names.credential_name` and
    :func:`~toolkit.snapshot.secret_names.secret_name` judge them; ``code`` only in a URL
    query, so ``exit code=137`` stays; a ``Basic`` or ``Bearer`` followed by a plain
    lower-case word is prose, and stays).

    >>> scrub_text("dial https://h.example/x?code=abc&v=1: Password=hunter2; exit code=137")
    'dial https://h.example/x?code=***&v=1: Password=***; exit code=137'
    >>> scrub_text('401 for Authorization: Bearer eyJhbGciOi.x9; body {"token": "t0k3n"}')
    '401 for Authorization: Bearer ***; body {"token": "***"}'
    >>> scrub_text("./worker --api-key k3y --queue jobs -v")
    './worker --api-key *** --queue jobs -v'
    """
    if not may_write_credential(text):
        return text
    for form in FORMS:
        text = form.scrub(text)
    return text


def writes_credential(text: str) -> bool:
    """Whether ``text`` writes out a credential where :func:`scrub_text` finds one: a URL's
    password, a ``Bearer`` or ``Basic`` credential, or the value of any other form of
    :data:`FORMS`. A URL's user name alone is not one (a Sentry DSN's public key sits
    there).

    Each :data:`REFERENCE_MARK` in ``text`` stands for a ``${{...}}`` reference: a credential
    made of references only (``postgres://app:${{DB_PASSWORD}}@db``) is not written out, as
    the platform resolves it from the variable that holds it.

    >>> writes_credential("postgres://app:s3cr3t@db:5432/app")
    True
    >>> ref = REFERENCE_MARK
    >>> [writes_credential(t) for t in (f"postgres://app:{ref}@{ref}:5432/app",
    ...     f"https://{ref}.example/hook?token={ref}", "password=hunter2", "Bearer changeme")]
    [False, False, True, False]
    """

    def written(part: str) -> bool:
        return any(c.isalnum() for c in part)  # REFERENCE_MARK is none

    if not may_write_credential(text):
        return False
    for form in FORMS:  # each form reads what the forms before it left, as scrub_text does
        if any(form.judge(m) and written(form.written(m)) for m in form.pattern.finditer(text)):
            return True
        text = form.scrub(text)
    return False
