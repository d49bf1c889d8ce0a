"""A plan's ``navigate`` step that waits for a tool the new page registers late."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from harness import BrowserPool, ConfigError, Harness
from harness.agents.loop import RunResult, run_agent
from harness.agents.scripted import NavigateStep, ScriptedAgent, parse_plan
from harness.catalog import Settle
from harness.models import NavigateAction, describe_action
from tests.qa.pages import QAServer, page, serve

# Registered 1.5 s after load: after the catalog settled (quiet for 200 ms).
LATE = """
setTimeout(() => document.modelContext.registerTool({
  name: "late_tool", description: "Comes late.", annotations: {readOnlyHint: true},
  execute: async () => ({here: true}),
}), 1500);
"""


@pytest.fixture(scope="module")
async def server() -> AsyncIterator[QAServer]:
    async with serve({"/": page(""), "/late": page(LATE, "Late")}) as qa:
        yield qa


@pytest.fixture(scope="module")
async def harness(browser_pool: BrowserPool) -> AsyncIterator[Harness]:
    async with Harness(
        browsers=browser_pool, backend="polyfill", call_timeout=10, settle=Settle.quiet_ms(200)
    ) as h:
        yield h


async def run_plan(harness: Harness, url: str, steps: list[dict[str, Any]]) -> RunResult:
    session = await harness.new_session()
    try:
        agent = ScriptedAgent(parse_plan({"task": "t", "steps": steps}))
        return await run_agent(session, agent, url, settle_timeout=5)
    finally:
        await session.close()


def test_the_step_parses_one_name_or_a_list() -> None:
    one = parse_plan({"steps": [{"navigate": "/late", "wait_for_tool": "late_tool"}]})
    assert one.steps == [NavigateStep(navigate="/late", wait_for_tool=["late_tool"])]
    action = one.action(0)
    assert action == NavigateAction(url="/late", wait_for_tool=["late_tool"])
    assert describe_action(action) == "navigate /late (wait for late_tool)"
    many = parse_plan({"steps": [{"navigate": "/x", "wait_for_tool": ["a", "b"]}]})
    assert many.steps[0].wait_for_tool == ["a", "b"]  # type: ignore[union-attr]
    with pytest.raises(ConfigError, match="wait_for_tool"):
        parse_plan({"steps": [{"call": "a", "wait_for_tool": "b"}]})


async def test_a_navigate_step_waits_for_a_late_tool(harness: Harness, server: QAServer) -> None:
    steps = [
        {"navigate": "/late", "wait_for_tool": "late_tool"},
        {"call": "late_tool", "expect": {"structuredContent": {"here": True}}},
        {"finish": "done"},
    ]
    result = await run_plan(harness, server.url("/"), steps)
    assert result.ok, result.detail
    # Without the wait, the call comes before the tool does.
    early = await run_plan(harness, server.url("/"), [steps[0] | {"wait_for_tool": []}, steps[1]])
    assert early.stop_reason == "expect-failed"
    assert "No tool named 'late_tool'" in (early.detail or "")


async def test_a_tool_that_never_comes_fails_the_step(harness: Harness, server: QAServer) -> None:
    result = await run_plan(harness, server.url("/"), [{"navigate": "/", "wait_for_tool": "never"}])
    assert result.stop_reason == "step-failed"
    assert "No tool named 'never'" in (result.detail or "")
    assert "waited 5 s after the navigation" in (result.detail or "")
