"""Turning an HTTP answer into data or into the right error."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolkit.api._exceptions import ApiError, MalformedResponse, api_error, plain_request_id

if TYPE_CHECKING:
    from collections.abc import Callable

    import httpx


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


def request_id_of(response: httpx.Response) -> str | None:
    """The `X-Request-Id` header, sent on every answer (part 7), when it is a plain
    identifier; `***` when it is anything else (`plain_request_id`)."""
    return plain_request_id(response.headers.get("x-request-id") or None)


def decode_success(
    response: httpx.Response, endpoint: str, scrub: Callable[[str], str] = str
) -> Reply:
    """Parse a 2xx answer and unwrap its `{data: ...}` envelope."""
    request_id = request_id_of(response)
    reply = Reply(None, endpoint, response.status_code, request_id)
    try:
        body = json.loads(response.content)
    except (ValueError, UnicodeDecodeError):
        raise reply.malformed(f"the body is {scrub(describe_body(response))}") from None
    if not isinstance(body, dict) or "data" not in body:
        raise reply.malformed("the body has no `data` envelope")
    return Reply(body["data"], endpoint, response.status_code, request_id)


def decode_error(
    response: httpx.Response, endpoint: str, scrub: Callable[[str], str] = str
) -> ApiError:
    """Build the error for a non-2xx answer, whatever its body holds."""
    try:
        body = json.loads(response.content)
    except (ValueError, UnicodeDecodeError):
        body = None
    error_object = body if isinstance(body, dict) else None
    status = response.status_code
    described = scrub(describe_body(response))
    return api_error(
        status,
        error_object,
        endpoint=endpoint,
        header_request_id=request_id_of(response),
        fallback_message=f"the server answered {status} with {described}, not the error object",
        scrub=scrub,
    )


def describe_body(response: httpx.Response) -> str:
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
