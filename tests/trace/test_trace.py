"""Traces: typed events, written from the agent view, artifacts, and `trace show`."""

from __future__ import annotations

import json
import typing
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from harness.sites.server import RunningSites, serve_sites
from mcp.types import CallToolResult, TextContent
from rich.console import Console

from harness import BrowserPool, ConfigError, Harness
from harness.agents.loop import RunResult, run_agent
from harness.agents.scripted import ScriptedAgent, parse_plan
from harness.models import CallAction, CallOutcome, FinishAction, NavigateAction
from harness.trace.events import (
    EVENT_TYPES,
    AgentActed,
    ElicitationAnswered,
    ErrorOccurred,
    Navigated,
    PageOpened,
    PolicyDecided,
    Redacted,
    RunFinished,
    RunStarted,
    ScreenshotTaken,
    Timing,
    TokensUsed,
    ToolResult,
    ToolsChanged,
    TraceEvent,
    ValidationFailed,
    call_events,
    read_trace,
)
from harness.trace.recorder import TraceOptions, TraceRecorder
from harness.trace.view import live_line, render_trace, show_trace
from tests.conftest import PageServer
from tests.console_script import run_script

CANARY = "TRACECANARY-7731"

ONE_OF_EACH: list[TraceEvent] = [
    RunStarted(task="t", agent="a", start_url="http://h/", backend="polyfill", max_steps=3),
    PageOpened(url="http://h/", tools=[{"name": "x", "description": "d", "inputSchema": {}}]),
    ToolsChanged(step=1, added=["y"], removed=["x"], names=["y"]),
    AgentActed(step=1, agent="a", action=CallAction(tool="y", arguments={"n": 1}, note="why")),
    ValidationFailed(step=1, tool="y", problems=[{"path": "/n", "message": "too small"}]),
    PolicyDecided(
        step=1,
        call_id="c",
        tool="y",
        policy="default pack",
        phase="before-call",
        effect="escalate",
        rules=["r"],
        answer="decline",
        outcome="not run",
    ),
    ElicitationAnswered(step=1, source="policy", tool="y", message="ok?", action="decline"),
    ToolResult(
        step=1,
        call_id="c",
        tool="y",
        arguments={"n": 1},
        result={"content": [], "isError": True},
        is_error=True,
        error_kind="refused",
        duration_ms=1.5,
    ),
    Redacted(step=1, call_id="c", tool="y", paths=["/structuredContent/password"]),
    AgentActed(step=2, agent="a", action=NavigateAction(url="/next")),
    Navigated(step=2, requested="/next", url="http://h/next", final_url="http://h/next", ok=True),
    ErrorOccurred(step=2, where="navigation", message="nope"),
    Timing(step=2, agent_ms=1.0, action_ms=2.0),
    TokensUsed(step=2, model="m", input_tokens=3, output_tokens=4, cost_usd=0.5),
    ScreenshotTaken(step=2, path="screenshots/step-002.png"),
    AgentActed(step=3, agent="a", action=FinishAction(answer="done")),
    RunFinished(stop_reason="finished", answer="done", steps=2, duration_ms=9.0),
]


def test_every_event_type_has_one_definition_and_reads_back(tmp_path: Path) -> None:
    assert {e.type for e in ONE_OF_EACH} == set(EVENT_TYPES)
    union = typing.get_args(typing.get_args(TraceEvent)[0])
    assert len(union) == len(EVENT_TYPES)
    recorder = TraceRecorder(tmp_path / "run")
    for event in ONE_OF_EACH:
        recorder.record(event)
    recorder.close()
    events = read_trace(tmp_path / "run")
    assert events == recorder.events
    assert [e.seq for e in events] == list(range(1, len(ONE_OF_EACH) + 1))
    lines = (tmp_path / "run" / "trace.jsonl").read_text().splitlines()
    assert json.loads(lines[3])["action"] == {
        "kind": "call",
        "tool": "y",
        "arguments": {"n": 1},
        "note": "why",
    }


def test_bad_traces_and_directories_are_clear_errors(tmp_path: Path) -> None:
    (tmp_path / "trace.jsonl").write_text('{"type": "run-started"}\n{"type": "nope"}\n')
    with pytest.raises(ConfigError, match=r"trace.jsonl:1 is not a trace event"):
        read_trace(tmp_path)
    with pytest.raises(ConfigError, match="Cannot read the trace"):
        read_trace(tmp_path / "missing")
    with pytest.raises(ConfigError, match="exists and is not empty"):
        TraceRecorder(tmp_path)
    with pytest.raises(ConfigError, match="need a trace directory"):
        TraceRecorder(None, TraceOptions(screenshots=True))


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"\xff\xfe\x00garbage", r"it is not UTF-8 text \(byte 0 is 0xff\)"),
        (b'{"type": "run-started"', r"trace.jsonl:1 is not a trace event \(Invalid JSON"),
        (b"\n[]\n", r"trace.jsonl:2 is not a trace event \(Input should be an object\)"),
        (b'{"type": "run-finished"}', r"\(run-finished.stop_reason: Field required\)"),
    ],
    ids=["not-utf8", "not-json", "not-an-object", "not-an-event"],
)
def test_a_trace_that_is_not_one_is_a_one_line_config_error(
    tmp_path: Path, content: bytes, says: str
) -> None:
    (tmp_path / "trace.jsonl").write_bytes(content)
    for given in (tmp_path, tmp_path / "trace.jsonl"):
        with pytest.raises(ConfigError, match=says) as raised:
            read_trace(given)
        assert "\n" not in str(raised.value)


def test_a_trace_file_that_is_a_directory_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "trace.jsonl").mkdir()
    with pytest.raises(ConfigError, match=r"trace\.jsonl: it is a directory"):
        read_trace(tmp_path)


def test_page_text_with_unicode_line_separators_reads_back(tmp_path: Path) -> None:
    # The writer leaves U+2028, U+0085 and the like as they are; only "\n" ends an event.
    text = "one\u2028two\x85three\x1cfour\rfive"
    recorder = TraceRecorder(tmp_path / "run")
    recorder.record(RunFinished(stop_reason="finished", answer=text, steps=1, duration_ms=1.0))
    recorder.close()
    (event,) = read_trace(tmp_path / "run")
    assert isinstance(event, RunFinished) and event.answer == text


def test_call_events_read_only_the_agent_view() -> None:
    """Arguments a user completed and the outcome's notes stay out; the agent's own stay in."""
    agent_view = CallToolResult(
        content=[TextContent(type="text", text="[withheld]")],
        structured_content={"user": "ana", "password": "[withheld]"},
        is_error=False,
        meta={"webmcp-harness/redacted": [{"path": "/structuredContent/password"}]},
    )
    outcome = CallOutcome(
        call_id="c1",
        tool="account",
        arguments={"user": "ana", "pin": CANARY},  # as the user completed them
        result=agent_view,
        duration_ms=3.0,
        backend="polyfill",
        notes=[f"user view had {CANARY}"],
    )
    events = call_events(4, CallAction(tool="account", arguments={"user": "ana"}), outcome)
    assert [e.type for e in events] == ["redaction", "tool-result"]
    assert events[0].paths == ["/structuredContent/password"]  # type: ignore[union-attr]
    result = events[1]
    assert isinstance(result, ToolResult) and result.arguments == {"user": "ana"}
    assert result.result == outcome.agent_json()
    assert CANARY not in "".join(e.model_dump_json() for e in events)


# -- runs in a browser -------------------------------------------------------------------


@pytest.fixture(scope="module")
async def harness(browser_pool: BrowserPool) -> AsyncIterator[Harness]:
    async with Harness(browsers=browser_pool, backend="polyfill", call_timeout=10) as h:
        yield h


@pytest.fixture(scope="module")
async def sites() -> AsyncIterator[RunningSites]:
    async with serve_sites(["todo"]) as running:
        yield running


async def run_plan(
    harness: Harness, url: str, plan: dict[str, Any], run_dir: Path, **options: Any
) -> RunResult:
    session = await harness.new_session()
    try:
        return await run_agent(
            session, ScriptedAgent(parse_plan(plan)), url, trace_dir=run_dir, **options
        )
    finally:
        await session.close()


async def test_a_secret_reaches_the_user_view_and_never_the_trace(
    harness: Harness, page_server: PageServer, tmp_path: Path
) -> None:
    session = await harness.new_session()
    plan = ScriptedAgent(parse_plan({"steps": [{"call": "account"}, {"finish": "read"}]}))
    try:
        result = await run_agent(
            session, plan, page_server.url("trace_sensitive.html"), trace_dir=tmp_path / "run"
        )
        user_view = session.user_view(session.history[0])
    finally:
        await session.close()
    assert result.ok, result.detail
    # The canary is real: the page returned it, and the user view has it.
    assert user_view is not None and CANARY in user_view.model_dump_json()
    trace = (tmp_path / "run" / "trace.jsonl").read_text()
    assert CANARY not in trace
    assert CANARY not in json.dumps(result.summary())
    redacted = [e for e in read_trace(tmp_path / "run") if isinstance(e, Redacted)]
    assert len(redacted) == 1 and "/structuredContent/password" in redacted[0].paths
    # What the trace holds is exactly what the agent saw.
    tool_result = next(e for e in result.events if isinstance(e, ToolResult))
    assert tool_result.result == result.steps[0].result


async def test_artifacts_are_kept_as_asked(
    harness: Harness, sites: RunningSites, tmp_path: Path
) -> None:
    failing = {"steps": [{"call": "list_todos", "expect": {"isError": True}}]}
    options = TraceOptions(playwright="retain-on-failure", screenshots=True, har=True)
    result = await run_plan(
        harness, sites.url("todo"), failing, tmp_path / "fail", trace_options=options
    )
    assert result.stop_reason == "expect-failed"
    run_dir = tmp_path / "fail"
    finished = result.events[-1]
    assert isinstance(finished, RunFinished)
    # Every file written beside the trace, screenshots one by one.
    assert finished.artifacts == ["trace.zip", "network.har", "screenshots/step-001.png"]
    assert (run_dir / "trace.zip").stat().st_size > 0
    assert (run_dir / "screenshots" / "step-001.png").read_bytes()[:4] == b"\x89PNG"
    assert [e.path for e in result.events if isinstance(e, ScreenshotTaken)] == [
        "screenshots/step-001.png"
    ]
    har = json.loads((run_dir / "network.har").read_text())
    assert any("/api/todos" in entry["request"]["url"] for entry in har["log"]["entries"])
    # The same options on a run that passes keep no Playwright trace.
    passing = {"steps": [{"call": "list_todos"}, {"finish": "ok"}]}
    ok = await run_plan(
        harness,
        sites.url("todo"),
        passing,
        tmp_path / "pass",
        trace_options=TraceOptions(playwright="retain-on-failure"),
    )
    assert ok.ok and not (tmp_path / "pass" / "trace.zip").exists()


async def test_trace_show_renders_a_timeline(
    harness: Harness, sites: RunningSites, tmp_path: Path
) -> None:
    await sites.reset("todo")
    plan = {
        "task": "archive check",
        "steps": [
            {"call": "add_todo", "args": {"text": "[bold red]not markup[/]"}},
            {"call": "add_todo", "args": {"text": ""}},
            {"navigate": "/archive"},
            {"call": "list_archived"},
            {"finish": "checked"},
        ],
    }
    result = await run_plan(harness, sites.url("todo"), plan, tmp_path / "run")
    assert result.ok, result.detail
    console = Console(record=True, width=160)
    show_trace(tmp_path / "run", console)
    text = console.export_text()
    assert "scripted run on " + sites.url("todo") in text
    assert "finished after 4 steps" in text
    assert "3 calls (1 isError), 1 navigations, 0 errors" in text
    for expected in (
        "run-started",
        "page-opened",
        "agent-action",
        'call add_todo {"text": "[bold red]not markup[/]"}',  # page text stays text
        "add_todo ok",
        "validation-error",
        "add_todo isError (validation)",
        "-add_todo, complete_todo, delete_todo, list_todos",
        "+list_archived",
        "/archive → " + sites.url("todo", "/archive"),
        "list_archived ok",
        "answer: checked",
    ):
        assert expected in text, expected
    assert "timing" not in text  # only with --timing
    full = Console(record=True, width=160)
    full.print(render_trace(result.events, full=True, timing=True))
    assert "timing" in full.export_text()
    line = live_line(result.events[-1])
    assert line is not None and "run-finished" in line.plain


async def test_cli_trace_show(tmp_path: Path) -> None:
    recorder = TraceRecorder(tmp_path / "run")
    for event in ONE_OF_EACH:
        recorder.record(event)
    recorder.close()
    code, out, err = await run_script("trace", "show", str(tmp_path / "run"))
    assert code == 0, err
    assert "a run on http://h/" in out and "finished after 2 steps" in out
    assert "ESCALATE y (before-call, default pack) by r; the user answered decline → not run" in out
    assert "y: removed /structuredContent/password" in out
    code, out, err = await run_script("trace", "show", str(tmp_path / "nothing"))
    assert code == 2 and "Cannot read the trace" in err and out == ""


def test_trace_show_gives_a_person_page_text_without_the_agent_s_frames() -> None:
    from harness.stages.framing import frame_untrusted

    page_text = "Dinner at 8\x1b[2J"
    framed = frame_untrusted(page_text, "http://h")
    events: list[TraceEvent] = [
        ToolResult(
            step=1,
            call_id="c",
            tool="y",
            arguments={},
            result={"content": [{"type": "text", "text": framed}], "isError": True},
            is_error=True,
            duration_ms=1.0,
        ),
        ErrorOccurred(step=1, where="call", message=f"the page said: {framed}"),
    ]
    for full in (False, True):
        console = Console(record=True, width=200, color_system=None)
        console.print(render_trace(events, full=full))
        shown = console.export_text()
        assert "untrusted-data" not in shown and "Dinner at 8\\x1b[2J" in shown
        assert "\x1b" not in shown
    line = live_line(events[1])
    assert line is not None and "untrusted-data" not in line.plain
