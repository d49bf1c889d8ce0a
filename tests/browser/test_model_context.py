"""`document.modelContext`: the polyfill, and the native layer on Chromium's own WebMCP.

Every behavioural test runs twice with the same assertions: once against the polyfill
(Chromium launched without WebMCP) and once against Chromium's native implementation with
`native_layer.js` on top. Chromium is the reference: where the two differ on purpose, the
test asserts each side's behaviour explicitly. The channel tests check that the private
channel to the harness stays private on a page that patches built-ins after load.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from playwright.async_api import Browser, BrowserContext, Frame, Page, async_playwright

from harness.browser.backends.snapshots import read_listing
from harness.browser.injection import ChannelKeys, Mode, PageChannel
from harness.browser.launch import launch_flags
from tests.conftest import CHROMIUM_FAULT, PageServer, replace_crashed, webmcp_answers

MODES: tuple[Mode, ...] = ("polyfill", "native")
UNKNOWN_MESSAGE = "The operation failed for an unknown transient reason (e.g. out of memory)."


@dataclass
class Harnessed:
    """A page in a context with the injected JS and its channel, and what the page sent."""

    mode: Mode
    server: PageServer
    context: BrowserContext
    page: Page
    channel: PageChannel
    messages: list[tuple[Frame, dict[str, Any]]] = field(default_factory=list)
    states: list[dict[str, Any]] = field(default_factory=list)  # invoke answers' `state`

    def on_message(self, frame: Frame, message: dict[str, Any]) -> None:
        self.messages.append((frame, message))

    async def goto(self, name: str) -> None:
        """Load a test page; what earlier documents sent is forgotten."""
        self.messages.clear()
        await self.page.goto(self.server.url(name))

    async def command(self, command: dict[str, Any], frame: Frame | None = None) -> Any:
        """The entry point's answer; an `invoke` answer's `state` (CHANNEL.md "State
        versions", tested on its own) is kept in :attr:`states` instead."""
        answer = await self.channel.command(frame or self.page.main_frame, command)
        if command.get("op") == "invoke" and isinstance(answer, dict) and "state" in answer:
            self.states.append(answer.pop("state"))
        return answer

    async def listed(self, frame: Frame | None = None) -> dict[str, dict[str, Any]]:
        """The frame's tool snapshots from the `list` op, by name."""
        answer = read_listing(await self.command({"op": "list"}, frame))
        assert answer is not None
        return {tool["name"]: tool for tool in answer["tools"]}

    def events(self) -> list[tuple[str, str, Any]]:
        return [
            (m["event"], m["name"], m["callId"]) for _, m in self.messages if m["type"] == "event"
        ]

    def last_snapshot(self, frame: Frame) -> list[dict[str, Any]] | None:
        for sender, message in reversed(self.messages):
            if sender == frame and message["type"] == "tools":
                return [json.loads(text) for text in message["tools"]]
        return None


async def eventually(check: Callable[[], Any], timeout: float = 5.0) -> Any:
    """Poll `check` (sync or async) until it returns something truthy."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        result = check()
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return result
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)


@pytest.fixture(scope="module")
async def browsers(chromium_path: str) -> AsyncIterator[dict[Mode, Browser]]:
    """One Chromium without WebMCP (polyfill) and one with Chromium's own (native)."""
    playwright = await async_playwright().start()
    launched: dict[Mode, Browser] = {}
    try:
        launched["polyfill"] = await playwright.chromium.launch(
            executable_path=chromium_path, args=launch_flags("polyfill")
        )
        launched["native"] = await playwright.chromium.launch(
            executable_path=chromium_path, args=launch_flags("native")
        )
        yield launched
    finally:
        for browser in launched.values():
            await browser.close()
        await playwright.stop()


async def _harnessed(mode: Mode, browser: Browser, server: PageServer) -> Harnessed:
    context = await browser.new_context()
    channel = PageChannel(ChannelKeys(), mode, report_events=True)
    harnessed = Harnessed(mode, server, context, await context.new_page(), channel)
    await channel.install(context, harnessed.page, harnessed.on_message)
    return harnessed


@pytest.fixture(scope="module")
async def module_pages(
    browsers: dict[Mode, Browser], page_server: PageServer
) -> AsyncIterator[dict[Mode, Harnessed]]:
    """One harnessed page per mode for the module; each test navigates it afresh."""
    pages = {mode: await _harnessed(mode, browsers[mode], page_server) for mode in MODES}
    yield pages
    for harnessed in pages.values():
        await harnessed.context.close()


@pytest.fixture
async def harnessed_pages(
    module_pages: dict[Mode, Harnessed], browsers: dict[Mode, Browser], page_server: PageServer
) -> dict[Mode, Harnessed]:
    """The module's pages, a crashed one replaced first (tests.conftest.replace_crashed)."""
    return await replace_crashed(
        module_pages, lambda mode: _harnessed(mode, browsers[mode], page_server)
    )


@pytest.fixture(params=MODES)
def mc(request: pytest.FixtureRequest, harnessed_pages: dict[Mode, Harnessed]) -> Harnessed:
    """The harnessed page of one mode (every test using it runs once per mode)."""
    return harnessed_pages[request.param]


@pytest.fixture
def polyfill_mc(harnessed_pages: dict[Mode, Harnessed]) -> Harnessed:
    """The harnessed page on the polyfill."""
    return harnessed_pages["polyfill"]


@pytest.fixture
def native_mc(harnessed_pages: dict[Mode, Harnessed]) -> Harnessed:
    """The harnessed page on Chromium's native WebMCP."""
    return harnessed_pages["native"]


async def test_the_mode_decides_which_implementation_serves_the_page(mc: Harnessed) -> None:
    await mc.goto("mc_blank.html")
    shape = await mc.page.evaluate(
        """() => ({
            tag: String(document.modelContext),
            same: document.modelContext === document.modelContext,
            alias: navigator.modelContext === document.modelContext,
            proto: Object.getOwnPropertyNames(ModelContext.prototype).sort(),
            parent: Object.getPrototypeOf(ModelContext.prototype) === EventTarget.prototype,
            lengths: ['registerTool', 'getTools', 'executeTool']
                .map((n) => document.modelContext[n].length),
            illegal: (() => { try { new ModelContext(); } catch (e) { return e.name; } })(),
        })"""
    )
    assert shape == {
        "tag": "[object ModelContext]",
        "same": True,
        "alias": True,
        "proto": sorted(
            [
                "constructor",
                "registerTool",
                "getTools",
                "executeTool",
                "ontoolchange",
                "ontoolactivated",
                "ontoolcancel",
                "unregisterTool",
                "provideContext",
                "clearContext",
            ]
        ),
        "parent": True,
        "lengths": [1, 0, 1],
        "illegal": "TypeError",
    }
    listing = read_listing(await mc.command({"op": "list"}))
    assert listing is not None and listing["native"] is (mc.mode == "native")


REGISTRATION_ERRORS_JS = """async () => {
  const mc = document.modelContext;
  const ex = async () => 1;
  const cyclic = {}; cyclic.self = cyclic;
  const reason = new Error('the reason');
  const aborted = () => AbortSignal.abort(reason);
  const cases = {
    ok: [{name: 'a', description: 'd', execute: ex}],
    duplicate: [{name: 'a', description: 'd', execute: ex}],
    nameWithSpace: [{name: 'a b', description: 'd', execute: ex}],
    nameEmpty: [{name: '', description: 'd', execute: ex}],
    name129: [{name: 'x'.repeat(129), description: 'd', execute: ex}],
    name128: [{name: 'y'.repeat(128), description: 'd', execute: ex}],
    nameNonAscii: [{name: 'caf\\u00e9', description: 'd', execute: ex}],
    descriptionEmpty: [{name: 'b', description: '', execute: ex}],
    descriptionMissing: [{name: 'b', execute: ex}],
    executeNotCallable: [{name: 'b', description: 'd', execute: 5}],
    executeMissing: [{name: 'b', description: 'd'}],
    schemaCyclic: [{name: 'c', description: 'd', execute: ex, inputSchema: cyclic}],
    schemaBigInt: [{name: 'c', description: 'd', execute: ex, inputSchema: {a: 1n}}],
    schemaToJSONUndefined: [{name: 'c', description: 'd', execute: ex, inputSchema: {toJSON() {}}}],
    schemaNotObject: [{name: 'c', description: 'd', execute: ex, inputSchema: 'x'}],
    signalAborted: [{name: 'e', description: 'd', execute: ex}, {signal: aborted()}],
    exposedToInsecure: [{name: 'f', description: 'd', execute: ex}, {exposedTo: ['http://example.com']}],
    exposedToNotAUrl: [{name: 'f', description: 'd', execute: ex}, {exposedTo: ['not a url']}],
    exposedToSecure: [{name: 'g', description: 'd', execute: ex}, {exposedTo: ['https://example.com/x']}],
    notADictionary: [5],
    // Which error wins when several apply:
    duplicateAndNotCallable: [{name: 'a', description: 'd', execute: 5}],
    duplicateAndEmptyDescription: [{name: 'a', description: '', execute: ex}],
    badNameAndCyclicSchema: [{name: 'c c', description: 'd', execute: ex, inputSchema: cyclic}],
    emptyDescriptionAndCyclicSchema: [{name: 'c', description: '', execute: ex, inputSchema: cyclic}],
    abortedAndCyclicSchema: [{name: 'h', description: 'd', execute: ex, inputSchema: cyclic}, {signal: aborted()}],
    abortedAndDuplicate: [{name: 'a', description: 'd', execute: ex}, {signal: aborted()}],
    abortedAndInsecureExposedTo: [{name: 'h', description: 'd', execute: ex}, {signal: aborted(), exposedTo: ['nope']}],
  };
  const results = {};
  for (const [label, args] of Object.entries(cases)) {
    let promise;
    try { promise = mc.registerTool(...args); } catch (e) { results[label] = ['threw', e.name]; continue; }
    try { await promise; results[label] = ['ok']; }
    catch (e) {
      results[label] = e === reason ? ['reason'] : ['rejected', e.constructor.name, e.name, e.message];
    }
  }
  return results;
}"""

DUPLICATE = ["rejected", "DOMException", "InvalidStateError", "Duplicate tool name"]
INVALID_NAME = ["rejected", "DOMException", "InvalidStateError", "Invalid tool name"]
NO_DESCRIPTION = ["rejected", "DOMException", "InvalidStateError", "Description is required"]
INSECURE = [
    "rejected",
    "DOMException",
    "SecurityError",
    "Only secure origins are allowed in the exposedTo list.",
]


def _type_error(detail: str) -> list[str]:
    prefix = "Failed to execute 'registerTool' on 'ModelContext': "
    return ["rejected", "TypeError", "TypeError", prefix + detail]


async def test_registration_errors_and_which_one_wins(mc: Harnessed) -> None:
    await mc.goto("mc_blank.html")
    results = await mc.page.evaluate(REGISTRATION_ERRORS_JS)
    cyclic = results.pop("schemaCyclic")
    assert cyclic[:3] == ["rejected", "TypeError", "TypeError"]
    assert "circular structure" in cyclic[3]
    assert results.pop("abortedAndCyclicSchema")[:3] == ["rejected", "TypeError", "TypeError"]
    assert results == {
        "ok": ["ok"],
        "duplicate": DUPLICATE,
        "nameWithSpace": INVALID_NAME,
        "nameEmpty": INVALID_NAME,
        "name129": INVALID_NAME,
        "name128": ["ok"],
        "nameNonAscii": INVALID_NAME,
        "descriptionEmpty": NO_DESCRIPTION,
        "descriptionMissing": _type_error(
            "Failed to read the 'description' property from 'ModelContextTool': "
            "Required member is undefined."
        ),
        "executeNotCallable": _type_error(
            "Failed to read the 'execute' property from 'ModelContextTool': "
            "The given value is not a function."
        ),
        "executeMissing": _type_error(
            "Failed to read the 'execute' property from 'ModelContextTool': "
            "Required member is undefined."
        ),
        "schemaBigInt": _type_error("Do not know how to serialize a BigInt"),
        "schemaToJSONUndefined": _type_error("invalid input schema: toJSON() returns undefined"),
        "schemaNotObject": _type_error(
            "Failed to read the 'inputSchema' property from 'ModelContextTool': "
            "Failed to convert value to 'object'."
        ),
        "signalAborted": ["reason"],
        "exposedToInsecure": INSECURE,
        "exposedToNotAUrl": INSECURE,
        "exposedToSecure": ["ok"],
        "notADictionary": _type_error("The provided value is not of type 'ModelContextTool'."),
        "duplicateAndNotCallable": _type_error(
            "Failed to read the 'execute' property from 'ModelContextTool': "
            "The given value is not a function."
        ),
        "duplicateAndEmptyDescription": DUPLICATE,
        "badNameAndCyclicSchema": INVALID_NAME,
        "emptyDescriptionAndCyclicSchema": NO_DESCRIPTION,
        "abortedAndDuplicate": DUPLICATE,
        "abortedAndInsecureExposedTo": ["reason"],
    }
    listed = await mc.listed()
    assert sorted(listed) == ["a", "g", "y" * 128]


async def test_aborting_the_signal_unregisters_the_tool(mc: Harnessed) -> None:
    await mc.goto("mc_blank.html")
    await mc.page.evaluate(
        """async () => {
            window.changes = 0;
            document.modelContext.ontoolchange = () => window.changes++;
            window.controller = new AbortController();
            await document.modelContext.registerTool(
                {name: 'short_lived', description: 'd', execute: () => 1},
                {signal: controller.signal});
        }"""
    )
    assert "short_lived" in await mc.listed()
    await eventually(lambda: mc.last_snapshot(mc.page.main_frame))
    await mc.page.evaluate("controller.abort()")
    assert await eventually(lambda: mc.page.evaluate("changes === 2"))
    names = await mc.page.evaluate(
        "async () => (await document.modelContext.getTools()).map((t) => t.name)"
    )
    assert names == []
    assert await mc.listed() == {}
    assert await eventually(lambda: mc.last_snapshot(mc.page.main_frame) == [])


EVENT_ORDER_JS = """async () => {
  const mc = document.modelContext;
  const log = [];
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  mc.addEventListener('toolchange', () => log.push('toolchange'));
  mc.addEventListener('toolactivated', (e) => log.push('toolactivated ' + e.toolName));
  mc.addEventListener('toolcancel', (e) => log.push('toolcancel ' + e.toolName));
  const registered = mc.registerTool({name: 'a', description: 'd',
    execute: async (input) => { log.push('execute ' + JSON.stringify(input)); return {x: 1}; }});
  log.push('registerTool returned');
  registered.then(() => log.push('registered'));
  await registered; await sleep(20);

  const controller = new AbortController();
  mc.registerTool({name: 'b', description: 'd', execute: () => 1}, {signal: controller.signal})
    .catch((reason) => log.push('rejected with ' + reason));
  controller.abort('gone');
  await sleep(20);

  const [tool] = await mc.getTools();
  const executed = mc.executeTool(tool, {q: 1});
  log.push('executeTool returned');
  log.push('resolved ' + await executed);
  return log;
}"""


async def test_events_fire_in_chromiums_order(mc: Harnessed) -> None:
    await mc.goto("mc_blank.html")
    assert await mc.page.evaluate(EVENT_ORDER_JS) == [
        "registerTool returned",
        "toolchange",
        "registered",
        "rejected with gone",
        "toolchange",  # b's registration
        "toolchange",  # b's unregistration
        "executeTool returned",
        'execute {"q":1}',
        "toolactivated a",
        'resolved {"x":1}',
    ]


RESULTS_JS = """async () => {
  const mc = document.modelContext;
  const returns = {
    undefined: () => undefined, string: () => 'hello', emptyString: () => '', number: () => 42,
    nan: () => NaN, null: () => null, bigint: () => 10n, boolean: () => true,
    object: () => ({content: [{type: 'text', text: 'hi'}]}), asyncObject: async () => ({a: [1, 2]}),
    array: () => [1, undefined], date: () => new Date(0), function: () => (() => 1),
    toJSON: () => ({toJSON() { return 'TJ'; }}), stringObject: () => new String('x'),
    thrown: () => { throw new Error('boom'); }, rejected: async () => { throw new TypeError('no'); },
    rejectedString: () => Promise.reject('s'), cyclic: () => { const c = {}; c.c = c; return c; },
  };
  for (const [name, execute] of Object.entries(returns)) {
    await mc.registerTool({name: 'r_' + name, description: 'd', execute});
  }
  const results = {};
  for (const tool of await mc.getTools()) {
    try { results[tool.name.slice(2)] = await mc.executeTool(tool, {}); }
    catch (e) { results[tool.name.slice(2)] = e.name + ': ' + e.message; }
  }
  return results;
}"""

TOOL_FAILED = (
    "UnknownError: Tool was executed but the invocation failed. "
    "For example, the script function threw an error"
)


async def test_execute_tool_resolves_to_chromiums_result_string(mc: Harnessed) -> None:
    await mc.goto("mc_blank.html")
    assert await mc.page.evaluate(RESULTS_JS) == {
        "undefined": "undefined",
        "string": "hello",
        "emptyString": "Operation succeeded",
        "number": "42",
        "nan": "NaN",
        "null": "null",
        "bigint": "10",
        "boolean": "true",
        "object": '{"content":[{"type":"text","text":"hi"}]}',
        "asyncObject": '{"a":[1,2]}',
        "array": "[1,null]",
        "date": '"1970-01-01T00:00:00.000Z"',
        "function": "undefined",
        "toJSON": '"TJ"',
        "stringObject": '"x"',
        "thrown": TOOL_FAILED,
        "rejected": TOOL_FAILED,
        "rejectedString": TOOL_FAILED,
        "cyclic": TOOL_FAILED,
    }


EXECUTE_ERRORS_JS = """async () => {
  const mc = document.modelContext;
  await mc.registerTool({name: 's', description: 'd', execute: (input) => JSON.stringify(input)});
  const [tool] = await mc.getTools();
  const plain = {description: 'any', name: 's', origin: location.origin, window};
  const cases = {
    registeredTool: () => mc.executeTool(tool, {a: 1}),
    plainDictionary: () => mc.executeTool(plain, {b: 2}),
    noInput: () => mc.executeTool(tool),
    arrayInput: () => mc.executeTool(tool, [1]),
    nullInput: () => mc.executeTool(tool, null),
    dateInput: () => mc.executeTool(tool, new Date(0)),
    string: () => mc.executeTool('s', {}),
    noWindow: () => mc.executeTool({description: 'x', name: 's', origin: location.origin}, {}),
    garbageOrigin: () => mc.executeTool({...plain, origin: 'garbage'}, {}),
    opaqueOrigin: () => mc.executeTool({...plain, origin: 'data:text/plain,x'}, {}),
    otherOrigin: () => mc.executeTool({...plain, origin: 'https://example.com'}, {}),
    missingTool: () => mc.executeTool({...plain, name: 'nope'}, {}),
    preAborted: () => mc.executeTool(tool, {}, {signal: AbortSignal.abort('early')}),
  };
  const results = {};
  for (const [label, run] of Object.entries(cases)) {
    try { results[label] = 'ok ' + await run(); }
    catch (e) { results[label] = typeof e === 'string' ? 'reason ' + e : e.name + ': ' + e.message; }
  }
  return results;
}"""


async def test_execute_tool_accepts_dictionaries_and_rejects_like_chromium(mc: Harnessed) -> None:
    await mc.goto("mc_blank.html")
    prefix = "TypeError: Failed to execute 'executeTool' on 'ModelContext': "
    unknown = (
        "UnknownError: The operation failed for an unknown transient reason (e.g. out of memory)."
    )
    assert await mc.page.evaluate(EXECUTE_ERRORS_JS) == {
        "registeredTool": 'ok {"a":1}',
        "plainDictionary": 'ok {"b":2}',
        "noInput": "ok {}",
        "arrayInput": "ok [1]",
        "nullInput": prefix + "invalid input object: value is not an object",
        "dateInput": "UnknownError: Failed to parse input arguments",
        "string": prefix + "The provided value is not of type 'RegisteredTool'.",
        "noWindow": prefix
        + "Failed to read the 'window' property from 'RegisteredTool': Required member is undefined.",
        "garbageOrigin": "NotSupportedError: The provided origin is invalid.",
        "opaqueOrigin": "NotSupportedError: "
        "Cannot execute tools that live in a document with an opaque origin.",
        "otherOrigin": unknown,
        "missingTool": unknown,
        "preAborted": "reason early",
    }


CANCEL_JS = """async () => {
  const mc = document.modelContext;
  const log = [];
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  // Each round waits for what it needs to have happened (no race with a fixed sleep,
  // which a busy machine loses), at most 5 s.
  const atMost5s = (promise) => Promise.race([promise, sleep(5000)]);
  let activated = () => {};
  let settled = () => {};
  mc.addEventListener('toolactivated', (e) => { log.push('toolactivated ' + e.toolName); activated(); });
  mc.addEventListener('toolcancel', (e) => log.push('toolcancel ' + e.toolName));
  await mc.registerTool({name: 'slow', description: 'd', execute: (input, {signal}) => {
    log.push('execute');
    signal.addEventListener('abort', () => log.push('execute signal: ' + signal.reason.name));
    return new Promise((r) => setTimeout(() => { log.push('execute settles'); r('late'); settled(); }, 150));
  }});
  const [tool] = await mc.getTools();
  for (const when of ['while running', 'before it started']) {
    log.push('-- ' + when);
    const running = new Promise((r) => { activated = r; });
    const done = new Promise((r) => { settled = r; });
    const controller = new AbortController();
    const executed = mc.executeTool(tool, {}, {signal: controller.signal});
    executed.then((v) => log.push('resolved ' + v), (e) => log.push('rejected ' + e));
    if (when === 'while running') await atMost5s(running);
    controller.abort('stop');
    log.push('aborted');
    await atMost5s(done);
    await sleep(50);  // anything the settling brings (nothing is expected)
  }
  return log;
}"""


async def test_aborting_execute_tool_cancels_the_execution(mc: Harnessed) -> None:
    await mc.goto("mc_blank.html")
    assert await mc.page.evaluate(CANCEL_JS) == [
        "-- while running",
        "execute",
        "toolactivated slow",
        "aborted",
        "rejected stop",
        "execute signal: AbortError",
        "toolcancel slow",
        "execute settles",
        # Chromium starts the execution even when the caller aborted in the same turn.
        "-- before it started",
        "aborted",
        "rejected stop",
        "execute",
        "toolactivated slow",
        "execute signal: AbortError",
        "toolcancel slow",
        "execute settles",
    ]


async def test_get_tools_sorts_by_name_and_copies_the_schema(mc: Harnessed) -> None:
    await mc.goto("mc_blank.html")
    tools = await mc.page.evaluate(
        """async () => {
            const mc = document.modelContext;
            window.schema = {type: 'object', properties: {q: {type: 'string'}}};
            for (const name of ['b', 'B', 'a', '_', '-', '.', '0', 'aa', 'a.b']) {
                await mc.registerTool({name, description: 'tool ' + name, execute: () => 1});
            }
            await mc.registerTool({name: 'full', title: 'Full', description: 'd', execute: () => 1,
                inputSchema: schema, annotations: {readOnlyHint: 1, destructiveHint: true}});
            const tools = await mc.getTools();
            const full = tools.find((t) => t.name === 'full');
            return {
                names: tools.map((t) => t.name),
                keys: Object.keys(tools[0]),
                full: {...full, window: full.window === window},
                copied: full.inputSchema !== schema,
                fresh: (await mc.getTools())[0] !== tools[0],
            };
        }"""
    )
    assert tools["names"] == ["-", ".", "0", "B", "_", "a", "a.b", "aa", "b", "full"]
    assert tools["keys"] == ["description", "name", "origin", "title", "window"]
    assert tools["full"] == {
        "annotations": {
            "consequentialHint": False,
            "debugging": False,
            "readOnlyHint": True,
            "untrustedContentHint": False,
        },
        "description": "d",
        "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
        "name": "full",
        "origin": mc.server.origin,
        "title": "Full",
        "window": True,
    }
    assert tools["copied"] and tools["fresh"]


async def test_the_seeds_fields_pass_through_to_the_harness(mc: Harnessed) -> None:
    await mc.goto("mc_seeds.html")
    snapshot = (await mc.listed())["get_balance"]
    # Which registration this is: the harness runs a call only on the one it checked.
    registration = snapshot["registration"]
    assert isinstance(registration, int) and registration >= 1
    assert snapshot == {
        "registration": registration,
        "name": "get_balance",
        "title": "Get balance",
        "description": "The balance of an account",
        "inputSchema": {"type": "object", "properties": {"account": {"type": "string"}}},
        "outputSchema": {
            "type": "object",
            "properties": {"balance": {"type": "number", "x-sensitive": True}},
        },
        "annotations": {
            "readOnlyHint": True,
            "destructiveHint": False,
            "idempotentHint": True,
            "openWorldHint": False,
            "sensitiveHint": True,
            "untrustedContentHint": False,
            "consequentialHint": False,
            "maliciousActivityHint": False,
            "attribution": ["bank.example"],
            "inputMetadata": {"destination": ["internal"]},
            "returnMetadata": {"source": "internal", "sensitivity": ["financial"]},
        },
        "hasResolve": True,
        "source": "script",
        "origin": mc.server.origin,
        "exposedTo": None,
        "surface": "document.modelContext",
    }
    assert await eventually(lambda: mc.last_snapshot(mc.page.main_frame)) == [snapshot]
    resolved = await mc.command({"op": "resolve", "name": "get_balance", "input": {"account": "x"}})
    assert resolved == {
        "status": "ok",
        "value": {
            "annotations": {"returnMetadata": {"source": "internal", "sensitivity": "financial"}},
            "account": "x",
        },
    }
    missing = await mc.command({"op": "resolve", "name": "nope", "input": {}})
    assert missing["status"] == "error" and missing["error"]["name"] == "NotFoundError"


async def test_invoke_runs_the_private_registrys_tool_with_meta_events_and_cancel(
    mc: Harnessed,
) -> None:
    await mc.goto("mc_seeds.html")
    await mc.page.evaluate(
        """() => {
            document.modelContext.registerTool({name: 'fails', description: 'd',
                execute: () => { throw new RangeError('out of range'); }});
            document.modelContext.registerTool({name: 'waits', description: 'd',
                execute: (input, {signal}) => new Promise((resolve) => {
                    signal.onabort = () => { window.aborted = signal.reason.name; };
                })});
        }"""
    )
    ok = await mc.command(
        {
            "op": "invoke",
            "callId": "call-1",
            "name": "get_balance",
            "input": {"account": "main"},
            "meta": {"_meta": {"progressToken": 7}, "signal": "ignored"},
        }
    )
    assert ok["status"] == "ok"
    assert json.loads(ok["json"]) == {
        "account": "main",
        "balance": 42,
        "meta": {"progressToken": 7},
        "optionKeys": ["signal", "_meta"],
    }
    failed = await mc.command(
        {"op": "invoke", "callId": "call-2", "name": "fails", "input": {}, "meta": None}
    )
    assert failed == {"status": "error", "error": {"name": "RangeError", "message": "out of range"}}
    missing = await mc.command(
        {"op": "invoke", "callId": "call-3", "name": "nope", "input": {}, "meta": None}
    )
    assert missing["status"] == "error" and missing["error"]["name"] == "NotFoundError"

    waiting = asyncio.ensure_future(
        mc.command({"op": "invoke", "callId": "call-4", "name": "waits", "input": {}, "meta": None})
    )
    await eventually(lambda: ("toolactivated", "waits", "call-4") in mc.events())
    assert await mc.command({"op": "cancel", "callId": "call-4", "reason": "timeout"}) == {
        "cancelled": True
    }
    assert await waiting == {"status": "cancelled", "reason": "timeout"}
    assert await eventually(lambda: mc.page.evaluate("window.aborted")) == "AbortError"
    await eventually(lambda: ("toolcancel", "waits", "call-4") in mc.events())
    assert await mc.command({"op": "cancel", "callId": "call-4", "reason": "again"}) == {
        "cancelled": False
    }
    assert ("toolactivated", "get_balance", "call-1") in mc.events()


async def test_legacy_surfaces_register_into_the_same_registry(mc: Harnessed) -> None:
    await mc.goto("mc_legacy.html")
    listed = await mc.listed()
    assert {name: tool["surface"] for name, tool in listed.items()} == {
        "add": "createAutomationDelegate",
        "add_todo": "window.mcp",
        "current": "document.modelContext",
        "provided": "provideContext",
        "via_navigator": "navigator.modelContext",
    }
    assert listed["add"]["annotations"] == {"readOnlyHint": "true"}  # untouched
    assert listed["add_todo"]["title"] == "Add Todo"
    outcome = await mc.page.evaluate(
        """async () => {
            const mc = navigator.modelContext;
            const names = async () => (await mc.getTools()).map((t) => t.name);
            const out = {alias: mc === document.modelContext};
            const add = (await mc.getTools()).find((t) => t.name === 'add');
            out.add = await mc.executeTool(add, {a: 2, b: 3});
            out.annotations = add.annotations;
            mc.provideContext({tools: [{name: 'provided2', description: 'd', execute: () => 1}]});
            await new Promise((r) => setTimeout(r, 50));
            out.afterProvide = await names();
            try {
                mc.provideContext({tools: [{name: 'bad name', description: 'd', execute: () => 1}]});
            } catch (e) { out.provideError = e.name; }
            try { window.createAutomationDelegate().registerTool({name: 'x', description: ''}); }
            catch (e) { out.delegateError = e.name; }
            mc.unregisterTool('via_navigator');
            window.mcp.unregisterTool('add_todo');
            await new Promise((r) => setTimeout(r, 50));
            out.afterUnregister = await names();
            mc.clearContext();
            await new Promise((r) => setTimeout(r, 50));
            out.afterClear = await names();
            return out;
        }"""
    )
    assert outcome == {
        "alias": True,
        "add": "5",
        "annotations": {
            "consequentialHint": False,
            "debugging": False,
            "readOnlyHint": True,
            "untrustedContentHint": False,
        },
        "afterProvide": ["add", "add_todo", "current", "provided2", "via_navigator"],
        "provideError": "InvalidStateError",
        "delegateError": "TypeError",
        "afterUnregister": ["add", "current", "provided2"],
        "afterClear": [],
    }
    assert await mc.listed() == {}


FRAME_TOOLS_JS = """async (fromOrigins) => {
  try {
    return (await document.modelContext.getTools({fromOrigins})).map(
      (t) => t.name + (t.window === window ? ' (own)' : ''));
  } catch (e) { return e.name; }
}"""

REGISTER_JS = """async ([name, options]) => {
  try {
    await document.modelContext.registerTool({name, description: 'd',
      execute: (input) => name + ' ran in ' + location.search + ' with ' + JSON.stringify(input)},
      options);
    return 'ok';
  } catch (e) { return e.name; }
}"""


async def test_frames_share_tools_by_origin_exposure_and_permission(mc: Harnessed) -> None:
    await mc.goto("mc_frames.html")
    page = mc.page
    top = page.main_frame
    frames = {}
    for frame in page.frames[1:]:
        await frame.wait_for_load_state()
        frames[frame.url.rsplit("?", 1)[1]] = frame
    same, cross, denied = frames["same"], frames["cross"], frames["denied"]
    other = mc.server.other_origin

    assert await top.evaluate(REGISTER_JS, ["t_top", {}]) == "ok"
    assert await same.evaluate(REGISTER_JS, ["t_same", {}]) == "ok"
    assert await cross.evaluate(REGISTER_JS, ["t_cross", {}]) == "ok"
    assert (
        await cross.evaluate(REGISTER_JS, ["t_exposed", {"exposedTo": [mc.server.origin]}]) == "ok"
    )
    # The "tools" permissions policy: a cross-origin frame needs allow="tools".
    assert await denied.evaluate(REGISTER_JS, ["t_denied", {}]) == "NotAllowedError"
    assert await denied.evaluate(FRAME_TOOLS_JS, []) == "NotAllowedError"

    assert await eventually(lambda: top.evaluate("toolchanges === 3"))  # own, same, exposed
    assert await eventually(lambda: same.evaluate("toolchanges === 3"))
    assert await eventually(lambda: cross.evaluate("toolchanges === 2"))  # its own two
    assert await denied.evaluate("toolchanges") == 0

    assert await top.evaluate(FRAME_TOOLS_JS, []) == ["t_same", "t_top (own)"]
    assert await top.evaluate(FRAME_TOOLS_JS, [other]) == ["t_exposed", "t_same", "t_top (own)"]
    assert await same.evaluate(FRAME_TOOLS_JS, [other]) == [
        "t_exposed",
        "t_same (own)",
        "t_top",
    ]
    # The top's tools were not exposed to the cross-origin frame.
    assert await cross.evaluate(FRAME_TOOLS_JS, [mc.server.origin]) == [
        "t_cross (own)",
        "t_exposed (own)",
    ]
    ran = await top.evaluate(
        """async (other) => {
            const out = [];
            for (const tool of await document.modelContext.getTools({fromOrigins: [other]})) {
                out.push(await document.modelContext.executeTool(tool, {n: 1}));
            }
            return out;
        }""",
        other,
    )
    assert ran == [
        't_exposed ran in ?cross with {"n":1}',
        't_same ran in ?same with {"n":1}',
        't_top ran in  with {"n":1}',
    ]
    # Each frame's registry is its own; the harness asks each frame.
    assert sorted(await mc.listed(top)) == ["t_top"]
    assert sorted(await mc.listed(same)) == ["t_same"]
    cross_listed = await mc.listed(cross)
    assert sorted(cross_listed) == ["t_cross", "t_exposed"]
    assert cross_listed["t_exposed"]["exposedTo"] == [mc.server.origin]
    assert cross_listed["t_exposed"]["origin"] == other
    assert await mc.listed(denied) == {}


async def test_events_are_trusted_only_when_chromium_fires_them(mc: Harnessed) -> None:
    await mc.goto("mc_blank.html")
    trusted = await mc.page.evaluate(
        """async () => {
            const mc = document.modelContext;
            const seen = {};
            for (const type of ['toolchange', 'toolactivated']) {
                mc.addEventListener(type, (e) => { seen[type] = [e.isTrusted, e.bubbles]; });
            }
            await mc.registerTool({name: 't', description: 'd', execute: () => 1});
            await mc.executeTool((await mc.getTools())[0], {});
            return seen;
        }"""
    )
    # A difference: page script cannot create trusted events, so the polyfill's are not.
    native = mc.mode == "native"
    assert trusted == {"toolchange": [native, False], "toolactivated": [native, False]}


async def test_a_symbol_result_is_a_failed_execution(
    harnessed_pages: dict[Mode, Harnessed],
) -> None:
    # A difference: Chromium 156's renderer crashes on a Symbol result; the polyfill
    # reports a failed execution. (Not run natively, for that reason.)
    polyfill = harnessed_pages["polyfill"]
    await polyfill.goto("mc_blank.html")
    outcome = await polyfill.page.evaluate(
        """async () => {
            const mc = document.modelContext;
            await mc.registerTool({name: 'sym', description: 'd', execute: () => Symbol('s')});
            try { return await mc.executeTool((await mc.getTools())[0], {}); }
            catch (e) { return e.name; }
        }"""
    )
    assert outcome == "UnknownError"


async def test_prepare_adds_meta_to_a_cdp_invocation(native_mc: Harnessed) -> None:
    await native_mc.goto("mc_seeds.html")
    cdp = await native_mc.context.new_cdp_session(native_mc.page)
    responses: list[dict[str, Any]] = []
    cdp.on("WebMCP.toolResponded", lambda params: responses.append(params))
    try:
        await cdp.send("WebMCP.enable")
        frame_id = (await cdp.send("Page.getFrameTree"))["frameTree"]["frame"]["id"]
        prepared = await native_mc.command(
            {"op": "prepare", "name": "get_balance", "meta": {"_meta": {"progressToken": "p"}}}
        )
        assert prepared == {"prepared": True}
        await cdp.send(
            "WebMCP.invokeTool",
            {"frameId": frame_id, "toolName": "get_balance", "input": {"account": "a"}},
        )
        await eventually(lambda: responses)
    finally:
        await cdp.detach()
    assert responses[0]["status"] == "Completed"
    assert responses[0]["output"]["meta"] == {"progressToken": "p"}
    assert responses[0]["output"]["optionKeys"] == ["signal", "_meta"]


# -- the channel -------------------------------------------------------------------------


async def test_the_entry_point_refuses_a_caller_without_the_secret(mc: Harnessed) -> None:
    await mc.goto("mc_blank.html")
    keys = mc.channel.keys
    shape = await mc.page.evaluate(
        """([entry, binding]) => {
            const d = Object.getOwnPropertyDescriptor(window, entry);
            let refused;
            try { window[entry]('not the secret', {op: 'list'}); }
            catch (e) { refused = e.name + ': ' + e.message; }
            return {
                writable: d.writable, enumerable: d.enumerable, configurable: d.configurable,
                listed: Object.keys(window).includes(entry),
                refused,
                binding: typeof window[binding],
            };
        }""",
        [keys.entry, keys.binding],
    )
    assert shape == {
        "writable": False,
        "enumerable": False,
        "configurable": False,
        "listed": False,
        "refused": "TypeError: denied",
        "binding": "undefined",
    }


async def test_a_hostile_page_can_neither_forge_nor_watch_the_channel(mc: Harnessed) -> None:
    rejected_before = mc.channel.rejected
    await mc.goto("mc_hostile.html")
    await eventually(lambda: mc.page.evaluate("window.patched === true"))
    assert await mc.page.evaluate("window.forgeryTargets") >= 1
    # Forged messages reach Python, which drops them uncounted by the handler.
    await eventually(lambda: mc.channel.rejected >= rejected_before + 2)
    assert all(m["type"] in ("tools", "event") for _, m in mc.messages)
    assert all("forged" not in json.dumps(m) for _, m in mc.messages), (
        "a forged message reached the handler"
    )

    # The page replaced document.modelContext and ModelContext.prototype.getTools and broke
    # JSON, Promise.prototype.then, Map and Set: the harness still sees the real tool.
    listed = await mc.listed()
    assert list(listed) == ["echo"]
    assert listed["echo"]["description"] == "Echoes its input"
    answer = await mc.command(
        {"op": "invoke", "callId": "c", "name": "echo", "input": {"x": [1, 2]}, "meta": None}
    )
    assert answer == {"status": "ok", "json": '{"echoed":{"x":[1,2]}}'}
    assert await mc.page.evaluate("document.modelContext.executeTool()") == "forged"

    # Nothing the page patched saw a message of the channel, or the secret.
    spied = await mc.page.evaluate("window.spied")
    assert not [s for s in spied if mc.channel.keys.secret in s]
    assert not [s for s in spied if '"type":' in s or '"status":' in s]


# ---------------------------------------------------------------------------------------
# Frames whose window outlives its first document, and srcdoc frames.


@pytest.mark.parametrize("page", ["f_reused.html", "f_touched.html"])
async def test_a_reused_iframe_window_serves_its_new_document(mc: Harnessed, page: str) -> None:
    # The iframe's initial about:blank is touched (by the polyfill's `toolchange`, or by the
    # page) before it navigates to a same-origin URL: the window and its realm are reused
    # and no init script runs for the new document. Its tools must still be there.
    await mc.goto(page)
    which = "reused" if page == "f_reused.html" else "touched"
    child = next(f for f in mc.page.frames if "f_child.html" in f.url)
    await child.wait_for_load_state()
    assert await child.evaluate("window.modelContextType") == "object"
    expected = sorted([f"child_form_{which}", f"child_tool_{which}"])
    assert set(expected) <= set(await eventually(lambda: _names_if(mc, set(expected))))
    ran = await mc.page.evaluate(
        """async (name) => {
          const tool = (await document.modelContext.getTools()).find((t) => t.name === name);
          return document.modelContext.executeTool(tool, {n: 2});
        }""",
        f"child_tool_{which}",
    )
    assert ran == f"child tool ran in {which} with 2"
    # The harness's channel reaches the child's new document, not the retired about:blank one.
    assert sorted(await mc.listed(child)) == expected
    answer = await mc.command(
        {"op": "invoke", "callId": "c1", "name": f"child_tool_{which}", "input": {"n": 3}}, child
    )
    assert answer == {"status": "ok", "json": f"child tool ran in {which} with 3"}


async def test_srcdoc_frames_share_the_parents_origin_and_tools(mc: Harnessed) -> None:
    await mc.goto("f_reused.html")
    srcdoc = next(f for f in mc.page.frames if f.url == "about:srcdoc")
    await srcdoc.wait_for_load_state()
    assert await srcdoc.evaluate("origin") == mc.server.origin
    names = await eventually(lambda: _names_if(mc, {"srcdoc_form", "srcdoc_tool", "top_form"}))
    assert {"srcdoc_form", "srcdoc_tool", "top_form"} <= set(names)
    assert sorted(await mc.listed(srcdoc)) == ["srcdoc_form", "srcdoc_tool"]


async def _names_if(mc: Harnessed, wanted: set[str]) -> list[str] | None:
    names: list[str] = await mc.page.evaluate(
        "async () => (await document.modelContext.getTools()).map((t) => t.name)"
    )
    return names if wanted <= set(names) else None


@pytest.mark.parametrize("how", ["remove", "navigate"])
async def test_a_frame_that_goes_away_fails_the_callers_execute_tool(
    mc: Harnessed, how: str
) -> None:
    await _a_call_running_in_a_child_frame(mc)
    if how == "remove":
        await mc.page.evaluate("document.getElementById('child').remove()")
    else:
        await mc.page.evaluate("document.getElementById('child').src = '/mc_blank.html'")
    outcome = await eventually(
        lambda: mc.page.evaluate("window.outcome === 'pending' ? null : window.outcome")
    )
    assert outcome == f"UnknownError: {UNKNOWN_MESSAGE}"


SETUP_STEP_S = 10.0


async def _a_call_running_in_a_child_frame(mc: Harnessed) -> None:
    """Load mc_detach.html and leave the parent's executeTool of the child's tool running."""
    await mc.goto("mc_detach.html")
    child = next(f for f in mc.page.frames if "mc_frame_child" in f.url)
    await asyncio.wait_for(child.wait_for_load_state(), SETUP_STEP_S)
    await asyncio.wait_for(
        child.evaluate(
            """() => { document.modelContext.registerTool({name: 'never',
                 description: 'never answers', execute: () => {
                   window.started = true; return new Promise(() => {}); }}); }"""
        ),
        SETUP_STEP_S,
    )
    try:
        # The child's registration reaches the parent's getTools() a moment later.
        await eventually(lambda: _names_if(mc, {"never"}), timeout=SETUP_STEP_S)
    except AssertionError:
        # Native Chromium, under load, now and then leaves a child frame whose WebMCP
        # requests it never answers: the registration never reaches the parent.
        if mc.mode == "native" and not await webmcp_answers(child):
            pytest.skip(f"{CHROMIUM_FAULT} (the child's getTools() did not settle)")
        raise
    await mc.page.evaluate(
        """async () => {
          const tool = (await document.modelContext.getTools()).find((t) => t.name === 'never');
          window.outcome = 'pending';
          document.modelContext.executeTool(tool, {}).then(
            (v) => { window.outcome = `resolved ${v}`; },
            (e) => { window.outcome = `${e.name}: ${e.message}`; });
        }"""
    )
    await child.wait_for_function("window.started === true", timeout=SETUP_STEP_S * 1000)


# ---------------------------------------------------------------------------------------
# What the spec's tentative tests define and Chromium 156 lacks (schema.js).

DATA_ERROR_JS = """async () => {
  const mc = document.modelContext;
  window.executed = 0;
  const execute = async (input) => { window.executed++; return JSON.stringify(input); };
  const schemas = {
    required: {type: 'object', properties: {field: {type: 'string'}}, required: ['field']},
    enumed: {type: 'object', properties: {color: {type: 'string', enum: ['red', 'green']}}},
    patterned: {type: 'object', properties: {code: {type: 'string', pattern: '^[a-z]+$'}}},
    typed: {type: 'object', properties: {age: {type: 'integer', minimum: 0}}},
    closed: {type: 'object', properties: {a: {type: 'string'}}, additionalProperties: false},
    nested: {type: 'object', properties: {tags: {type: 'array', items: {type: 'string', maxLength: 2}}}},
    letters: {type: 'object', properties: {name: {type: 'string', pattern: '^\\\\p{L}+$'}}},
  };
  for (const [name, inputSchema] of Object.entries(schemas)) {
    await mc.registerTool({name, description: name, inputSchema, execute});
  }
  const tools = Object.fromEntries((await mc.getTools()).map((t) => [t.name, t]));
  const run = async (name, input) => {
    try { return await mc.executeTool(tools[name], input); }
    catch (e) { return e.name === 'DataError' ? {DataError: JSON.parse(e.message)} : `${e.name}: ${e.message}`; }
  };
  return {
    required: await run('required', {}),
    enumed: await run('enumed', {color: 'blue'}),
    patterned: await run('patterned', {code: 'ABC123'}),
    typed: await run('typed', {age: 'old'}),
    below: await run('typed', {age: -1}),
    closed: await run('closed', {a: 'x', b: 'y'}),
    nested: await run('nested', {tags: ['ok', 'too long']}),
    letters: await run('letters', {name: 'Zoë'}),
    valid: await run('typed', {age: 30}),
    executed: window.executed,
  };
}"""


async def test_execute_tool_refuses_input_that_breaks_the_schema(mc: Harnessed) -> None:
    # The tentative spec: DataError with {path, reason, schemaPath}; execute is not called.
    await mc.goto("mc_blank.html")
    results = await mc.page.evaluate(DATA_ERROR_JS)

    def data_error(path: str, reason: str) -> dict[str, Any]:
        return {"DataError": {"path": path, "reason": reason, "schemaPath": f"/{reason}"}}

    assert results == {
        "required": data_error("/field", "required"),
        "enumed": data_error("/color", "enum"),
        "patterned": data_error("/code", "pattern"),
        "typed": data_error("/age", "type"),
        "below": data_error("/age", "minimum"),
        "closed": data_error("/b", "additionalProperties"),
        "nested": data_error("/tags/1", "maxLength"),
        "letters": '{"name":"Zoë"}',
        "valid": '{"age":30}',
        "executed": 2,
    }


async def test_execute_tool_refuses_bad_input_for_another_frames_tool(
    polyfill_mc: Harnessed,
) -> None:
    # The polyfill checks in the tool's own document and sends the DataError back.
    await polyfill_mc.goto("mc_detach.html")
    child = next(f for f in polyfill_mc.page.frames if "mc_frame_child" in f.url)
    await child.wait_for_load_state()
    await child.evaluate(
        """() => document.modelContext.registerTool({name: 'typed', description: 'd',
             inputSchema: {type: 'object', properties: {n: {type: 'integer'}}, required: ['n']},
             execute: ({n}) => `ran ${n}`})"""
    )
    results = await polyfill_mc.page.evaluate(
        """async () => {
          const tool = (await document.modelContext.getTools()).find((t) => t.name === 'typed');
          const run = (input) => document.modelContext.executeTool(tool, input)
            .catch((e) => `${e.name}: ${e.message}`);
          return [await run({n: 'x'}), await run({n: 2})];
        }"""
    )
    assert results == ['DataError: {"path":"/n","reason":"type","schemaPath":"/type"}', "ran 2"]


SUBSET_JS = """async () => {
  const schemas = {
    ref: {type: 'object', properties: {x: {$ref: '#/foo'}}},
    format: {type: 'object', properties: {x: {type: 'string', format: 'email'}}},
    openObject: {type: 'object', additionalProperties: true},
    mapObject: {type: 'object', additionalProperties: {type: 'string'}},
    unevaluated: {type: 'object', unevaluatedProperties: false},
    dependent: {type: 'object', dependentRequired: {x: ['y']}},
    badPattern: {type: 'string', pattern: '['},
    defs: {type: 'object', properties: {x: {type: 'string', $defs: {}}}},
    encoded: {type: 'object', properties: {x: {type: 'string', contentEncoding: 'base64'}}},
    inSubset: {type: 'object', properties: {n: {type: 'integer', minimum: 1},
      tags: {type: 'array', prefixItems: [{type: 'string'}], items: {type: 'string'}}},
      required: ['n'], additionalProperties: false},
  };
  const out = {};
  for (const [name, inputSchema] of Object.entries(schemas)) {
    try {
      await document.modelContext.registerTool({name, description: name, inputSchema, execute: () => 1});
      out[name] = 'registered';
    } catch (e) {
      out[name] = e.name;
    }
  }
  out.listed = (await document.modelContext.getTools()).map((t) => t.name).sort();
  return out;
}"""


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("subset", ["accept", "refuse"])
async def test_register_tool_refuses_schemas_outside_the_subset_when_asked(
    browsers: dict[Mode, Browser], page_server: PageServer, mode: Mode, subset: str
) -> None:
    context = await browsers[mode].new_context()
    try:
        page = await context.new_page()
        channel = PageChannel(
            ChannelKeys(), mode, "refuse" if subset == "refuse" else "accept", report_events=True
        )
        await channel.install(context, page, lambda _frame, _message: None)
        await page.goto(page_server.url("mc_blank.html"))
        results = await page.evaluate(SUBSET_JS)
    finally:
        await context.close()
    outside = [
        *("ref", "format", "openObject", "mapObject", "unevaluated"),
        *("dependent", "badPattern", "defs", "encoded"),
    ]
    if subset == "accept":  # as Chromium does: real pages register such schemas
        assert all(results[name] == "registered" for name in outside), results
        assert len(results["listed"]) == len(outside) + 1
    else:
        assert {name: results[name] for name in outside} == dict.fromkeys(outside, "TypeError")
        assert results["listed"] == ["inSubset"]
    assert results["inSubset"] == "registered"


async def test_set_tool_state_disables_and_brings_back_a_tool(mc: Harnessed) -> None:
    # Seed 004's setToolState(): on the legacy surfaces (createAutomationDelegate, window.mcp).
    await mc.goto("mc_legacy.html")
    names = "async () => (await document.modelContext.getTools()).map((t) => t.name).sort()"
    before = await mc.page.evaluate(names)
    assert "add" in before and "add_todo" in before
    await mc.page.evaluate("delegate.setToolState('add', false)")
    assert "add" not in await mc.page.evaluate(names)
    assert "add" not in await mc.listed()
    await mc.page.evaluate("delegate.setToolState('add', 'disabled')")  # already: no change
    await mc.page.evaluate("delegate.setToolState('add', {enabled: true})")
    assert await mc.page.evaluate(names) == before
    listed = await mc.listed()
    assert listed["add"]["surface"] == "createAutomationDelegate"
    assert listed["add"]["annotations"] == {"readOnlyHint": "true"}
    assert listed["add"]["inputSchema"]["properties"]["a"] == {"type": "number"}
    ran = await mc.page.evaluate(
        """async () => document.modelContext.executeTool(
             (await document.modelContext.getTools()).find((t) => t.name === 'add'), {a: 1, b: 2})"""
    )
    assert ran == "3"
    await mc.page.evaluate("window.mcp.setToolState('add_todo', 'disabled')")
    assert "add_todo" not in await mc.page.evaluate(names)
    await mc.page.evaluate("window.mcp.setToolState('add_todo', true)")
    assert "add_todo" in await mc.page.evaluate(names)
    # Unregistered while disabled: it does not come back.
    await mc.page.evaluate("delegate.setToolState('add', false); delegate.unregisterTool('add')")
    errors = await mc.page.evaluate(
        """() => [['add', true], ['nope', false], ['add_todo', 'off']].map(([name, state]) => {
             try { delegate.setToolState(name, state); return 'ok'; } catch (e) { return e.name; }
           })"""
    )
    assert errors == ["NotFoundError", "NotFoundError", "TypeError"]
    assert "add" not in await mc.page.evaluate(names)


async def test_invoke_answers_carry_the_documents_state_version(mc: Harnessed) -> None:
    # CHANNEL.md "State versions": the version the harness last heard (a `tools` message, a
    # listing) is the one an `invoke` answer gives while the call changed nothing a listing
    # shows; a call that registers a tool, or a DOM change to a form, gives another.
    await mc.goto("mc_blank.html")
    await mc.page.evaluate(
        """() => {
            const mc = document.modelContext;
            mc.registerTool({name: 'noop', description: 'd', execute: () => 'ok'});
            mc.registerTool({name: 'adds', description: 'd', execute: () => {
                mc.registerTool({name: 'added', description: 'd', execute: () => 'hi'});
                return 'ok';
            }});
            mc.registerTool({name: 'form', description: 'd', execute: () => {
                document.body.insertAdjacentHTML('beforeend',
                    '<form toolname="f" tooldescription="d"><input name="q"></form>');
                return 'ok';
            }});
            mc.registerTool({name: 'text', description: 'd', execute: () => {
                document.body.append('some text');
                return 'ok';
            }});
        }"""
    )
    listed = read_listing(await mc.command({"op": "list"}))
    assert listed is not None

    async def state_after(name: str) -> dict[str, Any]:
        answer = await mc.command({"op": "invoke", "callId": name, "name": name, "input": {}})
        assert answer["status"] == "ok"
        return mc.states[-1]

    token = listed["version"].split(":")[0]
    assert listed["seedVersion"].startswith(token + ":")
    noop = await state_after("noop")
    assert noop == {
        "version": listed["version"],
        "seedVersion": listed["seedVersion"],
        "pending": False,
    }
    assert (await state_after("text"))["version"] == listed["version"]  # no form touched
    adds = await state_after("adds")
    assert adds["version"] != listed["version"]
    form = await state_after("form")
    assert form["version"] not in (listed["version"], adds["version"])
    # Another document never has the same version, whatever its count.
    await mc.goto("mc_blank.html")
    relisted = read_listing(await mc.command({"op": "list"}))
    assert relisted is not None and not relisted["version"].startswith(token + ":")


async def test_an_invoke_answer_says_when_seed_declarations_are_not_reported_yet(
    mc: Harnessed,
) -> None:
    await mc.goto("mc_blank.html")
    await mc.page.evaluate(
        """() => document.modelContext.registerTool({name: 'seed', description: 'd',
            execute: () => {
                document.body.insertAdjacentHTML('beforeend',
                    '<form action="/x" tool-name="s" tool-description="d"><input name="q"></form>');
                return 'ok';
            }})"""
    )
    answer = await mc.command({"op": "invoke", "callId": "c", "name": "seed", "input": {}})
    assert answer["status"] == "ok"
    assert mc.states[-1]["pending"] is True  # debounced: the harness must re-read the frame


async def test_a_registration_checked_on_one_document_never_runs_on_the_next(
    mc: Harnessed,
) -> None:
    # The page navigated between the harness's checks and its call: the next document's tool
    # of the same name, registered the same way, is another registration (numbered from a
    # random base per document), and the page refuses to run it.
    await mc.goto("mc_seeds.html")
    first = (await mc.listed())["get_balance"]["registration"]
    await mc.goto("mc_seeds.html")
    second = (await mc.listed())["get_balance"]["registration"]
    assert first != second
    command = {"op": "invoke", "callId": "c1", "name": "get_balance", "input": {"account": "a"}}
    answer = await mc.command({**command, "meta": None, "registration": first})
    assert answer == {"status": "changed"}


SERIALIZED_ONCE_JS = """async () => {
    let calls = 0;
    const schema = {toJSON() {
        calls += 1;
        return {type: 'object', properties: {['call' + calls]: {type: 'string'}}};
    }};
    await document.modelContext.registerTool(
        {name: 'shifty', description: 'd', inputSchema: schema, execute: () => 1});
    const [tool] = await document.modelContext.getTools();
    return {calls, listed: Object.keys(tool.inputSchema.properties)};
}"""


async def test_a_tools_schema_is_serialized_once_as_chromium_does(
    mc: Harnessed, browsers: dict[Mode, Browser]
) -> None:
    """Chromium calls an inputSchema's toJSON once per registerTool. So does the harness, on
    both backends, and on native, Chromium and the layer record the same schema even when
    the page's toJSON answers differently at each call."""
    await mc.goto("mc_blank.html")
    context = await browsers["native"].new_context()
    try:
        plain = await context.new_page()
        await plain.goto(mc.server.url("mc_blank.html"))
        chromium = await plain.evaluate(SERIALIZED_ONCE_JS)
    finally:
        await context.close()
    assert chromium == {"calls": 1, "listed": ["call1"]}
    assert await mc.page.evaluate(SERIALIZED_ONCE_JS) == chromium
    snapshot = (await mc.listed())["shifty"]
    assert list(snapshot["inputSchema"]["properties"]) == ["call1"]


EXECUTE_INPUT_ONCE_JS = """async () => {
    await document.modelContext.registerTool({name: 'echo_once', description: 'd',
        inputSchema: {type: 'object', properties: {n: {type: 'number'}}},
        execute: (input) => JSON.stringify(input)});
    const tool = (await document.modelContext.getTools()).find((t) => t.name === 'echo_once');
    let calls = 0;
    const shifty = {toJSON() { calls += 1; return {n: calls}; }};
    const result = await document.modelContext.executeTool(tool, shifty);
    let thrown = 0;
    const boom = new Error('boom');
    const failing = {toJSON() { thrown += 1; throw boom; }};
    const failed = await document.modelContext.executeTool(tool, failing).then(
        (value) => `resolved ${value}`,
        (error) => `rejected ${error === boom ? 'the page error' : String(error)}`);
    let inherited = 0;
    Object.prototype.toJSON = function () { inherited += 1; return this; };
    try {
        await document.modelContext.executeTool(tool, {a: {b: [{}]}});
    } finally {
        delete Object.prototype.toJSON;
    }
    return {result, calls, failed, thrown, inherited};
}"""


async def test_an_execute_tool_input_is_serialized_once_as_chromium_does(
    mc: Harnessed, browsers: dict[Mode, Browser]
) -> None:
    """Found from outside: Chromium serializes executeTool()'s input once
    (v8::JSON::Stringify); the native layer, which checks the input against the tool's
    inputSchema first, serialized it a second time, so a toJSON ran twice and the tool got
    its second answer. Both backends now run it once, as Chromium alone does, also when it
    throws, and a toJSON the page put on Object.prototype as often as Chromium alone."""
    await mc.goto("mc_blank.html")
    context = await browsers["native"].new_context()
    try:
        plain = await context.new_page()
        await plain.goto(mc.server.url("mc_blank.html"))
        chromium = await plain.evaluate(EXECUTE_INPUT_ONCE_JS)
    finally:
        await context.close()
    assert chromium["calls"] == 1 and chromium["thrown"] == 1 and chromium["inherited"] > 0
    assert json.loads(chromium["result"]) == {"n": 1}
    assert await mc.page.evaluate(EXECUTE_INPUT_ONCE_JS) == chromium


@pytest.mark.parametrize(
    "patch",
    [
        "Object.prototype.toJSON = function () { return {forged: true}; }",
        "Array.prototype.toJSON = function () { return 'forged'; }",
        """Object.setPrototypeOf(Array.prototype, new Proxy(Object.prototype, {
            get: (target, key) => key === 'toJSON' ? () => 'forged' : target[key]}))""",
    ],
    ids=["object-tojson", "array-tojson", "array-proxy"],
)
async def test_chromiums_registry_reads_the_same_whatever_the_page_patched(
    native_mc: Harnessed, patch: str
) -> None:
    """The layer serializes what getTools() answers with the captured JSON.stringify only
    while no toJSON the page set could run in it; else through own data properties. Either
    way the registry the harness reads is Chromium's."""
    await native_mc.goto("mc_blank.html")
    await native_mc.page.evaluate(
        """async () => document.modelContext.registerTool({name: 'plain', description: 'd',
            inputSchema: {type: 'object', properties: {q: {type: 'string', enum: ['a', 'b']}}},
            annotations: {readOnlyHint: true}, execute: () => 1})"""
    )
    answer = json.loads(await native_mc.command({"op": "list", "registry": True}))
    await native_mc.page.evaluate(f"() => {{ {patch}; }}")
    patched = json.loads(await native_mc.command({"op": "list", "registry": True}))
    assert patched["registry"] == answer["registry"]
    [entry] = answer["registry"]
    # Each schema comes as its own JSON text (one too deep to read spoils only its tool).
    assert json.loads(entry["inputSchema"])["properties"]["q"]["enum"] == ["a", "b"]
    assert entry["annotations"]["readOnlyHint"] is True
