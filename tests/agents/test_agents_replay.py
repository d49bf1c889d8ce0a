"""The replay agent: re-running a recorded trace, and reporting where results differ."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from harness.sites.server import RunningSites, serve_sites

from harness import BrowserPool, ConfigError, Harness
from harness.agents import make_agent
from harness.agents.base import AgentAction, AgentContext, StepRecord
from harness.agents.loop import RunResult, run_agent
from harness.agents.replay import (
    RecordedStep,
    Recording,
    ReplayAgent,
    load_recording,
    rebase_url,
)
from harness.agents.scripted import ScriptedAgent, parse_plan
from harness.errors import AgentStopped
from harness.models import CallAction, FinishAction
from tests.conftest import PageServer
from tests.console_script import run_script

EXAMPLE_PLAN = Path(__file__).parent.parent.parent / "examples" / "plans" / "todo.yaml"


@pytest.fixture(scope="module")
async def harness(browser_pool: BrowserPool) -> AsyncIterator[Harness]:
    async with Harness(browsers=browser_pool, backend="polyfill", call_timeout=10) as h:
        yield h


@pytest.fixture(scope="module")
async def sites() -> AsyncIterator[RunningSites]:
    async with serve_sites(["todo"]) as running:
        yield running


@pytest.fixture(scope="module")
async def recorded(
    harness: Harness, sites: RunningSites, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """The example plan's run, recorded once."""
    await sites.reset("todo")
    run_dir = tmp_path_factory.mktemp("recorded") / "run"
    result = await run(harness, sites.url("todo"), ScriptedAgent.from_file(EXAMPLE_PLAN), run_dir)
    assert result.ok, result.detail
    return run_dir


async def run(harness: Harness, url: str, agent: Any, run_dir: Path | None = None) -> RunResult:
    session = await harness.new_session()
    try:
        return await run_agent(session, agent, url, trace_dir=run_dir)
    finally:
        await session.close()


def test_a_recording_reads_back_as_its_steps(recorded: Path) -> None:
    recording = load_recording(recorded)
    assert recording.task == "Add a todo, complete it, and find it in the archive"
    assert [s.action.kind for s in recording.steps] == [
        "call",
        "call",
        "call",
        "navigate",
        "call",
        "finish",
    ]
    assert recording.steps[0].result is not None
    assert recording.steps[0].result["structuredContent"]["todo"]["text"] == "buy milk"
    assert recording.answer == 'added, completed and archived "buy milk"'


async def test_a_replay_of_an_unchanged_site_finishes_with_no_differences(
    harness: Harness, sites: RunningSites, recorded: Path
) -> None:
    await sites.reset("todo")
    agent = ReplayAgent.from_dir(recorded)
    result = await run(harness, sites.url("todo"), agent)
    assert result.ok, result.detail
    assert agent.differences == []
    assert result.answer == 'added, completed and archived "buy milk"'
    assert result.task == "Add a todo, complete it, and find it in the archive"
    assert [c.tool for c in result.calls()] == [
        "add_todo",
        "list_todos",
        "complete_todo",
        "list_archived",
    ]


async def test_a_replay_reports_where_the_site_s_data_changed(
    harness: Harness, sites: RunningSites, recorded: Path
) -> None:
    await sites.reset("todo")
    async with (
        aiohttp.ClientSession() as client,
        client.post(sites.url("todo", "/api/todos/1/complete")) as response,
    ):
        assert response.status == 200  # someone completed "Buy oat milk" meanwhile
    agent = ReplayAgent.from_dir(recorded)
    result = await run(harness, sites.url("todo"), agent)
    assert result.stop_reason == "replay-diverged" and not result.ok
    lines = result.detail.splitlines()
    assert lines[0] == f"{len(agent.differences)} difference(s) from the recording:"
    assert (
        "step 2, call list_todos, at /structuredContent/todos/0/id: recorded 1, replayed 2" in lines
    )
    assert (
        "step 5, call list_archived, at /structuredContent/todos/2: "
        'recorded (missing), replayed {"done": true, "id": 4, "text": "buy milk"}' in lines
    )
    # Steps whose results did not change are not reported.
    assert not any(line.startswith(("step 1,", "step 3,")) for line in lines)
    # Ignoring the parts that changed makes the replay pass.
    ignoring = ReplayAgent.from_dir(recorded, ignore=["/structuredContent/todos", "/content"])
    await sites.reset("todo")
    async with aiohttp.ClientSession() as client:
        await client.post(sites.url("todo", "/api/todos/1/complete"))
    assert (await run(harness, sites.url("todo"), ignoring)).ok


async def test_a_replay_reports_a_call_that_fails_now(
    harness: Harness, sites: RunningSites, tmp_path: Path
) -> None:
    """Recorded against the todo page, replayed against the archive: list_todos is gone."""
    await sites.reset("todo")
    plan = ScriptedAgent(parse_plan({"steps": [{"call": "list_todos"}, {"finish": "x"}]}))
    result = await run(harness, sites.url("todo"), plan, tmp_path / "run")
    assert result.ok
    replayed = await run(
        harness, sites.url("todo", "/archive"), ReplayAgent.from_dir(tmp_path / "run")
    )
    assert replayed.stop_reason == "replay-diverged"
    assert "step 1, call list_todos, at (error): recorded (missing), replayed" in replayed.detail


def test_navigations_move_to_the_new_origin() -> None:
    old, new = "http://127.0.0.1:1111/", "http://127.0.0.1:2222/app"
    assert (
        rebase_url("http://127.0.0.1:1111/archive?x=1", old, new)
        == "http://127.0.0.1:2222/archive?x=1"
    )
    assert rebase_url("/archive", old, new) == "/archive"
    assert rebase_url("https://elsewhere.example/", old, new) == "https://elsewhere.example/"


def test_a_directory_that_is_not_a_run_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="Cannot read the trace"):
        make_agent(f"replay:{tmp_path}")
    (tmp_path / "trace.jsonl").write_text("")
    with pytest.raises(ConfigError, match="no run-started event"):
        make_agent(f"replay:{tmp_path}")
    with pytest.raises(ConfigError, match="replay needs a recorded run directory"):
        make_agent("replay")


@pytest.mark.slow  # `agent --agent replay:` as a console script (~5 s)
async def test_cli_replay(sites: RunningSites, recorded: Path, tmp_path: Path) -> None:
    await sites.reset("todo")
    code, out, err = await run_script(
        "agent",
        sites.url("todo"),
        "--agent",
        f"replay:{recorded}",
        "--trace-dir",
        str(tmp_path / "replayed"),
        "--json",
    )
    assert code == 0, err
    summary = json.loads(out)
    assert summary["stopReason"] == "finished" and summary["agent"] == "replay"
    assert [c["tool"] for c in summary["calls"]] == [
        "add_todo",
        "list_todos",
        "complete_todo",
        "list_archived",
    ]


async def test_a_replay_on_another_port_compares_origins_relative_to_the_start_url(
    harness: Harness, recorded: Path
) -> None:
    """Recorded on one port, replayed after the sites restarted on another: the origin
    inside the untrusted-data framing is not a difference; a real change still is."""
    recorded_origin = load_recording(recorded).start_url.rstrip("/")
    assert recorded_origin in json.dumps(load_recording(recorded).steps[0].result)
    async with serve_sites(["todo"]) as moved:
        assert moved.origin("todo") != recorded_origin
        agent = ReplayAgent.from_dir(recorded)
        result = await run(harness, moved.url("todo"), agent)
        assert result.ok, result.detail
        assert agent.differences == []
        # Someone completed todo 1 meanwhile: that, and only that, is reported.
        await moved.reset("todo")
        async with (
            aiohttp.ClientSession() as client,
            client.post(moved.url("todo", "/api/todos/1/complete")) as response,
        ):
            assert response.status == 200
        changed = ReplayAgent.from_dir(recorded)
        diverged = await run(harness, moved.url("todo"), changed)
        assert diverged.stop_reason == "replay-diverged"
        assert all("127.0.0.1" not in d.describe() for d in changed.differences), (
            changed.differences
        )
        assert any("/structuredContent/todos/0/id" in d.describe() for d in changed.differences)


# --- vault handles: random per session, compared by role ---------------------------------

KEY, BACKUP = "wmh-secret-" + "a" * 16, "wmh-secret-" + "b" * 16  # the recording's session
LIVE_KEY, LIVE_BACKUP = "wmh-secret-" + "1" * 16, "wmh-secret-" + "2" * 16  # the replay's


def shown(**structured: str) -> dict[str, Any]:
    return {
        "content": [{"type": "text", "text": json.dumps(structured)}],
        "structuredContent": structured,
    }


def handle_recording() -> Recording:
    """get_token shows two handles; use_token is passed the first and echoes it."""
    return Recording(
        task="use the token",
        start_url="http://127.0.0.1:1111/",
        steps=[
            RecordedStep(
                index=1,
                action=CallAction(tool="get_token"),
                result=shown(token=KEY, backup=BACKUP),
            ),
            RecordedStep(
                index=2,
                action=CallAction(tool="use_token", arguments={"token": KEY}),
                result=shown(used=KEY),
            ),
            RecordedStep(index=3, action=FinishAction(answer=f"used {KEY}, kept {BACKUP}")),
        ],
        answer=f"used {KEY}, kept {BACKUP}",
    )


async def replay_by_hand(agent: ReplayAgent, results: list[dict[str, Any]]) -> list[AgentAction]:
    """The actions the agent takes when each call's result is the next of ``results``."""
    context = AgentContext(
        task="", start_url="http://127.0.0.1:2222/", url="http://127.0.0.1:2222/", tools=[]
    )
    actions: list[AgentAction] = []
    for index, result in enumerate(results, start=1):
        action = await agent.next_action(context)
        actions.append(action)
        await agent.observe(StepRecord(index=index, action=action, result=result))
    actions.append(await agent.next_action(context))
    return actions


async def test_handles_of_another_session_in_the_same_roles_are_no_difference() -> None:
    agent = ReplayAgent(handle_recording())
    actions = await replay_by_hand(
        agent, [shown(token=LIVE_KEY, backup=LIVE_BACKUP), shown(used=LIVE_KEY)]
    )
    assert agent.differences == []
    # The recorded handle passed to use_token is the live session's now, and so is the answer.
    assert actions[1] == CallAction(
        tool="use_token", arguments={"token": LIVE_KEY}, note="replaying step 2"
    )
    assert actions[2] == FinishAction(answer=f"used {LIVE_KEY}, kept {LIVE_BACKUP}")


async def test_a_handle_in_another_role_is_a_difference() -> None:
    """The page echoes the backup where the recording echoed the key: numbered across the
    whole trace, the two read as different handles."""
    agent = ReplayAgent(handle_recording())
    with pytest.raises(AgentStopped, match="2 difference") as caught:
        await replay_by_hand(
            agent, [shown(token=LIVE_KEY, backup=LIVE_BACKUP), shown(used=LIVE_BACKUP)]
        )
    assert [d.describe() for d in agent.differences] == [
        "step 2, call use_token, at /content/0/text: "
        'recorded "{\\"used\\": \\"wmh-secret-#1\\"}", replayed "{\\"used\\": \\"wmh-secret-#2\\"}"',
        "step 2, call use_token, at /structuredContent/used: "
        'recorded "wmh-secret-#1", replayed "wmh-secret-#2"',
    ]
    assert caught.value.reason == "replay-diverged"


class PassingBack:
    """On ``tests/pages/handing_back.html``: gets the token, passes its handle to use_token,
    finishes."""

    name = "passing-back"

    async def next_action(self, context: AgentContext) -> AgentAction:
        if not context.history:
            return CallAction(tool="get_token")
        if len(context.history) == 1:
            result = context.history[0].result or {}
            return CallAction(
                tool="use_token", arguments={"token": result["structuredContent"]["token"]}
            )
        return FinishAction(answer="done")


async def test_a_replay_of_a_page_that_withholds_a_secret_finishes(
    harness: Harness, page_server: PageServer, tmp_path: Path
) -> None:
    url = page_server.url("handing_back.html")
    recorded = await run(harness, url, PassingBack(), tmp_path / "run")
    assert recorded.ok, recorded.detail
    agent = ReplayAgent.from_dir(tmp_path / "run")
    replayed = await run(harness, url, agent)
    assert replayed.ok, replayed.detail
    assert agent.differences == []
    live = replayed.calls()[0].result or {}
    handle = live["structuredContent"]["token"]
    assert handle != recorded.calls()[1].arguments["token"]  # a new session, a new handle
    # The replay passed the live session's handle to the page, not the recorded one.
    use = replayed.calls()[1]
    assert use.arguments == {"token": handle}
    assert (use.result or {})["structuredContent"] == {"used": handle}
