"""What the client says about itself (``OAuthClientMetadata``): the body of a dynamic
registration request (RFC 7591) or of its Client ID Metadata Document. A setting of the
provider, read by the registration."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

_LOOPBACK = ("localhost", "127.0.0.1", "::1")


@dataclass(slots=True)
class OAuthClientMetadata:
    """What the client says about itself when registering (RFC 7591) or in its Client ID
    Metadata Document."""

    redirect_uris: Sequence[str] = ()
    client_name: str = "mcpkit client"
    grant_types: Sequence[str] = ("authorization_code", "refresh_token")
    response_types: Sequence[str] = ("code",)
    #: None: the provider picks from what the authorization server supports.
    token_endpoint_auth_method: str | None = None
    #: None: "native" when every redirect URI is loopback or a private scheme, else "web".
    application_type: str | None = None
    scope: str | None = None
    client_uri: str | None = None
    logo_uri: str | None = None
    software_id: str | None = None
    software_version: str | None = None
    contacts: Sequence[str] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)

    def resolved_application_type(self) -> str:
        """``application_type``, else "native" or "web" by the redirect URIs."""
        if self.application_type:
            return self.application_type
        for uri in self.redirect_uris:
            parts = urlsplit(uri)
            if parts.scheme in ("http", "https") and (parts.hostname or "") not in _LOOPBACK:
                return "web"
        return "native"

    def registration_request(self, auth_method: str) -> dict[str, Any]:
        """The body of a dynamic registration request (RFC 7591 §2)."""
        body: dict[str, Any] = {
            "client_name": self.client_name,
            "redirect_uris": list(self.redirect_uris),
            "grant_types": list(self.grant_types),
            "response_types": list(self.response_types),
            "token_endpoint_auth_method": auth_method,
            "application_type": self.resolved_application_type(),
        }
        for name in ("scope", "client_uri", "logo_uri", "software_id", "software_version"):
            value = getattr(self, name)
            if value:
                body[name] = value
        if self.contacts:
            body["contacts"] = list(self.contacts)
        body.update(self.extra)
        return body
