"""What a faulted response looks like on the wire; `faults.FaultMiddleware` decides when.

Errors are the error object of spec part 7 (`type`, `status`, `message`, `request_id`),
with `X-Request-Id` and, for 429 and 503, `Retry-After`. Broken successes are cut in half
or replaced by one of a few non-JSON bodies. Drift keeps a success valid JSON but adds an
unknown field to every object under `data` and replaces every enumerated value with one
no client has seen, leaving ids alone. Duplication lists every record of a list twice, the
copy under the same id with different content (`COPY_FIELD`).
"""

from __future__ import annotations

import json
import math
import uuid
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import TYPE_CHECKING, Any

from toolkit.sim.errors import ApiError, error_body, validation_failed

if TYPE_CHECKING:
    from starlette.types import Message, Send

__all__ = [
    "COPY_FIELD",
    "ENUM_FIELDS",
    "UNKNOWN_ENUM_VALUE",
    "UNKNOWN_FIELD",
    "drifted",
    "duplicated",
    "ensure_request_id",
    "malformed",
    "send_error",
    "set_length",
    "truncated",
    "with_request_id",
]

UNKNOWN_FIELD = "x_sim_unknown"
UNKNOWN_ENUM_VALUE = "future-state"
COPY_FIELD = "x_sim_copy"
# Fields whose values are enumerations (spec part 2 and api-facts); drift replaces them.
ENUM_FIELDS = frozenset(
    {"status", "health", "type", "mount_status", "builder", "source_type", "protocol", "role"}
)
_ERROR_TYPES = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found"}
_ERROR_TYPES |= {409: "conflict", 429: "rate_limited", 500: "internal_error"}  # spec part 7
_MESSAGES = {
    429: "Too many requests; wait as long as Retry-After says, then try again",
    500: "Internal error (injected by the simulator)",
    502: "The upstream server returned an invalid response",
    503: "The service is temporarily unavailable",
    504: "The upstream server did not answer in time",
}
_MALFORMED_BODIES = (
    b"<!DOCTYPE html><html><head><title>Gateway</title></head><body>hiccup</body></html>",
    b'{"data": [{"id": "3f0c1b5e-unterminated',
    b'{"data": {"name": "\xff\xfe not utf-8"}}',
    b'{"data": []}\n{"data": []}',
)


def truncated(body: bytes) -> bytes:
    """The first half: never valid JSON for an object body."""
    return body[: len(body) // 2]


def malformed(pick: float) -> bytes:
    """One of the broken bodies, chosen by `pick` in [0, 1)."""
    return _MALFORMED_BODIES[int(pick * len(_MALFORMED_BODIES))]


def drifted(body: bytes) -> bytes:
    """The `{data}` envelope with `_drift` applied to `data`; anything else unchanged."""
    try:
        document = json.loads(body)
    except ValueError:
        return body
    if not isinstance(document, dict) or "data" not in document:
        return body
    document["data"] = _drift(document["data"])
    return json.dumps(document).encode()


def _drift(value: Any) -> Any:
    """Add an unknown field to every object and an unknown value to every enum field."""
    if isinstance(value, list):
        return [_drift(item) for item in value]
    if not isinstance(value, dict):
        return value
    changed = {
        key: UNKNOWN_ENUM_VALUE if key in ENUM_FIELDS and isinstance(item, str) else _drift(item)
        for key, item in value.items()
    }
    changed[UNKNOWN_FIELD] = {"since": "2099-01-01", "flags": ["beta"], "weight": 1.5}
    return changed


def duplicated(body: bytes) -> bytes:
    """The `{data}` envelope with every record listed twice: `data` itself when it is a list,
    else each list of objects among its members (`variables`, `deployments`). Each copy
    follows its original, same id, with `COPY_FIELD` added; anything else unchanged."""
    try:
        document = json.loads(body)
    except ValueError:
        return body
    if not isinstance(document, dict) or "data" not in document:
        return body
    data = document["data"]
    if isinstance(data, list):
        document["data"] = _twice(data)
    elif isinstance(data, dict):
        document["data"] = {k: _twice(v) if isinstance(v, list) else v for k, v in data.items()}
    return json.dumps(document).encode()


def _twice(items: list[Any]) -> list[Any]:
    out: list[Any] = []
    for item in items:
        out.append(item)
        if isinstance(item, dict):
            out.append({**item, COPY_FIELD: 2})
    return out


async def send_error(
    send: Send, status: int, retry_after_s: float, as_date: bool, *, ids: bool = True
) -> None:
    """Answer `status` with the error object; Retry-After for 429 (and 503 when > 0).

    `ids` False leaves out `request_id` and `X-Request-Id` (the real platform sends none).
    """
    request_id = str(uuid.uuid4()) if ids else None
    error_type = _ERROR_TYPES.get(status, "error" if status >= 500 else "bad_request")
    error = ApiError(status, error_type, _MESSAGES.get(status, f"Injected {error_type} fault"))
    if status == 422:
        error = validation_failed(["injected validation fault (simulator fault profile)"])
    body = json.dumps(error_body(error, request_id)).encode()
    headers = [(b"content-type", b"application/json")]
    if request_id is not None:
        headers.append((b"x-request-id", request_id.encode()))
    if status == 429 or (status == 503 and retry_after_s):
        headers.append((b"retry-after", _retry_after(retry_after_s, as_date)))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _retry_after(seconds: float, as_date: bool) -> bytes:
    whole = math.ceil(seconds)
    if as_date:
        # An HTTP date has whole-second precision: round up so a client never comes early.
        when = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=whole + 1)
        return format_datetime(when, usegmt=True).encode()
    return str(whole).encode()


def ensure_request_id(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """`headers` with an `X-Request-Id`, a new one when the app sent none (spec part 7)."""
    if not any(k.lower() == b"x-request-id" for k, _ in headers):
        headers.append((b"x-request-id", str(uuid.uuid4()).encode()))
    return headers


def set_length(headers: list[tuple[bytes, bytes]], length: int) -> list[tuple[bytes, bytes]]:
    """`headers` announcing `length` bytes of body."""
    kept = [(k, v) for k, v in headers if k.lower() != b"content-length"]
    return [*kept, (b"content-length", str(length).encode())]


def with_request_id(send: Send) -> Send:
    """`send` that adds an `X-Request-Id` to a response start lacking one."""

    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": ensure_request_id(list(message.get("headers", [])))}
        await send(message)

    return wrapped
