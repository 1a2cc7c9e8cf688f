"""Sending an operation's request and turning the HTTP response into MCP results.

A tool call gives a ``CallToolResult``:

* 2xx JSON: the JSON text, and ``structuredContent`` when the value is an object (or,
  when the output schema wraps a non-object value, ``{"result": value}``);
* 2xx text: the text; images and audio: image / audio content; other bytes: an embedded
  resource with a ``blob``; an empty body (204): the status line as text;
* any other status: an ``isError`` result whose text names the status, the method, the
  path and the body, with ``structuredContent`` ``{"status": 404, "body": ...}`` (the body
  parsed when it is JSON);
* a network failure (refused, timed out, a response over the size bound): an ``isError``
  result saying so.

A resource read gives the body as text (``mimeType`` from the response) or as a blob; an
error status raises: 404 is ``ResourceNotFoundError`` (-32002), others ``InternalError``
with ``{"status", "body"}`` as data.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any

import httpx

from mcpkit._exceptions import InternalError, ResourceNotFoundError
from mcpkit.openapi._plans import OperationPlan, is_json_media_type

#: Largest response body read from the API (16 MiB); a larger one is an error result.
DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024


class ResponseTooLargeError(httpx.HTTPError):
    """The API's response body passed the bridge's ``max_response_bytes``."""


@dataclass(frozen=True, slots=True)
class ApiResponse:
    """A response and its body, read in full (within the size bound)."""

    response: httpx.Response
    body: bytes

    @property
    def media_type(self) -> str:
        """The response's media type, lower case, without parameters (``""`` if none)."""
        content_type: str = self.response.headers.get("content-type", "")
        return content_type.split(";", 1)[0].strip().lower()

    @property
    def text(self) -> str:
        """The body decoded with the response's charset (UTF-8 by default)."""
        encoding: str = self.response.charset_encoding or "utf-8"
        return self.body.decode(encoding, errors="replace")

    def json(self) -> tuple[bool, Any]:
        """``(True, value)`` when the body is JSON, ``(False, None)`` otherwise."""
        if not self.body or not is_json_media_type(self.media_type):
            return False, None
        try:
            return True, json.loads(self.body)
        except ValueError:
            return False, None

    def status_line(self) -> str:
        """``HTTP 404 Not Found``."""
        return f"HTTP {self.response.status_code} {self.response.reason_phrase}".rstrip()

    def where(self) -> str:
        """``GET /pets/7``: the method and the path, never the host or the query string
        (which may carry credentials)."""
        request = self.response.request
        return f"{request.method} {request.url.path}"


async def send(client: httpx.AsyncClient, request: httpx.Request, max_bytes: int) -> ApiResponse:
    """Send ``request`` and read its body, at most ``max_bytes`` of it
    (``ResponseTooLargeError`` past that)."""
    response = await client.send(request, stream=True)
    try:
        declared = response.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > max_bytes:
            raise ResponseTooLargeError(
                f"the response body ({declared} bytes) is larger than {max_bytes} bytes"
            )
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > max_bytes:
                raise ResponseTooLargeError(f"the response body is larger than {max_bytes} bytes")
            chunks.append(chunk)
    finally:
        await response.aclose()
    return ApiResponse(response, b"".join(chunks))


def _text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _is_texty(media_type: str) -> bool:
    return (
        media_type.startswith("text/")
        or media_type.endswith(("+xml", "/xml", "/javascript", "/yaml", "/x-yaml"))
        or media_type in ("application/x-www-form-urlencoded", "")
    )


def tool_result(plan: OperationPlan, api: ApiResponse) -> dict[str, Any]:
    """The ``CallToolResult`` of a tool call that got ``api`` back."""
    if not api.response.is_success:
        return error_result(api)
    if not api.body:
        return {"content": [_text_block(api.status_line())]}
    is_json, value = api.json()
    if is_json:
        result: dict[str, Any] = {"content": [_text_block(api.text)]}
        if plan.wraps_output:
            result["structuredContent"] = {"result": value}
        elif isinstance(value, dict):
            result["structuredContent"] = value
        return result
    media_type = api.media_type
    if media_type.startswith(("image/", "audio/")):
        kind = "image" if media_type.startswith("image/") else "audio"
        data = base64.b64encode(api.body).decode()
        return {"content": [{"type": kind, "data": data, "mimeType": media_type}]}
    if _is_texty(media_type) or api.response.charset_encoding:
        return {"content": [_text_block(api.text)]}
    resource = {
        "uri": str(api.response.request.url),
        "blob": base64.b64encode(api.body).decode(),
        "mimeType": media_type or "application/octet-stream",
    }
    return {"content": [{"type": "resource", "resource": resource}]}


def _error_body(api: ApiResponse) -> Any:
    is_json, value = api.json()
    return value if is_json else api.text


def error_result(api: ApiResponse) -> dict[str, Any]:
    """The ``isError`` result of a response that is not 2xx."""
    text = f"{api.status_line()} from {api.where()}"
    if api.body:
        text += f": {api.text}"
    return {
        "content": [_text_block(text)],
        "structuredContent": {"status": api.response.status_code, "body": _error_body(api)},
        "isError": True,
    }


def network_error_result(request: httpx.Request, exc: Exception) -> dict[str, Any]:
    """The ``isError`` result of a request that got no (usable) response."""
    detail = str(exc) or type(exc).__name__
    text = f"{request.method} {request.url.path} failed: {type(exc).__name__}: {detail}"
    return {"content": [_text_block(text)], "isError": True}


def resource_value(uri: str, api: ApiResponse) -> dict[str, Any]:
    """What a resource read returns for ``api`` (text or blob, with its mime type);
    raises for a status that is not 2xx."""
    status = api.response.status_code
    if status == 404:
        raise ResourceNotFoundError(uri)
    if not api.response.is_success:
        raise InternalError(
            f"{api.status_line()} from {api.where()}",
            {"status": status, "body": _error_body(api)},
        )
    media_type = api.media_type or "application/octet-stream"
    if is_json_media_type(media_type) or _is_texty(media_type) or api.response.charset_encoding:
        return {"text": api.text, "mimeType": media_type}
    return {"blob": base64.b64encode(api.body).decode(), "mimeType": media_type}
