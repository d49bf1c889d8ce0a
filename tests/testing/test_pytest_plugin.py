"""The pytest plugin, run the way users run it: pytest (in a subprocess) on a test suite.

Each test writes a small suite with pytester (with the conftest of `examples/`, whose
fixtures are the plugin's `webmcp_sites`), runs it, and checks the outcomes, the output
and the artifacts. The plugin is not named anywhere: it is loaded from its entry point.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from harness.browser.chromium import find_chromium
from harness.trace.events import read_trace

pytest_plugins = ["pytester"]

EXAMPLES = Path(__file__).parent.parent.parent / "examples"

# A run launches Chromium and the sites in a fresh interpreter: slow on a busy machine.
pytestmark = pytest.mark.timeout(600)


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest((EXAMPLES / "conftest.py").read_text(encoding="utf-8"))
    return pytester


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "--output", "out", *args)


def kept(pytester: pytest.Pytester, name: str) -> list[str]:
    """The test folders under out/ that hold a file called ``name``."""
    return sorted(p.parent.name for p in (pytester.path / "out").glob(f"*/{name}"))


DEFAULTS = """
import pytest
from playwright.sync_api import expect
from harness.errors import ConfigError
from harness.expect import expect_result, expect_tool


def test_the_session_is_on_the_page(page, webmcp, todo_url):
    page.goto(todo_url)
    outcome = webmcp.call("add_todo", {"text": "From the agent"})
    expect_result(outcome).to_succeed()
    expect(page.get_by_text("From the agent")).to_be_visible()
    assert webmcp.page is page and webmcp.backend_name == "polyfill"
    assert type(page.main_frame).__module__ == "playwright.sync_api._generated"


def test_the_harness_attaches_to_another_page(page, new_context, webmcp, webmcp_harness, sites):
    with pytest.raises(ConfigError, match="already has a harness session"):
        webmcp_harness.attach(page.context.new_page())
    other = new_context().new_page()
    second = webmcp_harness.attach(other)
    other.goto(sites.url("todo", "/archive"))
    expect_tool(second, "list_archived").to_exist()
    expect_result(second.call("list_archived")).to_have_structured_content({"todos": [{"id": 3}]})
    second.close()


@pytest.mark.asyncio
async def test_the_async_fixture(webmcp_async, todo_url):
    await webmcp_async.open(todo_url)
    outcome = await webmcp_async.call("list_todos", {"status": "done"})
    expect_result(outcome).to_have_structured_content({"todos": [{"id": 3}]})


def test_without_the_fixtures():
    assert True


def test_pytest_playwright_alone_finds_chromium(page, browser_type_launch_args):
    assert browser_type_launch_args["executable_path"] == CHROMIUM
    assert "--disable-background-networking" in browser_type_launch_args["args"]
    page.set_content("<p>plain</p>")
    expect(page.locator("p")).to_have_text("plain")


def test_the_default_policy_asks_and_the_default_answer_is_cancel(page, webmcp, todo_url):
    page.goto(todo_url)
    expect_result(webmcp.call("delete_todo", {"id": 1})).to_be_error(kind="refused")
    assert [r.action for r in webmcp.elicitations] == ["cancel"]


def test_a_tool_that_throws(page, webmcp, todo_url):
    page.goto(todo_url)
    webmcp.call("list_todos")
    expect_result(webmcp.call("complete_todo", {"id": 99})).to_succeed()
"""


@pytest.mark.slow
def test_fixtures_defaults_messages_and_traces_kept_on_failure(suite: pytest.Pytester) -> None:
    suite.makepyfile(test_defaults=DEFAULTS.replace("CHROMIUM", repr(str(find_chromium()))))
    result = run(suite, "--tracing", "retain-on-failure")
    result.assert_outcomes(passed=6, failed=1)

    # A failing assertion says what was expected and what was seen, and lists the calls.
    result.stdout.fnmatch_lines(
        [
            "E       AssertionError: expect_result('complete_todo').to_succeed() failed",
            "E         expected: a result without isError",
            "E         message: *Tool error: Error: No todo with id 99*",
            "E         received: isError (thrown)",
            "*- webmcp session -*",
            "backend polyfill, page http://127.0.0.1:*/",
            "tools: add_todo, complete_todo, delete_todo, list_todos",
            '1. list_todos {} → ok: {"todos": *',
            '2. complete_todo {"id": 99} → isError (thrown): *No todo with id 99*',
        ]
    )

    # retain-on-failure: the failing test keeps its trace beside Playwright's; no one else.
    failing = "test-defaults-py-test-a-tool-that-throws-chromium"
    assert kept(suite, "trace.jsonl") == [failing]
    assert kept(suite, "trace.zip") == [failing]
    events = read_trace(suite.path / "out" / failing)
    mine = {"navigation", "tool-result", "run-finished"}
    types = [e.type for e in events]
    assert [t for t in types if t in mine] == [
        "navigation",
        "tool-result",
        "tool-result",
        "run-finished",
    ]
    assert "tools-changed" in types[types.index("navigation") : types.index("tool-result")]
    results = [e for e in events if e.type == "tool-result"]
    assert [(e.step, e.tool, e.arguments, e.is_error) for e in results] == [
        (1, "list_todos", {}, False),
        (2, "complete_todo", {"id": 99}, True),
    ]
    finished = events[-1]
    assert finished.type == "run-finished" and finished.stop_reason == "expect-failed"
    assert finished.steps == 2


OVERRIDES = """
import pytest
from harness.expect import expect_result


def enabled_features(args):
    return [f for a in args if a.startswith("--enable-features=") for f in a[18:].split(",")]


def test_the_options_apply(page, webmcp, todo_url, browser_type_launch_args):
    page.goto(todo_url)
    assert webmcp.backend_name == "native"
    assert "WebMCP" in enabled_features(browser_type_launch_args["args"])
    assert browser_type_launch_args["slow_mo"] == 1  # a conftest's override still applies
    expect_result(webmcp.call("delete_todo", {"id": 1})).to_succeed()
    assert [r.action for r in webmcp.elicitations] == ["accept"]


@pytest.mark.webmcp(backend="polyfill", elicit="decline")
def test_the_marker_overrides_backend_and_answer(page, webmcp, todo_url, browser_type_launch_args):
    page.goto(todo_url)
    assert webmcp.backend_name == "polyfill"
    assert "WebMCP" not in enabled_features(browser_type_launch_args["args"])
    expect_result(webmcp.call("delete_todo", {"id": 1})).to_be_error(kind="refused")
    assert [r.action for r in webmcp.elicitations] == ["decline"]


@pytest.mark.webmcp(policy="none")
def test_the_marker_overrides_the_policy(page, webmcp, todo_url):
    page.goto(todo_url)
    assert webmcp.backend_name == "native"
    expect_result(webmcp.call("delete_todo", {"id": 2})).to_succeed()
    assert webmcp.elicitations == []


@pytest.mark.webmcp(backnd="native")
def test_a_misspelt_marker(webmcp):
    pass
"""


USER_LAUNCH_ARGS = """

@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    # As pytest-playwright's documentation does it: extend, not replace.
    return {**browser_type_launch_args, "slow_mo": 1}
"""


@pytest.mark.slow
def test_options_and_the_marker_that_overrides_them(suite: pytest.Pytester) -> None:
    conftest = suite.path / "conftest.py"
    conftest.write_text(conftest.read_text() + USER_LAUNCH_ARGS)
    suite.makepyfile(test_overrides=OVERRIDES)
    result = run(
        suite,
        "-v",
        "--webmcp-backend",
        "native",
        "--webmcp-elicit",
        "accept",
        "--webmcp-trace",
        "on",
    )
    result.assert_outcomes(passed=3, errors=1)
    # The marker's backend differs from the run's: that test gets a browser of its own.
    result.stdout.fnmatch_lines_random(
        [
            "*::test_the_options_apply[[]chromium[]] PASSED*",
            "*::test_the_marker_overrides_backend_and_answer[[]polyfill-chromium[]] PASSED*",
            "*::test_the_marker_overrides_the_policy[[]chromium[]] PASSED*",
            "*@pytest.mark.webmcp: unknown argument(s) backnd; use backend=, policy=, elicit=, "
            "elicit_timeout=, settle=.",
        ]
    )
    # --webmcp-trace on: every test that had a session keeps its trace.
    assert len(kept(suite, "trace.jsonl")) == 3


@pytest.mark.slow
def test_trace_off_keeps_nothing(suite: pytest.Pytester) -> None:
    suite.makepyfile(
        test_off="""
def test_fails(page, webmcp, todo_url):
    page.goto(todo_url)
    webmcp.call("list_todos")
    assert False, "on purpose"
"""
    )
    result = run(suite, "--webmcp-trace", "off")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*- webmcp session -*", "1. list_todos {} → ok: *"])
    assert kept(suite, "trace.jsonl") == []


@pytest.mark.slow
@pytest.mark.parametrize(
    ("option", "message"),
    [
        (
            ["--webmcp-elicit", "nobody"],
            "ERROR: --webmcp-elicit 'nobody': not one of accept, decline, cancel, terminal, "
            "browser, and no answers file by that name.",
        ),
        (["--webmcp-policy", "missing.toml"], "ERROR: *missing.toml*"),
        (["--webmcp-backend", "gecko"], "*--webmcp-backend: invalid choice: 'gecko'*"),
    ],
)
def test_bad_options_are_usage_errors(
    pytester: pytest.Pytester, option: list[str], message: str
) -> None:
    pytester.makepyfile(test_nothing="def test_nothing():\n    pass\n")
    result = run(pytester, *option)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_the_plugin_is_registered_by_its_entry_point() -> None:
    from importlib.metadata import entry_points

    (entry,) = [e for e in entry_points(group="pytest11") if e.name == "webmcp"]
    assert entry.value == "harness.pytest_plugin"
    assert sys.modules.get("harness.pytest_plugin") is not None  # this very run loaded it


@pytest.mark.slow
def test_the_junit_report_names_the_kept_trace(suite: pytest.Pytester) -> None:
    suite.makepyfile(
        test_junit="""
def test_fails(page, webmcp, todo_url):
    page.goto(todo_url)
    assert False
"""
    )
    run(suite, "--junitxml", "report.xml")
    report = (suite.path / "report.xml").read_text(encoding="utf-8")
    assert 'name="webmcp_trace" value="out/test-junit-py-test-fails-chromium/trace.jsonl"' in report
    assert (
        json.loads(
            (suite.path / "out/test-junit-py-test-fails-chromium/trace.jsonl")
            .read_text()
            .splitlines()[-1]
        )["type"]
        == "run-finished"
    )


ASYNC_ARTIFACTS = """
import pytest
from harness.expect import expect_result


@pytest.mark.asyncio
async def test_passes(webmcp_async, todo_url):
    await webmcp_async.open(todo_url)
    expect_result(await webmcp_async.call("list_todos")).to_succeed()


@pytest.mark.asyncio
@pytest.mark.webmcp(backend="native")
async def test_fails(webmcp_async, todo_url):
    await webmcp_async.open(todo_url)
    assert webmcp_async.backend_name == "native"
    expect_result(await webmcp_async.call("complete_todo", {"id": 99})).to_succeed()
"""


@pytest.mark.slow
def test_the_async_fixture_keeps_playwrights_artifacts_too(suite: pytest.Pytester) -> None:
    suite.makepyfile(test_async=ASYNC_ARTIFACTS)
    # (--video needs Playwright's ffmpeg, which only `playwright install` brings.)
    result = run(suite, "--tracing", "on", "--screenshot", "on")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*- webmcp session -*", "backend native, page *"])
    out = suite.path / "out"
    assert sorted(p.name for p in (out / "test-async-py-test-passes").iterdir()) == [
        "test-finished-1.png",
        "trace.zip",
    ]
    assert sorted(p.name for p in (out / "test-async-py-test-fails").iterdir()) == [
        "test-failed-1.png",
        "trace.jsonl",
        "trace.zip",
    ]


FRESH = """
from playwright.sync_api import Page, expect

from harness.expect import expect_result


def test_a_fresh_project(page: Page, webmcp, webmcp_sites):
    page.goto(webmcp_sites.todo)
    outcome = webmcp.call("add_todo", {"text": "Fresh"})
    expect_result(outcome).to_have_structured_content({"todo": {"id": 4}})
    expect(page.get_by_text("Fresh")).to_be_visible()


def test_sites_are_reset_before_each_test(page: Page, webmcp, webmcp_sites):
    page.goto(webmcp_sites.todo)
    outcome = webmcp.call("add_todo", {"text": "Again"})
    expect_result(outcome).to_have_structured_content({"todo": {"id": 4}})
    assert webmcp_sites.requests("todo")[-1] == "POST /api/todos"
"""


@pytest.mark.slow
def test_a_fresh_project_runs_without_warnings(pytester: pytest.Pytester) -> None:
    """No conftest, no configuration: the plugin's fixtures alone, and no warning at all
    (neither pytest-asyncio's loop scope nor pytest-playwright's base_url stand-in)."""
    pytester.makepyfile(test_fresh=FRESH)
    result = run(pytester, "-W", "error::pytest.PytestDeprecationWarning")
    result.assert_outcomes(passed=2)
    output = result.stdout.str()
    assert "warnings summary" not in output, output
    assert "warning" not in output.strip().splitlines()[-1], output


MORE = '''
import pytest

LATE = """<script>
addEventListener("load", () => setTimeout(() => document.modelContext.registerTool({
  name: "late", description: "Registered 1.5 s after load.", execute: async () => "late"}), 1500));
</script>"""


def serve_late(page):
    # A page on a loopback origin (a secure context), answered by Playwright itself.
    page.route("http://127.0.0.1:1/late", lambda route: route.fulfill(body=LATE, content_type="text/html"))
    page.goto("http://127.0.0.1:1/late")


def test_the_option_sets_the_quiet_window(page, webmcp):
    serve_late(page)
    assert [t.name for t in webmcp.tools()] == []


@pytest.mark.webmcp(settle=3000)
def test_the_marker_sets_the_quiet_window(page, webmcp):
    serve_late(page)
    assert [t.name for t in webmcp.tools()] == ["late"]


def test_an_unknown_tool_is_its_own_stop_reason(page, webmcp, todo_url):
    page.goto(todo_url)
    webmcp.call("nope")


@pytest.mark.webmcp(elicit_timeout=-1)
def test_a_bad_elicit_timeout(webmcp):
    pass
'''


@pytest.mark.slow
def test_settle_elicit_timeout_artifacts_and_stop_reasons(suite: pytest.Pytester) -> None:
    suite.makepyfile(test_more=MORE)
    result = run(
        suite,
        "--webmcp-settle",
        "700",
        "--webmcp-elicit-timeout",
        "5",
        "--webmcp-trace",
        "on",
        "--screenshot",
        "on",
    )
    result.assert_outcomes(passed=2, failed=1, errors=1)
    result.stdout.fnmatch_lines(["*elicit timeout -1: give a positive number of seconds.*"])
    out = suite.path / "out"
    events = read_trace(out / "test-more-py-test-an-unknown-tool-is-its-own-stop-reason-chromium")
    finished = events[-1]
    assert finished.type == "run-finished" and finished.stop_reason == "unknown-tool"
    assert "No tool named 'nope'" in finished.detail
    # run-finished lists what pytest-playwright wrote beside the trace.
    assert finished.artifacts == ["test-failed-1.png"]
    passed = read_trace(out / "test-more-py-test-the-marker-sets-the-quiet-window-chromium")
    assert passed[-1].stop_reason == "finished"
    assert passed[-1].artifacts == ["test-finished-1.png"]
