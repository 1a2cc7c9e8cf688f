"""The environment a proxy's stdio backends start with: not the proxy's own (its secrets,
its ``MCPKIT_*`` settings: ``MCPKIT_TRANSPORT=http`` would make an mcpkit backend serve
HTTP), but what a program needs to run, as the official MCP SDKs' ``get_default_environment``
passes, with the locale and the temporary directories, plus what the config names."""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Mapping

from mcpkit.client import StdioClientTransportOptions

#: Variables a backend gets from the proxy's environment (the official SDK's list, with
#: the locale and the temporary directories); ``LC_*`` are passed too.
DEFAULT_INHERITED_ENV_VARS: tuple[str, ...] = (
    (
        "APPDATA",
        "HOMEDRIVE",
        "HOMEPATH",
        "LOCALAPPDATA",
        "PATH",
        "PATHEXT",
        "PROCESSOR_ARCHITECTURE",
        "SYSTEMDRIVE",
        "SYSTEMROOT",
        "TEMP",
        "TMP",
        "USERNAME",
        "USERPROFILE",
        "COMSPEC",
        "WINDIR",
    )
    if sys.platform == "win32"
    else ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LANGUAGE", "TMPDIR")
)


def _passed_on(name: str) -> bool:
    return name in DEFAULT_INHERITED_ENV_VARS or (
        sys.platform != "win32" and name.startswith("LC_")
    )


def backend_environment(configured: Mapping[str, str] | None = None) -> dict[str, str]:
    """The minimal environment of a backend process, then ``configured`` on top."""
    environment = {
        name: value
        for name, value in os.environ.items()
        # A value starting "()" is a shell function: a security risk (the official SDK's rule).
        if _passed_on(name) and not value.startswith("()")
    }
    environment.update(configured or {})
    return environment


def with_minimal_environment(options: StdioClientTransportOptions) -> StdioClientTransportOptions:
    """``options`` starting their process in the minimal environment with their own
    variables on top; made for each process, so the proxy's environment then counts."""
    return dataclasses.replace(
        options,
        inherit_environment_variables=False,
        environment_variables=backend_environment(options.environment_variables),
    )
