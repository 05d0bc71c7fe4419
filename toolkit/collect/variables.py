"""Variables at the four levels, WITHOUT their values, and the references they make.

A value never leaves this module: a row keeps the name, level, owner ids, whether the value
references other variables (and which: `variable_references`), whether the service
protects it, whether it writes out a credential beside its references (a password in a
connection string: `writes_credential`), the kind of secret the value itself gives away (a
JSON Web Token, a private key, a live payment key: `value_kind`,
:mod:`toolkit.snapshot.secret_kinds`), the value's length and its HMAC-SHA256 fingerprint
under the local key. With a viewer key the API withholds values (`values_redacted`), so
length, fingerprint, `writes_credential` and `value_kind` are null; references then come
from the API's `references` alone. Resolved values are never read.

>>> from toolkit.snapshot.redaction import Fingerprinter
>>> rows = map_variables(
...     {"values_redacted": False, "variables": [{"name": "DB", "value": "${{team.DB}}"}]},
...     level="project", owner=Owner("t1", "p1"), fingerprints=Fingerprinter(b"k" * 16))
>>> rows["variables"][0]["is_reference"], rows["variable_references"][0]["source_type"]
(True, 'team')
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolkit.collect.conform import Conformer, Owner
from toolkit.snapshot.redaction import REFERENCE_MARK, writes_credential
from toolkit.snapshot.secret_kinds import NO_KIND, secret_kind

if TYPE_CHECKING:
    from toolkit.api import VariableList
    from toolkit.collect.conform import Row, Rows
    from toolkit.collect.known_values import KnownValues
    from toolkit.snapshot.redaction import Fingerprinter

__all__ = ["ENDPOINT", "Reference", "map_variables", "parse_references"]

ENDPOINT = "variables.list"
REFERENCE = re.compile(
    r"\$\{\{\s*(?:(?P<level>team|project|environment)|service\.(?P<service>[0-9A-Za-z-]+))"
    r"\.(?P<key>[A-Za-z0-9_.-]+)\s*\}\}"
)


@dataclass(frozen=True, slots=True)
class Reference:
    """One `${{...}}` expression: the level it points to, the service id, the key."""

    token: str
    source_type: str
    source_id: str | None
    key: str


def parse_references(value: str) -> list[Reference]:
    """Every reference expression in `value`, in order.

    >>> parse_references("postgres://${{service.ab-12.USER}}@${{environment.HOST}}")[0]
    Reference(token='${{service.ab-12.USER}}', source_type='service', source_id='ab-12', key='USER')
    """
    return [
        Reference(
            token=match.group(0),
            source_type="service" if match.group("service") else match.group("level"),
            source_id=match.group("service"),
            key=match.group("key"),
        )
        for match in REFERENCE.finditer(value)
    ]


def map_variables(
    payload: VariableList | Mapping[str, Any],
    *,
    level: str,
    owner: Owner,
    fingerprints: Fingerprinter,
    protected: frozenset[str] = frozenset(),
    known_values: KnownValues | None = None,
) -> Rows:
    """`/variables/list` of one owner -> `variables` and `variable_references` rows.

    `protected` is the service's `config.protected_variables` (service level only). Each
    value read is also given to `known_values` (held in memory by the crawl, which masks it
    wherever free text repeats it; see `toolkit.collect.known_values`).
    """
    redacted, items = _envelope(payload)
    conformer = Conformer(ENDPOINT, owner)
    out: Rows = {"variables": [], "variable_references": []}
    for item in items:
        value = item.get("value")
        if value is not None and not isinstance(value, str):
            conformer.note("variables", "value", value)
            value = None
        api_refs = conformer.objs(item, "references", "variables")
        parsed = parse_references(value) if value is not None else []
        references = _references(conformer, item, level, owner, parsed, api_refs)
        known = value is not None or "references" in item
        read = None if redacted else value  # what may be measured and fingerprinted
        if read is not None and known_values is not None:
            known_values.add(read)
        values = {
            "name": item.get("name"),
            "level": level,
            **owner.columns(),
            "is_reference": bool(references) if known else None,
            "reference_count": len(references) if known else None,
            "is_protected": level == "service" and item.get("name") in protected,
            "provided": item.get("provided"),
            "values_redacted": redacted,
            "value_length": None if read is None else len(read),
            "fingerprint": None if read is None else fingerprints.of(read),
            "writes_credential": None if read is None else _writes(read),
            "value_kind": None if read is None else _kind(read),
            "updates": item.get("updates"),
        }
        row = conformer.row("variables", values)
        if row is not None:
            out["variables"].append(row)
            out["variable_references"].extend(references)
    out["collection_errors"] = conformer.drift_rows()
    return out


def _writes(value: str) -> bool:
    """Whether the value writes out a credential beside its references (a password in a
    connection string whose host is a reference): the references themselves are none."""
    return writes_credential(REFERENCE.sub(REFERENCE_MARK, value))


def _kind(value: str) -> str:
    """The kind of secret the value gives away (``jwt``, ``private_key``, ...), ``none`` if
    it gives none away: the kind is stored, never the value."""
    return secret_kind(REFERENCE.sub(REFERENCE_MARK, value)) or NO_KIND


def _envelope(payload: VariableList | Mapping[str, Any]) -> tuple[bool, list[dict[str, Any]]]:
    if isinstance(payload, Mapping):
        items = payload.get("variables") or []
        found = [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []
        return payload.get("values_redacted") is True, found
    return bool(payload.values_redacted), list(payload.variables)


def _references(
    conformer: Conformer,
    item: dict[str, Any],
    level: str,
    owner: Owner,
    parsed: list[Reference],
    api_refs: list[dict[str, Any]],
) -> list[Row]:
    """One row per distinct expression, from the value and from the API's references."""
    base = {"variable_name": item.get("name"), "level": level, **owner.columns()}
    by_token: dict[str, dict[str, Any]] = {}
    for ref in parsed:
        by_token.setdefault(
            ref.token,
            {"token": ref.token, "key": ref.key, "source_type": ref.source_type}
            | {"source_id": ref.source_id},
        )
    for api_ref in api_refs:
        token = api_ref.get("token")
        # only an expression is kept as the token: anything else might be a value
        safe = token if isinstance(token, str) and REFERENCE.fullmatch(token) else None
        entry = by_token.setdefault(safe or f"#{len(by_token)}", {"token": safe})
        for column in ("key", "resolved", "source_type", "source_id", "source_name"):
            if api_ref.get(column) is not None:
                entry[column] = api_ref.get(column)
    ordered = enumerate(by_token.values())
    return conformer.rows("variable_references", ({**base, **e, "position": i} for i, e in ordered))
