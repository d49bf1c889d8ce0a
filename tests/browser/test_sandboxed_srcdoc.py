"""A sandboxed ``srcdoc`` iframe (``sandbox="allow-scripts"``: an opaque origin) has
``document.modelContext`` from its first script on, as in Chromium: ``registerTool()`` there
resolves with ``allow="tools *"`` and rejects NotAllowedError without it. (Found from
outside: Chromium runs sandboxed frames in a process of their own, and the init script
reached a ``srcdoc`` one only after its scripts had run: ``document.modelContext`` was
undefined at start-up in every such frame, and a registration there threw TypeError. The
harness keeps sandboxed frames in their embedder's process, where the script runs first.)"""

from __future__ import annotations

import asyncio

import pytest

from harness import Harness
from tests.conftest import serve_pages

FRAMES = 4
# Each frame tells the top what it had at start-up, a task later, and what its
# registerTool() said; half are given allow="tools *".
TOP = f"""<!doctype html><meta charset="utf-8"><title>top</title><body><script>
window.seen = [];
addEventListener("message", (e) => seen.push(e.data));
const body = `<p>x</p><script>
  const tell = (what) => parent.postMessage(what, "*");
  tell("start " + typeof document.modelContext);
  setTimeout(() => tell("task " + typeof document.modelContext), 0);
  try {{
    document.modelContext.registerTool({{name: "t", description: "d", execute: () => "ran"}})
      .then(() => tell("registered"), (e) => tell(e.name));
  }} catch (e) {{ tell("threw " + e.name); }}
<\\/script>`;
for (let i = 0; i < {FRAMES}; i++) {{
  const f = document.createElement("iframe");
  f.sandbox = "allow-scripts";
  if (i % 2 === 0) f.allow = "tools *";
  f.srcdoc = body;
  document.body.append(f);
}}
</script></body>"""

EXPECTED = sorted(
    ["start object"] * FRAMES
    + ["task object"] * FRAMES
    + ["registered"] * (FRAMES // 2)
    + ["NotAllowedError"] * (FRAMES // 2)
)


@pytest.mark.timeout(60)
async def test_a_sandboxed_srcdoc_frame_has_webmcp_from_its_first_script(
    backend_harness: Harness,
) -> None:
    async with serve_pages({"": TOP}) as origin:
        session = await backend_harness.open(origin + "/")
        try:
            seen: list[str] = []
            for _ in range(60):
                seen = await session.page.evaluate("window.seen")
                if len(seen) >= len(EXPECTED):
                    break
                await asyncio.sleep(0.1)
            assert sorted(seen) == EXPECTED
        finally:
            await session.close()
