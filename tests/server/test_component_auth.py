"""Per-component authorization (``auth=`` on a tool, resource, template or prompt): a caller
whose identity does not satisfy it finds the component absent from the lists and is answered
as for an unknown name when it calls, reads or gets it; one that does sees and uses it; a
component without a requirement is unaffected. Both eras, through the real client over an
in-memory connection that runs as a given identity."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from mcpkit import McpCallError, McpClient, McpServerApp, mcp_prompt, mcp_resource, mcp_tool
from mcpkit.auth import AuthInfo, AuthRequirement, require, require_scopes
from mcpkit.auth._types import as_requirement
from tests.in_memory import serving_in_memory

HANDSHAKE = "2025-11-25"
MODERN = "2026-07-28"
ERAS = [HANDSHAKE, MODERN]

READER = AuthInfo(subject="rita", scopes=("files:read",), token="t1")
ADMIN = AuthInfo(subject="ada", scopes=("files:read", "admin"), token="t2")
STAFF = AuthInfo(subject="sam", scopes=(), token="t3", claims={"groups": ["staff"]})


def is_staff(auth: AuthInfo | None) -> bool:
    return auth is not None and "staff" in auth.claims.get("groups", ())


def build() -> McpServerApp:
    app = McpServerApp("guarded")

    @app.tool()
    def public() -> str:
        return "public"

    @app.tool(auth="admin")
    def purge() -> str:
        return "purged"

    @app.tool(auth=is_staff)
    def roster() -> str:
        return "roster"

    @app.resource("notes://public")
    def public_note() -> str:
        return "hello"

    @app.resource("notes://admin", auth=["files:read", "admin"])
    def admin_note() -> str:
        return "secret"

    @app.resource("files://{name}", auth="files:read")
    def a_file(name: str) -> str:
        return f"file {name}"

    @app.prompt(auth=require_scopes("admin"))
    def audit(topic: str) -> str:
        return f"Audit {topic}"

    @app.prompt()
    def greet(name: str) -> str:
        return f"Hi {name}"

    @app.completion(prompt="audit", argument="topic")
    def topics(value: str) -> list[str]:
        return ["billing", "access"]

    return app


@contextlib.asynccontextmanager
async def caller(app: McpServerApp, auth: AuthInfo | None, era: str) -> AsyncIterator[McpClient]:
    """A client of ``app`` over an in-memory connection whose calls run as ``auth``."""
    async with serving_in_memory(app, auth=auth) as stream:
        client = McpClient(stream, protocol_version=era)
        try:
            await client.connect()
            yield client
        finally:
            await client.aclose()


async def refusal(call: Any) -> tuple[int, str, Any]:
    with pytest.raises(McpCallError) as raised:
        await call
    return raised.value.code, raised.value.message, raised.value.data


async def names(client: McpClient) -> dict[str, list[str]]:
    return {
        "tools": [tool.name for tool in await client.list_tools()],
        "resources": [resource.uri for resource in await client.list_resources()],
        "templates": [t.uri_template for t in await client.list_resource_templates()],
        "prompts": [prompt.name for prompt in await client.list_prompts()],
    }


@pytest.mark.parametrize("era", ERAS)
async def test_without_an_identity_only_the_unrestricted_components_are_there(era: str) -> None:
    async with caller(build(), None, era) as client:
        assert await names(client) == {
            "tools": ["public"],
            "resources": ["notes://public"],
            "templates": [],
            "prompts": ["greet"],
        }
        assert (await client.call_tool("public")).content[0].text == "public"  # type: ignore[union-attr]


@pytest.mark.parametrize("era", ERAS)
async def test_each_identity_sees_and_uses_what_its_scopes_and_claims_allow(era: str) -> None:
    app = build()
    async with caller(app, READER, era) as client:
        assert await names(client) == {
            "tools": ["public"],
            "resources": ["notes://public"],
            "templates": ["files://{name}"],
            "prompts": ["greet"],
        }
        read = await client.read_resource("files://a.txt")
        assert read.contents[0].text == "file a.txt"  # type: ignore[union-attr]
    async with caller(app, ADMIN, era) as client:
        assert await names(client) == {
            "tools": ["public", "purge"],
            "resources": ["notes://public", "notes://admin"],
            "templates": ["files://{name}"],
            "prompts": ["audit", "greet"],
        }
        assert (await client.call_tool("purge")).content[0].text == "purged"  # type: ignore[union-attr]
        note = await client.read_resource("notes://admin")
        assert note.contents[0].text == "secret"  # type: ignore[union-attr]
        prompt = await client.get_prompt("audit", {"topic": "billing"})
        assert "Audit billing" in prompt.messages[0].content.text  # type: ignore[union-attr]
        done = await client.complete({"type": "ref/prompt", "name": "audit"}, "topic", "")
        assert done.completion.values == ["billing", "access"]
    async with caller(app, STAFF, era) as client:  # a predicate on the claims
        assert [tool.name for tool in await client.list_tools()] == ["public", "roster"]
        assert (await client.call_tool("roster")).content[0].text == "roster"  # type: ignore[union-attr]


@pytest.mark.parametrize("era", ERAS)
async def test_a_hidden_component_is_refused_exactly_as_an_unknown_one(era: str) -> None:
    """The same code, message and data as for a name no one registered: a caller cannot
    tell hidden from absent."""
    app = build()
    async with caller(app, READER, era) as client:
        hidden = {
            "tool": await refusal(client.call_tool("purge")),
            "resource": await refusal(client.read_resource("notes://admin")),
            "prompt": await refusal(client.get_prompt("audit", {"topic": "x"})),
        }
        completion = await client.complete({"type": "ref/prompt", "name": "audit"}, "topic", "")
        assert completion.completion.values == []
    async with caller(app, None, era) as client:
        hidden["template"] = await refusal(client.read_resource("files://a.txt"))
    assert hidden["tool"][0] == -32602
    assert hidden["resource"][0] == (-32002 if era == HANDSHAKE else -32602)
    app.catalog.unregister_tool("purge")
    app.catalog.unregister_resource("notes://admin")
    app.catalog.unregister_resource("files://{name}")
    app.catalog.unregister_prompt("audit")
    async with caller(app, READER, era) as client:
        absent = {
            "tool": await refusal(client.call_tool("purge")),
            "resource": await refusal(client.read_resource("notes://admin")),
            "prompt": await refusal(client.get_prompt("audit", {"topic": "x"})),
            "template": await refusal(client.read_resource("files://a.txt")),
        }
    assert hidden == absent


async def test_a_hidden_template_lets_a_later_one_that_matches_answer() -> None:
    """As if the hidden template were not there: the next matching one reads the URI."""
    app = McpServerApp("layers")

    @app.resource("docs://{name}", auth="admin")
    def full(name: str) -> str:
        return f"full {name}"

    @app.resource("docs://{slug}")
    def summary(slug: str) -> str:
        return f"summary {slug}"

    async with caller(app, READER, HANDSHAKE) as client:
        read = await client.read_resource("docs://x")
        assert read.contents[0].text == "summary x"  # type: ignore[union-attr]
    async with caller(app, ADMIN, HANDSHAKE) as client:
        read = await client.read_resource("docs://x")
        assert read.contents[0].text == "full x"  # type: ignore[union-attr]


async def test_a_modern_list_that_depends_on_the_caller_is_cached_privately() -> None:
    app = build()
    async with caller(app, ADMIN, MODERN) as client:
        tools = await client.request("tools/list")
        assert tools["cacheScope"] == "private"
        resources = await client.request("resources/list")
        assert resources["cacheScope"] == "private"
    plain = McpServerApp("plain")
    plain.tool()(build_public_tool())
    async with caller(plain, ADMIN, MODERN) as client:
        assert (await client.request("tools/list"))["cacheScope"] == "public"


def build_public_tool() -> Any:
    def public() -> str:
        return "public"

    return public


async def test_the_class_decorators_take_a_requirement_and_mount_keeps_it() -> None:
    class Ops:
        @mcp_tool(auth="admin")
        def restart(self) -> str:
            return "restarted"

        @mcp_resource("ops://log", auth="admin")
        def log(self) -> str:
            return "log"

        @mcp_prompt(auth=lambda auth: auth is not None and auth.subject == "ada")
        def postmortem(self) -> str:
            return "Write it up"

        @mcp_tool()
        def status(self) -> str:
            return "ok"

    parent = McpServerApp("parent")
    parent.mount(McpServerApp("ops", Ops()), "ops")
    async with caller(parent, READER, HANDSHAKE) as client:
        assert await names(client) == {
            "tools": ["ops_status"],
            "resources": [],
            "templates": [],
            "prompts": [],
        }
        assert (await refusal(client.call_tool("ops_restart")))[0] == -32602
    async with caller(parent, ADMIN, MODERN) as client:
        assert await names(client) == {
            "tools": ["ops_restart", "ops_status"],
            "resources": ["ops://ops/log"],
            "templates": [],
            "prompts": ["ops_postmortem"],
        }
        assert (await client.call_tool("ops_restart")).content[0].text == "restarted"  # type: ignore[union-attr]


async def test_a_predicate_that_raises_hides_and_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = McpServerApp("broken")

    def broken(auth: AuthInfo | None) -> bool:
        raise RuntimeError("no directory")

    app.tool(auth=broken)(build_public_tool())
    async with caller(app, ADMIN, HANDSHAKE) as client:
        assert await client.list_tools() == []
        assert (await refusal(client.call_tool("public")))[0] == -32602
    assert "raised; its component is hidden" in caplog.text


def test_the_forms_auth_takes() -> None:
    assert as_requirement(None) is None
    one = as_requirement("a b")
    assert isinstance(one, AuthRequirement)
    both = AuthInfo(subject="s", scopes=("a", "b"), token="t")
    only_a = AuthInfo(subject="s", scopes=("a",), token="t")
    assert one(both) and not one(only_a) and not one(None)
    listed = as_requirement(("a", "b"))
    assert listed is not None and listed(both) and not listed(only_a)
    anyone = require_scopes()
    assert anyone(only_a) and not anyone(None)
    either = require_scopes("b") | require(lambda auth: auth is not None and auth.subject == "s")
    assert either(only_a) and not either(None)
    combined = require_scopes("a") & "b"
    assert combined(both) and not combined(only_a)
    assert str(combined) == "(require_scopes('a') & require_scopes('b'))"
    for wrong in ("", (), [1], 3):
        with pytest.raises((TypeError, ValueError)):
            as_requirement(wrong)

    async def asynchronous(auth: AuthInfo | None) -> bool:
        return True

    with pytest.raises(TypeError, match="sync"):
        mcp_tool(auth=asynchronous)
    with pytest.raises(TypeError, match="sync"):
        require(lambda auth: asynchronous(auth))(None)


def test_the_catalog_knows_which_lists_differ_by_caller() -> None:
    """Counted as entries come, are replaced and go: a list with no requirement left is
    served unfiltered again."""
    app = McpServerApp("counted")
    catalog = app.catalog
    assert not catalog.restricts("tools")
    catalog.register_tool(build_public_tool(), auth="admin")
    assert catalog.restricts("tools") and not catalog.restricts("prompts")
    catalog.register_tool(build_public_tool())  # replaced by one without a requirement
    assert not catalog.restricts("tools")
    catalog.register_tool(build_public_tool(), auth="admin")
    catalog.unregister_tool("public")
    assert not catalog.restricts("tools")
    app.resource("r://{x}", auth="admin")(lambda x: x)
    app.resource("r://one", auth="admin")(lambda: "one")
    assert catalog.restricts("resourceTemplates") and catalog.restricts("resources")
    catalog.replace_resources(remove=["r://one"])
    catalog.unregister_resource("r://{x}")
    assert not catalog.restricts("resourceTemplates") and not catalog.restricts("resources")
