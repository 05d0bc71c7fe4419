"""Whether a credential works: one ``/users/me`` call, its answer or the sentence that says
what to do, with the exit code. ``platform-audit check`` and the scheduled job's first step::

    outcome = probe_identity(load_settings())
    outcome.identity.role if outcome.identity else (outcome.error, outcome.exit_code)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from toolkit.api import (
    EndpointMissing,
    NotFound,
    PlatformClient,
    RequestError,
    Unauthorized,
    prefix_suggestion,
)
from toolkit.collect.identity import Identity, parse_identity
from toolkit.errors import ExitCode

if TYPE_CHECKING:
    from toolkit.config import Credential, Settings

__all__ = ["IdentityOutcome", "probe_identity"]


@dataclass(frozen=True, kw_only=True)
class IdentityOutcome:
    """The result of ``check``: an identity, or an error sentence with its exit code."""

    base_url: str
    credential: str
    identity: Identity | None = None
    error: str | None = None
    exit_code: int = 0


def probe_identity(settings: Settings, credential: Credential | None = None) -> IdentityOutcome:
    """Call ``/users/me`` once (with the client's retries) and turn the answer into an outcome.

    Configuration problems raise :class:`~toolkit.errors.ConfigError`; everything the
    platform answers becomes an outcome with an exit code and a sentence saying what to do.
    """
    cred = credential or settings.collecting
    config = settings.client_config(cred)
    outcome = partial(IdentityOutcome, base_url=config.base_url, credential=cred.name)
    try:
        with PlatformClient(config) as client:
            return outcome(identity=parse_identity(client.me()))
    except (EndpointMissing, NotFound) as exc:
        root = config.base_url.rstrip("/")
        path = getattr(exc, "path", None) or "/users/me"
        answered = f"{exc.status}, {getattr(exc, 'content_type', None) or 'no content type'}"
        return outcome(
            error=f"{root} has no /users/me (GET {path} answered {answered}): check the URL; "
            f'try --base-url {prefix_suggestion(root)}, or set [endpoints] "users.me" = '
            '"/its/path" if this server serves it at another path',
            exit_code=ExitCode.UNREACHABLE,
        )
    except Unauthorized as exc:
        return outcome(
            error=f"the platform refused credential {cred.name!r} ({exc.message}): it is missing, "
            f"expired or revoked; create a new key and export it as ${cred.token_env}",
            exit_code=ExitCode.AUTH,
        )
    except RequestError as exc:
        return outcome(error=str(exc), exit_code=ExitCode.UNREACHABLE)
