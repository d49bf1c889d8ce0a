"""A ``<form toolname>`` control's ``pattern`` is compiled by HTML with the ``v`` flag; the
harness's check of a call's arguments must take exactly the values Chromium's form takes.

The reference is Chromium's own ``executeTool()`` (a native Chromium, nothing of the harness
in the page) on a page with one form per (pattern, value); the harness, on both backends,
must run the calls Chromium's form takes and refuse the others itself, before the form is
touched (README: "a value HTML rejects is never typed into the page"). The patterns are
those the ``u`` flag (or none) reads otherwise than ``v``: set operations, nested classes,
properties of strings, ``\\q{…}``, and patterns valid under ``u`` only, which HTML ignores.
Also here: the seed dialect (``tool-name``) keeps in its schema what HTML keeps.
"""

from __future__ import annotations

import html
import json
from typing import Any

import pytest

from harness import BrowserPool, Harness
from harness.declarative.synthesis import SeedControl, control_schema
from harness.models import BackendName, CallOutcome
from tests.conftest import PlainChromium, origin_serving

# (pattern, value): each a form of its own.
CASES: list[tuple[str, str]] = [
    (r"[[a-z]--[aeiou]]+", "xyz"),  # set subtraction
    (r"[[a-z]--[aeiou]]+", "abc"),
    (r"[\d--3]+", "124"),
    (r"[\d--3]+", "3"),
    (r"[\p{L}--[a-z]]+", "ÉA"),
    (r"[\p{L}--[a-z]]+", "a"),
    (r"[\w&&\d]+", "abc"),  # intersection (under u: two ampersands)
    (r"[\w&&\d]+", "123"),
    (r"[\w&&\d]+", "&"),
    (r"[[a-z][0-9]]+", "a1"),  # nested classes
    (r"[[a-z][0-9]]+", "a1]"),
    ("\\p{RGI_Emoji}", "\U0001f600"),  # a property of strings
    ("\\p{RGI_Emoji}", "\U0001f44d\U0001f3fd"),
    ("\\p{RGI_Emoji}", "p{RGI_Emoji}"),
    (r"[\q{abc|d}]", "abc"),  # strings in a class
    (r"[\q{abc|d}]", "d"),
    (r"[\q{abc|d}]", "a"),
    (r"[(]", "x"),  # valid under u, none under v: HTML ignores it
    (r"[a-z-]", "xx"),
    (r"[\w-]+", "!"),
    (r"[a&&&b]", "x"),
    (r"[|]", "x"),
]
IGNORED = {r"[(]", r"[a-z-]", r"[\w-]+", r"[a&&&b]", r"[|]"}
"""The patterns HTML ignores (none under v): Chromium leaves them out of the schema."""

# Every submission is answered with the form data: nothing navigates.
PAGE = (
    '<!doctype html><html><head><meta charset="utf-8"><script>'
    "document.addEventListener('submit', (e) => {"
    "  e.preventDefault();"
    "  if (e.agentInvoked) e.respondWith(Promise.resolve({sent: [...new FormData(e.target)]}));"
    "}, true);</script></head><body>"
    + "".join(
        f'<form toolname="case{i}" tooldescription="Pattern {html.escape(pattern)}" '
        f'toolautosubmit><input name="v" pattern="{html.escape(pattern)}"><button>Send</button>'
        "</form>"
        for i, (pattern, _) in enumerate(CASES)
    )
    + "</body></html>"
)

# Chromium's own executeTool(), each case in turn: "ok" or the error it rejected with.
NATIVE_EXECUTE = """async (values) => {
  const tools = await document.modelContext.getTools();
  const out = [];
  for (const [i, value] of values.entries()) {
    const tool = tools.find((t) => t.name === `case${i}`);
    try {
      await document.modelContext.executeTool(tool, {v: value});
      out.push({schema: tool.inputSchema.properties.v, outcome: 'ok'});
    } catch (e) {
      out.push({schema: tool.inputSchema.properties.v, outcome: `${e.name}: ${e.message}`});
    }
  }
  return out;
}"""


def describe(i: int) -> str:
    pattern, value = CASES[i]
    return f"pattern={pattern!r} value={value!r}"


origin = origin_serving(PAGE)


@pytest.fixture(scope="module")
async def chromium(plain_chromium: PlainChromium, origin: str) -> list[dict[str, Any]]:
    """What Chromium's own WebMCP makes of each case: its schema and executeTool()'s outcome."""
    found: list[dict[str, Any]] = await plain_chromium.evaluate(
        origin + "/", NATIVE_EXECUTE, [value for _, value in CASES]
    )
    return found


def test_chromium_keeps_the_patterns_that_compile_under_v(chromium: list[dict[str, Any]]) -> None:
    # As written when it compiles under v; left out, and any value taken, when not.
    for i, seen in enumerate(chromium):
        pattern = CASES[i][0]
        if pattern in IGNORED:
            assert "pattern" not in seen["schema"] and seen["outcome"] == "ok", describe(i)
        else:
            assert seen["schema"]["pattern"] == pattern, describe(i)
    # Every kept pattern refuses one of its values here.
    refused = {CASES[i][0] for i, seen in enumerate(chromium) if seen["outcome"] != "ok"}
    assert refused == {pattern for pattern, _ in CASES} - IGNORED


def verdict(outcome: CallOutcome, value: str) -> str:
    """What became of a call: taken (the form sent the value), refused by the harness before
    the form was touched, or anything else (the form refused what was typed into it)."""
    if outcome.error_kind == "validation":
        return "refused before the form"
    if not outcome.is_error and outcome.result.structured_content == {"sent": [["v", value]]}:
        return "taken"
    return f"other: {json.dumps(outcome.agent_json(), ensure_ascii=False)[:200]}"


@pytest.mark.parametrize("backend", ["polyfill", "native"])
async def test_the_harness_takes_what_chromiums_form_takes(
    browser_pool: BrowserPool,
    origin: str,
    chromium: list[dict[str, Any]],
    backend: BackendName,
) -> None:
    expected = [
        (describe(i), "taken" if seen["outcome"] == "ok" else "refused before the form")
        for i, seen in enumerate(chromium)
    ]
    async with Harness(
        browsers=browser_pool, backend=backend, form_review="submit", call_timeout=10
    ) as harness:
        session = await harness.open(origin + "/")
        try:
            tools = {t.name: t for t in await session.tools()}
            schemas = [tools[f"case{i}"].input_schema["properties"]["v"] for i in range(len(CASES))]
            seen = []
            for i, (_, value) in enumerate(CASES):
                outcome = await session.call(f"case{i}", {"v": value})
                seen.append((describe(i), verdict(outcome, value)))
            warned = [w.message for w in session.warnings if w.code == "invalid-pattern"]
        finally:
            await session.close()
    assert seen == expected
    assert schemas == [found["schema"] for found in chromium]  # what the agent reads
    assert warned == []


@pytest.mark.parametrize(
    ("pattern", "kept"),
    [
        ("\\p{L}+", True),  # no Python regex, an HTML pattern
        (r"[[a-z]--[aeiou]]+", True),
        ("\\p{RGI_Emoji}", True),
        (r"[a-z-]", False),  # a Python regex, no HTML pattern (under v)
        (r"[\w-]+", False),
        (r"a)|(b", False),  # compiles only anchored
    ],
)
def test_the_seed_dialect_keeps_the_patterns_html_keeps(pattern: str, kept: bool) -> None:
    control = SeedControl(tag="input", type="text", name="v", attributes={"pattern": pattern})
    schema = control_schema(control)
    assert schema.get("pattern") == (f"^(?:{pattern})$" if kept else None)
