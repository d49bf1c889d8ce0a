"""A same-origin iframe whose document is rewritten with ``document.open()``/``write()``/
``close()`` (the "friendly iframe" of widgets, ad slots and rich text editors) offers the
tools its written script registers, as Chromium does: ``registerTool()`` resolves, the top
document's ``getTools()`` lists them and ``executeTool()`` runs them. (Found from outside:
``document.open()`` erases every listener of the document's window, the polyfill's
cross-frame ``message`` listener among them, so the frame never heard its permissions
policy — its ``registerTool()`` never settled, or rejected NotAllowedError — or never
answered the top document's ``getTools()``.)"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from harness import Harness
from tests.conftest import serve_pages

# Writes a script that registers the tool NAME into the iframe `f`'s document.
WRITE = """(f, NAME) => { const d = f.contentDocument; d.open();
  d.write('<script>document.modelContext.registerTool({name: "' + NAME + '", description: "d",' +
          ' execute: () => "' + NAME + ' ran"}).then(() => window.ok = "resolved",' +
          ' e => window.ok = e.name + ": " + e.message)<\\/script><form></form>');
  d.close(); }"""

TOP = f"""<!doctype html><meta charset="utf-8"><title>top</title><body><script>
const write = {WRITE};
window.frames_ = {{}};
// An about:blank iframe, written while this page parses.
{{ const f = document.createElement("iframe"); document.body.append(f);
  write(f, "written_at_once"); frames_.written_at_once = f; }}
// An about:blank iframe, written once this page has loaded.
{{ const f = document.createElement("iframe"); document.body.append(f);
  frames_.written_later = f;
  addEventListener("load", () => setTimeout(() => write(f, "written_later"), 50)); }}
// A same-origin page, loaded, then rewritten.
{{ const f = document.createElement("iframe"); f.src = "/child"; document.body.append(f);
  frames_.rewritten = f; f.onload = () => {{ f.onload = null; write(f, "rewritten"); }}; }}
</script></body>"""

CHILD = "<!doctype html><body>child</body>"
NAMES = ("written_at_once", "written_later", "rewritten")

# What each written document's registerTool() said, and what the top document's own
# getTools()/executeTool() do with its tool.
SEEN = """async (names) => {
  const listed = await document.modelContext.getTools();
  const seen = {};
  for (const name of names) {
    const tool = listed.find((t) => t.name === name);
    seen[name] = [
      frames_[name].contentWindow.ok,
      tool ? await document.modelContext.executeTool(tool, {}).catch((e) => e.name) : "not listed",
    ];
  }
  return seen;
}"""


@pytest.mark.timeout(60)
async def test_a_rewritten_frame_offers_its_tools_to_the_top_and_the_harness(
    backend_harness: Harness,
) -> None:
    async with serve_pages({"": TOP, "child": CHILD}) as origin:
        session = await backend_harness.open(origin + "/")
        try:
            for name in NAMES:
                await session.wait_for_tool(name, timeout=10)
            seen: dict[str, Any] = {}
            for _ in range(40):
                seen = await session.page.evaluate(SEEN, list(NAMES))
                if all(said[0] is not None for said in seen.values()):
                    break
                await asyncio.sleep(0.1)
            assert seen == {name: ["resolved", f"{name} ran"] for name in NAMES}
            for name in NAMES:
                outcome = await session.call(name, {})
                assert not outcome.is_error, outcome
        finally:
            await session.close()
