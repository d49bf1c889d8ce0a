"""A page opened from a file (``file:``): Chromium's own WebMCP takes its registrations (its
origin is opaque, so document.domain cannot be enabled there, though it is not
origin-keyed); the polyfill did not, and listed no tools. Both backends alike now."""

from __future__ import annotations

from pathlib import Path

from harness import Harness

PAGE = """<!doctype html><html><body><script>
document.modelContext.registerTool({
  name: "echo", description: "Says it back.",
  inputSchema: {type: "object", properties: {text: {type: "string"}}, required: ["text"]},
  execute: async ({text}) => "echo:" + text,
});
</script></body></html>"""


async def test_a_file_page_s_tools_are_listed_and_called(
    backend_harness: Harness, tmp_path: Path
) -> None:
    page = tmp_path / "index.html"
    page.write_text(PAGE, encoding="utf-8")
    session = await backend_harness.open(page.as_uri())
    try:
        assert await session.page.evaluate("originAgentCluster") is False  # not origin-keyed
        [tool] = await session.tools()
        assert (tool.name, tool.origin) == ("echo", "null")
        outcome = await session.call("echo", {"text": "hi"})
        assert not outcome.result.is_error
        assert "echo:hi" in outcome.result.content[0].text  # type: ignore[union-attr]
    finally:
        await session.close()
