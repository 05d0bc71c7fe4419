"""The simulator's ASGI app: routing, the `{data}` envelope, errors and request ids.

One small dispatcher instead of a framework router, so that every answer (unknown path,
wrong method, bad JSON, auth failure) is the error object of spec part 7 with a
`request_id` that matches the `X-Request-Id` header. The fault middleware wraps it:

    app = build_app(sim, prefix="/api/go")   # FaultMiddleware(SimulatorApp(...))
"""

from __future__ import annotations

import json
import logging
import uuid
from typing import TYPE_CHECKING, Any, Protocol

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from toolkit.sim.auth import authenticate
from toolkit.sim.errors import ApiError, bad_request, error_body
from toolkit.sim.faults import FaultMiddleware
from toolkit.sim.lookup import Ctx
from toolkit.sim.routes_change import ROUTES as CHANGE_ROUTES
from toolkit.sim.routes_read import ROUTES as READ_ROUTES
from toolkit.sim.routes_read import Handler
from toolkit.sim.validation import Fields
from toolkit.sim.variant import Variant, variant_named

if TYPE_CHECKING:
    import threading

    from starlette.types import ASGIApp, Receive, Scope, Send

    from toolkit.sim.faults import FaultProfile
    from toolkit.sim.world import World

__all__ = ["ROUTES", "ServedWorld", "SimulatorApp", "build_app"]

ROUTES: dict[str, dict[str, Handler]] = {**READ_ROUTES, **CHANGE_ROUTES}
_log = logging.getLogger(__name__)


class ServedWorld(Protocol):
    """What the app serves: a world, the lock that guards it, the name of the variant it is
    served as, and the faults of the moment (:class:`~toolkit.sim.simulator.Simulator`)."""

    world: World
    lock: threading.RLock
    variant: str

    @property
    def faults(self) -> FaultProfile: ...


def build_app(sim: ServedWorld, prefix: str = "") -> ASGIApp:
    """The served app: the fault middleware in front of the simulator's routes."""
    inner = SimulatorApp(sim, prefix)
    return FaultMiddleware(
        inner, get_profile=lambda: sim.faults, request_ids=inner.variant.request_ids
    )


class _PageNotFound(Exception):
    """An unknown path on a variant that answers it as plain text (`404 page not found`)."""


class SimulatorApp:
    """Pure ASGI app answering every path under `prefix` (others: 404 not_found).

    The simulator's variant (`toolkit.sim.variant`) decides the served paths, the shape of
    each answer, how an unknown path is answered and whether responses carry request ids.
    """

    def __init__(self, sim: ServedWorld, prefix: str = "") -> None:
        self.sim = sim
        self.prefix = prefix.rstrip("/")
        self.variant: Variant = variant_named(sim.variant, frozenset(ROUTES))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return  # lifespan and websockets: nothing to do
        request = Request(scope, receive)
        request_id = str(uuid.uuid4())
        ids = self.variant.request_ids
        try:
            response = await self._respond(request, request_id)
        except _PageNotFound:
            response = PlainTextResponse("404 page not found", status_code=404)
        except ApiError as error:
            response = _error_response(error, request_id if ids else None)
        except Exception:  # a bug must still answer with the error object
            _log.exception("simulator handler failed")
            failure = ApiError(500, "internal_error", "The simulator failed; see its log")
            response = _error_response(failure, request_id if ids else None)
        if ids:
            response.headers["X-Request-Id"] = request_id
        await response(scope, receive, send)

    def _unknown(self, path: str, hint: str = "") -> Exception:
        if self.variant.plain_not_found:
            return _PageNotFound()
        return ApiError(404, "not_found", f"No endpoint at {path}{hint}")

    async def _respond(self, request: Request, request_id: str) -> Response:
        path = request.url.path
        if self.prefix and not (path == self.prefix or path.startswith(self.prefix + "/")):
            raise self._unknown(path, "; the base URL needs a prefix")
        relative = path[len(self.prefix) :] or "/"
        if relative == "/openapi.json" and request.method == "GET" and self.variant.name == "spec":
            from toolkit.sim.openapi import openapi_document

            return JSONResponse(openapi_document(self.prefix))
        specified = self.variant.spec_path(relative)
        methods = ROUTES.get(specified) if specified is not None else None
        if specified is None or methods is None:
            raise self._unknown(path)
        handler = methods.get(request.method)
        if handler is None:
            allowed = ", ".join(methods)
            error = ApiError(405, "method_not_allowed", f"{request.method} {path}: use {allowed}")
            rid = request_id if self.variant.request_ids else None
            return _error_response(error, rid, {"Allow": allowed})
        body = Fields({}, "body")
        if request.method in {"POST", "PUT", "DELETE"}:
            body = await _json_body(request)
        with self.sim.lock:
            caller = authenticate(self.sim.world, request.headers.get("authorization"))
            ctx = Ctx(self.sim.world, caller, Fields(request.query_params, "query"), body)
            data = self.variant.reshape(self.sim.world, specified, handler(ctx))
        return JSONResponse({"data": data})


async def _json_body(request: Request) -> Fields:
    """The JSON object body as `Fields`; 400 when it is not JSON or not an object."""
    raw = await request.body()
    if not raw.strip():
        return Fields({}, "body")
    try:
        document: Any = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise bad_request("The request body is not valid JSON") from None
    if not isinstance(document, dict):
        raise bad_request("The request body must be a JSON object")
    return Fields(document, "body")


def _error_response(
    error: ApiError, request_id: str | None, headers: dict[str, str] | None = None
) -> Response:
    return JSONResponse(error_body(error, request_id), status_code=error.status, headers=headers)
