"""The agent loop: steps, the step limit, catalog changes, navigation, stop reasons."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp.types import CallToolResult

from harness import BrowserPool, Harness
from harness.agents.base import AgentContext, TokenUsage
from harness.agents.loop import RunResult, run_agent
from harness.elicitation.wording import POLICY_CALL
from harness.models import CallAction, CallRequest, FinishAction, NavigateAction
from harness.stages.navigation import resolve_url
from harness.stages.policy import AuditRecord
from harness.trace.events import (
    ElicitationAnswered,
    ErrorOccurred,
    PolicyDecided,
    TokensUsed,
    ToolResult,
    ToolsChanged,
    ValidationFailed,
    policy_event,
)
from tests.conftest import PageServer

Action = CallAction | NavigateAction | FinishAction


class ListAgent:
    """Returns the given actions in order (then finishes) and keeps every context it saw."""

    name = "list"

    def __init__(self, *actions: Action) -> None:
        self.actions = list(actions)
        self.contexts: list[AgentContext] = []

    async def next_action(self, context: AgentContext) -> Action:
        self.contexts.append(context)
        return self.actions.pop(0) if self.actions else FinishAction(answer="done")


@pytest.fixture(scope="module")
async def harness(browser_pool: BrowserPool) -> AsyncIterator[Harness]:
    async with Harness(browsers=browser_pool, backend="polyfill", call_timeout=10) as h:
        yield h


async def run(harness: Harness, url: str, agent: Any, **options: Any) -> RunResult:
    session = await harness.new_session()
    try:
        return await run_agent(session, agent, url, task="test", settle_timeout=3, **options)
    finally:
        await session.close()


async def test_a_run_calls_tools_and_finishes_with_the_answer(
    harness: Harness, page_server: PageServer
) -> None:
    agent = ListAgent(CallAction(tool="whoami"), FinishAction(answer="it is here"))
    result = await run(harness, page_server.url("agent_loop.html"), agent)
    assert result.ok and result.stop_reason == "finished" and result.answer == "it is here"
    assert [s.index for s in result.steps] == [1]
    assert result.steps[0].result is not None
    assert result.steps[0].result["structuredContent"] == {"path": "/agent_loop.html"}
    # The agent saw the agent view of the catalog, with descriptions marked as page data.
    first = agent.contexts[0]
    assert [t.name for t in first.tools] == ["burn", "unlock", "whoami"]
    assert first.tools[0].description.startswith("<untrusted-data origin=")
    assert first.task == "test" and first.history == [] and not first.tools_changed
    assert agent.contexts[1].history == result.steps


async def test_after_a_tools_change_the_agent_sees_the_new_catalog_next_step(
    harness: Harness, page_server: PageServer
) -> None:
    agent = ListAgent(CallAction(tool="unlock"), CallAction(tool="door"))
    result = await run(harness, page_server.url("agent_loop.html"), agent)
    assert result.ok, result.detail
    before, after, last = agent.contexts
    assert "door" not in [t.name for t in before.tools]
    assert after.tools_changed and [t.name for t in after.tools] == [
        "burn",
        "door",
        "unlock",
        "whoami",
    ]
    assert not last.tools_changed
    assert result.steps[1].result and result.steps[1].result["structuredContent"] == {
        "opened": True
    }
    changes = [e for e in result.events if isinstance(e, ToolsChanged) and e.step == 1]
    assert [c.added for c in changes] == [["door"]]
    assert changes[0].tools[0]["name"] == "door"  # the agent view of the new tool


async def test_a_tool_that_navigates_gives_the_next_page_s_catalog(
    harness: Harness, page_server: PageServer
) -> None:
    agent = ListAgent(CallAction(tool="navigates"), CallAction(tool="other"))
    result = await run(harness, page_server.url("s_tools.html"), agent)
    assert result.ok, result.detail
    assert result.steps[0].result and result.steps[0].result["isError"] is True
    assert agent.contexts[1].tools_changed
    assert [t.name for t in agent.contexts[1].tools] == ["other"]
    assert agent.contexts[1].url.endswith("/s_other.html")


async def test_navigation_is_relative_to_the_start_url(
    harness: Harness, page_server: PageServer
) -> None:
    agent = ListAgent(NavigateAction(url="s_other.html"), CallAction(tool="other"))
    result = await run(harness, page_server.url("agent_loop.html"), agent)
    assert result.ok, result.detail
    assert agent.contexts[1].url == page_server.url("s_other.html")
    assert agent.contexts[1].tools_changed


def test_resolve_url_refuses_what_is_not_a_web_page() -> None:
    assert resolve_url("http://h:1/app/", "/archive") == "http://h:1/archive"
    assert resolve_url("http://h:1/app/", "next") == "http://h:1/app/next"
    with pytest.raises(ValueError, match="Only http and https"):
        resolve_url("http://h:1/", "javascript:alert(1)")


async def test_failed_navigations_are_errors_the_agent_sees(
    harness: Harness, page_server: PageServer
) -> None:
    agent = ListAgent(
        NavigateAction(url="file:///etc/passwd"),
        NavigateAction(url="/no-such-page.html"),
        NavigateAction(url="http://127.0.0.1:9/?data=secret"),
    )
    result = await run(harness, page_server.url("agent_loop.html"), agent)
    assert result.ok
    first, second, third = result.steps
    assert first.error and "Only http and https" in first.error
    assert second.error and "Could not open" in second.error and "HTTP 404" in second.error
    assert agent.contexts[2].history[1].error == second.error
    # Leaving the start origin needs the user's yes; nobody answers here, so it is refused
    # before any request (a URL's query can carry data anywhere).
    assert third.error and "did not allow leaving" in third.error
    assert "answer: cancel" in third.error
    assert [e.where for e in result.events if isinstance(e, ErrorOccurred)] == [
        "navigation",
        "navigation",
        "navigation",
    ]


async def test_an_unknown_tool_is_an_error_the_agent_sees_and_the_run_goes_on(
    harness: Harness, page_server: PageServer
) -> None:
    agent = ListAgent(CallAction(tool="nope"), CallAction(tool="whoami"))
    result = await run(harness, page_server.url("agent_loop.html"), agent)
    assert result.ok
    assert result.steps[0].result is None
    assert result.steps[0].error and "No tool named 'nope'" in result.steps[0].error
    assert result.steps[1].result is not None


async def test_the_step_limit_stops_the_run(harness: Harness, page_server: PageServer) -> None:
    class Forever:
        name = "forever"

        async def next_action(self, context: AgentContext) -> Action:
            return CallAction(tool="whoami")

    result = await run(harness, page_server.url("agent_loop.html"), Forever(), max_steps=3)
    assert result.stop_reason == "max-steps" and not result.ok
    assert len(result.steps) == 3 and "--max-steps" in result.detail
    assert sum(isinstance(e, ToolResult) for e in result.events) == 3


async def test_an_agent_that_raises_or_returns_junk_is_an_agent_error(
    harness: Harness, page_server: PageServer
) -> None:
    class Raises:
        name = "raises"

        async def next_action(self, context: AgentContext) -> Action:
            raise RuntimeError("model went away")

    class Junk:
        name = "junk"

        async def next_action(self, context: AgentContext) -> Any:
            return {"tool": "whoami"}

    url = page_server.url("agent_loop.html")
    raised = await run(harness, url, Raises())
    assert raised.stop_reason == "agent-error"
    assert raised.detail == "the agent raised RuntimeError: model went away"
    junk = await run(harness, url, Junk())
    assert junk.stop_reason == "agent-error" and "returned dict" in junk.detail


async def test_an_unreachable_start_page_is_a_page_error(harness: Harness) -> None:
    result = await run(harness, "http://127.0.0.1:9/", ListAgent())
    assert result.stop_reason == "page-error"
    assert "Could not open http://127.0.0.1:9/" in result.detail


async def test_every_call_goes_through_the_pipeline(
    harness: Harness, page_server: PageServer
) -> None:
    seen: list[str] = []
    session = await harness.new_session()

    async def stage(request: CallRequest) -> CallToolResult | None:
        seen.append(request.tool.name)
        return None

    session.pipeline.before.append(stage)
    agent = ListAgent(
        CallAction(tool="whoami"), CallAction(tool="unlock", arguments={"bad": 1}, call_ref="c1")
    )
    try:
        result = await run_agent(session, agent, page_server.url("agent_loop.html"), task="t")
    finally:
        await session.close()
    assert seen == ["whoami", "unlock"]
    assert [o.tool for o in session.history] == ["whoami", "unlock"]
    assert result.ok


async def test_validation_errors_are_events(harness: Harness, page_server: PageServer) -> None:
    agent = ListAgent(CallAction(tool="echo", arguments={"text": ""}))
    result = await run(harness, page_server.url("s_tools.html"), agent)
    refused = [e for e in result.events if isinstance(e, ValidationFailed)]
    assert len(refused) == 1 and refused[0].tool == "echo"
    assert refused[0].problems[0]["path"] == "/text"
    assert result.steps[0].result and result.steps[0].result["isError"] is True


async def test_policy_decisions_and_elicitations_of_a_call_are_recorded(
    harness: Harness, page_server: PageServer
) -> None:
    """The default pack escalates a destructive tool; nobody accepts (cancel), so it never runs."""
    session = await harness.new_session()
    try:
        result = await run_agent(
            session, ListAgent(CallAction(tool="burn")), page_server.url("agent_loop.html")
        )
        burnt = await session.page.evaluate("window.burnt === true")
    finally:
        await session.close()
    assert not burnt
    decided = [e for e in result.events if isinstance(e, PolicyDecided)]
    assert [(d.step, d.tool, d.phase, d.effect, d.answer, d.outcome) for d in decided] == [
        (1, "burn", "before-call", "escalate", "cancel", "not run")
    ]
    assert decided[0].policy == "default pack" and decided[0].rules
    asked = [e for e in result.events if isinstance(e, ElicitationAnswered)]
    assert [(a.step, a.source, a.tool, a.action) for a in asked] == [
        (1, "policy", "burn", "cancel")
    ]
    assert asked[0].tool == "burn" and asked[0].message == POLICY_CALL  # the harness's words
    tool_result = next(e for e in result.events if isinstance(e, ToolResult))
    assert tool_result.error_kind == "refused" and tool_result.is_error


def test_policy_event_leaves_the_facts_out() -> None:
    record = AuditRecord(
        call_id="c1",
        tool="send",
        origin="http://a",
        page_origin="http://a",
        policy="default pack",
        phase="before-call",
        effect="block",
        rules=["r1"],
        matched=[],
        facts={"request.arguments.to": "FACT-CANARY"},
        unknown_facts=[],
        attribution=[],
        outcome="not run",
    )
    event = policy_event(record, 2)
    assert (event.step, event.tool, event.effect, event.rules) == (2, "send", "block", ["r1"])
    assert "FACT-CANARY" not in event.model_dump_json()


async def test_token_use_is_recorded_per_decision(
    harness: Harness, page_server: PageServer
) -> None:
    class Counting(ListAgent):
        name = "counting"

        def drain_usage(self) -> list[TokenUsage]:
            return [TokenUsage(model="m", input_tokens=10, output_tokens=2, cost_usd=0.001)]

    result = await run(
        harness, page_server.url("agent_loop.html"), Counting(CallAction(tool="whoami"))
    )
    used = [e for e in result.events if isinstance(e, TokensUsed)]
    assert [(u.step, u.input_tokens, u.output_tokens) for u in used] == [(1, 10, 2), (2, 10, 2)]


async def test_the_agent_s_own_task_is_used_unless_one_is_given(
    harness: Harness, page_server: PageServer
) -> None:
    agent = ListAgent()
    agent.default_task = "from the plan"  # type: ignore[attr-defined]
    session = await harness.new_session()
    try:
        result = await run_agent(session, agent, page_server.url("agent_loop.html"))
    finally:
        await session.close()
    assert result.task == "from the plan" == agent.contexts[0].task
