"""``mcpkit run --auth PROVIDER``: the server signs its users in through an ``OAuthProxy`` in
front of PROVIDER, built from the ``MCPKIT_AUTH_*`` settings (docs/settings.md) and set as
the HTTP options' ``auth_server``.

The proxy's base URL is ``MCPKIT_AUTH_BASE_URL`` (on a loopback host, ``http://HOST:PORT``
by default); the MCP endpoint under it is the resource its tokens are for. The client
secret comes from the environment alone, and no message repeats it.

``--auth dev`` serves a ``DevAuthServer`` beside the app, under ``/dev-idp`` of the same
server, for trying the sign-in locally: for development only (passwords kept as given,
nothing survives a restart).

The proxy keeps its state in memory unless ``MCPKIT_AUTH_STORE`` names a shared store (an
SQLite file, or a Redis URL): several workers need it, and the same signing key
(``MCPKIT_AUTH_SIGNING_KEY_FILE``), or a sign-in begun in one worker is unknown to the next.
"""

from __future__ import annotations

import json
import secrets
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mcpkit.cli._errors import EXIT_USAGE, CliError
from mcpkit.cli._run_options import AUTH_PROVIDERS
from mcpkit.cli._settings import read_settings

#: Where ``--auth dev`` serves its development provider, under the base URL.
DEV_PREFIX = "/dev-idp"
_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def auth_server_for(
    provider: str,
    host: str,
    port: int,
    endpoint: str,
    environ: Mapping[str, str] | None = None,
) -> Any:
    """The authorization server ``--auth provider`` serves: an ``OAuthProxy`` (``dev``: a
    ``DevAuth``). A missing or unusable setting is a ``CliError`` naming it (exit 2)."""
    from mcpkit.auth import OAuthProxy

    if provider not in AUTH_PROVIDERS:
        raise CliError(
            f"--auth {provider}: not one of {', '.join(AUTH_PROVIDERS)}",
            "--auth github, for one; docs/auth.md shows each provider's settings",
            code=EXIT_USAGE,
        )
    settings = read_settings("auth", environ)
    base = _base_url(settings, provider, host, port)
    key = _signing_key(settings.get("auth_signing_key_file"))
    store = proxy_store(settings.get("auth_store"))
    resource = base + endpoint
    if provider == "dev":
        return _dev_auth(base, resource, key, settings)
    upstream = upstream_for(provider, settings)
    return OAuthProxy(
        upstream=upstream, base_url=base, resource=resource, signing_key=key, store=store
    )


def proxy_store(named: str | None) -> Any:
    """The proxy's store ``MCPKIT_AUTH_STORE`` names: a ``redis://`` (or ``rediss://``) URL,
    else the path of an SQLite file; None (memory, one process) when unset."""
    if not named:
        return None
    if named.startswith(("redis://", "rediss://", "unix://")):
        from mcpkit.auth import RedisProxyStore

        return RedisProxyStore(named)
    from mcpkit.auth import SqliteProxyStore

    return SqliteProxyStore(named)


def workers_refusal(provider: str, workers: int, environ: Mapping[str, str]) -> str | None:
    """Why ``--auth provider`` cannot serve ``--workers N`` as set, or None when it can:
    a development provider keeps its sign-ins in one process, and a proxy needs a shared
    store and one signing key."""
    if provider == "dev":
        return f"--auth dev with --workers {workers}: the development provider lives in one process"
    missing = [
        env
        for env in ("MCPKIT_AUTH_STORE", "MCPKIT_AUTH_SIGNING_KEY_FILE")
        if not environ.get(env, "").strip()
    ]
    if missing:
        return (
            f"--auth {provider} with --workers {workers} needs {' and '.join(missing)}:"
            " each worker would keep its own sign-ins and sign its own tokens"
        )
    return None


def _need(settings: Mapping[str, Any], provider: str, name: str) -> Any:
    from mcpkit.cli._settings import BY_FIELD  # a table, looked up where it lives

    value = settings.get(name)
    if not value:
        setting = BY_FIELD[name]
        raise CliError(
            f"--auth {provider} needs {setting.env}",
            f"{setting.env}: {setting.description}",
            code=EXIT_USAGE,
        )
    return value


def upstream_for(provider: str, settings: Mapping[str, Any]) -> Any:
    """The upstream of ``provider`` (not ``dev``) from the ``auth`` settings."""
    from mcpkit import auth

    if provider == "oidc":
        discovery = _need(settings, provider, "auth_discovery_url")
    client_id = _need(settings, provider, "auth_client_id")
    secret = _need(settings, provider, "auth_client_secret")
    options: dict[str, Any] = {}
    if settings.get("auth_scopes"):
        options["scopes"] = tuple(settings["auth_scopes"])
    base = settings.get("auth_provider_url")
    if provider == "oidc":
        return auth.OidcUpstream(discovery, client_id, secret, **options)
    if provider == "github":
        return auth.GitHubUpstream(client_id, secret, **options, **_given(base_url=base))
    if provider == "google":
        return auth.GoogleUpstream(client_id, secret, **options, **_given(issuer=base))
    if provider == "entra":
        tenant = _need(settings, provider, "auth_tenant")
        return auth.EntraUpstream(
            client_id, secret, **options, tenant=tenant, **_given(authority=base)
        )
    if provider == "auth0":
        domain = _need(settings, provider, "auth_domain")
        return auth.Auth0Upstream(client_id, secret, **options, domain=domain)
    if provider == "okta":
        domain = _need(settings, provider, "auth_domain")
        server = settings.get("auth_authorization_server", "default")
        return auth.OktaUpstream(
            client_id, secret, **options, domain=domain, authorization_server=server
        )
    realm = _need(settings, provider, "auth_realm")
    base = _need(settings, provider, "auth_provider_url")
    return auth.KeycloakUpstream(client_id, secret, **options, base_url=base, realm=realm)


def _given(**values: Any) -> dict[str, Any]:
    return {name: value for name, value in values.items() if value}


def _base_url(settings: Mapping[str, Any], provider: str, host: str, port: int) -> str:
    base = settings.get("auth_base_url")
    if base:
        if not base.startswith(("https://", "http://")):
            raise CliError(
                f"MCPKIT_AUTH_BASE_URL={base!r}: not an http(s) URL",
                "MCPKIT_AUTH_BASE_URL=https://mcp.example.com, the server's public URL",
                code=EXIT_USAGE,
            )
        return str(base).rstrip("/")
    if host in _LOOPBACK and port:
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}"
    raise CliError(
        f"--auth {provider} needs MCPKIT_AUTH_BASE_URL",
        "MCPKIT_AUTH_BASE_URL: the server's public URL (the provider's redirect URI is it +"
        " /oauth/callback); only a loopback host with a fixed port has a default",
        code=EXIT_USAGE,
    )


def _signing_key(path: str | None) -> Any:
    """The key in the file (a JWK as JSON, or a PEM); None without a file."""
    if not path:
        return None
    from mcpkit.auth._proxy._access import load_signing_key

    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(
            f"MCPKIT_AUTH_SIGNING_KEY_FILE: cannot read {path}: {type(exc).__name__}",
            code=EXIT_USAGE,
        ) from None
    try:
        key = json.loads(text) if text.lstrip().startswith("{") else text
        return load_signing_key(key)
    except Exception:  # never the key's content in the message
        raise CliError(
            f"MCPKIT_AUTH_SIGNING_KEY_FILE: {path} holds no private key",
            "a PEM private key (EC, RSA or Ed25519), or a private JWK as JSON",
            code=EXIT_USAGE,
        ) from None


class DevAuth:
    """``--auth dev``: an ``OAuthProxy`` whose provider, a ``DevAuthServer``, is served by
    the same server under ``DEV_PREFIX``. For development only."""

    def __init__(self, proxy: Any, dev: Any) -> None:
        self.proxy = proxy
        self.dev = dev

    def endpoints(self) -> dict[str, Any]:
        """The proxy's endpoints and the development provider's."""
        return {**self.proxy.endpoints(), **self.dev.endpoints(DEV_PREFIX)}

    def bearer_auth(self, **fields: Any) -> Any:
        """The proxy's ``bearer_auth()``."""
        return self.proxy.bearer_auth(**fields)


def _dev_auth(base: str, resource: str, key: Any, settings: Mapping[str, Any]) -> DevAuth:
    from mcpkit.auth import DevAuthServer, DevUser, OAuthProxy, OidcUpstream

    users: list[DevUser] = []
    for entry in settings.get("auth_dev_users") or ():
        name, sep, password = entry.partition(":")
        if not sep or not name or not password:
            raise CliError(
                "MCPKIT_AUTH_DEV_USERS: each user is name:password",
                "MCPKIT_AUTH_DEV_USERS=alice:wonderland,bob:builder",
                code=EXIT_USAGE,
            )
        users.append(DevUser(name, password))
    if not users:
        password = secrets.token_urlsafe(9)
        users.append(DevUser("dev", password))
        sys.stderr.write(f"mcpkit: --auth dev: sign in as dev, password {password}\n")
    sys.stderr.write("mcpkit: --auth dev is a development provider: never serve it to users\n")
    dev = DevAuthServer(base + DEV_PREFIX, users)
    secret = secrets.token_urlsafe(24)
    dev.add_client("mcpkit-dev", secret, [f"{base}/oauth/callback"])
    upstream = OidcUpstream(dev.discovery_url, "mcpkit-dev", secret, name="dev")
    proxy = OAuthProxy(upstream=upstream, base_url=base, resource=resource, signing_key=key)
    return DevAuth(proxy, dev)


__all__ = [
    "DEV_PREFIX",
    "DevAuth",
    "auth_server_for",
    "proxy_store",
    "upstream_for",
    "workers_refusal",
]
