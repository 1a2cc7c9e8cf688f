"""Multi round-trip requests (SEP-2322): how a call asks the client for input in the
2026-07-28 era, and the integrity-protected ``requestState`` that carries earlier answers
across retries.

A call that needs input raises ``InputRequired``; the handler answers with an
``InputRequiredResult``. The client retries the same request with ``inputResponses``; the
call runs again from the top and this time finds its answers. Earlier rounds' answers and
the call's own state ride in ``requestState``, signed with HMAC-SHA256, so a client can
neither forge nor alter them; it is also bound to the principal, the request and an expiry,
and good once (``state_binding``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcpkit._exceptions import InvalidParamsError, MissingCapabilityError
from mcpkit.server._eras.state_binding import ANONYMOUS, principal_of, request_digest

if TYPE_CHECKING:
    from mcpkit.server._eras.state_binding import RequestStates


_CAPABILITY_OF = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}


class InputRequired(Exception):
    """Raised inside a call that cannot finish without the client's input."""

    def __init__(self, requests: dict[str, dict[str, Any]]) -> None:
        super().__init__(f"input required: {', '.join(requests)}")
        self.requests = requests


def capability_for(method: str) -> str:
    return _CAPABILITY_OF.get(method, method)


def valid_response(method: str, value: Any) -> bool:
    """Whether a client's answer has the shape its request asks for."""
    return answer_problem(method, value) is None


_ROLES = ("user", "assistant")
_ELICIT_ACTIONS = ("accept", "decline", "cancel")


def answer_problem(method: str, value: Any) -> str | None:
    """What is wrong with a client's answer to ``method`` (None when it has the shape the
    result type asks for: ``ElicitResult``, ``CreateMessageResult``, ``ListRootsResult``).

    Checks what the engine and a tool read (members, their JSON types), in every version's
    form at once: a sampling answer may hold one content block or (2025-11-25) a list.
    """
    if not isinstance(value, dict):
        return f"the result must be an object, not {json_type(value)}"
    if method == "elicitation/create":
        if value.get("action") not in _ELICIT_ACTIONS:
            return '"action" must be "accept", "decline" or "cancel"'
        content = value.get("content")
        if content is None:
            return None
        if not isinstance(content, dict):
            return f'"content" must be an object, not {json_type(content)}'
        for name, item in content.items():
            if not _form_value(item):
                return f'"content.{name}" must be a string, number, boolean or list of strings'
        return None
    if method == "sampling/createMessage":
        if value.get("role") not in _ROLES:
            return '"role" must be "user" or "assistant"'
        if not isinstance(value.get("model"), str):
            return '"model" must be a string'
        content = value.get("content")
        blocks = content if isinstance(content, list) else [content]
        if not all(isinstance(b, dict) and isinstance(b.get("type"), str) for b in blocks):
            return '"content" must be a content block (an object with a "type") or a list of them'
        return None
    if method == "roots/list":
        roots = value.get("roots")
        if not isinstance(roots, list):
            return '"roots" must be a list'
        for root in roots:
            if not isinstance(root, dict) or not isinstance(root.get("uri"), str):
                return 'every root must be an object with a string "uri"'
            if root.get("name") is not None and not isinstance(root["name"], str):
                return 'a root\'s "name" must be a string'
        return None
    return None


def _form_value(item: Any) -> bool:
    if isinstance(item, (str, bool, int, float)):
        return True
    return isinstance(item, list) and all(isinstance(v, str) for v in item)


def json_type(value: Any) -> str:
    """A decoded JSON value's kind as an error message names it: ``a string``, ``an object``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


class InvalidClientResultError(InvalidParamsError):
    """The client answered a server-to-client request (sampling, elicitation, roots) with a
    result of the wrong shape, or elicited content the requested type refuses. Raised from
    ``ctx.sample`` / ``ctx.elicit`` / ``ctx.list_roots``; uncaught, the request that asked
    fails with -32602 (SEP-2322 answers a malformed ``inputResponses`` entry with a JSON-RPC
    error or by asking again; a handshake-era request cannot ask again): docs/eras.md."""

    def __init__(self, method: str, problem: str) -> None:
        super().__init__(
            f"Invalid result from the client for {method}: {problem}", {"method": method}
        )
        self.method = method


class UnsupportedRequestError(MissingCapabilityError):
    """The client cannot take this request although it may declare the capability: its
    protocol version has no such request or form (elicitation before 2025-06-18, URL mode
    before 2025-11-25, a multi-select enum before 2025-11-25), or it declared only the
    other elicitation mode. Nothing is sent; -32021 unless the call catches it, as for a
    capability the client did not declare (docs/eras.md)."""

    def __init__(
        self, capability: str, message: str, required: dict[str, Any] | None = None
    ) -> None:
        super().__init__(capability)
        self.message = message
        self.args = (message,)
        if required is not None:
            self.data = {"requiredCapabilities": required}


def checked_answer(method: str, value: Any) -> dict[str, Any]:
    """``value`` when it is a well-formed answer to ``method``; else ``InvalidClientResultError``."""
    problem = answer_problem(method, value)
    if problem is not None:
        raise InvalidClientResultError(method, problem)
    return value  # type: ignore[no-any-return]  # answer_problem: a dict


@dataclass(slots=True)
class RoundInputs:
    """The answers and state a call sees in this round of a multi round-trip request, and
    what the state it asks with is bound to: ``principal`` and the request's ``params``."""

    method: str
    target: str | None
    responses: dict[str, Any] = field(default_factory=dict)  # key -> raw answer
    state: Any = None
    issued: dict[str, str] = field(default_factory=dict)  # key -> method asked earlier
    counter: int = 0
    principal: str = ANONYMOUS
    params: dict[str, Any] = field(default_factory=dict)
    digest: str | None = None  # of ``params``, made when first needed
    #: The accepted state's id and expiry, until the app's shared record has taken it
    #: (``RequestStates.confirm``).
    spent: tuple[str, float] | None = None

    def next_key(self, method: str) -> str:
        self.counter += 1
        return f"{method}#{self.counter}"

    def answer(self, key: str, method: str) -> Any:
        """The valid answer stored for ``key``; None when missing or malformed."""
        value = self.responses.get(key)
        return value if value is not None and valid_response(method, value) else None

    def params_digest(self) -> str:
        """The digest of the request this round belongs to (``request_digest``)."""
        if self.digest is None:
            self.digest = request_digest(self.method, self.params)
        return self.digest

    @classmethod
    def first_round(
        cls, method: str, params: dict[str, Any], principal: str = ANONYMOUS
    ) -> RoundInputs:
        target = params.get("name") or params.get("uri")
        return cls(
            method, target if isinstance(target, str) else None, principal=principal, params=params
        )

    @classmethod
    def from_request(
        cls, states: RequestStates, method: str, params: dict[str, Any], principal: str
    ) -> RoundInputs:
        """This round's inputs; raises ``InvalidParamsError`` for a ``requestState`` that was
        altered, issued to another principal or for another request, expired or used."""
        inputs = cls.first_round(method, params, principal)
        state = params.get("requestState")
        if state is not None:
            payload = states.accept(
                state,
                method=method,
                target=inputs.target,
                principal=principal,
                digest=inputs.params_digest(),
            )
            inputs.spent = (payload["n"], payload["x"])
            inputs.responses.update(payload.get("r") or {})
            inputs.issued.update(payload.get("i") or {})
            inputs.state = payload.get("s")
        responses = params.get("inputResponses")
        if isinstance(responses, dict):
            for key, value in responses.items():
                if key in inputs.issued or state is None:
                    inputs.responses[key] = value
        return inputs

    def result_for(
        self, states: RequestStates, requests: dict[str, dict[str, Any]]
    ) -> dict[str, Any]:
        """The ``InputRequiredResult`` asking for ``requests`` (answers so far kept in state)."""
        issued = {**self.issued, **{key: r["method"] for key, r in requests.items()}}
        kept = {
            k: v for k, v in self.responses.items() if k in issued and valid_response(issued[k], v)
        }
        payload = {"m": self.method, "t": self.target, "r": kept, "i": issued, "s": self.state}
        result: dict[str, Any] = {
            "resultType": "input_required",
            "requestState": states.issue(
                payload, principal=self.principal, digest=self.params_digest()
            ),
        }
        if requests:
            result["inputRequests"] = requests
        return result


#: Stands for a first round's ``RoundInputs`` until a call asks for input: ``(method, params)``.
FirstRound: type[tuple[Any, ...]] = tuple


def is_retry(params: dict[str, Any]) -> bool:
    """The request is a later round: it carries answers or state from an earlier one."""
    return "requestState" in params or "inputResponses" in params


def round_inputs(binding: Any) -> RoundInputs | None:
    """The inputs of a 2026-07-28 call (None in the handshake era), made on first use in a
    first round: most calls never ask the client anything."""
    inputs = binding.round_inputs
    if type(inputs) is FirstRound:
        method, params = inputs
        inputs = binding.round_inputs = RoundInputs.first_round(
            method, params, principal_of(binding.auth)
        )
    return inputs  # type: ignore[no-any-return]  # RoundInputs or None here
