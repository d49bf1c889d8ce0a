"""The QA commands through the installed console script: fuzz (with the shrunk
reproduction it prints, run again), snapshot and diff of a page whose catalog changes,
and the errors that point to `webmcp-harness doctor`."""

from __future__ import annotations

import json
import shlex
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.cli.test_cli import run
from tests.conftest import free_port
from tests.qa.pages import PROPERTY_TOOLS, QAServer, page, serve

RELEASE_1 = """
document.modelContext.registerTool({
  name: "list_items", description: "Lists the items.", annotations: {readOnlyHint: true},
  inputSchema: {type: "object", properties: {limit: {type: "integer", minimum: 1, maximum: 10}}},
  execute: async () => ({items: []}),
});
"""
# The next release: the limit widened, and a destructive tool added.
RELEASE_2 = (
    RELEASE_1.replace("maximum: 10", "maximum: 1000")
    + """
document.modelContext.registerTool({
  name: "clear_items", description: "Deletes every item.", annotations: {destructiveHint: true},
  inputSchema: {type: "object"}, execute: async () => ({cleared: true}),
});
"""
)


@pytest.fixture(scope="module")
async def server() -> AsyncIterator[QAServer]:
    pages = {"/": page(PROPERTY_TOOLS), "/v1": page(RELEASE_1), "/v2": page(RELEASE_2)}
    async with serve(pages) as qa:
        yield qa


@pytest.mark.slow
async def test_fuzz_prints_the_shrunk_input_and_a_reproduction_that_fails_again(
    server: QAServer,
) -> None:
    url = server.url("/")
    code, out, err = await run(
        "fuzz", url, "--tool", "search_throws", "--property", "no-throw", "--seed", "3"
    )
    assert code == 1, err
    assert "search_throws  no-throw: failed" in out
    assert 'minimal input: {"query": ""}' in out
    cli = f'webmcp-harness fuzz {url} --tool search_throws --property no-throw --example \'{{"query": ""}}\''
    assert cli in out
    assert "def test_search_throws_no_throw(webmcp):" in out
    assert "example={'query': ''})" in out
    # The printed command, pasted: the same failure on that one input.
    again = shlex.split(cli)[1:]
    code, out, err = await run(*again, "--json")
    assert code == 1, err
    report = json.loads(out)
    [result] = report["tools"][0]["results"]
    assert result["status"] == "failed" and result["failure"]["arguments"] == {"query": ""}


@pytest.mark.slow
async def test_fuzz_exits_0_when_every_property_holds(server: QAServer) -> None:
    code, out, err = await run(
        "fuzz",
        server.url("/"),
        "--tool",
        "search_ok",
        "--property",
        "no-throw",
        "--property",
        "output-schema",
        "--examples",
        "5",
        "--seed",
        "1",
    )
    assert code == 0, out + err
    assert "all properties held (seed 1)" in out


async def test_fuzz_usage_errors(server: QAServer) -> None:
    code, _, err = await run("fuzz", server.url("/"), "--example", "[1]")
    assert code == 2 and "--example must be a JSON object" in err
    code, _, err = await run("fuzz", server.url("/"), "--property", "bogus")
    assert code == 2 and "invalid choice: 'bogus'" in err
    code, _, err = await run("fuzz", server.url("/"), "--tool", "nope", "--seed", "1")
    assert code == 2 and "No tool named 'nope'" in err and "--wait-for-tool" in err


@pytest.mark.slow
async def test_snapshot_then_diff_gates_a_changed_catalog(server: QAServer, tmp_path: Path) -> None:
    baseline = tmp_path / "catalog.json"
    code, _, err = await run("snapshot", server.url("/v1"), "--output", str(baseline))
    assert code == 0, err
    data = json.loads(baseline.read_text())
    assert [t["name"] for t in data["tools"]] == ["list_items"]
    assert data["tools"][0]["origin"] == "self"
    # Unchanged: exit 0. The next release, live: exit 1, a readable diff.
    code, out, err = await run("diff", str(baseline), server.url("/v1"))
    assert code == 0, err
    assert "no changes" in out
    code, out, err = await run("diff", str(baseline), server.url("/v2"))
    assert code == 1, err
    assert "FAIL  clear_items: added: a new destructive tool (gates)" in out
    assert "FAIL  list_items: inputSchema widened (gates)" in out
    assert "/properties/limit/maximum: 10 → 1000 (widened)" in out


@pytest.mark.slow  # `snapshot` and three `diff` runs (~6 s)
async def test_diff_reads_a_page_as_the_other_commands_do(tmp_path: Path) -> None:
    # A file: URL and the path of an HTML file are pages, snapshotted now, as for `tools`.
    html = tmp_path / "page.html"
    html.write_text(page(RELEASE_1), encoding="utf-8")
    baseline = tmp_path / "catalog.json"
    code, _, err = await run("snapshot", html.as_uri(), "--output", str(baseline))
    assert code == 0, err
    for live in (html.as_uri(), str(html)):
        code, out, err = await run("diff", str(baseline), live, "--fail-on", "info")
        assert (code, err) == (0, ""), out + err
        assert "no changes" in out


@pytest.mark.slow  # five console scripts (~5 s)
async def test_doctor_exits_3_when_the_page_it_was_given_cannot_be_reached() -> None:
    nowhere = f"http://127.0.0.1:{free_port()}/"  # nothing listens there
    code, out, err = await run("doctor", nowhere, "--json")
    assert code == 3, out + err
    report = json.loads(out)
    assert report["error"]["code"] == "page-unreachable"
    assert any(line["check"] == "url" and line["status"] == "fail" for line in report["lines"])
    assert f"Could not open {nowhere}" in err


async def test_snapshot_to_stdout_is_the_file(server: QAServer) -> None:
    code, out, err = await run("snapshot", server.url("/v1"), "--backend", "native")
    assert code == 0, err
    assert json.loads(out)["format"] == "webmcp-harness catalog/1"


async def test_browser_errors_point_to_the_doctor(server: QAServer) -> None:
    missing = {"WEBMCP_CHROMIUM": "/nonexistent/chromium"}
    code, _, err = await run("tools", server.url("/v1"), env=missing)
    assert code == 1 and "webmcp-harness doctor" in err
    code, _, err = await run("fuzz", server.url("/v1"), env=missing)
    assert code == 3 and "webmcp-harness doctor" in err
    code, out, _ = await run("doctor", env=missing)
    assert code == 1
    assert out.startswith("FAIL    chromium: $WEBMCP_CHROMIUM is set to '/nonexistent/chromium'")
    assert "fix: install Debian's package" in out
