"""The bridge checks a result's ``structuredContent`` against the tool's outputSchema as
the harness reads every page schema — patterns with ECMAScript's semantics, formats
asserted — on both backends. It used Python's ``re``: an ECMAScript pattern (``\\p{Lu}``)
raised out of the call, and ``\\d`` let other scripts' digits through. A schema whose
pattern Python's ``re`` cannot read is not listed (the official SDK's client refuses the
tool's results over it): its result reaches the client as text."""

from __future__ import annotations

from mcp.client.client import Client

from harness import Harness
from harness.mcp.server import McpBridge
from tests.conftest import serve_pages

PAGE = """<!doctype html><script>
const tool = (name, pattern, value) => document.modelContext.registerTool({
  name, description: name, inputSchema: {type: "object", properties: {}},
  outputSchema: {type: "object", properties: {v: {type: "string", pattern}}, required: ["v"]},
  execute: async () => ({v: value})});
tool("capitalized", "^\\\\p{Lu}\\\\p{Ll}+$", "Ann");
tool("digits", "^\\\\d+$", "\\u0663\\u0664");
</script>"""


async def test_an_output_pattern_is_read_as_ecmascript_reads_it(backend_harness: Harness) -> None:
    async with serve_pages({"": PAGE}) as origin, await backend_harness.open(origin) as session:
        bridge = McpBridge(session)
        async with bridge, Client(bridge.server, mode="legacy") as client:
            fits = await client.call_tool("capitalized", {})
            breaks = await client.call_tool("digits", {})
    assert fits.is_error is False and fits.structured_content is None
    assert '"v":"Ann"' in str(fits.content)
    assert breaks.is_error is True
    assert "does not match the tool's outputSchema" in str(breaks.content)
