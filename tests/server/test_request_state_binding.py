"""A 2026-07-28 ``requestState`` is bound (the MRTR page, server requirements: principal,
expiry, originating request; single use enforced server-side): bob cannot finish alice's
call with her state, changed arguments cannot reuse an approval, a state past
``request_state_ttl`` is refused, and none is good twice. Each refusal is -32602 and the
tool never runs with the state. In memory (identities on the binding, as a transport puts
them) and over real HTTP with bearer tokens."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from mcpkit import McpServerApp, McpToolContext, mcp_server, mcp_tool
from mcpkit.auth import AuthInfo
from mcpkit.protocol import JsonRpcRequest
from mcpkit.server import TransportBinding
from mcpkit.server._eras.used_states import UsedRequestStates, UsedRequestStatesFull
from tests.auth._support import Signer
from tests.auth.test_server_gate import AUDIENCE, make_config
from tests.http_server import serving

V = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": V,
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
}
ALICE = AuthInfo(subject="alice", scopes=("mcp:read",), token="alice-token", client_id="app")
BOB = AuthInfo(subject="bob", scopes=("mcp:read",), token="bob-token", client_id="app")
APPROVE = {"approve": {"action": "accept", "content": {"value": True}}}

pytestmark = pytest.mark.timeout(60)


@mcp_server(name="payments")
class Payments:
    """Asks the caller to approve a payment; ``runs`` counts the times ``pay`` ran, ``paid``
    lists every payment made."""

    def __init__(self) -> None:
        self.runs = 0
        self.paid: list[dict[str, Any]] = []

    @mcp_tool()
    async def pay(self, amount: int, ctx: McpToolContext, memo: str = "") -> str:
        self.runs += 1
        caller = ctx.auth.subject if ctx.auth is not None else None
        ctx.request_state = ctx.request_state or {"approved_for": caller}
        await ctx.elicit(f"Pay {amount}?", bool, key="approve")
        payment = {"amount": amount, "memo": memo, "by": caller, **ctx.request_state}
        self.paid.append(payment)
        return json.dumps(payment)

    @mcp_tool()
    async def refund(self, amount: int, ctx: McpToolContext) -> str:
        await ctx.elicit(f"Refund {amount}?", bool, key="approve")
        return "refunded"


def payments_app(**options: Any) -> tuple[McpServerApp, Payments]:
    app = McpServerApp(Payments, **options)
    return app, app.instances[0]


class Caller:
    """Sends 2026-07-28 ``tools/call`` requests to an app as one identity (None: none)."""

    def __init__(self, app: McpServerApp, auth: AuthInfo | None) -> None:
        self.app, self.auth, self.ids = app, auth, 0

    async def call(self, name: str, arguments: dict[str, Any], **retry: Any) -> dict[str, Any]:
        self.ids += 1
        params = {"name": name, "arguments": arguments, "_meta": META, **retry}
        request = JsonRpcRequest(self.ids, "tools/call", params)
        reply = await self.app.dispatcher.dispatch(request, TransportBinding(auth=self.auth))
        assert reply is not None
        return reply

    async def ask(self, name: str = "pay", **arguments: Any) -> str:
        """The first round: the ``requestState`` of the approval it asks for."""
        reply = await self.call(name, arguments)
        assert reply["result"]["resultType"] == "input_required", reply
        assert list(reply["result"]["inputRequests"]) == ["approve"]
        state: str = reply["result"]["requestState"]
        return state

    async def approve(self, state: str, name: str = "pay", **arguments: Any) -> dict[str, Any]:
        return await self.call(name, arguments, requestState=state, inputResponses=APPROVE)


def refusal(reply: dict[str, Any]) -> str:
    assert "error" in reply, reply
    assert reply["error"]["code"] == -32602, reply
    message: str = reply["error"]["message"]
    return message


def paid(reply: dict[str, Any]) -> dict[str, Any]:
    assert reply.get("result", {}).get("resultType") == "complete", reply
    payment: dict[str, Any] = json.loads(reply["result"]["content"][0]["text"])
    return payment


async def test_the_round_trip_still_works_with_and_without_auth() -> None:
    app, payments = payments_app()
    for auth, who in ((ALICE, "alice"), (None, None)):
        caller = Caller(app, auth)
        state = await caller.ask(amount=5, memo="rent")
        # Members of the arguments in another order are the same arguments.
        done = await caller.call(
            "pay",
            {"memo": "rent", "amount": 5},
            requestState=state,
            inputResponses=APPROVE,
        )
        assert paid(done) == {"amount": 5, "memo": "rent", "by": who, "approved_for": who}
    assert len(payments.paid) == 2


async def test_bob_cannot_finish_alice_call_with_her_state() -> None:
    app, payments = payments_app()
    alice, bob = Caller(app, ALICE), Caller(app, BOB)
    state = await alice.ask(amount=5)
    assert "another principal" in refusal(await bob.approve(state, amount=5))
    assert "another principal" in refusal(await Caller(app, None).approve(state, amount=5))
    assert payments.runs == 1 and payments.paid == []  # only alice's first round ran
    # Refused, it was not spent: alice still finishes her own call.
    assert paid(await alice.approve(state, amount=5))["approved_for"] == "alice"


async def test_changed_arguments_cannot_reuse_an_approval() -> None:
    app, payments = payments_app()
    alice = Caller(app, ALICE)
    state = await alice.ask(amount=1)
    assert "other arguments" in refusal(await alice.approve(state, amount=1_000_000))
    assert "other arguments" in refusal(await alice.approve(state, amount=1, memo="x"))
    assert "another request" in refusal(await alice.approve(state, "refund", amount=1))
    assert payments.runs == 1 and payments.paid == []
    assert paid(await alice.approve(state, amount=1))["amount"] == 1


async def test_a_state_is_good_once() -> None:
    app, payments = payments_app()
    alice = Caller(app, ALICE)
    state = await alice.ask(amount=5)
    assert paid(await alice.approve(state, amount=5))["amount"] == 5
    for _ in range(2):
        assert "already used" in refusal(await alice.approve(state, amount=5))
    assert payments.runs == 2 and len(payments.paid) == 1


async def test_every_round_issues_a_state_of_its_own() -> None:
    """A call asking twice: each round's state is spent by the next round."""

    @mcp_tool
    async def two_questions(ctx: McpToolContext) -> str:
        first = await ctx.elicit("First?", str, key="a")
        second = await ctx.elicit("Second?", str, key="b")
        return f"{first.content}{second.content}"

    alice = Caller(McpServerApp(two_questions), ALICE)
    one = (await alice.call("two_questions", {}))["result"]["requestState"]
    answer_a = {"a": {"action": "accept", "content": {"value": "x"}}}
    round_two = await alice.call("two_questions", {}, requestState=one, inputResponses=answer_a)
    two = round_two["result"]["requestState"]
    assert two != one
    answer_b = {"b": {"action": "accept", "content": {"value": "y"}}}
    done = await alice.call("two_questions", {}, requestState=two, inputResponses=answer_b)
    assert done["result"]["content"][0]["text"] == "xy"
    again = await alice.call("two_questions", {}, requestState=one, inputResponses=answer_a)
    assert "already used" in refusal(again)


async def test_a_state_past_its_ttl_is_refused() -> None:
    app, payments = payments_app(request_state_ttl=0.2)
    alice = Caller(app, ALICE)
    state = await alice.ask(amount=5)
    await asyncio.sleep(0.3)
    assert "expired" in refusal(await alice.approve(state, amount=5))
    assert payments.runs == 1 and payments.paid == []
    # A fresh one, used at once, is good.
    assert paid(await alice.approve(await alice.ask(amount=5), amount=5))["amount"] == 5


async def test_a_state_of_the_earlier_unbound_format_is_refused_cleanly() -> None:
    """Signed with the app's secret (an instance not yet upgraded) but without principal,
    digest, expiry or id: refused, never run, never a crash."""
    app, payments = payments_app(request_state_secret=b"k" * 32)
    old = app.dispatcher.modern.codec.encode(
        {"m": "tools/call", "t": "pay", "r": {}, "i": {"approve": "elicitation/create"}, "s": None}
    )
    message = refusal(await Caller(app, ALICE).approve(old, amount=5))
    assert "earlier version" in message
    assert payments.runs == 0


async def test_the_replay_record_is_bounded_and_refuses_rather_than_forgets() -> None:
    app, payments = payments_app(max_used_request_states=1)
    alice = Caller(app, ALICE)
    first, second = await alice.ask(amount=1), await alice.ask(amount=2)
    assert paid(await alice.approve(first, amount=1))["amount"] == 1
    busy = await alice.approve(second, amount=2)
    assert busy["error"]["code"] == -32603 and "max_used_request_states" in busy["error"]["message"]
    assert len(payments.paid) == 1
    assert "already used" in refusal(await alice.approve(first, amount=1))
    assert len(app.dispatcher.modern.request_states.used) == 1


def test_the_replay_record_forgets_ids_once_their_state_expired() -> None:
    used = UsedRequestStates(max_entries=2)
    assert used.spend("a", expires_at=10.0, now=0.0)
    assert not used.spend("a", expires_at=10.0, now=1.0)
    assert used.spend("b", expires_at=20.0, now=1.0)
    with pytest.raises(UsedRequestStatesFull):
        used.spend("c", expires_at=30.0, now=5.0)
    assert used.spend("c", expires_at=30.0, now=10.0)  # "a" expired at 10: forgotten
    assert len(used) == 2


@pytest.mark.parametrize(
    "options",
    [{"request_state_ttl": 0}, {"request_state_ttl": -1.0}, {"max_used_request_states": 0}],
)
def test_the_bounds_are_checked(options: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=next(iter(options))):
        McpServerApp(Payments, **options)


# --- over HTTP, with bearer tokens: the probe that found it ---------------------------------


@pytest.fixture(scope="module")
def signer() -> Signer:
    return Signer()


async def test_over_http_each_token_finishes_only_its_own_call_once(signer: Signer) -> None:
    app, payments = payments_app()
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": V,
        "mcp-method": "tools/call",
        "mcp-name": "pay",
    }

    async def post(
        http: httpx.AsyncClient, url: str, subject: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        token = signer.token(audience=AUDIENCE, subject=subject)
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
        answer = await http.post(
            url, json=body, headers={**headers, "authorization": f"Bearer {token}"}
        )
        if answer.headers["content-type"].startswith("text/event-stream"):
            data = [line[5:] for line in answer.text.splitlines() if line.startswith("data:")]
            return json.loads(data[-1])  # type: ignore[no-any-return]
        return answer.json()  # type: ignore[no-any-return]

    def params(amount: int, **retry: Any) -> dict[str, Any]:
        return {"name": "pay", "arguments": {"amount": amount}, "_meta": META, **retry}

    async with (
        serving(app, bearer_auth=make_config(signer), stateless=True) as (url, _),
        httpx.AsyncClient(timeout=10) as http,
    ):
        asked = await post(http, url, "alice", params(1))
        state = asked["result"]["requestState"]
        retry = {"requestState": state, "inputResponses": APPROVE}
        assert "another principal" in refusal(await post(http, url, "bob", params(1, **retry)))
        big = await post(http, url, "alice", params(1_000_000, **retry))
        assert "other arguments" in refusal(big)
        assert payments.paid == []
        done = await post(http, url, "alice", params(1, **retry))
        assert paid(done) == {"amount": 1, "memo": "", "by": "alice", "approved_for": "alice"}
        assert "already used" in refusal(await post(http, url, "alice", params(1, **retry)))
        assert len(payments.paid) == 1


async def test_a_state_is_good_once_across_instances_sharing_a_redis() -> None:
    """Two instances (as behind a load balancer, with one request_state_secret and one
    Redis, what ``mcpkit run --redis-url`` sets up): the state one accepted, the other
    refuses; a state refused for another reason is not spent there."""
    from mcpkit.stores import RedisHub, RedisUsedRequestStates
    from tests.redis_server import RedisServer

    server = RedisServer().start()
    hub = RedisHub(server.url)
    try:
        secret = b"s" * 32
        (one, one_payments), (two, two_payments) = (
            payments_app(request_state_secret=secret) for _ in range(2)
        )
        for app in (one, two):
            app.dispatcher.modern.request_states.shared = RedisUsedRequestStates(hub)
        state = await Caller(one, ALICE).ask(amount=5)
        assert "another principal" in refusal(await Caller(two, BOB).approve(state, amount=5))
        assert paid(await Caller(two, ALICE).approve(state, amount=5))["amount"] == 5
        assert "already used" in refusal(await Caller(one, ALICE).approve(state, amount=5))
        assert len(one_payments.paid) + len(two_payments.paid) == 1
    finally:
        await hub.aclose()
        server.stop()
