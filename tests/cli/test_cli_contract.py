"""The CLI contract, through the installed console script: the same options on every
command that runs tools, JSON for every outcome with ``--json``, usage errors exit 2,
no prefix abbreviations, and ``sites --port`` / ``--reset``."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp import StdioServerParameters, types
from mcp.client.client import Client
from mcp.client.stdio import stdio_client

from harness.cli.options import LATE_TOOL_HINT, UsageError, output_directory
from harness.stages.framing import unframed
from tests.conftest import PageServer, free_port
from tests.console_script import SCRIPT, run_script
from tests.unwritable import unwritable_directory

BLOCK_ECHO = """
[[rules]]
name = "no-echo"
effect = "block"
[rules.conditions]
fact = "tool.name"
equals = "echo"
"""


@pytest.fixture
def url(page_server: PageServer) -> str:
    return page_server.url("cli_contract.html")


@pytest.fixture
def block_echo(tmp_path: Path) -> Path:
    path = tmp_path / "no-echo.toml"
    path.write_text(BLOCK_ECHO, encoding="utf-8")
    return path


def error_of(out: str) -> dict[str, str]:
    payload = json.loads(out)
    assert set(payload) == {"error"} and set(payload["error"]) == {"code", "message"}
    return dict(payload["error"])


# -- the parser ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "usage"),
    [
        (["tools", "{url}", "--back", "native"], "usage: webmcp-harness tools"),
        (["call", "{url}", "echo", "--arg", "{}"], "usage: webmcp-harness call"),
        (
            ["agent", "{url}", "--agent", "obedient", "--polic", "none"],
            "usage: webmcp-harness agent",
        ),
        (["mcp", "{url}", "--transpor", "http"], "usage: webmcp-harness mcp"),
        (["sites", "--rese"], "usage: webmcp-harness sites"),
        (["conformance", "ua", "--trace", "on"], "usage: webmcp-harness conformance ua"),
        (["experiment", "grid.toml", "--worker", "2"], "usage: webmcp-harness experiment"),
        (["selftest", "--quik"], "usage: webmcp-harness selftest"),
        (["bench", "--quik"], "usage: webmcp-harness bench"),
        (["trace", "show", "run", "--jsn"], "usage: webmcp-harness trace show"),
    ],
)
async def test_a_mistyped_or_abbreviated_flag_is_a_usage_error_of_its_sub_command(
    url: str, args: list[str], usage: str
) -> None:
    code, out, err = await run_script(*[a.replace("{url}", url) for a in args])
    assert code == 2, err
    assert err.startswith(usage) and "unrecognized arguments" in err
    assert "Traceback" not in err and out == ""


@pytest.mark.parametrize(
    ("given", "repeated"),
    [
        (
            ["--catalog-baseline", "a.json", "b.json"],
            "--catalog-baseline FILE --catalog-baseline FILE",
        ),
        (
            ["--fuzz", "--fuzz-property", "no-throw", "idempotent"],
            "--fuzz-property NAME --fuzz-property NAME",
        ),
    ],
)
def test_two_values_after_a_one_value_option_say_to_repeat_it(
    given: list[str], repeated: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Found from outside: `site URL… --catalog-baseline A B` (as the README's synopsis read)
    # answered only "unrecognized arguments: B"; several values take the option repeated.
    from harness.cli import main

    urls = ["http://127.0.0.1:9/a", "http://127.0.0.1:9/b"]
    assert main(["conformance", "site", *urls, *given, "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert f"unrecognized arguments: {given[-1]} (" in err
    assert f"repeat it for each, {repeated})" in err


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [
        ["call", "http://127.0.0.1:9/", "echo", "--args", "[1]"],
        ["call", "http://127.0.0.1:9/", "echo", "--timeout", "0"],
        ["call", "http://127.0.0.1:9/", "echo", "--policy", "{tmp}/missing.toml"],
        ["tools", "http://127.0.0.1:9/", "--settle", "-1"],
        ["agent", "http://127.0.0.1:9/", "--agent", "nope"],
        ["agent", "http://127.0.0.1:9/", "--agent", "scripted:{tmp}/missing.yaml"],
        [
            "agent",
            "http://127.0.0.1:9/",
            "--agent",
            "obedient",
            "--task",
            "t",
            "--elicit",
            "nobody",
        ],
        [
            "agent",
            "http://127.0.0.1:9/",
            "--agent",
            "obedient",
            "--task",
            "t",
            "--policy",
            "x.toml",
        ],
        ["tools", "http://127.0.0.1:9/", "--backend", "firefox"],
    ],
)
async def test_usage_errors_exit_2_and_are_json_with_json(args: list[str], tmp_path: Path) -> None:
    argv = [a.replace("{tmp}", str(tmp_path)) for a in args]
    code, out, err = await run_script(*argv, "--json")
    assert code == 2, err
    assert error_of(out)["code"] == "usage"
    assert err.strip().splitlines()[-1].startswith("webmcp-harness: ")
    assert "Traceback" not in err


async def test_mcp_rejects_bad_user_agent_options_before_the_browser(tmp_path: Path) -> None:
    for option in (["--policy", str(tmp_path / "missing.toml")], ["--elicit-timeout", "0"]):
        code, _, err = await run_script("mcp", "http://127.0.0.1:9/", *option)
        assert code == 2, err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


# -- --json: every outcome ------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["polyfill", "native"])
async def test_an_unknown_tool_is_a_json_error_naming_the_tools_there_are(
    url: str, backend: str
) -> None:
    code, out, err = await run_script("call", url, "nope", "--backend", backend, "--json")
    assert code == 1
    error = error_of(out)
    assert error["code"] == "unknown-tool"
    # Failed once the catalog settled: the late tool (2 s after load) was not there yet.
    # … and says how to wait for one that comes late (issue 27: as `tools` says it).
    assert error["message"] == (
        f"No tool named 'nope' on this page (available: ask, echo, token). {LATE_TOOL_HINT}"
    )
    assert err.strip() == f"webmcp-harness: {error['message']}"


async def test_an_unreachable_page_is_a_json_error() -> None:
    code, out, err = await run_script("tools", "http://127.0.0.1:9/", "--json")
    assert code == 1
    error = error_of(out)
    assert error["code"] == "page-unreachable" and "Could not open" in error["message"]
    assert len(err.strip().splitlines()) == 1


async def test_catalog_warnings_are_objects_and_the_listing_says_it_settled(url: str) -> None:
    code, out, err = await run_script("tools", url, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["settled"] is True
    assert [t["name"] for t in data["tools"]] == ["ask", "echo", "token"]
    assert [(w["code"], w["tool"]) for w in data["warnings"]] == [("undeclared-sensitive", "token")]
    assert all(set(w) == {"code", "message", "tool"} for w in data["warnings"])


@pytest.mark.slow
async def test_a_page_without_tools_says_so(page_server: PageServer) -> None:
    page = page_server.url("rd_never.html")
    code, out, err = await run_script("tools", page)
    assert code == 0, err
    assert f"No WebMCP tools at {page}" in out and "WebMCP tools at" in out
    code, out, _ = await run_script("tools", page, "--json")
    assert json.loads(out)["tools"] == []


# -- readiness options -----------------------------------------------------------------------


@pytest.mark.slow
async def test_wait_for_tool_and_settle_find_a_late_tool(url: str) -> None:
    names = []
    for extra in ([], ["--wait-for-tool", "late"], ["--settle", "3000"]):
        code, out, err = await run_script("tools", url, "--json", *extra)
        assert code == 0, err
        names.append([t["name"] for t in json.loads(out)["tools"]])
    assert names == [["ask", "echo", "token"], *[["ask", "echo", "late", "token"]] * 2]
    code, out, err = await run_script("call", url, "late", "--wait-for-tool", "late", "--json")
    assert code == 0, err
    assert json.loads(out)["result"]["structuredContent"] == {"late": True}


@pytest.mark.slow
async def test_a_tool_waited_for_that_never_comes_is_an_error(url: str) -> None:
    code, out, err = await run_script("tools", url, "--wait-for-tool", "never", "--json")
    assert code == 1
    assert error_of(out)["code"] == "unknown-tool" and "never" in err


# -- --policy and --elicit, the same on call, agent and mcp ---------------------------------


@pytest.mark.slow
async def test_call_takes_policy_files_default_none_and_strict(url: str, block_echo: Path) -> None:
    results = {}
    for policy in (str(block_echo), "none", "default", "strict"):
        code, out, err = await run_script(
            "call", url, "echo", "--args", '{"text": "hi"}', "--policy", policy, "--json"
        )
        assert code == 0, err
        results[policy] = json.loads(out)["result"]
    assert results[str(block_echo)]["isError"] is True
    assert "no-echo" in results[str(block_echo)]["content"][0]["text"]
    assert results["none"]["structuredContent"] == {"echo": "hi"}
    assert results["default"]["structuredContent"] == {"echo": "hi"}
    # The strict pack reads the undeclared tool as unknown: the user is asked (nobody: no).
    assert results["strict"]["isError"] is True
    assert results["strict"]["_meta"]["webmcp-harness/policy"]["effect"] == "escalate"


@pytest.mark.slow  # `agent` run as a console script three times (~7 s)
async def test_agent_takes_policy_and_elicit(url: str, block_echo: Path, tmp_path: Path) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "task: t\nsteps:\n  - call: echo\n    args: {text: hi}\n  - call: ask\n  - finish: done\n"
    )
    summaries = {}
    for name, options in {
        "blocked": ["--policy", str(block_echo), "--elicit", "decline"],
        "free": ["--policy", "none", "--elicit", "accept"],
    }.items():
        code, out, err = await run_script(
            "agent",
            url,
            "--agent",
            f"scripted:{plan}",
            "--trace-dir",
            str(tmp_path / name),
            "--json",
            *options,
        )
        assert code == 0, err
        summaries[name] = {c["tool"]: c["result"] for c in json.loads(out)["calls"]}
    assert summaries["blocked"]["echo"]["isError"] is True
    assert "no-echo" in summaries["blocked"]["echo"]["content"][0]["text"]
    assert summaries["blocked"]["ask"]["structuredContent"] == {"action": "decline"}
    assert summaries["free"]["echo"]["structuredContent"] == {"echo": "hi"}
    assert summaries["free"]["ask"]["structuredContent"] == {
        "action": "accept",
        "content": {"word": "hi"},
    }


@contextlib.asynccontextmanager
async def mcp_client(url: str, *options: str) -> AsyncIterator[Client]:
    """A stdio MCP client of ``webmcp-harness mcp URL OPTIONS`` (no elicitation capability)."""
    params = StdioServerParameters(
        command=SCRIPT, args=["mcp", url, *options], env=dict(os.environ)
    )
    async with Client(stdio_client(params), mode="legacy") as client:
        yield client


@pytest.mark.slow
async def test_mcp_takes_policy_elicit_and_wait_for_tool(url: str, block_echo: Path) -> None:
    options = ["--policy", str(block_echo), "--elicit", "accept", "--wait-for-tool", "late"]
    async with asyncio.timeout(120), mcp_client(url, *options) as client:
        listed = [t.name for t in (await client.list_tools()).tools]
        assert {"ask", "echo", "late", "token"} <= set(listed)
        blocked = await client.call_tool("echo", {"text": "hi"})
        assert blocked.is_error and "no-echo" in str(blocked.content[0])
        asked = await client.call_tool("ask", {})
        # `ask` lists no outputSchema: its value comes as (framed) text, not structuredContent.
        assert asked.structured_content is None
        [block] = asked.content
        assert isinstance(block, types.TextContent)
        assert json.loads(unframed(block.text)) == {"action": "accept", "content": {"word": "hi"}}


# -- sites --port and --reset ---------------------------------------------------------------


@pytest.mark.slow  # `sites` served and reset as console scripts (~10 s)
async def test_sites_serve_on_the_given_port_and_reset_from_the_cli() -> None:
    port = free_port()
    server = await asyncio.create_subprocess_exec(
        SCRIPT,
        "sites",
        "todo",
        "--port",
        str(port),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert server.stdout is not None
        line = (await asyncio.wait_for(server.stdout.readline(), 60)).decode()
        todo = f"http://127.0.0.1:{port}/"
        assert line.split() == ["todo", todo]
        code, out, err = await run_script(
            "call", todo, "add_todo", "--args", '{"text": "x"}', "--json"
        )
        assert code == 0, err
        assert json.loads(out)["result"]["structuredContent"]["todo"]["id"] == 4
        code, out, err = await run_script("sites", "--reset", "todo", "--port", str(port))
        assert (code, out.split()) == (0, ["todo", todo, "reset"]), err
        code, out, err = await run_script("call", todo, "list_todos", "--json")
        assert [t["id"] for t in json.loads(out)["result"]["structuredContent"]["todos"]] == [
            1,
            2,
            3,
        ]
        # The port is taken now: a second server says so, and what to do.
        code, _, err = await run_script("sites", "todo", "--port", str(port))
        assert code == 1 and "--port" in err and "Traceback" not in err
    finally:
        server.terminate()
        await server.wait()


async def test_resetting_sites_that_do_not_run_is_an_error() -> None:
    code, _, err = await run_script("sites", "--reset", "todo", "--port", str(free_port()))
    assert code == 1 and "nothing to reset" in err


def test_the_default_ports_are_fixed_per_site() -> None:
    from harness.cli.sites import ports_of

    assert ports_of(["todo", "keys", "mail", "shop"], []) == {
        "todo": 8101,
        "keys": 8102,
        "mail": 8103,
        "shop": 8104,
    }
    assert ports_of(["todo", "mail"], ["9000"]) == {"todo": 9000, "mail": 9001}
    assert ports_of(["todo", "mail"], ["0", "mail=9100"]) == {"todo": 0, "mail": 9100}


@pytest.mark.parametrize(
    "args", [["selftest", "--quick", "--out"], ["bench", "--quick", "--json", "--output"]]
)
async def test_an_output_directory_that_cannot_be_made_is_refused_before_the_run(
    tmp_path: Path, args: list[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory", encoding="utf-8")
    code, _, err = await run_script(*args, str(blocker / "reports"))
    assert code == 2, err
    assert "cannot make that directory" in err and "Traceback" not in err


@pytest.mark.parametrize(
    "args", [["selftest", "--quick", "--out"], ["bench", "--quick", "--json", "--output"]]
)
async def test_an_output_directory_that_cannot_be_written_is_refused_before_the_run(
    tmp_path: Path, args: list[str]
) -> None:
    # The run took minutes, then its reports could not be written (exit 1): all was lost.
    with unwritable_directory(tmp_path / "ro") as ro:
        with pytest.raises(UsageError, match="cannot write into that directory"):
            output_directory(ro, args[-1])
        code, _, err = await run_script(*args, str(ro), timeout=120)
    assert code == 2, err
    assert f"{args[-1]} {ro}: cannot write into that directory" in err and "Traceback" not in err
