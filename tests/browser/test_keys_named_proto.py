"""A key named ``"__proto__"`` reaches the page as an own property, as Chromium hands it over.

Chromium's ``getTools()`` lists a form control named ``__proto__`` as a parameter, and its
``executeTool()`` fills it, and hands a script tool an input with an own ``"__proto__"``
key (it parses JSON). Everything the harness hands the page — a call's input, a reviewed
form's values, the user's answer to a tool's question — must keep such a key too: an object
literal or a CDP value made from the key sets the prototype instead, and the value is lost
while the call reports success.

The reference is Chromium's own ``executeTool()`` (nothing of the harness in the page).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness import BrowserPool, Harness
from harness.elicitation.answers import ScriptedAnswer, ScriptedHandler
from harness.models import BackendName
from tests.conftest import PlainChromium, origin_serving

pytestmark = pytest.mark.timeout(120)

PAGE = """<!doctype html><html><head><meta charset="utf-8"></head><body>
<form toolautosubmit toolname="save_field" tooldescription="Saves a field">
  <input name="__proto__"><input name="constructor"><button>Save</button></form>
<form toolname="review_field" tooldescription="Saves a field once reviewed">
  <input name="__proto__"><button>Save</button></form>
<script>
document.addEventListener('submit', (e) => {
  e.preventDefault();
  if (e.agentInvoked) e.respondWith(Promise.resolve({sent: [...new FormData(e.target)]}));
});
const keysOf = (o) => ({keys: Object.keys(o), own: Object.hasOwn(o, '__proto__') ? o['__proto__'] : null,
                        prototype: Object.getPrototypeOf(o) === Object.prototype});
document.modelContext.registerTool({
  name: 'echo_keys', description: 'Echoes its input keys', annotations: {readOnlyHint: true},
  inputSchema: {type: 'object', properties: {['__proto__']: {type: 'string'}, name: {type: 'string'}}},
  execute: async (input) => keysOf(input),
});
document.modelContext.registerTool({
  name: 'ask_field', description: 'Asks the user for a field', annotations: {readOnlyHint: true},
  execute: async (input, options) => {
    const answer = await options.client.requestUserInput({
      message: 'Which value?',
      requestedSchema: {type: 'object', properties: {['__proto__']: {type: 'string'}}},
    });
    return keysOf(answer.content);
  },
});
</script></body></html>"""

CALLS: dict[str, dict[str, Any]] = {
    "save_field": {"__proto__": "p", "constructor": "c"},
    "echo_keys": {"__proto__": "p", "name": "n"},
}

CHROMIUM_EXECUTE = """async ([name, text]) => {
  const tool = (await document.modelContext.getTools()).find((t) => t.name === name);
  return JSON.parse(await document.modelContext.executeTool(tool, JSON.parse(text)));
}"""


origin = origin_serving(PAGE)


@pytest.fixture(scope="module")
async def chromium(plain_chromium: PlainChromium, origin: str) -> dict[str, Any]:
    """Chromium's own executeTool() of each call, on a fresh load each."""
    return {
        name: await plain_chromium.evaluate(
            origin + "/", CHROMIUM_EXECUTE, [name, json.dumps(arguments)]
        )
        for name, arguments in CALLS.items()
    }


def test_chromium_keeps_the_key(chromium: dict[str, Any]) -> None:
    assert chromium == {
        "save_field": {"sent": [["__proto__", "p"], ["constructor", "c"]]},
        "echo_keys": {"keys": ["__proto__", "name"], "own": "p", "prototype": True},
    }


@pytest.mark.parametrize("backend", ["polyfill", "native"])
async def test_the_harness_hands_the_page_the_key(
    browser_pool: BrowserPool, origin: str, chromium: dict[str, Any], backend: BackendName
) -> None:
    answers = ScriptedHandler(
        [
            ScriptedAnswer(source="form-review", action="accept", values={"__proto__": "r"}),
            ScriptedAnswer(tool="ask_field", action="accept", values={"__proto__": "a"}),
        ]
    )
    async with Harness(browsers=browser_pool, backend=backend, call_timeout=10) as harness:
        session = await harness.open(origin + "/")
        session.elicitation = answers
        try:
            properties = (await session.tool("save_field")).input_schema["properties"]
            assert list(properties) == ["__proto__", "constructor"]
            seen = {}
            for name, arguments in CALLS.items():
                outcome = await session.call(name, arguments)
                seen[name] = outcome.result.structured_content or outcome.agent_json()
            # What the person reviewing the form changed, and the user's answer to a question.
            for name, arguments in (("review_field", {"__proto__": "p"}), ("ask_field", {})):
                outcome = await session.call(name, arguments)
                seen[name] = outcome.result.structured_content or outcome.agent_json()
        finally:
            await session.close()
    assert seen == {
        **chromium,
        "review_field": {"sent": [["__proto__", "r"]]},
        "ask_field": {"keys": ["__proto__"], "own": "a", "prototype": True},
    }
