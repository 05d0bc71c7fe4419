"""The error object of spec part 7, raised by handlers and rendered by the app.

Handlers raise `ApiError` (usually through one of the small constructors below); the app
turns it into `{type, status, message, details?, request_id}` with the same id in the
`X-Request-Id` header. Types and statuses are fixed by the spec's table:

    raise not_found("service")        # 404 not_found
    raise read_only()                 # 403 forbidden, "This API key is read only"
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ApiError",
    "bad_request",
    "conflict",
    "error_body",
    "forbidden",
    "not_found",
    "read_only",
    "session_only",
    "unauthorized",
    "validation_failed",
]


class ApiError(Exception):
    """One error answer: status, stable type, human message, optional details."""

    def __init__(
        self, status: int, type_: str, message: str, details: list[str] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.type = type_
        self.message = message
        self.details = details or []


def error_body(error: ApiError, request_id: str | None) -> dict[str, Any]:
    """The wire form of `error`; `details` appears only when there are any, `request_id`
    only when given (the real platform's variant sends none)."""
    body: dict[str, Any] = {"type": error.type, "status": error.status, "message": error.message}
    if error.details:
        body["details"] = error.details
    if request_id is not None:
        body["request_id"] = request_id
    return body


def bad_request(message: str) -> ApiError:
    return ApiError(400, "bad_request", message)


def unauthorized(message: str) -> ApiError:
    return ApiError(401, "unauthorized", message)


def forbidden(message: str) -> ApiError:
    return ApiError(403, "forbidden", message)


def read_only() -> ApiError:
    return ApiError(403, "forbidden", "This API key is read only")


def session_only() -> ApiError:
    return ApiError(403, "forbidden", "This endpoint cannot be used with an API key")


def not_found(what: str) -> ApiError:
    return ApiError(404, "not_found", f"The {what} does not exist or is not visible to you")


def conflict(message: str) -> ApiError:
    return ApiError(409, "conflict", message)


def validation_failed(details: list[str]) -> ApiError:
    return ApiError(422, "validation_error", "validation failed", details)
