"""``OAuthLogin``: a user logs in to an MCP server from a script or the command line.

It makes the ``OAuthClientProvider`` for one server, set up as a native app (RFC 8252):
the redirect comes back to a loopback server on 127.0.0.1 (``LoopbackReceiver``); the
authorization URL is opened in the system browser, or printed, or handed to a callable
that drives it (automation, CI); tokens and the client registration are kept in a file
only the user can read, so the next run logs in no more.

``MCPKIT_OAUTH_BROWSER`` chooses the browser step where the program did not: ``print``
(print the URL only), ``system``, or ``module:function``, a callable given the URL (for
automation: it must take the browser through the login to the redirect).
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import inspect
import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import parse_qsl, urlsplit

from mcpkit.auth._types import OAuthError
from mcpkit.auth.client._client_metadata import OAuthClientMetadata
from mcpkit.auth.client._loopback import LoopbackReceiver
from mcpkit.auth.client._provider import OAuthClientProvider
from mcpkit.auth.client._storage import JsonFileTokenStorage, TokenStorage

#: The environment variable that chooses the browser step: print, system, module:function.
BROWSER_ENV = "MCPKIT_OAUTH_BROWSER"
BROWSERS = ("auto", "system", "print")
#: Seconds the user gets to log in, from the browser step to the redirect.
DEFAULT_LOGIN_TIMEOUT = 300.0


def default_token_file(server_url: str) -> Path:
    """Where a server's tokens are kept by default: ``mcpkit/tokens/`` under the user's
    configuration directory (``$XDG_CONFIG_HOME``, else ``~/.config``; ``%APPDATA%`` on
    Windows), one file per server URL, named after its host and a hash of the URL."""
    if sys.platform == "win32" and os.environ.get("APPDATA"):
        base = Path(os.environ["APPDATA"])
    else:
        base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    host = re.sub(r"[^A-Za-z0-9.-]+", "_", urlsplit(server_url).netloc)[:64] or "server"
    digest = hashlib.sha256(server_url.encode("utf-8")).hexdigest()[:16]
    return base / "mcpkit" / "tokens" / f"{host}-{digest}.json"


def load_callable(spec: str) -> Callable[..., Any]:
    """The callable ``module:function`` names (``module:object.attribute`` too)."""
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise ValueError(f"{spec!r} is not module:function")
    value: Any = importlib.import_module(module_name)
    for part in attribute.split("."):
        value = getattr(value, part)
    if not callable(value):
        raise ValueError(f"{spec} is not callable")
    return value  # type: ignore[no-any-return]


def _display_available() -> bool:
    """Whether a graphical browser may open here: not on a Linux or BSD box without a
    display (where ``webbrowser`` would start a text browser in the terminal)."""
    if sys.platform in ("win32", "darwin") or os.environ.get("BROWSER"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


@dataclass
class OAuthLogin:
    """How to log a user in to an MCP server: ``McpClient.http(url, auth=OAuthLogin(...))``
    (``auth="oauth"`` is ``OAuthLogin()``), or ``mcpkit call URL TOOL --auth oauth``.

    Discovery, then a client identity in the spec's order: ``client_id`` (pre-registered),
    else ``client_metadata_url`` (a Client ID Metadata Document, where the server supports
    them), else dynamic registration as ``client_name``. The user logs in in the browser;
    the redirect comes back to ``http://127.0.0.1:PORT/callback`` (``redirect_port``; 0:
    any free port, the registered one when it is free). The code is traded with PKCE S256.

    ``browser``: ``"system"`` opens the system browser (printing the URL too, in case none
    opens), ``"print"`` only prints it (to ``output``, default stderr), ``"auto"`` (the
    default) is what ``MCPKIT_OAUTH_BROWSER`` says, else ``"system"`` where a display is,
    else ``"print"``. ``open_browser``, a callable (sync or async) given the authorization
    URL, replaces the browser: for automation, it must lead the login to the redirect.
    ``login_timeout``: seconds from the browser step to the redirect's arrival.

    Tokens and the registration are kept in ``token_file`` (default:
    ``default_token_file(url)``; the file 0600, its new directories 0700, written
    atomically), or in ``storage`` when given. A token kept is used at once; an expired one
    is refreshed; the user logs in again when refreshing fails.
    """

    client_name: str = "mcpkit"
    scopes: Sequence[str] | None = None
    client_id: str | None = None
    client_secret: str | None = None
    client_metadata_url: str | None = None
    redirect_port: int = 0
    token_file: str | os.PathLike[str] | None = None
    storage: TokenStorage | None = None
    browser: str = "auto"
    open_browser: Callable[[str], Any] | None = None
    login_timeout: float = DEFAULT_LOGIN_TIMEOUT
    output: TextIO | None = None

    def __post_init__(self) -> None:
        if self.browser not in BROWSERS:
            raise ValueError(f"browser must be one of {', '.join(BROWSERS)}, not {self.browser!r}")
        if not 0 <= self.redirect_port <= 65535:
            raise ValueError(f"redirect_port {self.redirect_port} is not a port (0: any)")
        if self.login_timeout <= 0:
            raise ValueError("login_timeout must be positive")

    def token_path(self, server_url: str) -> Path:
        """The file the tokens for ``server_url`` are kept in."""
        if self.token_file is not None:
            return Path(self.token_file).expanduser()
        return default_token_file(server_url)

    def provider(self, server_url: str, **options: Any) -> OAuthClientProvider:
        """The ``OAuthClientProvider`` that logs in to ``server_url`` this way;
        ``options`` go to it too (``http_client``, ``timeout``, ``dpop``...)."""
        url = server_url.split("#", 1)[0]
        flow = BrowserFlow(self, url)
        return OAuthClientProvider(
            url,
            client_metadata=OAuthClientMetadata(client_name=self.client_name),
            authorize=flow.authorize,
            redirect_receiver=flow.receiver,
            client_id=self.client_id,
            client_secret=self.client_secret,
            client_metadata_url=self.client_metadata_url,
            scopes=self.scopes,
            storage=self.storage or JsonFileTokenStorage(self.token_path(url)),
            **options,
        )

    def browser_step(self) -> Callable[[str], Any] | str:
        """What takes the user to the authorization URL: a callable, or ``"system"`` or
        ``"print"`` (``browser``, ``MCPKIT_OAUTH_BROWSER`` and the display decide)."""
        if self.open_browser is not None:
            return self.open_browser
        choice = self.browser
        if choice == "auto":
            choice = os.environ.get(BROWSER_ENV, "").strip() or "auto"
            if ":" in choice:
                try:
                    return load_callable(choice)
                except (ImportError, AttributeError, ValueError) as exc:
                    raise OAuthError(f"{BROWSER_ENV}={choice}: {exc}") from exc
            if choice not in BROWSERS:
                raise OAuthError(
                    f"{BROWSER_ENV} is {choice!r}: use print, system or module:function"
                )
        if choice == "auto":
            choice = "system" if _display_available() else "print"
        return choice


class BrowserFlow:
    """One server's browser step: shows the authorization URL, then waits on the loopback
    receiver for the redirect (``login_timeout`` for both)."""

    def __init__(self, login: OAuthLogin, server_url: str) -> None:
        self.login = login
        self.server_url = server_url
        self.receiver = LoopbackReceiver(port=login.redirect_port)

    async def authorize(self, url: str) -> dict[str, str]:
        """The ``authorize`` callback: the redirect's query parameters."""
        self.receiver.expect(dict(parse_qsl(urlsplit(url).query)).get("state"))
        timeout = self.login.login_timeout
        try:
            async with asyncio.timeout(timeout):
                await self._show(url)
                return await self.receiver.wait()
        except TimeoutError:
            raise OAuthError(
                f"no login came back to {self.receiver.redirect_uri} within {timeout:g} s;"
                " log in again (and finish in the browser)",
                error="login_timeout",
            ) from None

    async def _show(self, url: str) -> None:
        step = self.login.browser_step()
        if callable(step):
            if inspect.iscoroutinefunction(step):
                await step(url)
            else:  # in a thread: the loopback server must answer while it runs
                result = await asyncio.to_thread(step, url)
                if inspect.isawaitable(result):
                    await result
            return
        out = self.login.output or sys.stderr
        if step == "system":
            out.write(f"Opening a browser to log in to {self.server_url}; if none opens, go to:\n")
        else:
            out.write(f"To log in to {self.server_url}, open this URL in a browser:\n")
        out.write(f"  {url}\n")
        out.flush()
        if step == "system":
            import webbrowser

            await asyncio.to_thread(webbrowser.open, url)


__all__ = ["BROWSER_ENV", "BrowserFlow", "OAuthLogin", "default_token_file", "load_callable"]
