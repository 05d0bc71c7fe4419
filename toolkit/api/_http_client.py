"""The `httpx.AsyncClient` under the request runner: headers, pool limits, no cookies, and
the requests it sends (`Requests`).

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
    from collections.abc import Mapping

    from toolkit.api._config import ClientConfig

__all__ = ["Requests", "http_client", "join_url"]


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


def join_url(base_url: str, path: str) -> str:
    """Join the base URL (which may carry a prefix) and an endpoint path, keeping both.

    >>> join_url("https://host/api/go/", "/users/me")
    'https://host/api/go/users/me'
    """
    return f"{base_url.rstrip('/')}/{path.lstrip('/')}"


class Requests:
    """Builds and sends the runner's requests on `client`'s transport, at a crawl's pace.

    A crawl sends tens of thousands of requests of a few shapes, and `AsyncClient.stream`
    spent more CPU on each than the exchange itself: it parsed and validated the whole URL
    again (two or three times, host included), merged headers, cookies and parameters, ran
    the redirect, auth and event-hook machinery the client does not use, and handed every
    answer to the cookie jar. Here each endpoint's URL is parsed once; a request only adds
    its query, encoded as httpx encodes parameters, and goes to the transport httpx would
    choose for it (the client's own, or a proxy's from the environment). The answer is the
    transport's `httpx.Response`, with its request set.

    >>> from toolkit.api import ClientConfig, Secret
    >>> config = ClientConfig(base_url="http://127.0.0.1:8080/api", token=Secret("t"))
    >>> requests = Requests(http_client(config), config.base_url)
    >>> requests.build("GET", "/teams/list", {"team_id": "a b"}, timeout_s=5.0).url
    URL('http://127.0.0.1:8080/api/teams/list?team_id=a+b')
    """

    def __init__(self, client: httpx.AsyncClient, base_url: str) -> None:
        self._client = client
        self._base_url = base_url
        self._urls: dict[str, httpx.URL] = {}

    def url(self, path: str, params: Mapping[str, Any]) -> httpx.URL:
        """The base URL, `path` and `params` as a query (what `httpx` sends for `params=`)."""
        url = self._urls.get(path)
        if url is None:
            url = self._urls[path] = httpx.URL(join_url(self._base_url, path))
        if not params:
            return url
        return with_query(url, str(httpx.QueryParams(params)))

    def build(
        self, method: str, path: str, params: Mapping[str, Any], *, timeout_s: float
    ) -> httpx.Request:
        """A request with the client's headers; `params` in the query of a GET, else as a
        JSON body. `timeout_s` bounds each of connect, write, read and pool waits."""
        extensions = {"timeout": httpx.Timeout(timeout_s).as_dict()}
        if method == "GET":
            url = self.url(path, params)
            return httpx.Request(method, url, headers=self._client.headers, extensions=extensions)
        url = self.url(path, {})
        return httpx.Request(
            method, url, headers=self._client.headers, json=dict(params), extensions=extensions
        )

    async def send(self, request: httpx.Request) -> httpx.Response:
        """Send `request` and return its answer, its body not yet read: read it, then
        `aclose()` it."""
        transport = self._client._transport_for_url(request.url)  # the proxy mounts' choice
        response = await transport.handle_async_request(request)
        response.request = request
        return response


def with_query(url: httpx.URL, query: str) -> httpx.URL:
    """`url` with `query`, a query already percent-encoded (`str(httpx.QueryParams(...))`).

    `httpx.URL.copy_with` parses and validates every part of the URL again, the host through
    `ipaddress` or IDNA: most of a request's CPU in a crawl. The parts of `url` were
    validated when it was made, and an encoded query needs no validation, so the new URL
    takes them as they are (httpx 0.28 keeps them in a named tuple; `_fast_query` checks that
    it still does, and `tests/api/test_api_http_client.py` that both ways give one URL).
    """
    if not _FAST_QUERY:
        return url.copy_with(query=query.encode("ascii"))
    fast = httpx.URL.__new__(httpx.URL)
    fast._uri_reference = url._uri_reference._replace(query=query)
    return fast


def _fast_query() -> bool:
    """Whether httpx keeps a URL's parts where `with_query` sets them, and both ways agree."""
    sample = httpx.URL("http://127.0.0.1:8080/x/y")
    reference: Any = getattr(sample, "_uri_reference", None)
    if not hasattr(reference, "_replace") or getattr(reference, "query", "?") is not None:
        return False
    fast = httpx.URL.__new__(httpx.URL)
    fast._uri_reference = reference._replace(query="a=1&b=c+d%2F")
    return fast == sample.copy_with(query=b"a=1&b=c+d%2F") and str(fast).endswith("?a=1&b=c+d%2F")


_FAST_QUERY = _fast_query()
