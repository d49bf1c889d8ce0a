"""The CLI contract, through the installed console script."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.conftest import PageServer

CLI_HANG_LIMIT_S = 240
SCRIPT = shutil.which("webmcp-harness") or str(Path(sys.executable).parent / "webmcp-harness")


async def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        SCRIPT,
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, **(env or {})},
    )
    try:
        # A safety net against a hang, not a speed check: generous for a busy machine.
        out, err = await asyncio.wait_for(proc.communicate(), timeout=CLI_HANG_LIMIT_S)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        pytest.fail(f"webmcp-harness {' '.join(args)} ran over {CLI_HANG_LIMIT_S} s")
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["polyfill", "native"])
async def test_tools_json(page_server: PageServer, backend: str) -> None:
    url = page_server.url("s_tools.html")
    code, out, err = await run("tools", url, "--backend", backend, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["url"] == url and data["backend"] == backend and data["warnings"] == []
    echo = next(t for t in data["tools"] if t["name"] == "echo")
    assert set(echo) == {
        "name",
        "title",
        "description",
        "inputSchema",
        "outputSchema",
        "annotations",
        "source",
        "origin",
        "frame",
    }
    assert echo["inputSchema"]["required"] == ["text"]
    assert echo["source"] == "script" and echo["frame"] == "main"


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["polyfill", "native"])
async def test_call_json_ok_and_tool_error_both_exit_zero(
    page_server: PageServer, backend: str
) -> None:
    url = page_server.url("s_tools.html")
    code, out, err = await run(
        "call", url, "echo", "--args", '{"text": "hi"}', "--backend", backend, "--json"
    )
    assert code == 0, err
    data = json.loads(out)
    assert data["tool"] == "echo" and isinstance(data["durationMs"], float)
    assert data["result"]["structuredContent"] == {"echo": "hi"}
    code, out, _ = await run("call", url, "fails", "--backend", backend, "--json")
    assert code == 0
    assert json.loads(out)["result"]["isError"] is True


@pytest.mark.slow
async def test_call_timeout_option(page_server: PageServer) -> None:
    code, out, _ = await run(
        "call", page_server.url("s_tools.html"), "slow", "--timeout", "0.5", "--json"
    )
    assert code == 0
    assert "timed out after 0.5 s" in json.loads(out)["result"]["content"][0]["text"]


async def test_human_output_is_a_table(page_server: PageServer) -> None:
    code, out, _ = await run("tools", page_server.url("s_tools.html"))
    assert code == 0
    # Declared values in JSON (issue 27: declared false shows too, not only true).
    assert "WebMCP tools at" in out and "echo" in out and "readOnlyHint=true" in out


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["call", "{url}", "nope"], "No tool named 'nope'"),
        (["call", "{url}", "echo", "--args", "{not json"], "--args is not valid JSON"),
        (["call", "{url}", "echo", "--args", "[1]"], "--args must be a JSON object"),
        (["tools", "http://127.0.0.1:9/"], "Could not open http://127.0.0.1:9/"),
    ],
)
async def test_errors_are_one_clear_line_and_a_nonzero_exit(
    page_server: PageServer, args: list[str], message: str
) -> None:
    url = page_server.url("s_tools.html")
    code, out, err = await run(*[a.replace("{url}", url) for a in args])
    assert code != 0
    assert message in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert out == ""


async def test_no_browser_is_a_clear_error(page_server: PageServer) -> None:
    code, _, err = await run(
        "tools", page_server.url("s_tools.html"), env={"WEBMCP_CHROMIUM": "/nonexistent/chromium"}
    )
    assert code == 1
    assert "WEBMCP_CHROMIUM is set to '/nonexistent/chromium'" in err
    assert "Traceback" not in err


async def test_a_browser_that_does_not_start_is_one_line_with_what_it_said(
    tmp_path: Path,
) -> None:
    # Found from outside: Playwright's whole launch log (two lines of ~2 KB of flags each).
    chromium = tmp_path / "chromium"
    chromium.write_text('#!/bin/sh\necho "chromium: cannot open display" >&2\nexit 1\n')
    chromium.chmod(0o755)
    page = tmp_path / "page.html"
    page.write_text("<!doctype html><p>hi</p>")
    code, _, err = await run("tools", str(page), env={"WEBMCP_CHROMIUM": str(chromium)})
    assert code == 1 and len(err.splitlines()) == 1, err
    assert f"Chromium at {chromium} did not start (it said: chromium: cannot open display)" in err
    assert "--disable-field-trial-config" not in err and "Traceback" not in err


async def test_version_says_which_harness_this_is() -> None:
    from importlib.metadata import version

    code, out, err = await run("--version")
    assert (code, out.strip(), err) == (0, f"webmcp-harness {version('webmcp-harness')}", "")


@pytest.mark.slow  # four `tools` runs, each with its browser (~7 s a backend)
@pytest.mark.parametrize("backend", ["polyfill", "native"])
async def test_tools_on_a_page_that_is_not_a_secure_context_says_so(backend: str) -> None:
    # Found from outside: a data: page's registerTool() got "none by the time its catalog
    # settled (--settle MS waits longer …)", which sends a newcomer after the wrong cause.
    page = 'data:text/html,<script>document.modelContext?.registerTool({name: "x"})</script>'
    code, out, err = await run("tools", page, "--backend", backend)
    assert code == 0, err
    assert "it is not a secure context" in out and "--settle" not in out
    assert "(insecure-context)" in out
    code, out, _ = await run("tools", page, "--backend", backend, "--json")
    assert [w["code"] for w in json.loads(out)["warnings"]] == ["insecure-context"]
