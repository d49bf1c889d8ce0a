"""What a session withheld reaches no agent on any channel (issue 24, point 4).

The page (``tests/pages/scrub_channels.html``) makes the harness withhold five values —
an ``x-sensitive`` field, the key of an ``x-sensitive`` object, a whole ``sensitiveHint``
result, content for the user alone, and a value that is also a valid tool name — then
hands all five back through every other channel: a tool that declares nothing (its
text, ``structuredContent`` and ``_meta``), the console, the page's URL, and tools it
registers afterwards (their name, title, description and ``inputSchema`` enum). Each
channel an agent reads is searched for every one of them, on both backends: the results
and tool list the agent gets afterwards, the trace the agent loop writes
(its ``tools-changed`` event too), what the loop showed the agent (URLs, messages),
``trace show`` and the pytest report, and an MCP client's messages (results,
``tools/list``, ``harness.reload``, console log notifications).
"""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import mcp.types as types
import pytest
from mcp.client.client import Client
from rich.console import Console

from harness import Session
from harness.agents.base import AgentContext
from harness.agents.loop import run_agent
from harness.agents.scripted import Plan, ScriptedAgent, parse_plan
from harness.mcp.server import McpBridge
from harness.models import CallAction, FinishAction, NavigateAction
from harness.stages.scrubbing import HANDLE
from harness.testing.plugin import describe_session
from harness.trace.events import TRACE_FILE
from harness.trace.view import show_trace
from tests.conftest import PageServer

PAGE = "scrub_channels.html"
SECRETS = {
    "x-sensitive field": "HXSCRUB-key-7d1f",
    "key of a withheld object": "HXSCRUB-account-55aa",
    "whole sensitiveHint result": "HXSCRUB statement 9c2e: 1,234.56 EUR",
    "content for the user": "HXSCRUB note for the user 3b",
    "a value that names a tool": "HXSCRUB_named_tool_41",
}
WITHHOLDING = ["get_key", "get_statement", "get_note"]

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def session(page_session: Session) -> Session:
    return page_session


def leaks(channel: str, text: str) -> list[str]:
    """The secrets ``text`` shows, in any form they are written (JSON-escaped, in a URL)."""
    forms = {name: {value, json.dumps(value)[1:-1]} for name, value in SECRETS.items()}
    for name, value in SECRETS.items():
        forms[name] |= {value.replace(" ", "%20"), value.replace(" ", "+")}
        forms[name] |= {value.replace(" ", "%20").replace(":", "%3A").replace(",", "%2C")}
    return [f"{channel}: {name}" for name, shown in forms.items() if any(f in text for f in shown)]


class Watching(ScriptedAgent):
    """A scripted agent that keeps everything it was shown."""

    def __init__(self, plan: Plan) -> None:
        super().__init__(plan)
        self.contexts: list[AgentContext] = []

    async def next_action(
        self, context: AgentContext
    ) -> CallAction | NavigateAction | FinishAction:
        self.contexts.append(context)
        return await super().next_action(context)


async def test_what_one_tool_had_withheld_reaches_the_agent_through_no_later_tool_or_listing(
    session: Session,
) -> None:
    # (Several MCP clients each get a session, a page, of their own: tests/mcp/test_mcp_clients.py.)
    for tool in WITHHOLDING:
        await session.call(tool)
    assert len(session.vault) >= 5
    echoed = await session.call("echo")
    tools = [t.as_json() for t in await session.agent_tools()]
    # The canary is real: the user's view of the sloppy tool's result has every one.
    user_view = json.dumps(session.user_view(echoed).model_dump(mode="json"))  # type: ignore[union-attr]
    assert leaks("user view", user_view) == [f"user view: {name}" for name in SECRETS]
    found = leaks("the later tool's result", json.dumps(echoed.agent_json()))
    found += leaks("the later tool list", json.dumps(tools))
    assert found == []
    assert HANDLE.search(json.dumps(echoed.agent_json()))  # the handles stand in
    names = [t["name"] for t in tools]
    assert "leaky" in names and SECRETS["a value that names a tool"] not in names
    # The page's own _meta does not reach the agent; its forged harness key neither.
    assert "echo" not in (echoed.result.meta or {})
    assert "webmcp-harness/redacted" not in (echoed.result.meta or {})
    assert any("values withheld earlier" in note for note in echoed.notes)


async def test_traces_and_trace_show_of_an_agent_run_keep_everything_withheld(
    session: Session, page_server: PageServer, short_tmp: Path
) -> None:
    steps = [{"call": tool} for tool in [*WITHHOLDING, "echo"]]
    # After echo, the page's URL holds two secrets (the agent is shown it), and a call of a
    # tool that is not there gets an error listing the page's tool names.
    steps += [{"call": "absent"}]
    plan = parse_plan({"task": "t", "steps": [*steps, {"finish": "done"}]})
    agent = Watching(plan)
    run = await run_agent(session, agent, page_server.url(PAGE), trace_dir=short_tmp / "run")
    assert run.stop_reason == "step-failed" and "absent" in run.detail  # the last step
    trace = (short_tmp / "run" / TRACE_FILE).read_text(encoding="utf-8")
    assert '"tools-changed"' in trace and "leaky" in trace  # the event is there, scrubbed
    out = io.StringIO()
    show_trace(short_tmp / "run", Console(file=out, width=300), full=True)
    assert any("?k=" in c.url for c in agent.contexts)  # the URL was shown, scrubbed
    context = json.dumps([c.model_dump(mode="json") for c in agent.contexts])
    found = leaks("trace.jsonl", trace) + leaks("trace show", out.getvalue())
    found += leaks("what the agent was shown", context) + leaks("the run's end", run.detail)
    # The report of a failed pytest test that used this session (its calls, the page's tools).
    found += leaks("the pytest report", describe_session(session))
    assert found == []


async def test_an_mcp_client_sees_nothing_withheld_on_any_message(session: Session) -> None:
    logged: list[str] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logged.append(str(params.data))

    seen: list[str] = []
    bridge = McpBridge(session, forward_console=True)
    async with bridge, Client(bridge.server, mode="legacy", logging_callback=on_log) as client:
        for tool in [*WITHHOLDING, "echo"]:
            seen.append((await client.call_tool(tool, {})).model_dump_json())
        seen.append((await client.list_tools()).model_dump_json())
        reloaded = await client.call_tool("harness.reload", {})
        seen.append(reloaded.model_dump_json())
        for _ in range(50):  # the console message is sent beside the call's result
            if logged:
                break
            await asyncio.sleep(0.05)
    assert logged, "the console was not forwarded"
    assert "Reloaded" in seen[-1]
    found = [leak for text in seen for leak in leaks("an MCP message", text)]
    found += [leak for text in logged for leak in leaks("a console log message", text)]
    assert found == []
