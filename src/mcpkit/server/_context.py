"""What a running call can see and do.

``McpExecutionContext`` (``_engine.execution``) is the light, frozen view that guards and
interceptors get before the call runs. ``McpToolContext`` is injected into a tool (or resource, prompt) that asks for
it by type, and talks back to the client: progress, logs, sampling, elicitation, roots.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from mcpkit._exceptions import MissingCapabilityError, ProtocolError, ToolError
from mcpkit.auth._types import AuthInfo
from mcpkit.protocol._jsonrpc import JsonRpcRequest
from mcpkit.protocol._versions import HANDSHAKE_VERSIONS, V2025_06_18, V2025_11_25
from mcpkit.server._elicitation import (
    ElicitResult,
    build_elicitation_schema,
    schema_for_version,
    structure_content,
)
from mcpkit.server._engine.binding import TransportBinding
from mcpkit.server._engine.execution import call_auth
from mcpkit.server._engine.session import LOG_LEVELS
from mcpkit.server._engine.session_state import (
    DEFAULT_MAX_STATE_BYTES,
    DEFAULT_MAX_STATE_KEYS,
    SessionStates,
    StateBag,
    check_key,
    decode_state,
    encode_state,
    too_many_keys,
)
from mcpkit.server._eras.mrtr import (
    InputRequired,
    UnsupportedRequestError,
    capability_for,
    checked_answer,
    round_inputs,
)
from mcpkit.server._session_view import SessionView

if TYPE_CHECKING:
    from mcpkit.server._engine.dispatcher import McpDispatcher


class McpToolContext:
    """Injected into a call that declares a parameter of this type.

    Its size: everything a tool may do during its call (progress, logs, sampling,
    elicitation, roots, per-session and per-call state, the request's metadata) is reached
    through the one ``ctx`` users know from FastMCP and the mcp SDK; each method is a few
    lines over the call's binding."""

    # The call's own state (``set_state``), made on first use: none for most calls.
    _request_bag: StateBag | None = None
    _request_objects: dict[str, Any] | None = None

    def __init__(
        self,
        binding: TransportBinding,
        request: JsonRpcRequest,
        dispatcher: McpDispatcher,
        lifespan_context: Any = None,
    ) -> None:
        self.binding = binding
        self.request_id = request.id
        self.method = request.method
        params = request.params or {}
        self.meta: dict[str, Any] = params.get("_meta") or {}
        self.lifespan_context = lifespan_context
        self._dispatcher = dispatcher

    # what the call can read -------------------------------------------------------------

    @property
    def session_id(self) -> str | None:
        """The session's id (Streamable HTTP, legacy SSE), None without one."""
        return self.binding.session_id

    @property
    def headers(self) -> Mapping[str, str] | None:
        """The headers of the request's transport (HTTP), None without."""
        return self.binding.headers

    @property
    def auth(self) -> AuthInfo | None:
        """The verified identity of the HTTP request (``AuthInfo``; None without bearer
        auth), on Streamable HTTP, legacy SSE and WebSocket alike."""
        return call_auth(self.binding)

    @property
    def traceparent(self) -> str | None:
        """W3C trace context of the request (``_meta.traceparent``, SEP-414), if any."""
        value = self.meta.get("traceparent")
        return value if isinstance(value, str) else None

    @property
    def tracestate(self) -> str | None:
        """The W3C ``tracestate`` the request carried in ``_meta``, if any."""
        value = self.meta.get("tracestate")
        return value if isinstance(value, str) else None

    @property
    def baggage(self) -> str | None:
        """The W3C ``baggage`` the request carried in ``_meta``, if any."""
        value = self.meta.get("baggage")
        return value if isinstance(value, str) else None

    @property
    def progress_token(self) -> str | int | None:
        """The request's progress token (what ``report_progress`` uses), if it has one."""
        return self.meta.get("progressToken")

    @property
    def client_capabilities(self) -> dict[str, Any]:
        """The capabilities the client declared (empty when it declared none)."""
        return self.binding.client_capabilities or {}

    @property
    def client_info(self) -> dict[str, Any] | None:
        """The client's ``clientInfo`` (name, version), when it gave one."""
        session = self.binding.session
        return session.client_info if session is not None else None

    @property
    def protocol_version(self) -> str | None:
        """The protocol version of the session (or of the 2026-07-28 request)."""
        session = self.binding.session
        return session.protocol_version if session is not None else None

    @property
    def cancel_requested(self) -> bool:
        """True once the client has cancelled this request."""
        return self._dispatcher.is_cancel_requested(self.binding.connection_key, self.request_id)

    # what this session is shown -----------------------------------------------------------

    async def enable_components(self, *names: str, tags: Iterable[str] = ()) -> None:
        """Show this session the components named (a name, or a resource's URI) or carrying
        any of ``tags``, those the app set aside (``app.disable``) too; its client hears
        ``list_changed``. The last rule naming a component decides (``_session_view``)."""
        await self._view_rule(True, names, tags)

    async def disable_components(self, *names: str, tags: Iterable[str] = ()) -> None:
        """Hide from this session the components named or carrying any of ``tags``: absent
        from its lists, and unknown to its calls, reads and gets, until enabled again."""
        await self._view_rule(False, names, tags)

    async def _view_rule(self, shown: bool, names: Iterable[str], tags: Iterable[str]) -> None:
        session = self.binding.session
        if session is None or session.modern or session.ephemeral:
            raise RuntimeError(
                "this call has no session to keep what it is shown (2026-07-28, or"
                " stateless HTTP): use app.enable()/app.disable() for every client"
            )
        if session.visibility is None:
            session.visibility = SessionView()
        session.visibility.add(shown, names, (tags,) if isinstance(tags, str) else tags)
        for kind in ("tools", "resources", "prompts"):
            await self.binding.send_notification(f"notifications/{kind}/list_changed")

    # talking back -----------------------------------------------------------------------

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send ``notifications/progress``; a no-op when the request carried no progressToken."""
        token = self.progress_token
        if token is None:
            return
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self.binding.send_notification("notifications/progress", params)

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """Send ``notifications/message`` when ``level`` passes the log level the client
        asked for. Handshake era: every level until it sends ``logging/setLevel``.
        2026-07-28: only when the request's ``_meta`` names a level (the spec forbids
        more); see docs/eras.md."""
        if level not in LOG_LEVELS:
            raise ValueError(f"unknown log level {level!r}: one of {', '.join(LOG_LEVELS)}")
        session = self.binding.session
        if session is not None and not session.should_log(level):
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self.binding.send_notification("notifications/message", params)

    async def debug(self, data: Any, logger: str | None = None) -> None:
        """Send a ``debug`` log message to the client (if its level lets it through)."""
        await self.log("debug", data, logger)

    async def info(self, data: Any, logger: str | None = None) -> None:
        """Send an ``info`` log message to the client (if its level lets it through)."""
        await self.log("info", data, logger)

    async def warning(self, data: Any, logger: str | None = None) -> None:
        """Send a ``warning`` log message to the client (if its level lets it through)."""
        await self.log("warning", data, logger)

    async def error(self, data: Any, logger: str | None = None) -> None:
        """Send an ``error`` log message to the client (if its level lets it through)."""
        await self.log("error", data, logger)

    def _require(self, method: str, params: dict[str, Any] | None) -> None:
        """Raise ``MissingCapabilityError`` when the session cannot take ``method``: the
        client did not declare the capability, or its protocol version has no such request
        (elicitation came with 2025-06-18, its URL mode with 2025-11-25), or it declared
        only the other elicitation mode (2025-11-25: ``elicitation: {}`` means form only)."""
        session = self.binding.session
        if session is None:
            return
        capability = capability_for(method)
        if capability != "elicitation":
            if not session.client_supports(capability):
                raise MissingCapabilityError(capability)
            return
        url = (params or {}).get("mode") == "url"
        since = V2025_11_25 if url else V2025_06_18
        version = session.protocol_version
        if version is not None and version < since:
            what = "URL-mode elicitation" if url else "elicitation"
            raise UnsupportedRequestError(
                capability, f"Protocol {version} has no {what} (it came with {since})"
            )
        declared = (session.client_capabilities or {}).get(capability)
        if declared is None:
            raise MissingCapabilityError(capability)
        modes = declared if isinstance(declared, dict) else {}
        if url and "url" not in modes:
            raise UnsupportedRequestError(
                capability,
                "Client does not support URL-mode elicitation",
                {"elicitation": {"url": {}}},
            )
        if not url and "url" in modes and "form" not in modes:
            raise UnsupportedRequestError(
                capability,
                "Client does not support form-mode elicitation",
                {"elicitation": {"form": {}}},
            )

    def _prepared(self, method: str, params: dict[str, Any] | None) -> dict[str, Any] | None:
        """``params`` as the session's protocol version has the request (a copy when it
        differs): before 2025-11-25 an elicitation has no ``mode`` and no titled or
        multi-select enums (``schema_for_version``)."""
        version = self.protocol_version
        if (
            method != "elicitation/create"
            or params is None
            or version not in HANDSHAKE_VERSIONS
            or version >= V2025_11_25
        ):
            return params
        prepared = {key: value for key, value in params.items() if key != "mode"}
        schema = prepared.get("requestedSchema")
        if isinstance(schema, dict):
            prepared["requestedSchema"] = schema_for_version(schema, version)
        return prepared

    async def sample(
        self,
        messages: str | list[dict[str, Any]],
        *,
        max_tokens: int = 1000,
        system_prompt: str | None = None,
        temperature: float | None = None,
        stop_sequences: list[str] | None = None,
        model_preferences: dict[str, Any] | None = None,
        include_context: str | None = None,
        metadata: dict[str, Any] | None = None,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: dict[str, Any] | None = None,
        timeout: float | None = None,
        key: str | None = None,
    ) -> dict[str, Any]:
        """Ask the client's model for a completion (``sampling/createMessage``).

        ``messages`` may be one user text. Returns the ``CreateMessageResult`` dict
        (``role``, ``content``, ``model``, ``stopReason``).
        """
        if isinstance(messages, str):
            messages = [{"role": "user", "content": {"type": "text", "text": messages}}]
        params: dict[str, Any] = {"messages": messages, "maxTokens": max_tokens}
        optional = {
            "systemPrompt": system_prompt,
            "temperature": temperature,
            "stopSequences": stop_sequences,
            "modelPreferences": model_preferences,
            "includeContext": include_context,
            "metadata": metadata,
            "tools": tools,
            "toolChoice": tool_choice,
        }
        params.update({key: value for key, value in optional.items() if value is not None})
        return await self._ask("sampling/createMessage", params, key, timeout)

    async def elicit(
        self, message: str, schema: Any, *, timeout: float | None = None, key: str | None = None
    ) -> ElicitResult:
        """Ask the user for structured input (form mode).

        ``schema`` is a flat JSON object schema, or a dataclass / TypedDict / pydantic model /
        msgspec Struct; on ``accept`` the content is converted to that type. A type that is
        no object (``str``, ``int``, ``bool``, ``Literal["low", "high"]``, an Enum) is asked
        for as the form's one property ``value``, and ``content`` is that value.
        """
        requested = build_elicitation_schema(schema)
        params = {"mode": "form", "message": message, "requestedSchema": requested}
        raw = await self._ask("elicitation/create", params, key, timeout)
        return ElicitResult.from_wire(raw, structure_content(schema, raw))

    async def elicit_url(
        self,
        message: str,
        url: str,
        elicitation_id: str | None = None,
        *,
        timeout: float | None = None,
        key: str | None = None,
    ) -> ElicitResult:
        """Send the user to ``url`` (URL mode, 2025-11-25); the answer says whether they agreed.
        (2026-07-28 drops ``elicitationId``: the retry itself tells the outcome.)"""
        params: dict[str, Any] = {"mode": "url", "message": message, "url": url}
        if elicitation_id is not None and not self.binding.modern:
            params["elicitationId"] = elicitation_id
        raw = await self._ask("elicitation/create", params, key, timeout)
        return ElicitResult.from_wire(raw, None)

    async def complete_url_elicitation(self, elicitation_id: str) -> None:
        """Tell the client an out-of-band URL elicitation finished."""
        await self.binding.send_notification(
            "notifications/elicitation/complete", {"elicitationId": elicitation_id}
        )

    async def close_sse_stream(self) -> None:
        """End this call's SSE response now; the client reconnects (``Last-Event-ID``) and
        gets the rest, result included (SEP-1699 polling). No-op on other transports."""
        close = self.binding.close_stream
        if close is not None:
            await close()

    async def read_resource(self, uri: str) -> list[dict[str, Any]]:
        """Read one of this server's resources (or templates) as its client would, its
        guards and interceptors included: the ``contents`` of the ``ReadResourceResult``,
        each ``{"uri", "mimeType"?, "text" | "blob"}``. A read the server refuses (an unknown
        URI, a guard) raises ``ToolError`` with the refusal's text, the refusal itself
        (``ResourceNotFoundError``, ...) as its ``__cause__``."""
        read = self._dispatcher.handler("resources/read")
        try:
            result = await read(
                JsonRpcRequest(self.request_id, "resources/read", {"uri": uri}), self.binding
            )
        except ProtocolError as exc:
            raise ToolError(exc.message) from exc
        return list(result["contents"])

    async def list_roots(
        self, *, timeout: float | None = None, key: str | None = None
    ) -> list[dict[str, Any]]:
        """The client's roots (``roots/list``): a list of ``{"uri", "name"?}``."""
        result = await self._ask("roots/list", None, key, timeout)
        return list(result.get("roots", []))

    # input from the client, in either era -----------------------------------------------

    async def _ask(
        self, method: str, params: dict[str, Any] | None, key: str | None, timeout: float | None
    ) -> dict[str, Any]:
        """Handshake era: a server-to-client request. 2026-07-28: the answer from this
        round's ``inputResponses``, or ``InputRequired`` so the client retries with it.
        Either way the answer has the result type's shape (``InvalidClientResultError``
        otherwise; 2026-07-28 asks again for a malformed one)."""
        inputs = round_inputs(self.binding)
        if inputs is None:
            self._require(method, params)
            params = self._prepared(method, params)
            result = await self.binding.client_rpc(method, params, timeout=timeout)
            return checked_answer(method, result)
        key = key or inputs.next_key(method)
        answer: dict[str, Any] | None = inputs.answer(key, method)
        if answer is not None:
            return answer
        self._require(method, params)
        request: dict[str, Any] = {"method": method}
        if params is not None:
            request["params"] = params
        raise InputRequired({key: request})

    async def gather_inputs(
        self, requests: dict[str, tuple[str, dict[str, Any] | None]]
    ) -> dict[str, dict[str, Any]]:
        """Ask for several inputs at once: ``{key: (method, params)}`` → ``{key: answer}``.

        In the 2026-07-28 era every missing answer goes out in one ``InputRequiredResult``;
        in the handshake era they are sent to the client one after the other, each as the
        session's protocol version has it. Requests the client cannot take (by the rules
        ``elicit``, ``sample`` and ``list_roots`` follow: a capability it did not declare,
        a request its protocol version does not have) are skipped: absent from the answers.
        """
        if self.binding.session is None:
            return {}
        wanted: dict[str, tuple[str, dict[str, Any] | None]] = {}
        for key, (method, params) in requests.items():
            try:
                self._require(method, params)
            except MissingCapabilityError:
                continue
            wanted[key] = (method, params)
        inputs = round_inputs(self.binding)
        if inputs is None:
            answers: dict[str, dict[str, Any]] = {}
            for key, (method, params) in wanted.items():
                try:
                    params = self._prepared(method, params)
                except MissingCapabilityError:  # a form this version cannot show
                    continue
                answer = await self.binding.client_rpc(method, params)
                answers[key] = checked_answer(method, answer)
            return answers
        found = {key: inputs.answer(key, m) for key, (m, _) in wanted.items()}
        missing = {
            key: {"method": m, **({"params": p} if p is not None else {})}
            for key, (m, p) in wanted.items()
            if found[key] is None
        }
        if missing:
            raise InputRequired(missing)
        return found

    @property
    def request_state(self) -> Any:
        """The call's own state across the rounds of a multi round-trip request (JSON
        value; signed, so the client can't alter it). None in the handshake era."""
        inputs = round_inputs(self.binding)
        return inputs.state if inputs is not None else None

    @request_state.setter
    def request_state(self, value: Any) -> None:
        inputs = round_inputs(self.binding)
        if inputs is not None:
            inputs.state = value

    # state kept across calls (FastMCP's set_state / get_state) ------------------------

    def _session_state(self) -> tuple[SessionStates | None, str | None]:
        """The app's states and the key of the session this call's state belongs to; no
        key when it has none to keep it (2026-07-28, stateless HTTP, a task, an ended
        session): the state is then the request's own."""
        states: SessionStates | None = self._dispatcher.session_state
        session = self.binding.session
        if (
            states is None
            or session is None
            or session.ephemeral
            or session.modern
            or session.closed
            or self.binding.modern
        ):
            return states, None
        return states, session.key

    async def set_state(self, key: str, value: Any, *, serializable: bool = True) -> None:
        """Keep ``value`` under ``key`` for the session's later calls, as JSON: in the
        handshake era the session's (freed when it ends), in 2026-07-28 this request's
        only (there are no sessions). ``serializable=False`` keeps any object, for this
        request only. In this process only; ``StateLimitError`` past the bounds of
        ``app.session_state`` (docs/tools.md)."""
        states, session_key = self._session_state()
        max_keys = states.max_keys if states is not None else DEFAULT_MAX_STATE_KEYS
        if not serializable:
            check_key(key)
            objects = self._request_objects
            if objects is None:
                objects = self._request_objects = {}
            if key not in objects and len(objects) >= max_keys:
                raise too_many_keys(max_keys, key)
            objects[key] = value
            return
        raw = encode_state(key, value)
        if states is not None and session_key is not None:
            states.put(session_key, key, raw)
        else:
            bag = self._request_bag
            if bag is None:
                bag = self._request_bag = StateBag()
            max_bytes = states.max_bytes if states is not None else DEFAULT_MAX_STATE_BYTES
            bag.put(key, raw, max_keys, max_bytes)
        if self._request_objects:  # the object kept for this request no longer hides it
            self._request_objects.pop(key, None)

    async def get_state(self, key: str) -> Any:
        """The value ``set_state`` kept under ``key`` (a fresh copy), else None. An object
        kept with ``serializable=False`` in this request comes first."""
        objects = self._request_objects
        if objects and key in objects:
            return objects[key]
        return decode_state(self._kept().values.get(key))

    async def delete_state(self, key: str) -> None:
        """Forget ``key``, in the request's objects and in the state."""
        if self._request_objects:
            self._request_objects.pop(key, None)
        self._kept().pop(key)

    def _kept(self) -> StateBag:
        """Where this call's JSON state is (an empty bag when there is none yet)."""
        states, session_key = self._session_state()
        bag = (
            states.get(session_key)
            if states is not None and session_key is not None
            else self._request_bag
        )
        return bag if bag is not None else StateBag()  # no state yet: an empty one of its own
