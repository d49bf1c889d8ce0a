"""The `tools` permissions policy decides which frames may offer tools, for every kind of
tool: script tools, `<form toolname>` forms and the seed dialect's `tool-name` elements go
through one decision, inherited through the frame's ancestors as in Chromium; and a
sandboxed frame's document has the opaque origin it really has. (Found from outside: the
polyfill offered a sandboxed frame's form, and a form of a top-origin page nested inside an
ad frame without `allow="tools"`, both labelled with the top page's origin, and calling the
first submitted it.)"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from harness import Harness, Session
from harness.errors import UnknownTool
from tests.conftest import serve_pages

# A frame's page: one tool of each kind, named after the frame. Its script tool is exposed to
# the top page, so that only the policy can keep a cross-origin frame's tool from it; the
# page notes what its registerTool() said (the policy's answer, as the page sees it).
LEAF = """<!doctype html><meta charset="utf-8"><body>
<form toolname="__N___form" toolautosubmit tooldescription="A form of the __N__ frame." action="/sink___N__">
  <input name="to"><button>go</button></form>
<form tool-name="__N___seed" tool-description="A seed-dialect form of the __N__ frame." action="/sink___N__">
  <input name="q"><button>go</button></form>
<script>
  window.registered = "pending";
  document.modelContext.registerTool(
    {name: "__N___script", description: "A script tool of the __N__ frame.",
     inputSchema: {type: "object", properties: {}}, execute: () => "ran"},
    {exposedTo: ["__TOP__"]},
  ).then(() => { window.registered = "ok"; }, (error) => { window.registered = error.name; });
</script>"""

TOP = """<!doctype html><meta charset="utf-8"><title>top</title><body>
<script>
  document.modelContext.registerTool({name: "top_tool", description: "The site's own tool.",
    inputSchema: {type: "object", properties: {}}, execute: () => "top"});
</script>
<!-- Excluded by the policy: -->
<iframe sandbox="allow-scripts allow-forms" src="/ugc.html"></iframe>
<iframe src="__OTHER__/ad.html"></iframe>
<iframe src="__FAR__/ad.html"></iframe>
<iframe allow="tools 'none'" src="/same_none.html"></iframe>
<iframe allow="tools 'none'" src="/wrap_none.html"></iframe>
<!-- Allowed by the policy, but an opaque origin is no origin the top page can name: -->
<iframe sandbox="allow-scripts allow-forms" allow="tools" src="/sandboxed_allowed.html"></iframe>
<!-- Allowed: -->
<iframe src="/same.html"></iframe>
<iframe sandbox="allow-scripts allow-forms allow-same-origin" src="/sandboxed_same.html"></iframe>
<iframe allow="tools" src="__OTHER__/mid.html"></iframe>
</body>"""

# Frame (by the name its page gives its tools) → what its registerTool() says, in Chromium.
REGISTERED = {
    "ugc": "NotAllowedError",  # sandboxed (an opaque origin), no delegation
    "ad_nested": "NotAllowedError",  # the top's origin, inside a frame without allow="tools"
    "ad_far_nested": "NotAllowedError",  # the same, inside a cross-site frame
    "same_none": "NotAllowedError",  # same-origin, allow="tools 'none'"
    "none_nested": "NotAllowedError",  # inside a same-origin frame given 'none'
    "sandboxed_allowed": "ok",  # sandboxed, allow="tools": 'src' matches its opaque origin
    "same": "ok",
    "sandboxed_same": "ok",  # sandboxed with allow-same-origin: the top's origin
    "chain": "ok",  # the top's origin, inside a delegated frame that delegates on
}
KINDS = ("form", "seed", "script")
OFFERED = {"top_tool"} | {
    f"{n}_{kind}" for n in ("same", "sandboxed_same", "chain") for kind in KINDS
}


class Served(dict[str, str]):
    """Pages by path, noting every path asked for (a form submitted asks for its sink)."""

    def __init__(self, pages: dict[str, str]) -> None:
        super().__init__(pages)
        self.asked: list[str] = []

    def get(self, key: str, default: Any = None) -> Any:
        self.asked.append(key)
        return super().get(key, default)


def leaf(name: str, top: str) -> str:
    return LEAF.replace("__N__", name).replace("__TOP__", top)


def nesting(src: str) -> str:
    return f'<!doctype html><body>a frame of its own<iframe allow="tools *" src="{src}"></iframe>'


@pytest.fixture
async def pages() -> AsyncIterator[tuple[str, Served]]:
    """The top page's origin and what its server served. A second server is another origin
    of the same site (its frames share the top's process, where native's CDP sees them);
    `localhost` at the top's port is another site."""
    top_pages = Served({})
    other_pages = Served({})
    async with serve_pages(top_pages) as top, serve_pages(other_pages) as other:
        far = top.replace("127.0.0.1", "localhost")
        top_pages.update(
            {"": TOP.replace("__OTHER__", other).replace("__FAR__", far)}
            | {f"{n}.html": leaf(n, top) for n in REGISTERED if n not in ("ad_nested", "chain")}
            | {
                "inner_ad.html": leaf("ad_nested", top),
                "inner_chain.html": leaf("chain", top),
                "ad.html": nesting(f"{top}/ad_far_nested.html"),  # as FAR/ad.html
                "wrap_none.html": '<!doctype html><iframe src="/none_nested.html"></iframe>',
            }
            | {f"sink_{n}": "<!doctype html>sunk" for n in REGISTERED}
        )
        other_pages.update(
            {
                "ad.html": nesting(f"{top}/inner_ad.html"),
                "mid.html": nesting(f"{top}/inner_chain.html"),
            }
        )
        yield top, top_pages


async def registrations(session: Session) -> dict[str, Any]:
    """What each frame's registerTool() said, once every frame's policy is known."""
    said: dict[str, Any] = {}
    for _ in range(100):
        said = {}
        for frame in session.page.frames[1:]:
            name = frame.url.rsplit("/", 1)[-1].removesuffix(".html")
            name = {"inner_ad": "ad_nested", "inner_chain": "chain"}.get(name, name)
            if name in REGISTERED:
                said[name] = await frame.evaluate("window.registered")
        if len(said) == len(REGISTERED) and "pending" not in said.values():
            break
        await asyncio.sleep(0.1)
    return said


@pytest.fixture
async def opened(
    backend_harness: Harness, pages: tuple[str, Served]
) -> AsyncIterator[tuple[Session, dict[str, Any]]]:
    """The top page open, every frame's policy known: the session, and what each frame's
    registerTool() said."""
    top, _ = pages
    session = await backend_harness.open(top + "/")
    try:
        yield session, await registrations(session)
    finally:
        await session.close()


async def test_frames_the_policy_excludes_offer_no_tool_of_any_kind(
    opened: tuple[Session, dict[str, Any]], pages: tuple[str, Served]
) -> None:
    session, _ = opened
    top, served = pages
    for name in sorted(OFFERED):
        await session.wait_for_tool(name, timeout=10)
    tools = {t.name: t for t in await session.tools()}
    assert set(tools) == OFFERED
    # Each with the origin of the document it lives in: the top page's, for the same-origin
    # frames and for the page nested inside the delegated frame.
    assert {name: tool.origin for name, tool in tools.items()} == dict.fromkeys(OFFERED, top)
    assert tools["chain_form"].frame_url == top + "/inner_chain.html"

    # An excluded frame's form cannot be called, and is not submitted.
    for name in ("ugc_form", "ad_nested_form", "ad_far_nested_form", "same_none_form"):
        with pytest.raises(UnknownTool):
            await session.call(name, {"to": "attacker"})
    # An allowed one can.
    outcome = await session.call("chain_form", {"to": "friend"})
    assert not outcome.is_error, outcome
    assert [p for p in served.asked if p.startswith("sink_")] == ["sink_chain"]


async def test_each_frame_hears_the_policy_chromium_gives_it(
    opened: tuple[Session, dict[str, Any]],
) -> None:
    # The page's own view of the same decision: what its registerTool() says. A sandboxed
    # frame given allow="tools" may use the feature (its opaque origin is what 'src' names).
    assert opened[1] == REGISTERED
