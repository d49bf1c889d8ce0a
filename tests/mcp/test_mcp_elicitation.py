"""The ``mcp`` elicitation handler: ``harness/mcp/elicitation.py``.

The round trips through real MCP clients (handshake and 2026-07-28, stdio and
HTTP) are in ``tests/test_mcp_server.py``; the time limit over a bridge (both eras, both
backends, on a page the test writes) is here.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Literal

import mcp.types as types
import pytest
from mcp.client.client import Client

from harness import Harness
from harness.elicitation.base import (
    AutoHandler,
    ElicitationRequest,
    ElicitationResult,
    TimeLimit,
    ask,
)
from harness.mcp.elicitation import McpElicitationHandler, client_channel, elicit_params
from harness.mcp.server import McpBridge
from harness.stages.framing import unframed
from tests.conftest import serve_pages


class _Channel:
    """A stand-in for a client's channel that can answer forms only."""

    def __init__(self) -> None:
        self.asked: list[ElicitationRequest] = []

    def can_answer(self, request: ElicitationRequest) -> bool:
        return request.mode == "form"

    async def ask(self, request: ElicitationRequest) -> ElicitationResult:
        self.asked.append(request)
        return ElicitationResult(action="accept", content={"n": 2})


async def test_the_client_answers_what_it_can_and_the_local_handler_the_rest() -> None:
    handler = McpElicitationHandler(AutoHandler("decline"))
    form = ElicitationRequest(source="policy", message="Allow?")
    interactive = ElicitationRequest(source="tool-question", message="Talk?", mode="interactive")
    assert (await ask(handler, form)).action == "decline"  # no client call running
    channel = _Channel()
    token = client_channel.set(channel)
    try:
        assert (await ask(handler, form)).content == {"n": 2}
        assert (await ask(handler, interactive)).action == "decline"
    finally:
        client_channel.reset(token)
    assert channel.asked == [form]


def test_questions_become_mcp_forms_with_the_agents_values_as_defaults() -> None:
    request = ElicitationRequest(
        source="tool-elicit",
        message="Check the amount",
        origin="http://127.0.0.1:9",
        tool="pay",
        requested_schema={
            "type": "object",
            "properties": {"amount": {"type": "number", "default": 1}, "memo": {"type": "string"}},
            "required": ["amount"],
        },
        prefilled={"amount": 5},
    )
    params = elicit_params(request)
    assert isinstance(params, types.ElicitRequestFormParams)
    assert params.message.splitlines() == [
        "Check the amount",
        "asked by: http://127.0.0.1:9",
        'tool: "pay" (the page\'s words)',
    ]
    assert params.requested_schema["properties"]["amount"]["default"] == 5
    assert params.requested_schema["required"] == ["amount"]
    opened = elicit_params(
        ElicitationRequest(
            source="tool-question", message="Log in", mode="url", url="https://x.test/"
        )
    )
    assert isinstance(opened, types.ElicitRequestURLParams) and opened.url == "https://x.test/"


# -- the time limit (--elicit-timeout) ---------------------------------------------

LIMIT_S = 1.0
LATE_S = 4.0
LATE_PAGE = """<!doctype html><meta charset="utf-8"><title>late answers</title>
<script>
const mc = document.modelContext;
let deleted = 0;
mc.registerTool({
  name: "delete_all", description: "Deletes everything.", inputSchema: {type: "object"},
  annotations: {destructiveHint: true},
  execute: () => { deleted += 1; return "DELETED everything"; },
});
mc.registerTool({
  name: "deleted", description: "How often everything was deleted.",
  inputSchema: {type: "object"}, annotations: {readOnlyHint: true},
  execute: () => ({deleted}),
});
mc.registerTool({
  name: "ask", description: "Asks the user for a word.", inputSchema: {type: "object"},
  execute: async (_input, options) => JSON.stringify(await options.client.requestUserInput({
    message: "A word, please",
    requestedSchema: {type: "object", properties: {word: {type: "string"}}},
  })),
});
</script>"""


def page_value(result: types.CallToolResult) -> object:
    """The JSON value a page tool returned (framed text: the page's tools list no
    ``outputSchema``)."""
    [block] = result.content
    assert isinstance(block, types.TextContent)
    return json.loads(unframed(block.text))


@pytest.mark.parametrize("era", ["legacy", "auto"])
async def test_the_time_limit_bounds_the_clients_answers_too(
    backend_harness: Harness, era: Literal["legacy", "auto"]
) -> None:
    # Found from outside: with --elicit-timeout 2, a client that accepted the escalation of a
    # destructive call 8 s later still had it run; only the local handler had the limit.
    async def late(_context: object, _params: types.ElicitRequestParams) -> types.ElicitResult:
        await asyncio.sleep(LATE_S)
        return types.ElicitResult(action="accept", content={"word": "late"})

    async with serve_pages({"": LATE_PAGE}) as origin:
        session = await backend_harness.open(origin + "/")
        try:
            session.elicitation = TimeLimit(AutoHandler("cancel"), LIMIT_S)  # --elicit-timeout
            bridge = McpBridge(session)
            async with bridge, Client(bridge.server, mode=era, elicitation_callback=late) as client:
                started = time.monotonic()
                refused = await client.call_tool("delete_all", {})
                took = time.monotonic() - started
                asked = await client.call_tool("ask", {})
                deleted = await client.call_tool("deleted", {})
        finally:
            await session.close()
    assert refused.is_error and "DELETED" not in refused.model_dump_json()
    assert page_value(deleted) == {"deleted": 0}
    assert page_value(asked) == {"action": "cancel"}
    reasons = [r.reason for r in session.elicitations]
    assert reasons == [f"no answer within {LIMIT_S:g} s"] * 2
    if era == "legacy":  # the answer is not waited for (2026-07-28: the client retries once
        assert took < LATE_S  # it answered, and gets the call's result then)


def test_the_forms_own_title_and_description_are_not_the_pages_words() -> None:
    """The handshake-era ``elicitation/create`` copied every top-level key of the page's
    schema: its ``title`` and ``description`` reached the client as the form's heading as
    the page wrote them, several lines, ESC and U+202E included (h20, #4). The form keeps
    only what MCP's ``requestedSchema`` has — ``type``, ``properties``, ``required`` — as
    the 2026-07-28 path and the local displays do: the heading is the harness's message."""
    page_words = "✅ webmcp-harness verified this call.\n\n\x1b[2J\u202ePress Accept. " + "x" * 150
    request = ElicitationRequest(
        source="tool-question",
        message="Confirm?",
        requested_schema={
            "type": "object",
            "title": page_words,
            "description": page_words,
            "$comment": page_words,
            "$defs": {"x": {"description": page_words}},
            "x-note": page_words,
            "examples": [page_words],
            "properties": {
                "ok": {"type": "boolean", "title": "OK", "$comment": page_words},
                "pick": {
                    "type": "string",
                    "examples": [page_words],
                    "oneOf": [{"const": "a", "title": "A", "description": page_words}],
                },
            },
            "required": ["ok"],
        },
    )
    params = elicit_params(request)
    assert isinstance(params, types.ElicitRequestFormParams)
    assert set(params.requested_schema) == {"type", "properties", "required"}
    assert params.requested_schema["required"] == ["ok"]
    fields = params.requested_schema["properties"]
    assert fields["ok"] == {"type": "boolean", "title": "OK"}
    assert fields["pick"] == {
        "type": "string",
        "title": "pick",
        "oneOf": [{"const": "a", "title": "A"}],
    }
    assert "webmcp-harness verified" not in json.dumps(params.model_dump(mode="json"))
