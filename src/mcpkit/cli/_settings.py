"""Settings from the environment: every ``StreamableHttpServerOptions`` field (and the
DNS-rebinding fields of ``TransportSecuritySettings``) and every ``mcpkit run`` flag, as an
``MCPKIT_*`` variable. A flag on the command line wins over the variable, the variable over
the default.

The kind of each setting (int, float, bool, str, list, object, choice) comes from the type
hints of the options classes, so a new field is read with the right type without a change
here; its description does not, and ``tests/cli/test_settings.py`` fails for a field that has
none (the table of ``docs/settings.md`` is generated from ``SETTINGS``).

Values: an integer (``4_194_304`` too), a finite number, a boolean (``1/0``, ``true/false``,
``yes/no``, ``on/off``), a comma-separated list, text, ``module:attribute`` for an object
(a store, a guard), or a comma-separated list of those. ``none`` sets an optional one to
None; an empty variable counts as unset.
A bad value is a ``CliError`` (exit 2) naming the variable."""

from __future__ import annotations

import dataclasses
import math
import os
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcpkit.cli._errors import EXIT_USAGE, CliError
from mcpkit.cli._run_options import (
    AUTH_PROVIDERS,
    DEFAULTS,
    FLAGS,
    PROGRAM_DEFAULTS,
    VALUE_OPTIONS,
)
from mcpkit.transports.http._options import StreamableHttpServerOptions, TransportSecuritySettings

PREFIX = "MCPKIT_"

#: The ``mcpkit run`` flags that are not options fields: name -> (variable, kind, optional,
#: choices)
_RUN_ONLY: dict[str, tuple[str, str, bool, tuple[str, ...]]] = {
    "transport": ("MCPKIT_TRANSPORT", "choice", False, ("stdio", "http", "sse", "ws")),
    "redis_url": ("MCPKIT_REDIS_URL", "str", True, ()),
    "shutdown_grace": ("MCPKIT_SHUTDOWN_GRACE", "float", True, ()),
    "workers": ("MCPKIT_WORKERS", "int", False, ()),
    "json_output": ("MCPKIT_JSON", "bool", False, ()),
    "auth": ("MCPKIT_AUTH", "choice", True, AUTH_PROVIDERS),
    "freeze_gc_at_startup": ("MCPKIT_FREEZE_GC_AT_STARTUP", "bool", False, ()),
}

#: What ``--auth`` builds its ``OAuthProxy`` from (``mcpkit.cli._auth``): (name, variable,
#: kind). The client secret is read from the environment alone: no flag carries it.
AUTH_SETTINGS: tuple[tuple[str, str, str], ...] = (
    ("auth_base_url", "MCPKIT_AUTH_BASE_URL", "str"),
    ("auth_client_id", "MCPKIT_AUTH_CLIENT_ID", "str"),
    ("auth_client_secret", "MCPKIT_AUTH_CLIENT_SECRET", "str"),
    ("auth_scopes", "MCPKIT_AUTH_SCOPES", "list"),
    ("auth_tenant", "MCPKIT_AUTH_TENANT", "str"),
    ("auth_domain", "MCPKIT_AUTH_DOMAIN", "str"),
    ("auth_authorization_server", "MCPKIT_AUTH_AUTHORIZATION_SERVER", "str"),
    ("auth_realm", "MCPKIT_AUTH_REALM", "str"),
    ("auth_provider_url", "MCPKIT_AUTH_PROVIDER_URL", "str"),
    ("auth_discovery_url", "MCPKIT_AUTH_DISCOVERY_URL", "str"),
    ("auth_signing_key_file", "MCPKIT_AUTH_SIGNING_KEY_FILE", "str"),
    ("auth_store", "MCPKIT_AUTH_STORE", "str"),
    ("auth_dev_users", "MCPKIT_AUTH_DEV_USERS", "list"),
)

#: ``TransportSecuritySettings`` fields go by shorter names than the nested path.
_SECURITY_ENV = {
    "enable_dns_rebinding_protection": "MCPKIT_DNS_REBINDING_PROTECTION",
    "allowed_hosts": "MCPKIT_ALLOWED_HOSTS",
    "allowed_origins": "MCPKIT_ALLOWED_ORIGINS",
}

#: What each setting does, by field name: the ``Description`` column of docs/settings.md.
DESCRIPTIONS: dict[str, str] = {
    "transport": "How clients connect: `stdio`, `http`, `sse` or `ws`",
    "redis_url": "Share sessions, events and broadcasts through this Redis (needs the redis extra)",
    "shutdown_grace": "Seconds running calls get to finish at shutdown (none: the app's own)",
    "workers": "HTTP worker processes on one port (more than 1: sessions need --redis-url)",
    "json_output": "Announce the HTTP server as one JSON line on stdout, and errors as JSON",
    "auth": "Sign users in through an `OAuthProxy` in front of this provider, built from the `MCPKIT_AUTH_*` settings (HTTP only; `dev`: a development provider, for trials only)",
    "auth_base_url": "The server's public URL, the proxy's issuer; the provider's redirect URI is this + `/oauth/callback` (default: `http://HOST:PORT` on a loopback host)",
    "auth_client_id": "The client id the provider gave the server's registration",
    "auth_client_secret": "The client secret of that registration (read from the environment only)",
    "auth_scopes": "What the proxy asks the provider for (default: the preset's)",
    "auth_tenant": "`entra`: the tenant id or domain, or `organizations`, `common`, `consumers`",
    "auth_domain": "`auth0`, `okta`: the tenant's or org's domain",
    "auth_authorization_server": "`okta`: the authorization server id (default: `default`; none: the org authorization server)",
    "auth_realm": "`keycloak`: the realm",
    "auth_provider_url": "`keycloak`: where Keycloak is served; `github`: a GitHub Enterprise Server; `google`: the issuer; `entra`: the authority host",
    "auth_discovery_url": "`oidc`: the provider's OpenID discovery URL",
    "auth_signing_key_file": "A private key (PEM, or a JWK as JSON) the proxy signs its tokens with (default: one made at start: tokens end with the process)",
    "auth_store": "Where the proxy keeps clients, codes, tokens and consents: an SQLite file, or a `redis://` URL (default: memory, one process; `--workers` needs a shared one)",
    "auth_dev_users": "`dev`: `name:password` users (default: `dev` with a password printed at start)",
    "port": "Port to bind (0: any free one)",
    "endpoint": "Path of the MCP endpoint; legacy SSE at ENDPOINT/sse, WebSocket at ENDPOINT/ws",
    "host": "Address to bind",
    "stateless": "Streamable HTTP without sessions",
    "enable_legacy_sse": "Serve the legacy HTTP+SSE transport at ENDPOINT/sse",
    "enable_websocket": "Serve WebSocket at ENDPOINT/ws",
    "sse_keep_alive_ms": "Milliseconds between keep-alive comments on idle SSE streams",
    "event_store": "An `EventStore` for resumable SSE streams (default: in memory)",
    "session_store": "A `SessionStore` shared with other instances (default: in memory)",
    "message_bus": "A `MessageBus` linking the instances of one endpoint",
    "server_name": "The server name announced, instead of the app's",
    "server_version": "The server version announced, instead of the app's",
    "max_body_bytes": "Largest POST body; larger gets 413",
    "max_message_depth": "Deepest nesting of one message; deeper gets -32600 (none: no bound)",
    "max_sessions": "Live sessions at once; initialize past it gets 503",
    "session_idle_timeout": "Seconds a session may sit unused before it expires",
    "retry_ms": "Milliseconds clients wait before reconnecting a closed SSE stream",
    "resume_grace": "Seconds a call whose stream dropped keeps running, awaiting a resume",
    "max_queued_messages": "Messages queued for one slow SSE client before its response is dropped",
    "sse_write_timeout": "Seconds one write of an answer (an SSE event, a large JSON answer's piece) may stay blocked",
    "max_answer_bytes": "Largest JSON answer; larger is answered -32603",
    "body_read_timeout": "Seconds a POST body may take to arrive; past it, 408 (none: no bound)",
    "header_read_timeout": "Seconds to receive a request's headers (none: no bound)",
    "max_header_bytes": "Bytes of a request's line and headers; past it, 431",
    "max_concurrent_requests": "Requests served at once per process; one more gets 503",
    "enable_dns_rebinding_protection": "Check Host (none: on when bound to loopback or allowed_hosts is set); Origin is checked on every bind",
    "allowed_hosts": "Host values admitted (empty: localhost, 127.0.0.1, [::1])",
    "allowed_origins": "Origin values admitted besides the server's own (empty: localhost, 127.0.0.1, [::1]; *: any)",
    "bearer_auth": "A `BearerAuthConfig`: require bearer tokens",
    "auth_server": "An `OAuthProxy` served beside the endpoint, whose tokens it then requires (`--auth` builds one from the settings)",
    "websocket_guard": "A check `(headers) -> bool` run on each WebSocket upgrade",
    "connection_guards": "Guards run on every HTTP request and WebSocket upgrade, before any MCP message",
    "freeze_gc_at_startup": "Once the server is up, `gc.freeze()` what start-up left alive, on every transport (`mcpkit run` and `mcpkit proxy` alone: a program of yours that serves an app keeps its collector as it is)",
}

#: Smallest accepted value of numeric settings (every other one: 0 and up).
_MINIMUM: dict[str, float] = {
    "workers": 1,
    "max_body_bytes": 1,
    "max_answer_bytes": 1,
    "max_message_depth": 1,
    "max_sessions": 1,
    "max_queued_messages": 1,
    "max_header_bytes": 1,
    "max_concurrent_requests": 1,
}
_MAXIMUM: dict[str, float] = {"port": 65535}

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")
_EXAMPLES = {
    "int": "3001",
    "float": "2.5",
    "bool": "true",
    "str": "text",
    "list": "a,b",
    "object": "mymodule:thing",
    "objects": "mymodule:one,mymodule:two",
}


@dataclass(frozen=True, slots=True)
class Setting:
    """One ``MCPKIT_*`` variable: the field it sets, in which group (``run``: an ``mcpkit
    run`` flag only; ``options``: a ``StreamableHttpServerOptions`` field, maybe a flag too;
    ``security``: a ``TransportSecuritySettings`` field; ``auth``: what ``--auth`` builds
    its authorization server from), how its value is read, its default under ``mcpkit
    run``."""

    field: str
    env: str
    group: str
    kind: str
    optional: bool
    default: Any
    description: str
    flag: str | None = None
    choices: tuple[str, ...] = ()

    def parse(self, text: str) -> Any:
        """The value of ``text``; a ``CliError`` naming the variable when it is not one."""
        raw = text.strip()
        if self.optional and raw.lower() in ("none", "null"):
            return None
        try:
            return _PARSERS[self.kind](self, raw)
        except CliError:
            raise
        except ValueError as exc:
            example = self.choices[0] if self.choices else _EXAMPLES.get(self.kind, "x")
            none = " (or none)" if self.optional else ""
            raise CliError(
                f"{self.env}={text!r}: {exc}",
                f"{self.env} takes {_kind_phrase(self)}{none}, e.g. {self.env}={example};"
                " unset it for the default",
                code=EXIT_USAGE,
            ) from None


def _kind_phrase(setting: Setting) -> str:
    if setting.kind == "choice":
        return "one of " + ", ".join(setting.choices)
    return {
        "int": "an integer",
        "float": "a number",
        "bool": "a boolean (1/0, true/false, yes/no, on/off)",
        "str": "text",
        "list": "a comma-separated list",
        "object": "module:attribute naming an object",
        "objects": "a comma-separated list of module:attribute",
    }[setting.kind]


def _bounded(setting: Setting, value: float) -> None:
    low = _MINIMUM.get(setting.field, 0)
    high = _MAXIMUM.get(setting.field)
    if value < low:
        raise ValueError(f"must be at least {low:g}")
    if high is not None and value > high:
        raise ValueError(f"must be at most {high:g}")


def _parse_int(setting: Setting, raw: str) -> int:
    try:
        value = int(raw, 10)
    except ValueError:
        raise ValueError("not an integer") from None
    _bounded(setting, value)
    return value


def _parse_float(setting: Setting, raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise ValueError("not a number") from None
    if not math.isfinite(value):
        raise ValueError("not a finite number")
    _bounded(setting, value)
    return value


def _parse_bool(setting: Setting, raw: str) -> bool:
    lowered = raw.lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ValueError("not a boolean")


def _parse_str(setting: Setting, raw: str) -> str:
    return raw


def _parse_list(setting: Setting, raw: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in raw.split(",") if item.strip())


def _parse_objects(setting: Setting, raw: str) -> tuple[Any, ...]:
    return tuple(_parse_object(setting, item) for item in _parse_list(setting, raw))


def _parse_choice(setting: Setting, raw: str) -> str:
    if raw not in setting.choices:
        raise ValueError(f"not one of {', '.join(setting.choices)}")
    return raw


def _parse_object(setting: Setting, raw: str) -> Any:
    import importlib
    import sys

    module_name, sep, attribute = raw.partition(":")
    if not sep or not module_name or not attribute:
        raise ValueError("not module:attribute")
    cwd = os.getcwd()
    added = cwd not in sys.path
    if added:  # a module beside the server, as python -m would find it
        sys.path.insert(0, cwd)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"cannot import {module_name}: {exc}") from None
    except Exception as exc:
        raise CliError(
            f"{setting.env}: importing {module_name} raised {type(exc).__name__}: {exc}",
            suggest_debug=True,
        ) from exc
    finally:
        if added:
            sys.path.remove(cwd)
    value: Any = module
    for part in attribute.split("."):
        if not hasattr(value, part):
            raise ValueError(f"{module_name} has no attribute {attribute!r}")
        value = getattr(value, part)
    return value


_PARSERS = {
    "int": _parse_int,
    "float": _parse_float,
    "bool": _parse_bool,
    "str": _parse_str,
    "list": _parse_list,
    "choice": _parse_choice,
    "object": _parse_object,
    "objects": _parse_objects,
}


def _kind_of(hint: Any) -> tuple[str, bool]:
    """(kind, optional) of a field's type hint."""
    args = typing.get_args(hint)
    if typing.get_origin(hint) in (typing.Union, types.UnionType) and type(None) in args:
        rest = [arg for arg in args if arg is not type(None)]
        kind, _ = _kind_of(rest[0]) if len(rest) == 1 else ("object", True)
        return kind, True
    if hint is bool:
        return "bool", False
    if hint is int:
        return "int", False
    if hint is float:
        return "float", False
    if hint is str:
        return "str", False
    if typing.get_origin(hint) in (tuple, list):
        items = [arg for arg in typing.get_args(hint) if arg is not Ellipsis]
        return ("list" if all(arg is str for arg in items) else "objects"), False
    return "object", False


def _default_of(item: dataclasses.Field[Any]) -> Any:
    if item.default is not dataclasses.MISSING:
        return item.default
    if item.default_factory is not dataclasses.MISSING:
        return item.default_factory()
    return None


def _build() -> tuple[Setting, ...]:
    flags: dict[str, str] = {}
    for option, name in VALUE_OPTIONS.items():
        if option.startswith("--"):
            flags.setdefault(name, option)
    for option, (name, _) in FLAGS.items():
        flags[name] = f"{flags[name]}/{option}" if name in flags else option
    found: list[Setting] = []
    for name, (env, kind, optional, choices) in _RUN_ONLY.items():
        found.append(
            Setting(
                name,
                env,
                "run",
                kind,
                optional,
                DEFAULTS[name] if name in DEFAULTS else PROGRAM_DEFAULTS[name],
                DESCRIPTIONS.get(name, ""),
                flags.get(name),
                choices,
            )
        )
    for name, env, kind in AUTH_SETTINGS:
        found.append(Setting(name, env, "auth", kind, True, None, DESCRIPTIONS.get(name, ""), None))
    for group, cls in (
        ("options", StreamableHttpServerOptions),
        ("security", TransportSecuritySettings),
    ):
        hints = typing.get_type_hints(cls)
        for item in dataclasses.fields(cls):
            if group == "options" and item.name == "transport_security":
                continue  # set through its own fields, below
            kind, optional = _kind_of(hints[item.name])
            env = _SECURITY_ENV.get(item.name, PREFIX + item.name.upper())
            found.append(
                Setting(
                    item.name,
                    env,
                    group,
                    kind,
                    optional,
                    _default_of(item),
                    DESCRIPTIONS.get(item.name, ""),
                    flags.get(item.name),
                )
            )
    return tuple(found)


#: Every setting, in the order of docs/settings.md.
SETTINGS: tuple[Setting, ...] = _build()
BY_FIELD: dict[str, Setting] = {setting.field: setting for setting in SETTINGS}


#: The ``MCPKIT_*`` variables read besides the settings: the CLI's (``--debug``, ``--json``
#: for every command, how ``--auth oauth`` shows the login) and the switch of mcpkit's own
#: test runs, which the ``mcpkit`` processes they start inherit.
OTHER_VARIABLES = frozenset({"MCPKIT_DEBUG", "MCPKIT_OAUTH_BROWSER", "MCPKIT_TESTS_NO_SKIP"})


def unknown_variable_warnings(names: list[str]) -> list[str]:
    """A warning for each of ``names`` (``MCPKIT_*`` variables) that is no setting, with
    the closest setting's name when one is close: a typo would otherwise be ignored."""
    import difflib

    known = {setting.env for setting in SETTINGS} | OTHER_VARIABLES
    # Compared without the prefix: every name shares it, which would make any two close.
    suffixes = sorted(name.removeprefix(PREFIX) for name in known)
    warnings = []
    for name in sorted(set(names) - known):
        close = difflib.get_close_matches(name.removeprefix(PREFIX), suffixes, n=1)
        if close:
            warnings.append(f"{name} is not a setting; did you mean {PREFIX}{close[0]}?")
        else:
            warnings.append(f"{name} is not a setting (docs/settings.md lists them)")
    return warnings


def read_settings(
    group: str | None = None, environ: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The settings set in ``environ`` (default: ``os.environ``), by field name, parsed;
    only those of ``group`` when given. An empty variable counts as unset."""
    env = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    for setting in SETTINGS:
        if group is not None and setting.group != group:
            continue
        text = env.get(setting.env)
        if text is None or not text.strip():
            continue
        values[setting.field] = setting.parse(text)
    return values


def with_env(
    values: dict[str, Any], given: set[str], environ: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """``values`` (a flag's value or default, by parameter name) with the parameters not in
    ``given`` (not on the command line) taken from the environment where set there."""
    env = os.environ if environ is None else environ
    merged = dict(values)
    for name in values:
        setting = BY_FIELD.get(name)
        if setting is None or name in given:
            continue
        text = env.get(setting.env)
        if text is not None and text.strip():
            merged[name] = setting.parse(text)
    return merged


def server_options(
    environ: Mapping[str, str] | None = None, **fields: Any
) -> StreamableHttpServerOptions:
    """``StreamableHttpServerOptions`` as ``mcpkit run`` and ``mcpkit proxy`` serve with:
    from the environment, ``fields`` winning over it."""
    options = read_settings("options", environ)
    security = read_settings("security", environ)
    if security:
        options["transport_security"] = TransportSecuritySettings(**security)
    options.update(fields)
    return StreamableHttpServerOptions(**options)


def _shown_default(setting: Setting) -> str:
    value = setting.default
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return "(empty)" if not value else ",".join(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _shown_type(setting: Setting) -> str:
    kind = "one of " + ", ".join(setting.choices) if setting.kind == "choice" else setting.kind
    if setting.kind == "object":
        kind = "object (`module:attribute`)"
    if setting.kind == "objects":
        kind = "list of objects (`module:attribute,…`)"
    return kind + (" or none" if setting.optional else "")


def settings_table() -> str:
    """The Markdown table of every setting (docs/settings.md holds it as it is)."""
    rows = [
        "| Variable | `mcpkit run` flag | Type | Default | Description |",
        "|---|---|---|---|---|",
    ]
    for setting in SETTINGS:
        flag = f"`{setting.flag}`" if setting.flag else ""
        rows.append(
            f"| `{setting.env}` | {flag} | {_shown_type(setting)} |"
            f" `{_shown_default(setting)}` | {setting.description} |"
        )
    return "\n".join(rows) + "\n"
