"""Where each AI client keeps its MCP servers, and how it writes one down.

The locations, as each client documents them (looked up for this module; re-check them
when a client changes its layout):

- Claude Desktop: ``claude_desktop_config.json``, top-level ``mcpServers``; in
  ``~/Library/Application Support/Claude/`` on macOS and ``%APPDATA%\\Claude\\`` on Windows
  (https://modelcontextprotocol.io/quickstart/user, "Connect to local MCP servers").
  Anthropic ships no Linux build; the community builds, being Electron apps like the others,
  use the same ``Claude`` folder under ``$XDG_CONFIG_HOME`` (default ``~/.config``).
- Claude Code: user scope is the top-level ``mcpServers`` of ``~/.claude.json``; project
  scope is ``.mcp.json`` at the project's root, also ``mcpServers``
  (https://code.claude.com/docs/en/mcp, "MCP installation scopes"; the user-scope file is
  confirmed by a maintainer in https://github.com/anthropics/claude-code/issues/4193). Its
  third scope, "local", lives under ``projects`` in ``~/.claude.json`` and is not written
  here. Entries added by ``claude mcp add`` carry ``"type": "stdio"``; so do ours.
- Cursor: ``~/.cursor/mcp.json`` (global) or ``.cursor/mcp.json`` in the project, top-level
  ``mcpServers`` (https://cursor.com/docs/mcp, "Configuration locations"); the same home
  folder on every system (``%USERPROFILE%\\.cursor`` on Windows).
- VS Code: ``mcp.json`` in the user profile folder, or ``.vscode/mcp.json`` in the
  workspace, with top-level ``servers`` (not ``mcpServers``) and ``"type": "stdio"`` on
  each local server (https://code.visualstudio.com/docs/copilot/reference/mcp-configuration).
  The user folder is ``Code/User`` under ``~/Library/Application Support`` (macOS),
  ``%APPDATA%`` (Windows) or ``~/.config`` (Linux; Electron, which VS Code is built on,
  takes ``$XDG_CONFIG_HOME`` first) (https://code.visualstudio.com/docs/configure/settings,
  "Settings file locations", formerly docs/getstarted/settings); that is the default
  profile's (other profiles keep theirs under ``User/profiles/``).
- Gemini CLI: ``~/.gemini/settings.json`` (user) or ``.gemini/settings.json`` in the project,
  top-level ``mcpServers``, each ``{"command", "args", "env"}``
  (https://github.com/google-gemini/gemini-cli, docs/tools/mcp-server.md).
- Codex CLI: ``config.toml`` in ``$CODEX_HOME`` (default ``~/.codex``), one TOML table
  ``[mcp_servers.NAME]`` a server with ``command``, ``args`` and ``env``
  (https://github.com/openai/codex, docs/config.md); user scope only. The file is TOML,
  edited by ``mcpkit.cli._toml_edit``.

Paths are computed as pure paths for the system named, so every system's location can be
checked from any machine."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePath, PurePosixPath, PureWindowsPath
from typing import Any

SCOPES = ("user", "project")


@dataclass(frozen=True, slots=True)
class ClientSpec:
    """One client: its name on the command line, its own name, the top-level key holding
    its servers, whether a stdio entry says ``"type": "stdio"``, its scopes, and whether
    its file is TOML (else JSON)."""

    key: str
    title: str
    servers_key: str
    typed: bool
    scopes: tuple[str, ...]
    toml: bool = False


CLIENTS: dict[str, ClientSpec] = {
    spec.key: spec
    for spec in (
        ClientSpec("claude-desktop", "Claude Desktop", "mcpServers", False, ("user",)),
        ClientSpec("claude-code", "Claude Code", "mcpServers", True, SCOPES),
        ClientSpec("cursor", "Cursor", "mcpServers", False, SCOPES),
        ClientSpec("vscode", "VS Code", "servers", True, SCOPES),
        ClientSpec("gemini-cli", "Gemini CLI", "mcpServers", False, SCOPES),
        ClientSpec("codex", "Codex CLI", "mcp_servers", False, ("user",), toml=True),
    )
}


def _flavour(system: str) -> type[PurePath]:
    return PureWindowsPath if system == "win32" else PurePosixPath


def _app_data(system: str, env: Mapping[str, str], home: PurePath) -> PurePath:
    """Where Electron apps (Claude Desktop, VS Code) keep their per-user folders."""
    path = _flavour(system)
    if system == "darwin":
        return home / "Library" / "Application Support"
    if system == "win32":
        appdata = env.get("APPDATA", "")
        return path(appdata) if appdata else home / "AppData" / "Roaming"
    xdg = env.get("XDG_CONFIG_HOME", "")
    # the XDG spec: a relative value is invalid and is ignored
    return path(xdg) if xdg and path(xdg).is_absolute() else home / ".config"


def config_path(
    client: str,
    scope: str,
    *,
    system: str,
    env: Mapping[str, str],
    home: str | PurePath,
    project: str | PurePath,
) -> PurePath:
    """The file ``client`` reads its servers from, for ``scope`` (``user`` or ``project``:
    the project being the folder ``project``), on ``system`` (a ``sys.platform`` value)."""
    spec = CLIENTS[client]
    if scope not in spec.scopes:
        raise ValueError(f"{spec.title} has no {scope} configuration")
    path = _flavour(system)
    home_dir, project_dir = path(home), path(project)
    if client == "claude-desktop":
        return _app_data(system, env, home_dir) / "Claude" / "claude_desktop_config.json"
    if client == "claude-code":
        return home_dir / ".claude.json" if scope == "user" else project_dir / ".mcp.json"
    if client == "cursor":
        return (home_dir if scope == "user" else project_dir) / ".cursor" / "mcp.json"
    if client == "gemini-cli":
        return (home_dir if scope == "user" else project_dir) / ".gemini" / "settings.json"
    if client == "codex":
        codex_home = env.get("CODEX_HOME", "")
        return (path(codex_home) if codex_home else home_dir / ".codex") / "config.toml"
    if scope == "user":  # vscode
        return _app_data(system, env, home_dir) / "Code" / "User" / "mcp.json"
    return project_dir / ".vscode" / "mcp.json"


def server_entry(
    client: str | None, command: str, args: list[str], env: Mapping[str, str]
) -> dict[str, Any]:
    """One stdio server entry in ``client``'s shape (``None``: the common
    ``command``/``args``/``env`` shape most clients read)."""
    entry: dict[str, Any] = {}
    if client is not None and CLIENTS[client].typed:
        entry["type"] = "stdio"
    entry["command"] = command
    entry["args"] = list(args)
    if env:
        entry["env"] = dict(env)
    return entry
