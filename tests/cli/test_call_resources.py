"""``mcpkit call`` reading resources (``--resource URI``, or a URI in the tool's place) and
getting prompts (``--prompt NAME``), against a file and against a server over HTTP."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.cli.test_cli import mcpkit
from tests.conformance._suite import running_server

EVERYTHING = "examples/everything.py"


@pytest.fixture(scope="module", params=["file", "http"])
def target(request: pytest.FixtureRequest) -> Iterator[str]:
    """The example server as a file (served in-process) and as a URL (``mcpkit run -t http``)."""
    if request.param == "file":
        yield EVERYTHING
        return
    with running_server(EVERYTHING) as url:
        yield url


def test_a_resource_prints_its_text(target):
    done = mcpkit("call", target, "--resource", "test://static-text")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "This is the content of the static text resource.\n"


def test_a_uri_in_the_tools_place_reads_the_resource(target):
    done = mcpkit("call", target, "test://template/7/data")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "id": "7",
        "templateTest": True,
        "data": "Data for ID: 7",
    }


def test_a_blob_prints_as_a_note_and_json_prints_the_raw_result(target):
    done = mcpkit("call", target, "--resource", "test://static-binary")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("[blob image/png, about ") and done.stdout.endswith(" bytes]\n")
    done = mcpkit("call", target, "--resource", "test://static-binary", "--json")
    [content] = json.loads(done.stdout)["contents"]
    assert content["uri"] == "test://static-binary" and content["mimeType"] == "image/png"
    assert content["blob"]


def test_an_unknown_resource_is_the_servers_error(target):
    done = mcpkit("call", target, "--resource", "test://nope")
    assert done.returncode == 1
    # the code is -32002 or -32602, as the protocol version the session speaks has it
    [line] = done.stderr.splitlines()
    assert line.startswith("error: the server answered: Resource not found: test://nope (code ")


def test_a_prompt_prints_its_messages(target):
    done = mcpkit(
        "call", target, "--prompt", "test_prompt_with_arguments", '{"arg1": "tea", "arg2": 2}'
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "user: Prompt with arguments: arg1='tea', arg2='2'\n"
    done = mcpkit("call", target, "--prompt", "test_prompt_with_image")
    assert done.stdout.splitlines()[1] == "user: Please analyze the image above."
    assert done.stdout.startswith("user: [image image/png, about ")


def test_a_prompt_with_json_prints_the_raw_result(target):
    done = mcpkit("call", target, "--prompt", "test_simple_prompt", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["messages"] == [
        {
            "role": "user",
            "content": {"type": "text", "text": "This is a simple prompt for testing."},
        }
    ]


def test_an_unknown_prompt_is_the_servers_error(target):
    done = mcpkit("call", target, "--prompt", "nope")
    assert done.returncode == 1
    assert done.stderr.startswith("error: the server answered: ")
    assert "nope" in done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "error: nothing to call: name a tool, or give --resource URI or --prompt NAME"),
        (
            ("--resource", "test://static-text", "--prompt", "test_simple_prompt"),
            "error: --resource and --prompt go one at a time",
        ),
        (
            ("calculate", "--resource", "test://static-text"),
            "error: --resource reads a resource: name no tool with it",
        ),
        (("test://static-text", "{}"), "error: a resource takes no arguments"),
        (("--prompt", "test_simple_prompt", "[1]"), "error: arguments must be a JSON object"),
    ],
)
def test_misuse_is_one_usage_error(args, message):
    done = mcpkit("call", EVERYTHING, *args)
    assert done.returncode == 2
    assert done.stderr.splitlines()[0].startswith(message)
    assert done.stdout == ""
