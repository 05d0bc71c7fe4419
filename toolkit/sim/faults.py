"""Fault injection for the simulator: a pure ASGI middleware driven by a `FaultProfile`.

Per request it may add latency, answer 429 with `Retry-After` or 502/503/504, drop the
connection half-way through a body, cut or break the JSON of a success, make the JSON
drift (unknown fields, unknown enum values), or list every record twice under its id:
what a real platform does on a bad day.

    sim.set_faults("flaky")                           # a named profile, see PROFILES
    sim.set_faults(FaultProfile(rate_5xx=0.2, seed=3))
    sim.set_faults(resolve_profile("rate_5xx=0.2,latency_ms=50"))   # the CLI form

How a request is decided, in order: `GET .../openapi.json` and paths outside
`profile.paths` are never faulted; the first `fail_first` requests answer `fail_status`;
past `rate_limit_per_minute` (per client IP, sliding window) the answer is 429; otherwise
ONE random roll picks at most one fault, so each `rate_*` is that fault's exact
probability. Each request draws three random numbers whatever happens, so faults repeat
given `seed` and the order of requests. The state (RNG, counters, rate windows) belongs to
the profile object: when `get_profile` returns a different object, it starts afresh.

Its errors are the error object of spec part 7; every response has an `X-Request-Id`. A
drop runs the inner app first (the change may have happened: spec part 7 rule 4), sends
the full Content-Length and half the body, and returns: uvicorn closes the connection.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import functools
import logging
import random
import time
from collections import deque
from typing import TYPE_CHECKING, Any, get_type_hints

from toolkit.sim.fault_responses import (
    COPY_FIELD,
    UNKNOWN_ENUM_VALUE,
    UNKNOWN_FIELD,
    drifted,
    duplicated,
    ensure_request_id,
    malformed,
    send_error,
    set_length,
    truncated,
    with_request_id,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = [
    "COPY_FIELD",
    "PROFILES",
    "UNKNOWN_ENUM_VALUE",
    "UNKNOWN_FIELD",
    "FaultMiddleware",
    "FaultProfile",
    "resolve_profile",
]

_FAULTS = ("429", "5xx", "drop", "truncate", "malformed", "unknown_fields", "duplicate")
_RATES = tuple(f"rate_{fault}" for fault in _FAULTS)
_COUNTS = (
    "latency_ms",
    "latency_jitter_ms",
    "retry_after_s",
    "fail_first",
    "rate_limit_per_minute",
)
_WINDOW_S = 60.0
# Set while a response is cut on purpose, so uvicorn's "returned without completing
# response" error for it stays out of the log (uvicorn logs it in the same task).
_DROPPING = contextvars.ContextVar("sim_fault_dropping", default=False)


class _DeliberateDropFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not (_DROPPING.get() and "without completing response" in record.getMessage())


_DROP_FILTER = _DeliberateDropFilter()


@dataclasses.dataclass(frozen=True, kw_only=True)
class FaultProfile:
    """What goes wrong, how often. All rates are probabilities per request (0..1).

    The seven rates are exclusive (one roll picks at most one fault per request), so they
    must add up to at most 1. `rate_limit_per_minute=0` means no limit; `paths=None` means
    every path, else the path suffixes that may be faulted, e.g. `("/services/list",)`.

    >>> FaultProfile(rate_5xx=0.2, latency_ms=50, seed=7).rate_5xx
    0.2
    """

    latency_ms: float = 0.0
    latency_jitter_ms: float = 0.0
    rate_429: float = 0.0
    retry_after_s: int = 1
    retry_after_http_date: bool = False
    rate_5xx: float = 0.0
    rate_drop: float = 0.0
    rate_truncate: float = 0.0
    rate_malformed: float = 0.0
    rate_unknown_fields: float = 0.0
    rate_duplicate: float = 0.0
    rate_limit_per_minute: int = 0
    seed: int = 0
    fail_first: int = 0
    fail_status: int = 503
    paths: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        for name in _RATES:
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name}={value!r}: give a probability between 0 and 1")
        total = sum(getattr(self, name) for name in _RATES)
        if total > 1.0 + 1e-9:
            raise ValueError(
                f"{' + '.join(_RATES)} = {total:g}: a request gets at most one of these "
                "faults, so lower them until they add up to 1 or less"
            )
        for name in _COUNTS:
            if not getattr(self, name) >= 0:
                raise ValueError(f"{name}={getattr(self, name)!r}: give 0 (none) or more")
        if not 400 <= self.fail_status <= 599:
            raise ValueError(f"fail_status={self.fail_status}: give an error status (400-599)")
        if self.paths is not None and (
            not isinstance(self.paths, tuple)
            or not all(isinstance(p, str) and p.startswith("/") for p in self.paths)
        ):
            raise ValueError(
                f"paths={self.paths!r}: give a tuple of path suffixes starting with '/', "
                "e.g. ('/services/list',), or None for every path"
            )


PROFILES: dict[str, FaultProfile] = {
    "none": FaultProfile(),
    "slow": FaultProfile(latency_ms=200, latency_jitter_ms=300),
    "flaky": FaultProfile(
        latency_jitter_ms=20, rate_429=0.05, rate_5xx=0.1, rate_drop=0.03, retry_after_s=1
    ),
    "rate-limited": FaultProfile(rate_limit_per_minute=600),
    "chaos": FaultProfile(
        latency_ms=5,
        latency_jitter_ms=45,
        rate_429=0.05,
        rate_5xx=0.08,
        rate_drop=0.03,
        rate_truncate=0.03,
        rate_malformed=0.03,
        rate_unknown_fields=0.2,
        rate_limit_per_minute=3000,
    ),
    "drift": FaultProfile(rate_unknown_fields=1.0),
}


def resolve_profile(spec: str | FaultProfile) -> FaultProfile:
    """Turn a profile, a profile name or the CLI form into a fresh `FaultProfile`.

    The CLI form is a comma-separated list of `field=value`, optionally starting with a
    profile name to change: `"rate_5xx=0.2,latency_ms=50"`, `"flaky,seed=3"`,
    `"paths=/services/list|/teams/list,fail_first=2"`. A new object is returned every
    time, so setting a profile again restarts its counters (see `FaultMiddleware`).

    >>> resolve_profile("flaky,seed=3").seed
    3
    """
    if isinstance(spec, FaultProfile):
        return dataclasses.replace(spec)
    base, changes = FaultProfile(), {}
    for index, item in enumerate(part.strip() for part in spec.split(",")):
        if "=" not in item:
            if index > 0 or item not in PROFILES:
                raise ValueError(
                    f"unknown fault profile {item!r}: use one of {', '.join(PROFILES)}, "
                    "or fields like 'rate_5xx=0.2,latency_ms=50'"
                )
            base = PROFILES[item]
            continue
        name, _, text = (s.strip() for s in item.partition("="))
        changes[name] = _parse_field(name, text)
    return dataclasses.replace(base, **changes)


def _parse_field(name: str, text: str) -> Any:
    hints = get_type_hints(FaultProfile)
    if name not in hints:
        fields = ", ".join(f.name for f in dataclasses.fields(FaultProfile))
        raise ValueError(f"unknown fault field {name!r}: use one of {fields}")
    hint = hints[name]
    try:
        if hint is bool:
            if text.lower() not in {"true", "false", "1", "0", "yes", "no"}:
                raise ValueError(text)
            return text.lower() in {"true", "1", "yes"}
        if hint is int or hint is float:
            return hint(text)
    except ValueError:
        kind = {bool: "true or false", int: "whole number", float: "number"}[hint]
        raise ValueError(f"{name}={text!r}: give a {kind}") from None
    if text.lower() in {"", "none"}:
        return None
    return tuple(part for part in text.split("|") if part)


@dataclasses.dataclass
class _State:
    """Everything the middleware remembers for one profile object."""

    profile: FaultProfile
    rng: random.Random
    seen: int = 0
    windows: dict[str, deque[float]] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class _Decision:
    fault: str  # pass, status, drop, truncate, malformed, drift, duplicate
    status: int = 200
    delay_s: float = 0.0
    retry_after_s: float = 0.0
    retry_as_date: bool = False
    pick: float = 0.0


class FaultMiddleware:
    """Pure ASGI middleware injecting the faults of `get_profile()`, called per request so
    the simulator swaps profiles at runtime. `clock` (monotonic seconds) is for tests.

        app = FaultMiddleware(app, get_profile=lambda: sim.faults)
    """

    def __init__(
        self,
        app: ASGIApp,
        get_profile: Callable[[], FaultProfile],
        *,
        clock: Callable[[], float] = time.monotonic,
        request_ids: bool = True,
    ) -> None:
        self.app = app
        self._get_profile = get_profile
        self._ids = request_ids  # False: no X-Request-Id, no request_id (the real variant)
        self._clock = clock
        self._state: _State | None = None
        logging.getLogger("uvicorn.error").addFilter(_DROP_FILTER)  # no-op when present

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        decision = self._decide(scope)
        if decision.delay_s > 0:
            await asyncio.sleep(decision.delay_s)
        if decision.fault == "pass":
            await self.app(scope, receive, with_request_id(send) if self._ids else send)
        elif decision.fault == "status":
            d = decision
            await send_error(send, d.status, d.retry_after_s, d.retry_as_date, ids=self._ids)
        else:
            await self._transform(scope, receive, send, decision)

    def _decide(self, scope: Scope) -> _Decision:
        """Pick this request's fault; synchronous, so arrival order fixes the outcome."""
        profile = self._get_profile()
        path: str = scope["path"]
        if path.endswith("/openapi.json") or (
            profile.paths is not None and not path.endswith(profile.paths)
        ):
            return _Decision("pass")
        state = self._state
        if state is None or state.profile is not profile:
            state = self._state = _State(profile, random.Random(profile.seed))
        jitter, roll, pick = state.rng.random(), state.rng.random(), state.rng.random()
        delay_s = (profile.latency_ms + jitter * profile.latency_jitter_ms) / 1000
        error = functools.partial(
            _Decision, "status", delay_s=delay_s, retry_as_date=profile.retry_after_http_date
        )
        state.seen += 1
        if state.seen <= profile.fail_first:
            return error(profile.fail_status, retry_after_s=profile.retry_after_s)
        if profile.rate_limit_per_minute:
            wait_s = self._admit(state, scope)
            if wait_s > 0:
                return error(429, retry_after_s=wait_s)
        if roll < profile.rate_429:
            return error(429, retry_after_s=profile.retry_after_s)
        roll -= profile.rate_429
        if roll < profile.rate_5xx:
            return error((502, 503, 504)[int(pick * 3)], retry_after_s=profile.retry_after_s)
        roll -= profile.rate_5xx
        for fault in ("drop", "truncate", "malformed"):
            rate: float = getattr(profile, f"rate_{fault}")
            if roll < rate:
                return _Decision(fault, delay_s=delay_s, pick=pick)
            roll -= rate
        if roll < profile.rate_unknown_fields:
            return _Decision("drift", delay_s=delay_s)
        roll -= profile.rate_unknown_fields
        if roll < profile.rate_duplicate:
            return _Decision("duplicate", delay_s=delay_s)
        return _Decision("pass", delay_s=delay_s)

    def _admit(self, state: _State, scope: Scope) -> float:
        """Sliding-window limit per client IP: 0 when admitted, else seconds to wait."""
        client = scope.get("client")
        window = state.windows.setdefault(client[0] if client else "unknown", deque())
        now = self._clock()
        while window and window[0] <= now - _WINDOW_S:
            window.popleft()
        if len(window) >= state.profile.rate_limit_per_minute:
            return max(window[0] + _WINDOW_S - now, 0.001)
        window.append(now)
        return 0.0

    async def _transform(self, scope: Scope, receive: Receive, send: Send, d: _Decision) -> None:
        """Run the inner app to completion, then deliver its response damaged."""
        start: Message = {"type": "http.response.start", "status": 500, "headers": []}
        chunks: list[bytes] = []

        async def capture(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                start = message
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        await self.app(scope, receive, capture)
        body = b"".join(chunks)
        headers = list(start.get("headers", []))
        if self._ids:
            headers = ensure_request_id(headers)
        if d.fault == "drop":
            await send({**start, "headers": set_length(headers, max(len(body), 2))})
            half = body[: len(body) // 2]
            await send({"type": "http.response.body", "body": half, "more_body": True})
            _DROPPING.set(True)
            return  # the response is left incomplete on purpose: the server closes it
        is_json = any(k.lower() == b"content-type" and b"json" in v for k, v in headers)
        if 200 <= start["status"] < 300 and is_json:
            damage = {"truncate": truncated, "drift": drifted, "duplicate": duplicated}.get(d.fault)
            body = damage(body) if damage else malformed(d.pick)
        await send({**start, "headers": set_length(headers, len(body))})
        await send({"type": "http.response.body", "body": body})
