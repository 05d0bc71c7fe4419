"""Every error the API client raises, as one tree.

Our exception hierarchy:

* PlatformError
  + ConfigError ............. the client configuration is missing or wrong (nothing was sent)
  + InvalidRequest .......... a call was refused locally before any request (names the field)
  + RequestError ............ a request was attempted; carries endpoint, status, message,
    |                         details, request_id, attempts
    - NetworkError .......... no whole HTTP response: connect, read, write, timeout, protocol
      · OutcomeUnknown ...... a non-idempotent request failed after it may have arrived
      · DeadlineExceeded .... the answer, body included, did not finish within deadline_s
    - ResponseTooLarge ...... an answer larger than max_response_bytes (not read further)
    - MalformedResponse ..... a success answer whose body is not the `{data: ...}` JSON
      · UnreadableBody ...... its body does not parse: cut off, not JSON, not UTF-8
    - ApiError .............. the server answered with the error object of spec part 7
      · BadRequest .......... 400 bad_request
      · Unauthorized ........ 401 unauthorized
      · Forbidden ........... 403 forbidden
        ∘ ReadOnlyKey ....... 403 "This API key is read only"
        ∘ SessionOnlyEndpoint 403 "This endpoint cannot be used with an API key"
      · NotFound ............ 404 not_found
      · Conflict ............ 409 conflict
      · ValidationFailed .... 422 validation_error
      · RateLimited ......... 429 rate_limited
      · InternalError ....... 500 internal_error
      · UpstreamError ....... 502, 503, 504 error
      · EndpointMissing ..... the server has no such endpoint: 405, 501, or a 404 that is not
                              the error object, or that answers a request naming no resource

An error body is matched by its `type` first and by its HTTP status when the type is
unknown or missing; a status outside the table gives a plain `ApiError`. A 404 is
`NotFound` ("does not exist, or the credential cannot see it", part 7) only when it carries
the error object (`type` and `message`) and the request named a resource; otherwise the
path itself is missing (a wrong prefix, a server that moved the endpoint), which is
`EndpointMissing`, never "not visible" (`toolkit.api._error_object` reads a body so).
Every message ends with what to do next.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from collections.abc import Sequence

PREFIX_HINT = "check the base URL; the API may need the /api/go prefix"
_PREFIX = "/api/go"


def prefix_suggestion(base_url: str) -> str:
    """The base URL to try when `base_url` answers like a server without the API.

    It never doubles a prefix: a URL that ends with the spec's example prefix is told to
    try without it (some servers mount the API at the root), one ending in `/api` to add
    `/go`, any other to add `/api/go`.

    >>> prefix_suggestion("https://host/api")
    'https://host/api/go'
    >>> prefix_suggestion("https://host/api/go/")
    'https://host'
    """
    root = base_url.rstrip("/")
    if root.endswith(_PREFIX):
        return root[: -len(_PREFIX)]
    if root.endswith("/api"):
        return f"{root}/go"
    return f"{root}{_PREFIX}"


class PlatformError(Exception):
    """Base class of every error raised by `toolkit.api`."""


class ConfigError(PlatformError):
    """The client configuration is missing or invalid; `setting` names the culprit."""

    def __init__(self, message: str, *, setting: str | None = None) -> None:
        super().__init__(message)
        self.setting = setting


class InvalidRequest(PlatformError):
    """A call was refused before sending anything; `field` names the argument at fault.

    >>> str(InvalidRequest("project_id", "is required for level 'service'"))
    "project_id is required for level 'service'"
    """

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field} {reason}")
        self.field = field
        self.reason = reason


class RequestError(PlatformError):
    """A request was attempted and failed. Base of network, response and API errors."""

    error_type: ClassVar[str] = "request_error"
    hint: ClassVar[str] = "see the message and the request_id"

    def __init__(
        self,
        message: str,
        *,
        endpoint: str,
        status: int | None = None,
        details: Sequence[str] = (),
        request_id: str | None = None,
        error_type: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.endpoint = endpoint
        self.status = status
        self.details = tuple(details)
        self.request_id = request_id
        self.type = error_type or type(self).error_type
        self.next_step = hint or type(self).hint
        self.attempts = 1
        self.gave_up: str | None = None
        self.retry_after: float | None = None

    def __str__(self) -> str:
        facts = [f"status {self.status}" if self.status is not None else "no response"]
        facts.append(f"type {self.type}")
        facts.append(f"request_id {self.request_id or 'unknown'}")
        text = f"{self.endpoint}: {self.message} ({', '.join(facts)})"
        if self.details:
            text += f"; details: {'; '.join(self.details)}"
        if self.gave_up:
            text += f"; {self.gave_up}"
        return f"{text}. Next: {self.next_step}"

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(endpoint={self.endpoint!r}, status={self.status!r}, "
            f"type={self.type!r}, request_id={self.request_id!r}, message={self.message!r})"
        )


class NetworkError(RequestError):
    """No HTTP response arrived; `kind` is connect, read, write, timeout, pool or protocol."""

    error_type = "network_error"
    hint = "check the network and the base URL; transient failures are retried automatically"

    def __init__(self, message: str, *, endpoint: str, kind: str, hint: str | None = None) -> None:
        super().__init__(message, endpoint=endpoint, hint=hint)
        self.kind = kind


class OutcomeUnknown(NetworkError):
    """A request that changes something failed after it may have reached the server."""

    error_type = "outcome_unknown"
    hint = (
        "the first attempt may have succeeded and was not repeated: "
        "list the resource to check before retrying"
    )


class DeadlineExceeded(NetworkError):
    """The answer, its body included, did not finish within `deadline_s` of the call's start.

    `timeout_s` bounds each read; a server that sends a byte now and then never trips it, so
    the whole call is bounded too. Never retried: the call's time is over.
    """

    error_type = "deadline_exceeded"
    hint = (
        "the server answered too slowly: check its health, or raise [client] deadline_s "
        "if its pages are really this slow"
    )


class ResponseTooLarge(RequestError):
    """An answer larger than `max_response_bytes`; reading stopped there. Never retried."""

    error_type = "response_too_large"
    hint = (
        "the answer is larger than any page should be: check the base URL; if the platform "
        "really sends pages this large, raise [client] max_response_bytes or list replicas "
        "and volumes at a lower level ([collect])"
    )


class MalformedResponse(RequestError):
    """A success answer whose body is not the `{data: ...}` JSON the endpoint promises."""

    error_type = "malformed_response"
    hint = (
        "the server answered in an unexpected shape: check the base URL and the endpoint "
        "overrides; if it is transient, retry (or set retry_malformed=True)"
    )


class UnreadableBody(MalformedResponse):
    """A success answer whose body does not parse: cut off, not JSON, or not UTF-8.

    Like a network error (spec part 7 rule 3), it is retried on reads within the same
    attempts and deadline; a change is never repeated.
    """

    hint = (
        "the body arrived cut off or garbled: it was retried on reads; if it persists, "
        "check for a proxy between you and the platform, and the base URL"
    )


class ApiError(RequestError):
    """The server answered with an error status; subclasses follow the `type` of part 7."""

    error_type = "error"
    hint = "the server answered with an unexpected status: see the message and request_id"


class BadRequest(ApiError):
    error_type = "bad_request"
    hint = "the request makes no sense as sent: check the ids and the endpoint overrides"


class Unauthorized(ApiError):
    error_type = "unauthorized"
    hint = "the key is missing, expired or revoked: create a new key and set PLATFORM_API_KEY"


class Forbidden(ApiError):
    error_type = "forbidden"
    hint = "the key's role does not allow this: use a key with a higher role (deletes need admin)"


class ReadOnlyKey(Forbidden):
    hint = "the key is a viewer and is read only: use an editor or admin key for changes"


class SessionOnlyEndpoint(Forbidden):
    hint = (
        "this endpoint answers only browser sessions, not API keys: skip it or use an access token"
    )


class NotFound(ApiError):
    error_type = "not_found"
    hint = (
        "the resource does not exist or is outside the key's limits: "
        "check the ids and the resources the key is limited to"
    )


class Conflict(ApiError):
    error_type = "conflict"
    hint = (
        "the change conflicts with the current state (a name already taken, or the "
        "project's last environment): list the resource and adjust"
    )


class ValidationFailed(ApiError):
    error_type = "validation_error"
    hint = "a field is missing or invalid: the details name it"


class RateLimited(ApiError):
    error_type = "rate_limited"
    hint = "too many requests: lower rate_per_minute or concurrency (429 is retried)"


class InternalError(ApiError):
    error_type = "internal_error"
    hint = "the platform failed internally: retry later and quote the request_id if it persists"


class UpstreamError(ApiError):
    error_type = "error"
    hint = "the platform's servers did not answer properly: retry later (502-504 are retried)"


class EndpointMissing(ApiError):
    """The server has no endpoint at the path called: a wrong base URL prefix, or a server
    whose paths differ from the catalogue's. `path` is the URL path called, `content_type`
    what came back, `setting` the configuration key that sets the endpoint's path."""

    error_type = "endpoint_missing"
    hint = PREFIX_HINT

    def __init__(
        self,
        message: str,
        *,
        endpoint: str,
        status: int | None = None,
        path: str | None = None,
        content_type: str | None = None,
        request_id: str | None = None,
    ) -> None:
        self.path = path
        self.content_type = content_type
        self.setting = endpoint_setting(endpoint)
        hint = (
            f"{PREFIX_HINT} (or carries one the server does not use); if the server serves "
            f"{endpoint} at another path, set it in the configuration: {self.setting} = "
            '"/its/path"'
        )
        super().__init__(
            message, endpoint=endpoint, status=status, request_id=request_id, hint=hint
        )


def endpoint_setting(endpoint: str) -> str:
    """The configuration key that sets `endpoint`'s path (dotted names are quoted in TOML).

    >>> endpoint_setting("replicas.list")
    '[endpoints] "replicas.list"'
    """
    return f'[endpoints] "{endpoint}"'
