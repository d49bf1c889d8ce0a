"""The scripted agent: YAML plans against the bundled todo site, and `webmcp-harness agent`."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from harness.sites.server import RunningSites, serve_sites

from harness import BrowserPool, ConfigError, Harness
from harness.agents import make_agent
from harness.agents.loop import RunResult, run_agent
from harness.agents.scripted import CallStep, FinishStep, NavigateStep, ScriptedAgent, parse_plan
from harness.cli import main
from harness.trace.events import read_trace
from tests.console_script import run_script

ROOT = Path(__file__).parent.parent.parent
EXAMPLE_PLAN = ROOT / "examples" / "plans" / "todo.yaml"


@pytest.fixture(scope="module")
async def harness(browser_pool: BrowserPool) -> AsyncIterator[Harness]:
    async with Harness(browsers=browser_pool, backend="polyfill", call_timeout=10) as h:
        yield h


@pytest.fixture(scope="module")
async def sites() -> AsyncIterator[RunningSites]:
    async with serve_sites(["todo"]) as running:
        yield running


@pytest.fixture(autouse=True)
async def fresh_todo(sites: RunningSites) -> None:
    await sites.reset("todo")
    sites["todo"].clear_log()


async def run_plan(harness: Harness, url: str, plan: dict[str, Any], **options: Any) -> RunResult:
    session = await harness.new_session()
    try:
        return await run_agent(session, ScriptedAgent(parse_plan(plan)), url, **options)
    finally:
        await session.close()


# -- the plan format ---------------------------------------------------------------------


def test_the_plan_format_of_the_issue_parses() -> None:
    plan = parse_plan(
        {
            "task": "Add a todo and list them",
            "steps": [
                {"call": "add_todo", "args": {"text": "buy milk"}, "expect": {"isError": False}},
                {"navigate": "/archive"},
                {"call": "list_todos"},
                {"finish": "done"},
            ],
        }
    )
    assert plan.task == "Add a todo and list them"
    assert plan.steps == [
        CallStep(call="add_todo", args={"text": "buy milk"}, expect={"isError": False}),
        NavigateStep(navigate="/archive"),
        CallStep(call="list_todos"),
        FinishStep(finish="done"),
    ]


@pytest.mark.parametrize(
    ("plan", "message"),
    [
        ([1], "a plan is a mapping with `task` and `steps`"),
        ({"task": "t", "step": []}, "unknown top-level key(s) step"),
        ({"steps": {"call": "x"}}, "`steps` must be a list"),
        ({"steps": ["add_todo"]}, "step 1: a step is a mapping like `call: TOOL`"),
        ({"steps": [{"args": {}}]}, "step 1: a step has exactly one of"),
        ({"steps": [{"call": "a", "finish": "b"}]}, "(found: call, finish)"),
        (
            {"steps": [{"call": "a", "arg": {}}]},
            "step 1 (call): `arg`: unknown key; a call step takes",
        ),
        ({"steps": [{"call": "a"}, {"navigate": "/x", "args": {}}]}, "step 2 (navigate): `args`"),
        ({"steps": [{"call": "a", "args": [1]}]}, "step 1 (call): `args`"),
        ({"steps": [{"call": "a", "expect": "ok"}]}, "step 1 (call): `expect`"),
    ],
)
def test_a_bad_plan_says_which_step_and_what(plan: Any, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_plan(plan, "plan.yaml")
    assert str(info.value).startswith("plan.yaml: ")
    assert message in str(info.value)


def test_empty_args_and_finish_mean_none() -> None:
    plan = parse_plan({"steps": [{"call": "list_todos", "args": None}, {"finish": None}]})
    assert plan.steps == [CallStep(call="list_todos"), FinishStep(finish="")]


def test_plan_files_are_read_with_clear_errors(tmp_path: Path) -> None:
    agent = make_agent(f"scripted:{EXAMPLE_PLAN}")
    assert isinstance(agent, ScriptedAgent) and agent.plan.steps
    broken = tmp_path / "broken.yaml"
    broken.write_text("steps: [call: x\n")
    with pytest.raises(ConfigError, match="is not valid YAML"):
        make_agent(f"scripted:{broken}")
    with pytest.raises(ConfigError, match="Cannot read plan"):
        make_agent(f"scripted:{tmp_path / 'missing.yaml'}")
    with pytest.raises(ConfigError, match="scripted needs a plan file"):
        make_agent("scripted")
    with pytest.raises(ConfigError, match=r"Unknown agent 'gpt'.*obedient.*replay.*scripted"):
        make_agent("gpt:4")


# -- plans against the todo site ---------------------------------------------------------


async def test_the_example_plan_passes_on_the_todo_site(
    harness: Harness, sites: RunningSites
) -> None:
    session = await harness.new_session()
    try:
        result = await run_agent(session, ScriptedAgent.from_file(EXAMPLE_PLAN), sites.url("todo"))
    finally:
        await session.close()
    assert result.ok, result.detail
    assert result.answer == 'added, completed and archived "buy milk"'
    assert result.task == "Add a todo, complete it, and find it in the archive"
    assert [c.tool for c in result.calls()] == [
        "add_todo",
        "list_todos",
        "complete_todo",
        "list_archived",
    ]
    # The calls really reached the site, and the navigation happened between them.
    requests = [
        (r.method, r.path, r.query.get("status", [""])[0])
        for r in sites.requests("todo")
        if r.path.startswith("/api/") or r.path == "/archive"
    ]
    assert requests == [
        ("GET", "/api/todos", "all"),  # the page's own first render
        ("POST", "/api/todos", ""),
        ("GET", "/api/todos", "open"),
        ("POST", "/api/todos/4/complete", ""),
        ("GET", "/archive", ""),
        ("GET", "/api/todos", "done"),
    ]


async def test_an_unmet_expect_fails_the_run_with_a_readable_diff(
    harness: Harness, sites: RunningSites
) -> None:
    plan = {
        "task": "add bread",
        "steps": [
            {
                "call": "add_todo",
                "args": {"text": "buy milk"},
                "expect": {
                    "isError": False,
                    "structuredContent": {"todo": {"text": "buy bread", "done": False}},
                },
            },
            {"call": "delete_todo", "args": {"id": 1}},
            {"finish": "never reached"},
        ],
    }
    result = await run_plan(harness, sites.url("todo"), plan)
    assert result.stop_reason == "expect-failed" and not result.ok
    assert result.detail == "\n".join(
        [
            'step 1 (plan step 1), call add_todo {"text": "buy milk"}: '
            "the result does not match `expect`:",
            '  at /structuredContent/todo/text: expected "buy bread", got "buy milk"',
            "",
            "--- expect",
            "+++ result",
            "@@ -3,7 +3,7 @@",
            '   "structuredContent": {',
            '     "todo": {',
            '       "done": false,',
            '-      "text": "buy bread"',
            '+      "text": "buy milk"',
            "     }",
            "   }",
            " }",
        ]
    )
    # The run stopped at the failed step: the delete never happened.
    assert len(result.steps) == 1
    assert not any(r.method == "DELETE" for r in sites.requests("todo"))


async def test_expect_sees_error_results_as_the_agent_does(
    harness: Harness, sites: RunningSites
) -> None:
    refused = {"call": "add_todo", "args": {"text": ""}}
    passing = await run_plan(
        harness, sites.url("todo"), {"steps": [{**refused, "expect": {"isError": True}}]}
    )
    assert passing.ok and passing.answer == ""  # a plan without `finish` finishes, empty
    failing = await run_plan(
        harness, sites.url("todo"), {"steps": [{**refused, "expect": {"isError": False}}]}
    )
    assert failing.stop_reason == "expect-failed"
    assert "at /isError: expected false, got true" in failing.detail


async def test_a_step_the_page_cannot_run_fails_the_run(
    harness: Harness, sites: RunningSites
) -> None:
    result = await run_plan(
        harness, sites.url("todo"), {"steps": [{"call": "add_todos"}, {"finish": "x"}]}
    )
    assert result.stop_reason == "step-failed"
    assert result.detail.startswith("step 1 (plan step 1), call add_todos {}: No tool named")
    navigation = await run_plan(
        harness, sites.url("todo"), {"steps": [{"navigate": "/nowhere"}, {"finish": "x"}]}
    )
    assert navigation.stop_reason == "step-failed" and "HTTP 404" in navigation.detail


async def test_a_plan_writes_a_trace_that_reads_back(
    harness: Harness, sites: RunningSites, tmp_path: Path
) -> None:
    result = await run_plan(
        harness,
        sites.url("todo"),
        {"task": "list", "steps": [{"call": "list_todos"}, {"finish": "ok"}]},
        trace_dir=tmp_path / "run",
    )
    assert result.ok and result.trace_dir == tmp_path / "run"
    assert read_trace(tmp_path / "run") == result.events


# -- the CLI -------------------------------------------------------------------------------


async def test_cli_agent_json_summary(sites: RunningSites, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    code, out, err = await run_script(
        "agent",
        sites.url("todo"),
        "--agent",
        f"scripted:{EXAMPLE_PLAN}",
        "--trace-dir",
        str(run_dir),
        "--json",
    )
    assert code == 0, err
    summary = json.loads(out)
    assert summary["stopReason"] == "finished" and summary["steps"] == 5
    assert summary["traceDir"] == str(run_dir)
    first = summary["calls"][0]
    assert first["step"] == 1 and first["tool"] == "add_todo"
    assert first["arguments"] == {"text": "buy milk"}
    assert first["result"]["structuredContent"] == {
        "todo": {"id": 4, "text": "buy milk", "done": False}
    }
    assert (run_dir / "trace.jsonl").is_file()


async def test_cli_agent_shows_steps_live_and_fails_on_an_unmet_expect(
    sites: RunningSites, tmp_path: Path
) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "task: fail\nsteps:\n  - call: list_todos\n    expect: {structuredContent: {todos: []}}\n"
    )
    code, out, err = await run_script(
        "agent",
        sites.url("todo"),
        "--agent",
        f"scripted:{plan}",
        "--trace-dir",
        str(tmp_path / "r"),
    )
    assert code == 1, err
    assert "expect-failed after 1 steps" in out, err
    assert "agent-action" in out and "call list_todos {}" in out
    assert "tool-result" in out and "list_todos ok" in out
    assert "at /structuredContent/todos: expected [], got [" in out


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--agent", "obedient", "--max-steps", "0"], 2, "--max-steps must be at least 1"),
        (["--agent", "obedient"], 2, "--task is required for the obedient agent"),
        # A file or directory the command line names that cannot be used is a usage error.
        (["--agent", "scripted:{tmp}/none.yaml"], 2, "Cannot read plan"),
        (["--agent", "nope"], 2, "Unknown agent 'nope'"),
        (["--agent", f"scripted:{EXAMPLE_PLAN}", "--trace-dir", "{tmp}"], 2, "is not empty"),
    ],
)
def test_cli_agent_usage_errors(
    args: list[str], code: int, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Checked before any browser starts (in-process: nothing here needs a page)."""
    (tmp_path / "trace.jsonl").write_text("")
    argv = ["agent", "http://127.0.0.1:9/", *[a.replace("{tmp}", str(tmp_path)) for a in args]]
    assert main(argv) == code
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
