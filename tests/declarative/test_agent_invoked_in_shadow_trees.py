"""``SubmitEvent.agentInvoked`` is true for every listener of a tool's submission, wherever
the form lives: Chromium marks the event before it is dispatched. A form's submit event does
not leave its tree, so in a shadow tree the first listener is the page's own capture listener
on the root when the page added it before the polyfill found the root — a root the parser
made (``<template shadowrootmode>``, ``setHTMLUnsafe()``), nested or not. That listener must
see ``agentInvoked`` true and may answer with ``respondWith()``.

The reference is Chromium's own ``executeTool()`` (nothing of the harness in the page); the
harness must give the same answers on both backends.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from harness import BrowserPool, Harness
from harness.elicitation.base import ElicitationRequest, ElicitationResult
from harness.models import BackendName, CallOutcome
from tests.conftest import PlainChromium, origin_serving

pytestmark = pytest.mark.timeout(120)


def form(name: str, *, autosubmit: bool = True) -> str:
    auto = " toolautosubmit" if autosubmit else ""
    return (
        f'<form toolname="{name}" tooldescription="Subscribe ({name})"{auto}>'
        '<input name="email"><button>Send</button></form>'
    )


# The page's listener: what it saw, and respondWith() only for the agent's submission.
ANSWER = """(e) => {
  e.preventDefault();
  if (e.agentInvoked) e.respondWith(Promise.resolve({
    agent: true, email: new FormData(e.target).get('email')}));
}"""

PAGE = f"""<!doctype html><html><head><meta charset="utf-8"></head><body>
<div id="parsed"><template shadowrootmode="open">{form("parsed")}</template></div>
<div id="outer"><template shadowrootmode="open"><p>outer</p>
  <div id="inner"><template shadowrootmode="open">{form("nested")}</template></div>
</template></div>
<div id="waits"><template shadowrootmode="open">{form("waits", autosubmit=False)}</template></div>
<div id="stopped"><template shadowrootmode="open">{form("stopped")}</template></div>
<div id="late"></div>
<div id="attached"></div>
{form("in_document")}
<script>
const answer = {ANSWER};
document.getElementById('parsed').shadowRoot.addEventListener('submit', answer, true);
document.getElementById('outer').shadowRoot.getElementById('inner').shadowRoot
  .addEventListener('submit', answer, true);
document.getElementById('waits').shadowRoot.addEventListener('submit', answer, true);
// A listener that never looks at agentInvoked, and stops the event: Chromium's call fails.
document.getElementById('stopped').shadowRoot.addEventListener('submit', (e) => {{
  e.preventDefault();
  e.stopImmediatePropagation();
}}, true);
// A root the parser makes for setHTMLUnsafe(), its listener added in the same task.
const late = document.getElementById('late');
late.setHTMLUnsafe('<div><template shadowrootmode="open">{form("unsafe")}</template></div>');
late.firstElementChild.shadowRoot.addEventListener('submit', answer, true);
const root = document.getElementById('attached').attachShadow({{mode: 'open'}});
root.innerHTML = '{form("attached")}';
root.addEventListener('submit', answer, true);
window.addEventListener('submit', answer, true);
</script></body></html>"""

AUTOSUBMITTED = ["parsed", "nested", "unsafe", "attached", "in_document", "stopped"]

# The form of `name` in whatever tree it is.
FIND_FORM = """(name) => {
  const search = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (el.localName === 'form' && el.getAttribute('toolname') === name) return el;
      if (el.shadowRoot) { const found = search(el.shadowRoot); if (found) return found; }
    }
    return null;
  };
  return search(document);
}"""

# Chromium's own executeTool() of each autosubmitted form, then of the form that waits for
# its user (the page submits it, as a person would).
CHROMIUM_EXECUTE = f"""async (names) => {{
  const find = {FIND_FORM};
  const tools = await document.modelContext.getTools();
  const run = (name) => document.modelContext.executeTool(
    tools.find((t) => t.name === name), {{email: name + '@example.org'}});
  const out = {{}};
  for (const name of names) {{
    try {{ out[name] = JSON.parse(await run(name)); }} catch (e) {{ out[name] = e.name + ': ' + e.message; }}
  }}
  const waiting = run('waits');
  await new Promise((r) => setTimeout(r, 100));
  find('waits').requestSubmit();
  try {{ out.waits = JSON.parse(await waiting); }} catch (e) {{ out.waits = e.name + ': ' + e.message; }}
  return out;
}}"""


class Silent:
    """A person who reviews nothing: the page submits the waiting form itself."""

    async def elicit(self, request: ElicitationRequest) -> ElicitationResult:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


origin = origin_serving(PAGE)


@pytest.fixture(scope="module")
async def chromium(plain_chromium: PlainChromium, origin: str) -> dict[str, Any]:
    found: dict[str, Any] = await plain_chromium.evaluate(
        origin + "/", CHROMIUM_EXECUTE, AUTOSUBMITTED
    )
    return found


STOPPED = (
    "UnknownError: The site has a programming error: it called preventDefault() on the "
    "'submit' event, without also calling respondWith() with the tool result"
)


def test_chromium_marks_the_submission_wherever_the_form_is(chromium: dict[str, Any]) -> None:
    expected: dict[str, Any] = {
        name: {"agent": True, "email": f"{name}@example.org"} for name in [*AUTOSUBMITTED, "waits"]
    }
    expected["stopped"] = STOPPED
    assert chromium == expected


def outcome_of(outcome: CallOutcome) -> Any:
    """What the page answered, or the error as Chromium's executeTool() names it."""
    if not outcome.is_error:
        return outcome.result.structured_content
    text = outcome.result.content[0].text  # type: ignore[union-attr]
    return text.split("Tool error: ", 1)[-1].split("\n</untrusted-data>")[0]


@pytest.mark.parametrize("backend", ["polyfill", "native"])
async def test_the_page_sees_agent_invoked_as_in_chromium(
    browser_pool: BrowserPool, origin: str, chromium: dict[str, Any], backend: BackendName
) -> None:
    async with Harness(
        browsers=browser_pool, backend=backend, form_review="ask", call_timeout=10
    ) as harness:
        session = await harness.open(origin + "/")
        session.elicitation = Silent()
        try:
            seen: dict[str, Any] = {}
            for name in AUTOSUBMITTED:
                outcome = await session.call(name, {"email": f"{name}@example.org"})
                seen[name] = outcome_of(outcome)
            waiting = asyncio.ensure_future(session.call("waits", {"email": "waits@example.org"}))
            await asyncio.sleep(0.3)  # filled, waiting for its user
            form = await session.page.evaluate_handle(FIND_FORM, "waits")
            await form.evaluate("(f) => f.requestSubmit()")
            outcome = await waiting
            seen["waits"] = outcome_of(outcome)
        finally:
            await session.close()
    assert seen == chromium
