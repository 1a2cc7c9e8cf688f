"""Client ID Metadata Documents at OAuthProxy: a client whose client_id is the URL of its
metadata document, served by a tiny ASGI app on 127.0.0.1 (reached only under
``allow_insecure_client_metadata``, as loopback is refused otherwise). The whole browser
flow with such a client; each refusal (loopback, another client_id, an unlisted redirect
URI, too large, not JSON, too slow, a secret, not 200); caching per the document's
Cache-Control; and the URL and address checks on their own."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from mcpkit.auth._proxy._cimd import (
    DEFAULT_MAX_CLIENT_METADATA_BYTES,
    MAX_CLIENT_METADATA_TTL,
    cache_lifetime,
    check_client_id_url,
    is_public,
)
from mcpkit.auth._proxy._http import OAuthEndpointError
from tests.auth._proxy_world import (
    REDIRECT,
    World,
    authorize_url,
    call_whoami,
    pkce,
    tokens_for,
    tool_text,
    world,
)
from tests.http_server import serve_asgi

PATH = "/oauth/client.json"


@dataclass
class Document:
    """What the host answers at one path."""

    body: bytes
    status: int = 200
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    delay: float = 0.0
    chunked: bool = False


class DocumentHost:
    """An ASGI app serving client metadata documents, counting the requests per path."""

    def __init__(self) -> None:
        self.documents: dict[str, Document] = {}
        self.requests: dict[str, int] = {}
        self.hosts: list[str] = []
        self.base = ""

    def url(self, path: str = PATH) -> str:
        return f"{self.base}{path}"

    def serve(self, path: str = PATH, document: Any = None, **options: Any) -> str:
        """Serve ``document`` (a dict: JSON naming this URL unless it says otherwise; bytes
        as they are) at ``path``; returns the URL."""
        if document is None or isinstance(document, dict):
            document = json.dumps(
                {
                    "client_id": self.url(path),
                    "client_name": "Doc Client",
                    "redirect_uris": [REDIRECT],
                    "grant_types": ["authorization_code", "refresh_token"],
                    "token_endpoint_auth_method": "none",
                    **(document or {}),
                }
            ).encode()
        self.documents[path] = Document(document, **options)
        return self.url(path)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        path = scope["path"]
        self.requests[path] = self.requests.get(path, 0) + 1
        self.hosts += [v.decode() for k, v in scope["headers"] if k == b"host"]
        doc = self.documents.get(path, Document(b"not found", 404))
        if doc.delay:
            await asyncio.sleep(doc.delay)
        headers = [(b"content-type", b"application/json"), *doc.headers]
        if not doc.chunked:
            headers.append((b"content-length", str(len(doc.body)).encode()))
        await send({"type": "http.response.start", "status": doc.status, "headers": headers})
        if doc.chunked:
            for start in range(0, len(doc.body), 1024):
                chunk = doc.body[start : start + 1024]
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b"" if doc.chunked else doc.body})


@contextlib.asynccontextmanager
async def hosted(**proxy_options: Any) -> AsyncIterator[tuple[World, DocumentHost]]:
    host = DocumentHost()
    proxy_options.setdefault("allow_insecure_client_metadata", True)
    async with serve_asgi(host) as base, world(**proxy_options) as w:
        host.base = base
        yield w, host


async def refusal(http: httpx.AsyncClient, w: World, client_id: str) -> str:
    """The error page ``/authorize`` shows (never a redirect) for this client."""
    _, challenge = pkce()
    answer = await http.get(authorize_url(w, client_id, challenge))
    assert answer.status_code == 400, answer.text
    assert "location" not in answer.headers
    return answer.text


async def test_a_document_client_goes_the_whole_way_to_the_tool() -> None:
    async with asyncio.timeout(30), hosted() as (w, host), httpx.AsyncClient() as http:
        client_id = host.serve()
        meta = (await http.get(w.url("/.well-known/oauth-authorization-server"))).json()
        assert meta["client_id_metadata_document_supported"] is True
        _, challenge = pkce()
        consent = await http.get(authorize_url(w, client_id, challenge))
        assert consent.status_code == 200 and "Doc Client" in consent.text
        assert "from <strong>127.0.0.1</strong>" in consent.text and client_id in consent.text
        assert "a program on this computer" in consent.text  # a loopback redirect URI
        tokens = await tokens_for(http, w, client_id)
        seen = tool_text(await call_whoami(http, w, tokens["access_token"]))
        assert seen["client_id"] == client_id and seen["subject"] == "alice"
        refreshed = await http.post(
            w.url("/token"),
            data={
                "grant_type": "refresh_token",
                "refresh_token": tokens["refresh_token"],
                "client_id": client_id,
            },
        )
        assert refreshed.status_code == 200, refreshed.text
        assert host.hosts and all(h == host.base.removeprefix("http://") for h in host.hosts)


async def test_loopback_is_refused_without_the_flag_and_nothing_is_fetched() -> None:
    async with (
        asyncio.timeout(30),
        hosted(allow_insecure_client_metadata=False) as (w, host),
        httpx.AsyncClient() as http,
    ):
        over_http = host.serve()
        assert "must be an https URL" in await refusal(http, w, over_http)
        port = host.base.rpartition(":")[2]
        for name in ("localhost", "127.0.0.1"):
            page = await refusal(http, w, f"https://{name}:{port}{PATH}")
            assert "non-public address" in page
        assert host.requests == {}


@pytest.mark.parametrize(
    ("document", "options", "says"),
    [
        ({"client_id": "https://other.example/client.json"}, {}, "names another client_id"),
        ({"redirect_uris": ["http://127.0.0.1:1/elsewhere"]}, {}, "redirect_uri is not one"),
        ({"redirect_uris": []}, {}, "lists no redirect_uris"),
        ({"client_name": "x" * DEFAULT_MAX_CLIENT_METADATA_BYTES}, {}, "larger than 5120 bytes"),
        (
            {"client_name": "x" * DEFAULT_MAX_CLIENT_METADATA_BYTES},
            {"chunked": True},
            "larger than 5120 bytes",
        ),
        (b"<html>a page</html>", {}, "is not JSON"),
        (b"[1, 2]", {}, "is not a JSON object"),
        ({}, {"status": 404}, "answered HTTP 404, not 200"),
        (
            {},
            {"status": 302, "headers": [(b"location", b"https://example.com/c.json")]},
            "answered HTTP 302",
        ),
        ({"token_endpoint_auth_method": "client_secret_basic"}, {}, "only public clients"),
        ({"token_endpoint_auth_method": "private_key_jwt"}, {}, "only public clients"),
        ({"client_secret": "s3cret"}, {}, "holds a client secret"),
        ({"grant_types": ["implicit"]}, {}, "grant_types must include"),
    ],
)
async def test_a_document_that_cannot_be_used_is_refused(
    document: Any, options: dict[str, Any], says: str
) -> None:
    async with asyncio.timeout(30), hosted() as (w, host), httpx.AsyncClient() as http:
        page = await refusal(http, w, host.serve(document=document, **options))
        assert says in page.replace("&#x27;", "'"), page
        if "redirect_uri" in says:
            return  # a valid document (cached), the request's redirect URI not in it
        # Errors are never cached: fixed, the same URL is fetched again and accepted.
        fixed = host.serve()
        _, challenge = pkce()
        assert (await http.get(authorize_url(w, fixed, challenge))).status_code == 200


async def test_a_slow_document_times_out() -> None:
    async with (
        asyncio.timeout(30),
        hosted(client_metadata_timeout=0.5) as (w, host),
        httpx.AsyncClient() as http,
    ):
        page = await refusal(http, w, host.serve(delay=3.0))
        assert "took longer than 0.5 s" in page


async def test_a_refused_document_client_cannot_use_the_token_endpoint() -> None:
    async with asyncio.timeout(30), hosted() as (w, host), httpx.AsyncClient() as http:
        client_id = host.serve(document={"client_id": "https://other.example/c.json"})
        answer = await http.post(
            w.url("/token"),
            data={"grant_type": "refresh_token", "refresh_token": "x", "client_id": client_id},
        )
        assert answer.status_code == 401 and answer.json()["error"] == "invalid_client"
        assert "names another client_id" in answer.json()["error_description"]


async def test_documents_are_cached_per_max_age_and_never_under_no_store() -> None:
    async with asyncio.timeout(30), hosted() as (w, host), httpx.AsyncClient() as http:
        _, challenge = pkce()
        cached = host.serve("/cached.json", headers=[(b"cache-control", b"max-age=1")])
        never = host.serve("/never.json", headers=[(b"cache-control", b"no-store")])
        for _ in range(3):
            for url in (cached, never):
                assert (await http.get(authorize_url(w, url, challenge))).status_code == 200
        assert host.requests == {"/cached.json": 1, "/never.json": 3}
        await asyncio.sleep(1.2)  # max-age passed: fetched again
        assert (await http.get(authorize_url(w, cached, challenge))).status_code == 200
        assert host.requests["/cached.json"] == 2
        assert w.proxy.clients.documents is not None
        assert list(w.proxy.clients.documents.cache) == [cached]


async def test_the_cache_is_bounded() -> None:
    async with asyncio.timeout(30), hosted() as (w, host), httpx.AsyncClient() as http:
        documents = w.proxy.clients.documents
        assert documents is not None
        documents.max_entries = 2
        _, challenge = pkce()
        urls = [host.serve(f"/c{n}.json") for n in range(3)]
        for url in urls:
            assert (await http.get(authorize_url(w, url, challenge))).status_code == 200
        assert list(documents.cache) == urls[1:]


async def test_documents_can_be_turned_off() -> None:
    async with (
        asyncio.timeout(30),
        hosted(client_metadata_documents=False) as (w, host),
        httpx.AsyncClient() as http,
    ):
        meta = (await http.get(w.url("/.well-known/oauth-authorization-server"))).json()
        assert meta["client_id_metadata_document_supported"] is False
        assert "unknown client_id" in await refusal(http, w, host.serve())
        assert host.requests == {}


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("http://app.example/client.json", "must be an https URL"),
        ("https://app.example", "must have a path"),
        ("https://app.example/", "must have a path"),
        ("https://app.example/a/../client.json", "must not have . or .. path segments"),
        ("https://app.example/./client.json", "must not have . or .. path segments"),
        ("https://app.example/%2E%2E/client.json", "must not have . or .. path segments"),
        ("https://app.example/client.json#x", "must not have a fragment"),
        ("https://user:pw@app.example/client.json", "must not hold credentials"),
        ("https://app.example:99999/client.json", "is not a URL"),
        ("https://bücher.example/client.json", "punycode"),
        ("https://app.example/" + "x" * 2100, "is too long"),
    ],
)
def test_client_id_urls_the_draft_forbids_are_refused(url: str, says: str) -> None:
    with pytest.raises(OAuthEndpointError) as refused:
        check_client_id_url(url)
    assert refused.value.error == "invalid_client" and says in refused.value.description


def test_client_id_urls_the_draft_allows() -> None:
    for url in ("https://app.example/client.json", "https://app.example:8443/c?v=1"):
        assert check_client_id_url(url).hostname == "app.example"
    assert check_client_id_url("http://127.0.0.1:8/c.json", allow_insecure=True).port == 8
    with pytest.raises(OAuthEndpointError):  # plain http: a loopback host only, even then
        check_client_id_url("http://app.example/c.json", allow_insecure=True)


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("93.184.215.14", True),
        ("2606:4700:4700::1111", True),
        ("127.0.0.1", False),
        ("10.1.2.3", False),
        ("172.16.0.1", False),
        ("192.168.1.1", False),
        ("169.254.169.254", False),
        ("100.64.0.1", False),
        ("0.0.0.0", False),
        ("224.0.0.1", False),
        ("::1", False),
        ("fe80::1", False),
        ("fc00::1", False),
        ("::ffff:127.0.0.1", False),
        ("::ffff:10.0.0.1", False),
        ("2002:7f00:1::1", False),
        ("2001:db8::1", False),
    ],
)
def test_only_public_addresses_are_fetched_from(address: str, public: bool) -> None:
    assert is_public(ipaddress.ip_address(address)) is public


def test_cache_lifetime_reads_the_cache_headers() -> None:
    def life(**headers: str) -> float:
        h = httpx.Headers({k.replace("_", "-"): v for k, v in headers.items()})
        return cache_lifetime(h, now=1_000.0, default=300.0, maximum=MAX_CLIENT_METADATA_TTL)

    assert life() == 300.0
    assert life(cache_control="public, max-age=60") == 60.0
    assert life(cache_control="max-age=60, s-maxage=10") == 10.0
    assert life(cache_control="max-age=60", age="50") == 10.0
    assert life(cache_control="max-age=10", age="50") == 0.0
    assert life(cache_control="max-age=99999999") == MAX_CLIENT_METADATA_TTL
    assert life(cache_control="no-store, max-age=60") == 0.0
    assert life(cache_control="no-cache") == 0.0
    assert life(cache_control="max-age=soon") == 0.0
    assert (
        life(date="Mon, 01 Jan 2024 00:00:00 GMT", expires="Mon, 01 Jan 2024 00:02:00 GMT") == 120.0
    )
    assert life(expires="0") == 0.0
