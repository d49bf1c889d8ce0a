"""The harness fills a ``<form toolname>`` exactly, or not at all: a value the form would
change as it is set (its value sanitization) is refused before anything is typed in.

Chromium's own fill takes such a value and the call reports success with another one
submitted: a range rounds a value off its step to the nearest step (``min=1 step=3``: 8
becomes 7 — its schema has no ``multipleOf``, the step base 1 not being a multiple of 3), a
one-line field drops line breaks ("a\\nb" becomes "ab"). README: the value the agent chose is
the one submitted. Re-spellings of the same value (the spaces around an email address) are
no change. The reference is Chromium's own ``executeTool()``, nothing of the harness in the
page; the harness must give the same on both backends.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness import BrowserPool, Harness
from harness.elicitation.answers import ScriptedAnswer, ScriptedHandler
from harness.models import BackendName, CallOutcome
from tests.conftest import PlainChromium, origin_serving

pytestmark = pytest.mark.timeout(120)

PAGE = """<!doctype html><html><head><meta charset="utf-8"></head><body>
<form toolautosubmit toolname="order_boxes" tooldescription="Order boxes (sold in packs)">
  <label>Boxes <input type="range" name="qty" min="1" max="10" step="3" value="1"></label></form>
<form toolautosubmit toolname="pick_level" tooldescription="Pick a level">
  <input type="range" name="level" max="50" step="10" value="5"></form>
<form toolautosubmit toolname="send_note" tooldescription="Send a note">
  <input name="title"><textarea name="body"></textarea></form>
<form toolautosubmit toolname="set_pin" tooldescription="Set a PIN">
  <input type="password" name="pin"></form>
<form toolautosubmit toolname="subscribe" tooldescription="Subscribe">
  <input type="email" name="email"></form>
<form toolname="review_boxes" tooldescription="Order boxes once reviewed">
  <input type="range" name="qty" min="1" max="10" step="3" value="1"><button>Order</button></form>
<script>
window.filled = [];
document.addEventListener('input', (e) => window.filled.push(e.target.name), true);
document.addEventListener('submit', (e) => {
  e.preventDefault();
  if (e.agentInvoked) e.respondWith(Promise.resolve({sent: [...new FormData(e.target)]}));
}, true);
</script></body></html>"""

# (tool, arguments, what Chromium's form sends, or None where it sends the same as given)
CALLS: list[tuple[str, dict[str, Any], list[list[str]] | None]] = [
    ("order_boxes", {"qty": 8}, [["qty", "7"]]),
    ("order_boxes", {"qty": 7}, None),
    ("order_boxes", {"qty": 10}, None),
    ("pick_level", {"level": 20}, [["level", "25"]]),  # half way: up, as HTML says
    ("send_note", {"title": "a\nb"}, [["title", "ab"], ["body", ""]]),
    ("send_note", {"title": "a b", "body": "line 1\nline 2"}, None),
    ("set_pin", {"pin": "12\n34"}, [["pin", "1234"]]),
    ("subscribe", {"email": " a@b.example "}, [["email", "a@b.example"]]),
]

REFUSED = {
    ("order_boxes", 8): (
        "Invalid value 8 for parameter qty: the form's range control would change it to 7 "
        "(it takes steps of 3 from 1, between 1 and 10); the nearest values it takes are 7 "
        "and 10. Nothing was filled."
    ),
    ("pick_level", 20): (
        "Invalid value 20 for parameter level: the form's range control would change it to "
        "25 (it takes steps of 10 from 5, between 0 and 50); the nearest values it takes are "
        "15 and 25. Nothing was filled."
    ),
    ("send_note", "a\nb"): (
        'Invalid value "a\\nb" for parameter title: the form\'s one-line field would change '
        'it to "ab": it drops line breaks. Send the value on one line. Nothing was filled.'
    ),
    ("set_pin", "12\n34"): (  # a password is not repeated
        "Invalid value for parameter pin: the form's one-line field would change it: it drops "
        "line breaks. Send the value on one line. Nothing was filled."
    ),
}

CHROMIUM_EXECUTE = """async ([name, text]) => {
  const tool = (await document.modelContext.getTools()).find((t) => t.name === name);
  return JSON.parse(await document.modelContext.executeTool(tool, JSON.parse(text)));
}"""


def key(tool: str, arguments: dict[str, Any]) -> tuple[str, Any]:
    return tool, next(iter(arguments.values()))


origin = origin_serving(PAGE)


@pytest.fixture(scope="module")
async def chromium(plain_chromium: PlainChromium, origin: str) -> list[Any]:
    """What Chromium's own executeTool() makes the form send, each call on a fresh load."""
    return [
        await plain_chromium.evaluate(origin + "/", CHROMIUM_EXECUTE, [tool, json.dumps(arguments)])
        for tool, arguments, _ in CALLS
    ]


def test_chromium_submits_another_value_than_it_was_given(chromium: list[Any]) -> None:
    for (tool, arguments, changed), seen in zip(CALLS, chromium, strict=True):
        given = [[name, str(value)] for name, value in arguments.items()]
        if tool == "send_note" and "body" not in arguments:
            given.append(["body", ""])
        assert seen == {"sent": changed if changed is not None else given}, (tool, arguments)


def what_happened(outcome: CallOutcome) -> Any:
    if outcome.is_error:
        text = outcome.result.content[0].text  # type: ignore[union-attr]
        return text.split("Tool error: UnknownError: ", 1)[-1].split("\n</untrusted-data>")[0]
    return outcome.result.structured_content


@pytest.mark.parametrize("backend", ["polyfill", "native"])
async def test_the_harness_refuses_what_the_form_would_change(
    browser_pool: BrowserPool, origin: str, chromium: list[Any], backend: BackendName
) -> None:
    expected = [
        REFUSED.get(key(tool, arguments), seen)
        for (tool, arguments, _), seen in zip(CALLS, chromium, strict=True)
    ]
    async with Harness(browsers=browser_pool, backend=backend, call_timeout=10) as harness:
        session = await harness.open(origin + "/")
        session.elicitation = ScriptedHandler(
            [ScriptedAnswer(source="form-review", action="accept", values={"qty": 8})]
        )
        try:
            seen = []
            untouched = []
            for tool, arguments, _ in CALLS:
                await session.navigate(origin + "/")
                outcome = await session.call(tool, arguments)
                seen.append(what_happened(outcome))
                if outcome.is_error:  # nothing typed in: no input event, the value as it was
                    untouched.append(
                        await session.page.evaluate(
                            "(name) => [window.filled, document.querySelector("
                            "`[name=${name}]`).value]",
                            next(iter(arguments)),
                        )
                    )
            # The person reviewing the form changes the range to a value it would round.
            reviewed = await session.call("review_boxes", {"qty": 4})
        finally:
            await session.close()
    assert seen == expected
    assert untouched == [[[], "1"], [[], "5"], [[], ""], [[], ""]]
    assert reviewed.is_error and reviewed.error_kind == "cancelled", reviewed.agent_json()
    text = reviewed.result.content[0].text  # type: ignore[union-attr]
    assert "the reviewed form could not be submitted: Invalid value 8 for parameter qty: " in text
