"""The `httpx.AsyncClient` under the request runner: headers, pool limits, no cookies.

>>> from toolkit.api import ClientConfig, Secret
>>> client = http_client(ClientConfig(base_url="http://127.0.0.1:8080", token=Secret("t")))
>>> client.headers["Accept"], len(client.cookies)
('application/json', 0)
"""

from __future__ import annotations

from http.cookiejar import CookieJar
from typing import TYPE_CHECKING, Any

import httpx

from toolkit.api import _connection_pool as connection_pool

if TYPE_CHECKING:
    from toolkit.api._config import ClientConfig

__all__ = ["http_client"]


class _NoCookies(CookieJar):
    """A cookie jar that keeps nothing.

    The API authenticates every request with its bearer token and sets no cookie (spec
    part 5), so a cookie a proxy or a misconfigured platform might set has no business
    riding along on later requests. httpx still hands every answer to its jar, and the
    standard jar parsed each one's headers into an e-mail message to look for `Set-Cookie`:
    about a tenth of a crawl's CPU.
    """

    def extract_cookies(self, response: Any, request: Any) -> None:
        return None

    def set_cookie(self, cookie: Any) -> None:
        return None


def http_client(
    config: ClientConfig, transport: httpx.AsyncBaseTransport | None = None
) -> httpx.AsyncClient:
    """The client for `config`'s base URL and token; `transport` replaces the network (tests).

    Without `transport` its pool is the crawl's `FairConnectionPool` (see
    `toolkit.api._connection_pool`), keeping as many connections alive as requests may be
    in flight.
    """
    limits = httpx.Limits(
        max_connections=max(100, config.concurrency),
        max_keepalive_connections=config.concurrency,
    )
    ssl_context = httpx.create_ssl_context()  # one for httpx's transports and the pool
    client = httpx.AsyncClient(
        transport=transport,
        verify=ssl_context,
        limits=limits,
        cookies=_NoCookies(),
        timeout=config.timeout_s,
        follow_redirects=False,
        headers={
            "Authorization": f"Bearer {config.token.reveal()}",
            "Accept": "application/json",
            "User-Agent": config.user_agent,
        },
    )
    connection_pool.install(client, limits, ssl_context)
    return client
