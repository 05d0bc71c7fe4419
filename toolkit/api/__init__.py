"""The platform API client: typed methods, one error tree, polite retries and limits.

>>> from toolkit.api import ClientConfig, PlatformClient          # doctest: +SKIP
>>> with PlatformClient(ClientConfig.from_env()) as client:       # doctest: +SKIP
...     client.me()["api_key"]["role"]
'viewer'

`AsyncPlatformClient` is the same client for asyncio code (the crawl).
"""

from __future__ import annotations

from toolkit.api._client import AsyncPlatformClient
from toolkit.api._config import ClientConfig
from toolkit.api._endpoints import CATALOGUE, Endpoint, endpoint_overrides
from toolkit.api._exceptions import (
    ApiError,
    BadRequest,
    ConfigError,
    Conflict,
    DeadlineExceeded,
    EndpointMissing,
    Forbidden,
    InternalError,
    InvalidRequest,
    MalformedResponse,
    NetworkError,
    NotFound,
    OutcomeUnknown,
    PlatformError,
    RateLimited,
    ReadOnlyKey,
    RequestError,
    ResponseTooLarge,
    SessionOnlyEndpoint,
    Unauthorized,
    UnreadableBody,
    UpstreamError,
    ValidationFailed,
    prefix_suggestion,
)
from toolkit.api._models import DeploymentPage, VariableList
from toolkit.api._secret import Secret
from toolkit.api._stats import CallStats, EndpointStats
from toolkit.api._sync import PlatformClient
from toolkit.api._validation import LEVELS, Scope

__all__ = [
    "CATALOGUE",
    "LEVELS",
    "ApiError",
    "AsyncPlatformClient",
    "BadRequest",
    "CallStats",
    "ClientConfig",
    "ConfigError",
    "Conflict",
    "DeadlineExceeded",
    "DeploymentPage",
    "Endpoint",
    "EndpointMissing",
    "EndpointStats",
    "Forbidden",
    "InternalError",
    "InvalidRequest",
    "MalformedResponse",
    "NetworkError",
    "NotFound",
    "OutcomeUnknown",
    "PlatformClient",
    "PlatformError",
    "RateLimited",
    "ReadOnlyKey",
    "RequestError",
    "ResponseTooLarge",
    "Scope",
    "Secret",
    "SessionOnlyEndpoint",
    "Unauthorized",
    "UnreadableBody",
    "UpstreamError",
    "ValidationFailed",
    "VariableList",
    "endpoint_overrides",
    "prefix_suggestion",
]
