"""The page API as Chromium's own shows it, where a page can tell: how often a dictionary is
read, which exception comes back, the words of a message, what a function's source says.

Each test runs the same page script in plain Chromium with its native WebMCP (nothing
injected: the reference) and under the harness, on the polyfill and on the native layer,
and asserts the harness gives what Chromium gives.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from playwright.async_api import Browser, Page, async_playwright

from harness.browser.backends.snapshots import annotations_as_meant, read_listing
from harness.browser.injection import ChannelKeys, Mode, PageChannel
from harness.browser.launch import launch_flags
from tests.conftest import PlainChromium, serve_pages

MODES: tuple[Mode, ...] = ("polyfill", "native")
BLANK = "<!doctype html><body>p</body>"


class Pages:
    """Plain native Chromium's page, and the harness's page on each backend."""

    def __init__(self, origin: str, chromium: Page, harnessed: dict[Mode, Page]) -> None:
        self.origin = origin
        self.chromium = chromium
        self.harnessed = harnessed
        self.channels: dict[Mode, PageChannel] = {}

    async def both(self, mode: Mode, script: str, arg: Any = None) -> tuple[Any, Any]:
        """What `script` gives on a fresh blank page in Chromium, and under the harness."""
        answers = []
        for page in (self.chromium, self.harnessed[mode]):
            await page.goto(self.origin + "/")
            answers.append(await page.evaluate(script, arg))
        return answers[0], answers[1]


@pytest.fixture(scope="module")
async def pages(chromium_path: str, plain_chromium: PlainChromium) -> AsyncIterator[Pages]:
    async with (
        serve_pages({"": BLANK}) as origin,
        plain_chromium.page() as chromium,
        async_playwright() as playwright,
    ):
        browsers: dict[Mode, Browser] = {
            mode: await playwright.chromium.launch(
                executable_path=chromium_path, args=launch_flags(mode)
            )
            for mode in MODES
        }
        try:
            harnessed: dict[Mode, Page] = {}
            channels: dict[Mode, PageChannel] = {}
            for mode in MODES:
                context = await browsers[mode].new_context()
                page = await context.new_page()
                channels[mode] = PageChannel(ChannelKeys(), mode)
                await channels[mode].install(context, page, lambda frame, message: None)
                harnessed[mode] = page
            result = Pages(origin, chromium, harnessed)
            result.channels = channels
            yield result
        finally:
            for browser in browsers.values():
                await browser.close()


# -- annotations: one conversion, one set of annotations everywhere ----------------------------

ANNOTATIONS_JS = """async () => {
  const reads = {};
  const counted = (key, ...answers) => ({enumerable: true, get() {
    reads[key] = (reads[key] || 0) + 1;
    return answers[Math.min(reads[key], answers.length) - 1];
  }});
  const annotations = {};
  // Each answer differs from the one before: a second read would show.
  Object.defineProperty(annotations, 'readOnlyHint', counted('readOnlyHint', false, true));
  Object.defineProperty(annotations, 'untrustedContentHint', counted('untrustedContentHint', true, false));
  Object.defineProperty(annotations, 'sensitiveHint', counted('sensitiveHint', true, false));
  await document.modelContext.registerTool(
      {name: 'delete_all', description: 'd', annotations, execute: () => 'ran'});
  const [tool] = await document.modelContext.getTools();
  return {reads, registered: tool.annotations};
}"""


@pytest.mark.parametrize("mode", MODES)
async def test_annotations_are_read_once_and_the_catalog_holds_what_the_browser_registered(
    pages: Pages, mode: Mode
) -> None:
    chromium, harnessed = await pages.both(mode, ANNOTATIONS_JS)
    assert chromium["reads"] == {"readOnlyHint": 1, "untrustedContentHint": 1}
    assert chromium["registered"] == {
        "consequentialHint": False,
        "debugging": False,
        "readOnlyHint": False,
        "untrustedContentHint": True,
    }
    # The seeds' sensitiveHint is the harness's to read: once, as the spec's members are.
    assert harnessed["reads"] == {**chromium["reads"], "sensitiveHint": 1}
    assert harnessed["registered"] == chromium["registered"]
    page = pages.harnessed[mode]
    listing = read_listing(await pages.channels[mode].command(page.main_frame, {"op": "list"}))
    assert listing is not None
    [snapshot] = listing["tools"]
    catalog, _ = annotations_as_meant(snapshot["annotations"])
    assert catalog == {"readOnlyHint": False, "untrustedContentHint": True, "sensitiveHint": True}


STRING_HINT_JS = """async () => {
  await document.modelContext.registerTool({name: 'a', description: 'd',
      annotations: {readOnlyHint: 'false', untrustedContentHint: ''}, execute: () => 1});
  return (await document.modelContext.getTools())[0].annotations;
}"""


@pytest.mark.parametrize("mode", MODES)
async def test_a_hint_written_as_a_string_is_read_as_the_browser_registered_it(
    pages: Pages, mode: Mode
) -> None:
    chromium, harnessed = await pages.both(mode, STRING_HINT_JS)
    assert chromium["readOnlyHint"] is True and chromium["untrustedContentHint"] is False
    assert harnessed == chromium
    page = pages.harnessed[mode]
    listing = read_listing(await pages.channels[mode].command(page.main_frame, {"op": "list"}))
    assert listing is not None
    catalog, readings = annotations_as_meant(listing["tools"][0]["annotations"])
    assert catalog == {"readOnlyHint": True, "untrustedContentHint": False}
    assert len(readings) == 2 and "the browser reads it as true" in readings[0]


# -- exceptions: the page's own come back as they are -------------------------------------------

SERIALIZATION_CASES = {
    "schema toJSON": "mc.registerTool({name: 'a', description: 'd', "
    "inputSchema: {toJSON() { throw mine; }}, execute() {}})",
    "schema getter": "mc.registerTool({name: 'b', description: 'd', "
    "inputSchema: {type: 'object', get properties() { throw mine; }}, execute() {}})",
    "schema proxy": "mc.registerTool({name: 'c', description: 'd', "
    "inputSchema: new Proxy({}, {ownKeys() { throw mine; }}), execute() {}})",
    "schema TypeError of the page's code": "mc.registerTool({name: 'd', description: 'd', "
    "inputSchema: {toJSON() { return null.x; }}, execute() {}})",
    "schema cycle": "mc.registerTool({name: 'e', description: 'd', inputSchema: cyclic, "
    "execute() {}})",
    "input toJSON": "mc.registerTool({name: 'f', description: 'd', execute: () => 1}).then("
    "async () => mc.executeTool((await mc.getTools()).find((t) => t.name === 'f'), "
    "{toJSON() { throw mine; }}))",
    "input getter": "mc.registerTool({name: 'g', description: 'd', execute: () => 1}).then("
    "async () => mc.executeTool((await mc.getTools()).find((t) => t.name === 'g'), "
    "{get a() { throw mine; }}))",
    "input BigInt": "mc.registerTool({name: 'h', description: 'd', execute: () => 1}).then("
    "async () => mc.executeTool((await mc.getTools()).find((t) => t.name === 'h'), {a: 1n}))",
}

SERIALIZATION_JS = """async (cases) => {
  const mc = document.modelContext;
  const mine = new RangeError('mine');
  const cyclic = {}; cyclic.self = cyclic;
  const out = {};
  for (const [label, expression] of Object.entries(cases)) {
    try { await eval(expression); out[label] = 'resolved'; }
    catch (e) { out[label] = e === mine ? 'the page\\'s own' : `${e.constructor.name}: ${e.message}`; }
  }
  return out;
}"""


@pytest.mark.parametrize("mode", MODES)
async def test_an_exception_the_pages_code_throws_while_serializing_comes_back_as_it_is(
    pages: Pages, mode: Mode
) -> None:
    chromium, harnessed = await pages.both(mode, SERIALIZATION_JS, SERIALIZATION_CASES)
    for label in ("schema toJSON", "schema getter", "schema proxy", "input toJSON"):
        assert chromium[label] == "the page's own", label
    assert chromium["schema TypeError of the page's code"] == (
        "TypeError: Cannot read properties of null (reading 'x')"
    )
    assert chromium["input BigInt"] == (
        "TypeError: Failed to execute 'executeTool' on 'ModelContext': "
        "Do not know how to serialize a BigInt"
    )
    assert chromium["schema cycle"].startswith(
        "TypeError: Failed to execute 'registerTool' on 'ModelContext': "
        "Converting circular structure to JSON"
    )
    assert harnessed == chromium


# -- messages ----------------------------------------------------------------------------------

MESSAGES_JS = """async () => {
  const out = {};
  const frame = document.createElement('iframe');
  document.body.append(frame);
  const detached = frame.contentDocument.modelContext;
  frame.remove();
  const attempts = {
    detachedRegister: () => detached.registerTool({name: 'x', description: 'd', execute() {}}),
    detachedGetTools: () => detached.getTools(),
    symbolName: () => document.modelContext.registerTool(
        {name: Symbol('x'), description: 'd', execute() {}}),
    symbolDescription: () => document.modelContext.registerTool(
        {name: 'x', description: Symbol('x'), execute() {}}),
    symbolTitle: () => document.modelContext.registerTool(
        {name: 'x', title: Symbol('x'), description: 'd', execute() {}}),
  };
  for (const [label, attempt] of Object.entries(attempts)) {
    try { await attempt(); out[label] = 'resolved'; }
    catch (e) { out[label] = `${e.name}: ${e.message}`; }
  }
  return out;
}"""


@pytest.mark.parametrize("mode", MODES)
async def test_messages_for_a_detached_document_and_a_symbol_are_chromiums(
    pages: Pages, mode: Mode
) -> None:
    chromium, harnessed = await pages.both(mode, MESSAGES_JS)
    prefix = "TypeError: Failed to execute 'registerTool' on 'ModelContext': "
    assert chromium == {
        "detachedRegister": "InvalidStateError: The document is not active.",
        "detachedGetTools": "InvalidStateError: The document is not active.",
        **{
            f"symbol{member.title()}": f"{prefix}Failed to read the '{member}' property from "
            "'ModelContextTool': Cannot convert a Symbol value to a string"
            for member in ("name", "description", "title")
        },
    }
    assert harnessed == chromium


# -- Function.prototype.toString ----------------------------------------------------------------

SOURCES_JS = """() => {
  const toString = Function.prototype.toString;
  const P = ModelContext.prototype;
  const accessor = (object, key) => Object.getOwnPropertyDescriptor(object, key);
  const functions = {
    'get modelContext': accessor(Document.prototype, 'modelContext').get,
    ModelContext, registerTool: P.registerTool, getTools: P.getTools,
    executeTool: P.executeTool,
    'get ontoolchange': accessor(P, 'ontoolchange').get,
    'set ontoolactivated': accessor(P, 'ontoolactivated').set,
    ToolActivatedEvent, ToolCancelEvent,
    'get toolName': accessor(ToolCancelEvent.prototype, 'toolName').get,
    toString,
  };
  const out = {};
  for (const [label, fn] of Object.entries(functions)) {
    out[label] = [toString.call(fn), fn.name, String(fn)];
  }
  return out;
}"""


@pytest.mark.parametrize("mode", MODES)
async def test_the_apis_functions_read_as_chromiums_native_code(pages: Pages, mode: Mode) -> None:
    chromium, harnessed = await pages.both(mode, SOURCES_JS)
    for label, (text, name, _) in chromium.items():
        assert text == f"function {label}() {{ [native code] }}" and name == label, label
    assert harnessed == chromium


TAMPER_JS = """async () => {
  const toString = Function.prototype.toString;
  const registerTool = ModelContext.prototype.registerTool;
  const out = {};
  // The page's own functions and other built-ins answer as before.
  out.own = toString.call(function mine(a) { return a + 1; /* kept */ });
  out.ownClass = String(class Thing { m() {} });
  out.builtin = toString.call(Math.max);
  try { toString.call({}); } catch (e) { out.notAFunction = `${e.constructor.name}: ${e.message}`; }
  const descriptor = Object.getOwnPropertyDescriptor(Function.prototype, 'toString');
  out.descriptor = [descriptor.writable, descriptor.enumerable, descriptor.configurable,
                    toString.length, 'prototype' in toString];
  // Another same-origin realm's toString: the same answer for this realm's functions.
  const frame = document.createElement('iframe');
  document.body.append(frame);
  await new Promise((resolve) => setTimeout(resolve, 50));
  out.otherRealm = frame.contentWindow.Function.prototype.toString.call(registerTool);
  // A page that renames the function, or replaces or deletes toString, learns nothing more.
  Object.defineProperty(registerTool, 'name', {value: 'renamed'});
  out.renamed = toString.call(registerTool);
  Function.prototype.toString = function () { return 'replaced'; };
  out.replaced = String(registerTool);
  out.savedAfterReplace = toString.call(registerTool);
  delete Function.prototype.toString;
  out.deleted = Object.prototype.toString.call(registerTool);
  Function.prototype.toString = toString;
  out.bound = toString.call(registerTool.bind(null));
  out.proxied = toString.call(new Proxy(registerTool, {}));
  return out;
}"""


@pytest.mark.parametrize("mode", MODES)
async def test_a_page_cannot_undo_the_native_reading_and_its_own_functions_are_untouched(
    pages: Pages, mode: Mode
) -> None:
    chromium, harnessed = await pages.both(mode, TAMPER_JS)
    assert chromium["own"] == "function mine(a) { return a + 1; /* kept */ }"
    assert chromium["otherRealm"] == "function registerTool() { [native code] }"
    assert chromium["savedAfterReplace"] == "function registerTool() { [native code] }"
    assert harnessed == chromium
