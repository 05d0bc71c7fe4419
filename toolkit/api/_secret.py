"""A string that never shows itself: the API token travels wrapped in `Secret`."""

from __future__ import annotations

import hashlib

_MASK = "********"


class Secret:
    """Hold a secret string; `str()`, `repr()` and f-strings show a mask, never the value.

    The value is read only through `reveal()`, which makes every use easy to find.

    >>> token = Secret("plat_abc")
    >>> f"{token}", repr(token)
    ('********', "Secret('********')")
    >>> token.reveal()
    'plat_abc'
    """

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        if not isinstance(value, str):
            raise TypeError("Secret wraps a str")
        self._value = value

    @classmethod
    def of(cls, value: Secret | str) -> Secret:
        """Wrap `value` unless it is already a `Secret`."""
        return value if isinstance(value, Secret) else cls(value)

    def reveal(self) -> str:
        """Return the secret value. Call it only where the value must leave the process."""
        return self._value

    def fingerprint(self) -> str:
        """A short SHA-256 prefix that identifies the secret without disclosing it."""
        return hashlib.sha256(self._value.encode()).hexdigest()[:12]

    def scrub(self, text: str) -> str:
        """Return `text` with every occurrence of the secret replaced by the mask."""
        if not self._value:
            return text
        return text.replace(self._value, _MASK)

    def __bool__(self) -> bool:
        return bool(self._value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash((Secret, self._value))

    def __repr__(self) -> str:
        return f"Secret('{_MASK}')"

    def __str__(self) -> str:
        return _MASK
