"""What a session withheld reaches no one through the questions it asks (h17, defect 4).

A page makes the harness withhold a key (an ``x-sensitive`` field) and a statement (a whole
``sensitiveHint`` result), then a later tool asks the user about them: its
``requestUserInput`` quotes both in its message, a field's title, description and default,
an ``enum`` and a choice's title; and the agent calls a destructive tool with the key as an
argument, which the policy's question quotes. Results, listings and the console were
scrubbed; the questions were not — an MCP client's ``elicitation/create`` carried the key in
plain text. Each channel a question reaches is searched: what the MCP client gets, what the
terminal and the browser tab show, and the session's record (``call --json``, traces). A
value shown that the answer leaves as it was goes back to the page as the page wrote it.
"""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator
from typing import Any

import mcp.types as types
import pytest
from mcp.client.client import Client
from rich.console import Console

from harness import Harness, Session
from harness.elicitation.base import (
    AutoHandler,
    ElicitationHandler,
    ElicitationRequest,
    ElicitationResult,
    ask,
)
from harness.elicitation.browser import render_form
from harness.elicitation.terminal import TerminalHandler
from harness.elicitation.withholding import WithholdingRecorder
from harness.mcp.elicitation import elicit_params
from harness.mcp.server import McpBridge
from harness.stages.framing import unframed
from harness.stages.scrubbing import HANDLE, Scrubber
from tests.conftest import serve_pages

KEY = "HXCANARY-key-5f2a9c"
STATEMENT = "HXCANARY statement 77: 4,321.00 EUR"
CANARY = "HXCANARY"

PAGE = f"""<!doctype html><meta charset="utf-8"><title>questions that quote a secret</title>
<script>
const mc = document.modelContext;
const KEY = {json.dumps(KEY)};
const STATEMENT = {json.dumps(STATEMENT)};
mc.registerTool({{
  name: "get_key", description: "Makes a key.", inputSchema: {{type: "object"}},
  annotations: {{sensitiveHint: true, readOnlyHint: true}},
  outputSchema: {{type: "object", properties: {{
    id: {{type: "string"}}, key: {{type: "string", "x-sensitive": true}}}}}},
  execute: () => ({{id: "k1", key: KEY}}),
}});
mc.registerTool({{
  name: "get_statement", description: "A statement.", inputSchema: {{type: "object"}},
  annotations: {{sensitiveHint: true, readOnlyHint: true}},
  execute: () => STATEMENT,
}});
mc.registerTool({{
  name: "ask", description: "Asks the user about the key.", inputSchema: {{type: "object"}},
  execute: async (_input, options) => JSON.stringify(await options.client.requestUserInput({{
    message: "Confirm key " + KEY + " for " + STATEMENT,
    requestedSchema: {{type: "object", required: ["key"], properties: {{
      key: {{type: "string", title: "Key " + KEY, description: "The key " + KEY, default: KEY}},
      pick: {{type: "string", enum: [KEY, "other"]}},
      choose: {{type: "string", oneOf: [{{const: "a", title: "Statement " + STATEMENT}}]}},
    }}}},
  }})),
}});
mc.registerTool({{
  name: "revoke", description: "Revokes a key.",
  inputSchema: {{type: "object", properties: {{key: {{type: "string"}}}}}},
  annotations: {{destructiveHint: true}},
  execute: ({{key}}) => "revoked",
}});
</script>"""

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
async def session(backend_harness: Harness) -> AsyncIterator[Session]:
    async with serve_pages({"": PAGE}) as origin:
        session = await backend_harness.open(origin + "/")
        try:
            for tool in ("get_key", "get_statement"):
                assert not (await session.call(tool)).is_error
            assert len(session.vault) >= 2
            yield session
        finally:
            await session.close()


class Capturing:
    """Keeps every question, then lets ``inner`` answer it."""

    def __init__(self, inner: ElicitationHandler) -> None:
        self.inner = inner
        self.asked: list[ElicitationRequest] = []

    async def elicit(self, request: ElicitationRequest) -> ElicitationResult:
        self.asked.append(request)
        return await ask(self.inner, request)


def what_the_page_got(session: Session) -> Any:
    """The answer ``ask``'s page received, as it returned it (the user's view of the result)."""
    [outcome] = [o for o in session.history if o.tool == "ask"]
    user_view = session.user_view(outcome)
    assert user_view is not None
    [block] = user_view.content
    assert isinstance(block, types.TextContent)
    return json.loads(unframed(block.text))


async def test_an_mcp_client_is_asked_with_handles_for_what_the_session_withheld(
    session: Session,
) -> None:
    asked: list[types.ElicitRequestParams] = []

    async def accept_as_shown(_context: object, params: types.ElicitRequestParams) -> Any:
        asked.append(params)
        assert isinstance(params, types.ElicitRequestFormParams)
        fields = params.requested_schema["properties"]
        shown = {name: f["default"] for name, f in fields.items() if "default" in f}
        return types.ElicitResult(action="accept", content=shown)

    bridge = McpBridge(session)
    async with (
        bridge,
        Client(bridge.server, mode="legacy", elicitation_callback=accept_as_shown) as client,
    ):
        result = await client.call_tool("ask", {})
    assert not result.is_error and len(asked) == 1
    sent = asked[0].model_dump_json()
    assert CANARY not in sent and CANARY not in result.model_dump_json()
    assert HANDLE.search(sent)  # the handles stand in
    # The client accepted the key as shown (its handle): the page gets its own key back.
    assert what_the_page_got(session) == {"action": "accept", "content": {"key": KEY}}


async def test_the_terminal_the_browser_tab_and_the_record_keep_what_the_session_withheld(
    session: Session,
) -> None:
    screen = io.StringIO()
    console = Console(file=screen, width=300, color_system=None, highlight=False)
    # ask: Enter keeps each field as shown, Enter accepts; revoke's escalation: "a" accepts.
    terminal = TerminalHandler(console=console, stream=io.StringIO("\n\n\n\na\n"))
    capturing = Capturing(terminal)
    session.elicitation = capturing
    assert not (await session.call("ask")).is_error
    assert not (await session.call("revoke", {"key": KEY})).is_error  # the agent's argument
    assert [q.source for q in capturing.asked] == ["tool-question", "policy"]
    shown = {"the terminal": screen.getvalue()}
    for question in capturing.asked:
        page = render_form(question, "token", question.starting_values(), {})
        shown[f"the browser tab ({question.source})"] = page
        shown[f"elicitation/create ({question.source})"] = elicit_params(question).model_dump_json()
        shown[f"the question ({question.source})"] = question.model_dump_json()
    shown["the record"] = json.dumps([r.model_dump(mode="json") for r in session.elicitations])
    assert [where for where, text in shown.items() if CANARY in text] == []
    assert HANDLE.search(shown["the terminal"]) and "Confirm key" in shown["the terminal"]
    assert [r.action for r in session.elicitations] == ["accept", "accept"]
    assert what_the_page_got(session) == {"action": "accept", "content": {"key": KEY}}


async def test_a_sensitive_field_stays_sensitive_whatever_was_withheld() -> None:
    # A withheld text that is also the word of a field's mark ("password") must not unmark
    # it: the field's value would then be kept in the record, and shown as typed.
    scrubber = Scrubber()
    scrubber.withhold("password", "wmh-secret-0123456789abcdef")
    records: list[Any] = []
    handler = WithholdingRecorder(AutoHandler("accept"), records, scrubber.scrub)
    request = ElicitationRequest(
        source="tool-question",
        message="A tool asks.",
        requested_schema={
            "type": "object",
            "properties": {"pin": {"type": "string", "format": "password"}},
        },
        prefilled={"pin": "1234"},
    )
    answer = await ask(handler, request)
    assert answer.content == {"pin": "1234"}
    [record] = records
    assert record.redacted == ["pin"] and record.values == {}
