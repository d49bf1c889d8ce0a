"""A burst of catalog changes reaches an MCP client as a handful of
``notifications/tools/list_changed``, not one per tool: a page that registers its tools
one by one (awaiting each, as pages commonly do) and is reloaded. The first change is told
at once, the rest of the burst once it is over (a client re-lists on each one)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from tests.mcp.test_mcp_server import EVENT_TIMEOUT_S, connect, names_of

LIST_CHANGED = "notifications/tools/list_changed"
TOOLS = 80

PAGE = """<!doctype html><meta charset="utf-8"><title>one by one</title>
<script>
const context = document.modelContext || navigator.modelContext;
(async () => {
  for (let i = 0; i < %d; i++) {
    await context.registerTool({
      name: "tool_" + i, description: "Tool " + i + ".",
      inputSchema: {type: "object", properties: {}}, execute: async () => String(i),
    });
  }
})();
</script>
"""

pytestmark = pytest.mark.timeout(180)


async def test_a_reload_of_a_page_registering_one_by_one_is_told_a_few_times(
    tmp_path: Path,
) -> None:
    page = tmp_path / "one_by_one.html"
    page.write_text(PAGE % TOOLS, encoding="utf-8")
    async with connect(page.as_uri(), "legacy") as connection:
        with anyio.fail_after(EVENT_TIMEOUT_S):
            while (
                sum(n.startswith("tool_") for n in names_of(await connection.client.list_tools()))
                < TOOLS
            ):
                await anyio.sleep(0.2)
        mark = len(connection.wire.messages)
        reloaded = await connection.call("harness.reload")
        assert reloaded.is_error is False
        with anyio.fail_after(EVENT_TIMEOUT_S):  # every tool back, and the burst told
            while True:
                listed = names_of(await connection.client.list_tools())
                if sum(n.startswith("tool_") for n in listed) == TOOLS:
                    break
                await anyio.sleep(0.2)
        await anyio.sleep(1.5)  # longer than the longest a burst's last change waits
        told = connection.wire.since(mark).count(LIST_CHANGED)
        # The first change at once, then at most one a second while the page registers,
        # and one when it is done: a handful, where one per tool was 60–80.
        assert 1 <= told <= 6, told
