"""What makes a name a secret's: one definition for the variable checks and the scrubber.

:data:`SECRET_NAMES` and :data:`NOT_SECRET_NAMES` are regular expressions read the same way
by Python's ``re`` and DuckDB's RE2 (searched, case-insensitive). They are the defaults of
the ``secret_names`` and ``not_secret_names`` parameters of the variable checks (VAR004,
VAR007, VAR008: their headers say ``{SECRET_NAMES}`` and ``{NOT_SECRET_NAMES}``, which the
check loader fills in from here), and the free-text scrubber masks the value of every
``NAME=value`` whose name :func:`secret_name` accepts, so a name the checks call a
secret's is never left readable in a crash message::

    >>> [secret_name(n) for n in ("DBPASSWORD", "DJANGO_SECRET_KEY", "API_KEY_HEADER", "PWD")]
    [True, True, False, False]

:func:`credential_name` reads names more broadly, word by word (``key``, ``sig``,
``auth``...), for URL query names and free-text pairs: :data:`CREDENTIAL_WORDS`, which
``toolkit/audit/views/credential_words.sql`` mirrors as stems for the SQL over older stores.
"""

from __future__ import annotations

import re

__all__ = [
    "CREDENTIAL_WORDS",
    "NOT_SECRET_NAMES",
    "SECRET_NAME",
    "SECRET_NAMES",
    "credential_name",
    "secret_name",
    "secret_setting",
]

SECRET_NAMES = (
    "passw(or)?d", "passphrase", "_pass(_.*)?$", "pwd(_.*)?$", "secret", "token(_.*)?$",
    "credential", "api_?keys?(_.*)?$", "app_?keys?(_.*)?$", "access_?keys?(_.*)?$",
    "master_?keys?(_.*)?$", "private_?keys?(_.*)?$", "signing_?keys?(_.*)?$",
    "encryption_?keys?(_.*)?$", "jwt_?keys?(_.*)?$",
)  # fmt: skip
"""A variable name matching any of these (and none of :data:`NOT_SECRET_NAMES`) looks like
a secret's: DB_PASS, DBPWD, APP_KEY, PGPASSWORD, SOMETHING_SECRET_KEY."""
NOT_SECRET_NAMES = (
    "^(old)?pwd$", "application_credentials$", "_id$", "_name$", "_file$", "_path$", "_dir$",
    "_len(gth)?$", "_ttl$", "_seconds?$", "_minutes?$", "_hours?$", "_days?$",
    "_expir[a-z]*$", "_url$", "_uri$", "_endpoint$", "_header$",
)  # fmt: skip
"""Names of a setting about a secret (its id, name, file, path, length or lifetime, where
it is fetched or sent), GOOGLE_APPLICATION_CREDENTIALS (a file path), the shell's PWD."""

_SECRET = re.compile("(" + "|".join(SECRET_NAMES) + ")", re.IGNORECASE)
_SETTING = re.compile("(" + "|".join(NOT_SECRET_NAMES) + ")", re.IGNORECASE)
_SEPARATORS = str.maketrans("-.", "__")

# Field names (of unknown JSON members) that usually carry a credential: searched, so broad.
SECRET_NAME = re.compile(
    r"(secret|passw|pwd|token|credential|private|api[_-]?key|access[_-]?key|auth|sig|signature)",
    re.IGNORECASE,
)
# URL query names are judged word by word (`access_token`, `apiKey`, `X-Amz-Signature`), so
# `?key=` counts while `?channel=` or `?keyword=` do not; `code` only as the whole name
# (Azure Functions' `?code=`), not in `?country_code=`.
_NAME_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
CREDENTIAL_WORDS = frozenset(
    {
        "accesskey", "accesstoken", "apikey", "apitoken", "auth", "authorization",
        "authtoken", "clientsecret", "credential", "hmac", "jwt", "key", "pass",
        "passphrase", "passwd", "password", "privatekey", "pwd", "secret", "secretkey",
        "sig", "signature", "token",
    }
)  # fmt: skip


def secret_name(name: str) -> bool:
    """Whether ``name`` looks like a secret's, as the variable checks judge it by default
    (``secret_name(name, $secret_names, $not_secret_names)`` in DuckDB). A ``-`` or ``.``
    reads as ``_``, so ``--db-password`` and ``spring.datasource.password`` are judged as
    ``_db_password`` and ``spring_datasource_password``.

    >>> [secret_name(n) for n in ("DB_PASS", "MYTOKEN", "TOKEN_URL", "monkey", "db-pwd")]
    [True, True, False, False, True]
    """
    name = name.lstrip("-").translate(_SEPARATORS)
    return bool(_SECRET.search(name)) and not _SETTING.search(name)


def secret_setting(name: str) -> bool:
    """Whether ``name`` is a setting about a secret (:data:`NOT_SECRET_NAMES`): its file,
    its lifetime, the URL it goes to (``--password-file``, ``TOKEN_TTL``, ``PWD``).

    >>> [secret_setting(n) for n in ("--password-file", "token_ttl", "PWD", "password")]
    [True, True, True, False]
    """
    return bool(_SETTING.search(name.lstrip("-").translate(_SEPARATORS)))


def credential_name(name: str) -> bool:
    """Whether a query or keyword name has a credential word, judged word by word.

    >>> [credential_name(n) for n in ("access_token", "apiKey", "code", "channel", "zip_code")]
    [True, True, True, False, False]
    """
    if name.lower() == "code":
        return True
    for word in _NAME_WORD.findall(name):
        word = word.lower()
        if word in CREDENTIAL_WORDS or (word.endswith("s") and word[:-1] in CREDENTIAL_WORDS):
            return True
    return name.lower().replace("-", "").replace("_", "") in CREDENTIAL_WORDS
