"""The error object of spec part 7 read into the exception of :mod:`toolkit.api._exceptions`
that names it: by its ``type``, by the status when the type is unknown, and a path the
server lacks told apart from a resource this credential cannot see."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from toolkit.api._exceptions import (
    PREFIX_HINT,
    ApiError,
    BadRequest,
    Conflict,
    EndpointMissing,
    Forbidden,
    InternalError,
    NotFound,
    RateLimited,
    ReadOnlyKey,
    SessionOnlyEndpoint,
    Unauthorized,
    UpstreamError,
    ValidationFailed,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping


MISSING_STATUSES = frozenset({405, 501})
"""Statuses that say the path (or its method) does not exist, whatever the body."""


def is_error_object(body: Mapping[str, Any] | None) -> bool:
    """Whether `body` is the error object of part 7 (a string `type` and `message`)."""
    if body is None:
        return False
    return bool(_text(body.get("type"))) and isinstance(body.get("message"), str)


_BY_TYPE: dict[str, type[ApiError]] = {
    cls.error_type: cls
    for cls in (
        BadRequest,
        Unauthorized,
        Forbidden,
        NotFound,
        Conflict,
        ValidationFailed,
        RateLimited,
        InternalError,
        UpstreamError,
    )
}
_BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    422: ValidationFailed,
    429: RateLimited,
    500: InternalError,
    502: UpstreamError,
    503: UpstreamError,
    504: UpstreamError,
}
_FORBIDDEN_VARIANTS: dict[str, type[Forbidden]] = {
    "this api key is read only": ReadOnlyKey,
    "this endpoint cannot be used with an api key": SessionOnlyEndpoint,
}


def error_class(status: int, error_type: str | None, message: str) -> type[ApiError]:
    """Pick the exception class for an error answer: by `type`, else by status."""
    cls = _BY_TYPE.get(error_type or "") or _BY_STATUS.get(status, ApiError)
    if issubclass(cls, Forbidden):
        return _FORBIDDEN_VARIANTS.get(message.strip().rstrip(".").lower(), cls)
    return cls


def api_error(
    status: int,
    body: Mapping[str, Any] | None,
    *,
    endpoint: str,
    header_request_id: str | None,
    fallback_message: str,
    scrub: Callable[[str], str] = str,
    names_resource: bool = True,
    path: str | None = None,
    content_type: str | None = None,
) -> ApiError:
    """Build the `ApiError` for an error answer; `body` is the parsed JSON object, if any.

    `fallback_message` describes a body that is not the error object (HTML, empty,
    truncated). `scrub` removes secrets from any text the server sent back.
    `names_resource` says whether the request named a resource (an id): a 404 to one that
    named none cannot mean "not visible", so it is `EndpointMissing`, as is 405, 501 and
    a 404 that is not the error object. `path` and `content_type` describe the call.
    """
    if status in MISSING_STATUSES or (
        status == 404 and not (names_resource and is_error_object(body))
    ):
        said = scrub(_text((body or {}).get("message")) or fallback_message)
        return EndpointMissing(
            f"the server has no endpoint at {path or 'the path called'}: it answered "
            f"{status} ({content_type or 'no content type'}): {said}",
            endpoint=endpoint,
            status=status,
            path=path,
            content_type=content_type,
            request_id=_text((body or {}).get("request_id")) or header_request_id,
        )
    body = body or {}
    error_type = _text(body.get("type"))
    message = scrub(_text(body.get("message")) or fallback_message)
    raw_details = body.get("details")
    details = [scrub(str(d)) for d in raw_details] if isinstance(raw_details, list) else []
    request_id = plain_request_id(_text(body.get("request_id"))) or header_request_id
    cls = error_class(status, error_type, message)
    hint = None
    if status == 404 and endpoint == "users.me":
        hint = f"{PREFIX_HINT}, and the endpoint path override for {endpoint}"
    return cls(
        message,
        endpoint=endpoint,
        status=status,
        details=details,
        request_id=request_id,
        error_type=error_type,
        hint=hint,
    )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


_PLAIN_REQUEST_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
UNSHOWN_REQUEST_ID = "***"


def plain_request_id(value: str | None) -> str | None:
    """A request id a server sent, when it is a plain identifier (letters, digits, ``._:-``,
    at most 128 characters); anything else (a URL, a ``key=value``, a line break, a page
    of text) is shown and stored as ``***``: it is the server's text, and may hold anything.

    >>> plain_request_id("req-7f3a"), plain_request_id("https://x?sig=abc"), plain_request_id(None)
    ('req-7f3a', '***', None)
    """
    if value is None or _PLAIN_REQUEST_ID.fullmatch(value):
        return value
    return UNSHOWN_REQUEST_ID
