"""Turning an HTTP answer into data or into the right error.

A body is read as a stream and never past `max_response_bytes` (`read_capped`), so an
endless or enormous answer costs at most that much memory.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolkit.api._error_object import api_error, plain_request_id
from toolkit.api._exceptions import (
    ApiError,
    MalformedResponse,
    ResponseTooLarge,
    UnreadableBody,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    import httpx


@dataclass(frozen=True, slots=True)
class Answer:
    """An HTTP answer read whole: status, headers, the (decoded) body bytes, and the URL path
    that was called (None for an answer built without its request)."""

    status: int
    headers: httpx.Headers
    content: bytes
    path: str | None = None

    @property
    def is_success(self) -> bool:
        return 200 <= self.status < 300


async def read_capped(response: httpx.Response, limit: int, endpoint: str) -> Answer:
    """Read a streamed `response` whole, refusing to hold more than `limit` body bytes.

    A `Content-Length` over the limit is refused before any byte is read; a body without
    one (chunked, or read until the connection closes) is counted as it arrives. The cap
    applies to the decoded bytes, so a compressed body cannot expand past it either.
    """
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise _too_large(response, endpoint, limit, f"it declares {int(declared):,} bytes")
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > limit:
            raise _too_large(response, endpoint, limit, f"more than {limit:,} bytes arrived")
    try:
        path: str | None = response.request.url.path
    except RuntimeError:  # a response built without its request (tests, notebooks)
        path = None
    return Answer(response.status_code, response.headers, bytes(body), path)


def _too_large(response: httpx.Response, endpoint: str, limit: int, what: str) -> ResponseTooLarge:
    return ResponseTooLarge(
        f"the {response.status_code} answer is larger than max_response_bytes "
        f"({limit:,}): {what}; it was not read further",
        endpoint=endpoint,
        status=response.status_code,
        request_id=request_id_of(response),
    )


@dataclass(frozen=True, slots=True)
class Reply:
    """The unwrapped `data` of a success answer, with what is needed to report on it."""

    data: Any
    endpoint: str
    status: int
    request_id: str | None

    def malformed(self, problem: str) -> MalformedResponse:
        """A `MalformedResponse` about this reply, e.g. `reply.malformed("expected a list")`."""
        return MalformedResponse(
            f"the {self.status} answer is not as expected: {problem}",
            endpoint=self.endpoint,
            status=self.status,
            request_id=self.request_id,
        )

    def items(self) -> list[dict[str, Any]]:
        """`data` as a list of JSON objects."""
        return self.object_list(self.data, "data")

    def object(self) -> dict[str, Any]:
        """`data` as one JSON object."""
        if not isinstance(self.data, dict):
            raise self.malformed(f"`data` should be an object, got {_kind(self.data)}")
        return self.data

    def object_list(self, value: Any, where: str) -> list[dict[str, Any]]:
        """Check that `value` (found at `where`) is a list of JSON objects."""
        if not isinstance(value, list):
            raise self.malformed(f"`{where}` should be a list, got {_kind(value)}")
        for item in value:
            if not isinstance(item, dict):
                raise self.malformed(f"`{where}` should hold objects, got {_kind(item)}")
        return value


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def request_id_of(response: httpx.Response | Answer) -> str | None:
    """The `X-Request-Id` header, sent on every answer (part 7), when it is a plain
    identifier; `***` when it is anything else (`plain_request_id`)."""
    return plain_request_id(response.headers.get("x-request-id") or None)


def decode_success(response: Answer, endpoint: str, scrub: Callable[[str], str] = str) -> Reply:
    """Parse a 2xx answer and unwrap its `{data: ...}` envelope.

    A body that does not parse is an `UnreadableBody` (retried on reads, like a cut-off
    connection); one that nests deeper than the parser can follow, or has no envelope, is a
    `MalformedResponse` (the same answer would come again).
    """
    request_id = request_id_of(response)
    reply = Reply(None, endpoint, response.status, request_id)
    try:
        body = json.loads(response.content)
    except (ValueError, UnicodeDecodeError):
        raise UnreadableBody(
            f"the {response.status} answer does not parse: the body is "
            f"{scrub(describe_body(response))}",
            endpoint=endpoint,
            status=response.status,
            request_id=request_id,
        ) from None
    except RecursionError:
        raise reply.malformed(
            f"the body nests deeper than the JSON parser follows ({len(response.content):,} "
            "bytes); no platform page does"
        ) from None
    if not isinstance(body, dict) or "data" not in body:
        raise reply.malformed("the body has no `data` envelope")
    return Reply(body["data"], endpoint, response.status, request_id)


def decode_error(
    response: Answer,
    endpoint: str,
    scrub: Callable[[str], str] = str,
    *,
    names_resource: bool = True,
) -> ApiError:
    """Build the error for a non-2xx answer, whatever its body holds.

    `names_resource` says whether the request carried an id (see `api_error`)."""
    try:
        body = json.loads(response.content)
    except (ValueError, UnicodeDecodeError, RecursionError):
        body = None
    error_object = body if isinstance(body, dict) else None
    status = response.status
    described = scrub(describe_body(response))
    return api_error(
        status,
        error_object,
        endpoint=endpoint,
        header_request_id=request_id_of(response),
        fallback_message=f"the server answered {status} with {described}, not the error object",
        scrub=scrub,
        names_resource=names_resource,
        path=_path_called(response),
        content_type=response.headers.get("content-type"),
    )


def _path_called(response: Answer) -> str | None:
    """The URL path of the request (no query: ids only, and no place for the path)."""
    return response.path


def describe_body(response: Answer) -> str:
    """Say in a few words what a body that is not the expected JSON holds."""
    content = response.content.strip()
    content_type = response.headers.get("content-type", "no content type")
    if not content:
        return "an empty body"
    if "html" in content_type or content[:1] == b"<":
        return "an HTML page (from a proxy or the wrong URL?)"
    if content[:1] in (b"{", b"["):
        return f"truncated or invalid JSON ({len(response.content)} bytes)"
    text = content[:80].decode("utf-8", "replace")
    return f"a non-JSON body ({content_type}): {text!r}"
