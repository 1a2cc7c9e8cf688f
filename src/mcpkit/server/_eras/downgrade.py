"""What the server sends, in the form of the protocol version the session negotiated.

Tools, resources and prompts are written once, against the latest schema. A session of
an older handshake version gets them as its version has them (docs/eras.md, "Older
protocol versions"):

- in results (tool results, prompt messages), a content block of a type the version lacks
  (``audio`` before 2025-03-26, ``resource_link`` before 2025-06-18, or a type no version
  has) is replaced by a text block naming it:
  ``[audio content (audio/wav) not supported by protocol 2024-11-05]``. The rest of a
  result is the call's data and is kept, ``structuredContent`` included: every version's
  result may carry more members, and its text block is what an older client reads;
- in descriptions (the lists, ``serverInfo``), a member the version lacks is left out:
  ``title``, ``outputSchema`` and an annotation's ``lastModified`` before 2025-06-18, tool
  ``annotations`` before 2025-03-26, ``icons``, ``websiteUrl`` and ``execution`` before
  2025-11-25. ``_meta`` is kept: every version reserves it.

The spec has no rule for this: each version's schema simply has no such block or member.
Nothing is changed in place; a session at 2025-11-25 or later gets everything as it is,
save content blocks of a type no version has.
"""

from __future__ import annotations

from typing import Any

from mcpkit.protocol._versions import (
    HANDSHAKE_VERSIONS,
    V2024_11_05,
    V2025_03_26,
    V2025_06_18,
    V2025_11_25,
)

#: Every content block type, by the version that brought it.
CONTENT_TYPES_SINCE: dict[str, str] = {
    "text": V2024_11_05,
    "image": V2024_11_05,
    "resource": V2024_11_05,
    "audio": V2025_03_26,
    "resource_link": V2025_06_18,
}
CONTENT_TYPES = frozenset(CONTENT_TYPES_SINCE)

#: Members of tool, resource, resource template, prompt and server descriptions, by the
#: version that brought them (absent: every version has it).
_DESCRIPTION_SINCE: dict[str, str] = {
    "title": V2025_06_18,
    "outputSchema": V2025_06_18,
    "icons": V2025_11_25,
    "websiteUrl": V2025_11_25,
    "execution": V2025_11_25,
}
#: Tool annotations (``ToolAnnotations``) came with 2025-03-26; resource annotations are
#: older (2024-11-05 has ``audience`` and ``priority``).
_TOOL_SINCE = {**_DESCRIPTION_SINCE, "annotations": V2025_03_26}
#: ``Implementation`` (serverInfo) grew ``description`` with 2025-11-25.
_SERVER_INFO_SINCE = {**_DESCRIPTION_SINCE, "description": V2025_11_25}

_OLDER = frozenset(v for v in HANDSHAKE_VERSIONS if v < V2025_11_25)


def is_older(version: str | None) -> bool:
    """Whether ``version`` lacks something the engine may send (a handshake version before
    2025-11-25). None (no negotiated version) counts as the latest."""
    return version in _OLDER


def _without(item: dict[str, Any], since: dict[str, str], version: str) -> dict[str, Any]:
    dropped = [key for key in item if key in since and since[key] > version]
    if not dropped:
        return item
    return {key: value for key, value in item.items() if key not in dropped}


def _annotations(item: dict[str, Any], version: str) -> dict[str, Any]:
    """``item`` without ``annotations.lastModified`` before 2025-06-18."""
    notes = item.get("annotations")
    if version >= V2025_06_18 or not isinstance(notes, dict) or "lastModified" not in notes:
        return item
    rest = {key: value for key, value in notes.items() if key != "lastModified"}
    if rest:
        return {**item, "annotations": rest}
    return {key: value for key, value in item.items() if key != "annotations"}


def supports_content(kind: Any, version: str | None) -> bool:
    since = CONTENT_TYPES_SINCE.get(kind) if isinstance(kind, str) else None
    return since is not None and (version is None or since <= version)


def unsupported_text(block: dict[str, Any], version: str | None) -> dict[str, Any]:
    """The text block sent instead of a block ``version`` has no type for."""
    kind = block.get("type")
    name = kind if isinstance(kind, str) else "untyped"
    detail = block.get("mimeType") if kind in ("audio", "image") else block.get("uri")
    what = f"{name} content ({detail})" if isinstance(detail, str) else f"{name} content"
    return {"type": "text", "text": f"[{what} not supported by protocol {version or 'in use'}]"}


def content_block(block: Any, version: str | None) -> Any:
    """One content block as ``version`` has it: as it is, or a text block naming it."""
    if isinstance(block, dict) and not supports_content(block.get("type"), version):
        return unsupported_text(block, version)
    return block


def content_list(blocks: Any, version: str | None) -> Any:
    """A content list as ``version`` has it (the same list when nothing changes)."""
    if not isinstance(blocks, list):
        return blocks
    for block in blocks:  # the common case, every block as it is, allocates nothing
        if isinstance(block, dict) and not supports_content(block.get("type"), version):
            return [content_block(block, version) for block in blocks]
    return blocks


def tool_result(result: dict[str, Any], version: str | None) -> dict[str, Any]:
    """A ``CallToolResult`` as ``version`` has it."""
    content = result.get("content")
    adapted = content_list(content, version)
    return result if adapted is content else {**result, "content": adapted}


def prompt_result(result: dict[str, Any], version: str | None) -> dict[str, Any]:
    """A ``GetPromptResult`` as ``version`` has it."""
    messages = result.get("messages")
    if not isinstance(messages, list):
        return result
    adapted = []
    changed = False
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        new = content_block(content, version)
        if new is not content:
            message = {**message, "content": new}
            changed = True
        adapted.append(message)
    return {**result, "messages": adapted} if changed else result


def tools(items: list[dict[str, Any]], version: str | None) -> list[dict[str, Any]]:
    """``tools/list`` entries as ``version`` has them."""
    if not is_older(version):
        return items
    assert version is not None
    return [_without(item, _TOOL_SINCE, version) for item in items]


def descriptions(items: list[dict[str, Any]], version: str | None) -> list[dict[str, Any]]:
    """Resource, resource template or prompt descriptions as ``version`` has them (prompt
    arguments lose ``title`` too)."""
    if not is_older(version):
        return items
    assert version is not None
    adapted = []
    for item in items:
        item = _annotations(_without(item, _DESCRIPTION_SINCE, version), version)
        arguments = item.get("arguments")
        if isinstance(arguments, list) and version < V2025_06_18:
            item = {
                **item,
                "arguments": [
                    _without(a, _DESCRIPTION_SINCE, version) if isinstance(a, dict) else a
                    for a in arguments
                ],
            }
        adapted.append(item)
    return adapted


def server_info(info: dict[str, Any], version: str | None) -> dict[str, Any]:
    """``serverInfo`` (``Implementation``) as ``version`` has it."""
    if not is_older(version):
        return info
    assert version is not None
    return _without(info, _SERVER_INFO_SINCE, version)
