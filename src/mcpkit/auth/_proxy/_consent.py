"""The consent page: which client asks, where it will be sent back, for what, through
which provider. A client known by its metadata document is shown by its host (the one fact
about it the proxy checked: its document is served there) beside the name it gives itself,
with a warning when it sends the user back to this computer. Its form carries the pending authorization's id and a one-time CSRF token;
the page refuses to be framed (``_http.send_page``)."""

from __future__ import annotations

import html
from urllib.parse import urlsplit

from mcpkit.auth._proxy._cimd import client_host, is_document_client_id
from mcpkit.auth._proxy._http import LOOPBACK_HOSTS, page
from mcpkit.auth._proxy._records import ClientRecord, PendingAuthorization


def consent_page(
    client: ClientRecord, pending: PendingAuthorization, action: str, provider: str
) -> str:
    """The HTML page asking the user to approve ``client``; the form posts to ``action``."""
    name = client.client_name or "An unnamed application"
    host = urlsplit(pending.redirect_uri).netloc
    who = f"<strong>{html.escape(name)}</strong>"
    document = is_document_client_id(client.client_id)
    if document:
        who = (
            f"{who} (from <strong>{html.escape(client_host(client.client_id))}</strong>:"
            f" the application names itself, its description is served at"
            f" <code>{html.escape(client.client_id)}</code>)"
        )
    local = (
        "<p><strong>It sends you back to a program on this computer</strong>: any program here"
        " could use that address.</p>"
        if document and urlsplit(pending.redirect_uri).hostname in LOOPBACK_HOSTS
        else ""
    )
    scopes = (
        "<ul>"
        + "".join(f"<li><code>{html.escape(s)}</code></li>" for s in pending.scopes)
        + "</ul>"
        if pending.scopes
        else "<p>No particular permission (scopes) is asked for.</p>"
    )
    about = (
        f"<p>Its site: <code>{html.escape(client.client_uri)}</code></p>"
        if client.client_uri
        else ""
    )
    body = (
        f"<p>{who} asks to use <code>{html.escape(pending.resource)}</code>"
        f" on your behalf, once you sign in with <strong>{html.escape(provider)}</strong>.</p>"
        f"{about}<p>Once you approve, you will be sent back to "
        f"<code>{html.escape(pending.redirect_uri)}</code> (on <strong>{html.escape(host)}</strong>)."
        " Approve only if you started this from an application you trust.</p>"
        f"{local}"
        f"<p>It asks for:</p>{scopes}"
        f"<form method='post' action='{html.escape(action)}'>"
        f"<input type='hidden' name='request' value='{html.escape(pending.id)}'>"
        f"<input type='hidden' name='csrf' value='{html.escape(pending.csrf)}'>"
        "<button type='submit' name='decision' value='approve'>Approve</button>"
        "<button type='submit' name='decision' value='deny'>Deny</button>"
        "</form>"
    )
    return page("Allow access?", body)


__all__ = ["consent_page"]
