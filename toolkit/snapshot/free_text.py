"""Free text as a snapshot stores it: scrubbed of credentials and bounded in length.

A free-text field (a description, a deployment's error, a start command) is whatever the
platform's users or runtime wrote, of any size: a 50 MB description would be stored whole
in every snapshot. Stored text keeps its first `FREE_TEXT_LIMIT` characters, scrubbed
(`scrub_text`), followed by a marker with the original length:

>>> stored_text("connect postgres://app:s3cr3t@db/app")
'connect postgres://***@db/app'
>>> stored_text("x" * 5000, limit=8)
'xxxxxxxx…[truncated, 5000 chars]'
"""

from __future__ import annotations

from toolkit.snapshot.redaction import scrub_text

__all__ = ["FREE_TEXT_LIMIT", "TRUNCATED", "stored_text"]

FREE_TEXT_LIMIT = 8192
"""Characters of one free-text value kept: a long stack trace or a page of description."""
TRUNCATED = "…[truncated, {length} chars]"
"""What follows a cut value; `length` is the original's length in characters."""
_GUARD = 1024
# Characters scrubbed past the limit and then dropped: a credential cut by the first cut
# could escape the scrubber's patterns, so that end never reaches the store.


def stored_text(text: str, *, limit: int = FREE_TEXT_LIMIT) -> str:
    """`text` scrubbed, and cut to `limit` characters plus a marker when longer.

    Only the first `limit + 1024` characters are scrubbed (the patterns need not run over
    megabytes); the last 1024 of those, where a credential may have been cut in two, are
    dropped with the rest.
    """
    if len(text) <= limit:
        return scrub_text(text)
    scrubbed = scrub_text(text[: limit + _GUARD])
    kept = scrubbed[: max(0, min(limit, len(scrubbed) - _GUARD))]
    return kept + TRUNCATED.format(length=len(text))
