"""``/webmcp/imperative/``: ``document.modelContext`` as the current WebMCP spec defines it.

Registration (name rule, description, duplicates, signals), ``getTools()``,
``executeTool()``, the events, the older surfaces, and what reaches the agent when a script
tool runs. Chromium's own implementation is the reference where the spec is silent.
"""

from __future__ import annotations

from harness.conformance.ua.framework import (
    SessionSetup,
    TestContext,
    TestFile,
    check,
    cite,
    equal,
    is_in,
    seed,
    spec,
)
from harness.errors import UnknownTool

NAME_RULE = spec("registerTool()", "name … must match ^[A-Za-z0-9_.-]{1,128}$")
DESCRIPTION_RULE = spec("registerTool()", "description … must not be empty")
DUPLICATE_RULE = spec("registerTool()", "a tool with the same name … InvalidStateError")
SIGNAL_RULE = spec("registerTool()", "when the signal is aborted, unregister the tool")
PROMISE_RULE = spec("registerTool()", "returns a Promise")

REGISTER = TestFile("/webmcp/imperative/register-tool.html", "blank.html", "registerTool()")


async def _register(t: TestContext, definition: str, options: str = "{}") -> list[object]:
    return list(
        await t.js(
            f"() => ua.outcome(() => document.modelContext.registerTool({definition}, {options}))"
        )
    )


@REGISTER.subtest("registerTool() returns a promise that resolves to undefined", PROMISE_RULE)
async def _(t: TestContext) -> None:
    kind = await t.js(
        "async () => { const p = document.modelContext.registerTool(ua.tool('promised'));"
        " const isPromise = p instanceof Promise; return [isPromise, await p]; }"
    )
    equal(kind, [True, None], "[is a Promise, resolved value]")


@REGISTER.subtest("a registered tool is listed by getTools()", spec("getTools()", "the tools"))
async def _(t: TestContext) -> None:
    await _register(t, "ua.tool('listed')")
    is_in("listed", await t.js("ua.names()"), "getTools() names")


@REGISTER.subtest("a name of 128 allowed characters is accepted", NAME_RULE)
async def _(t: TestContext) -> None:
    equal(await _register(t, "ua.tool('A_b.c-9'.padEnd(128, 'z'))"), ["ok", None], "outcome")


@REGISTER.subtest("a name of 129 characters is refused with InvalidStateError", NAME_RULE)
async def _(t: TestContext) -> None:
    outcome = await _register(t, "ua.tool('n'.repeat(129))")
    equal(outcome[:2], ["rejected", "InvalidStateError"], "outcome")


@REGISTER.subtest("an empty name is refused with InvalidStateError", NAME_RULE)
async def _(t: TestContext) -> None:
    equal((await _register(t, "ua.tool('')"))[:2], ["rejected", "InvalidStateError"], "outcome")


@REGISTER.subtest("a name with a space is refused with InvalidStateError", NAME_RULE)
async def _(t: TestContext) -> None:
    outcome = await _register(t, "ua.tool('two words')")
    equal(outcome[:2], ["rejected", "InvalidStateError"], "outcome")


@REGISTER.subtest("a name with non-ASCII letters is refused with InvalidStateError", NAME_RULE)
async def _(t: TestContext) -> None:
    outcome = await _register(t, "ua.tool('caf\\u00e9')")
    equal(outcome[:2], ["rejected", "InvalidStateError"], "outcome")


@REGISTER.subtest("an empty description is refused with InvalidStateError", DESCRIPTION_RULE)
async def _(t: TestContext) -> None:
    outcome = await _register(t, "ua.tool('nodesc', {description: ''})")
    equal(outcome[:2], ["rejected", "InvalidStateError"], "outcome")


@REGISTER.subtest(
    "a missing description is a TypeError",
    spec("ModelContextTool", "required DOMString description"),
    seed("004 API Proposal", "required DOMString description;"),
)
async def _(t: TestContext) -> None:
    outcome = await _register(t, "{name: 'undescribed', execute: () => 1}")
    equal(outcome[:2], ["rejected", "TypeError"], "outcome")


@REGISTER.subtest(
    "an execute that is not a function is a TypeError",
    spec("ModelContextTool", "required ToolExecuteCallback execute"),
)
async def _(t: TestContext) -> None:
    outcome = await _register(t, "ua.tool('notcallable', {execute: 5})")
    equal(outcome[:2], ["rejected", "TypeError"], "outcome")


@REGISTER.subtest(
    "a second tool with the same name is refused with InvalidStateError",
    DUPLICATE_RULE,
    cite("004-unique-name"),
)
async def _(t: TestContext) -> None:
    await _register(t, "ua.tool('twice', {description: 'first'})")
    outcome = await _register(t, "ua.tool('twice', {description: 'second'})")
    equal(outcome[:2], ["rejected", "InvalidStateError"], "outcome of the second registration")
    description = await t.js(
        "async () => (await document.modelContext.getTools()).find(x => x.name === 'twice')"
        "?.description"
    )
    equal(description, "first", "the description kept")


@REGISTER.subtest(
    "an already aborted signal rejects with its reason and registers nothing", SIGNAL_RULE
)
async def _(t: TestContext) -> None:
    outcome = await t.js(
        "async () => { const reason = new Error('stop'); let got;"
        " try { await document.modelContext.registerTool(ua.tool('preaborted'),"
        " {signal: AbortSignal.abort(reason)}); got = 'resolved'; }"
        " catch (e) { got = e === reason ? 'reason' : String(e); }"
        " return [got, (await ua.names()).includes('preaborted')]; }"
    )
    equal(outcome, ["reason", False], "[how it ended, listed]")


@REGISTER.subtest("aborting the signal unregisters the tool", SIGNAL_RULE)
async def _(t: TestContext) -> None:
    listed = await t.js(
        "async () => { const c = new AbortController();"
        " await document.modelContext.registerTool(ua.tool('shortlived'), {signal: c.signal});"
        " const before = (await ua.names()).includes('shortlived'); c.abort();"
        " await ua.sleep(20); return [before, (await ua.names()).includes('shortlived')]; }"
    )
    equal(listed, [True, False], "[listed before abort, listed after]")


@REGISTER.subtest(
    "an inputSchema that cannot be serialized is a TypeError",
    spec("registerTool()", "serialize the inputSchema … rethrow"),
)
async def _(t: TestContext) -> None:
    outcome = await t.js(
        "() => { const c = {}; c.self = c; return ua.outcome(() =>"
        " document.modelContext.registerTool(ua.tool('cyclic', {inputSchema: c}))); }"
    )
    equal(outcome[:2], ["rejected", "TypeError"], "outcome")


@REGISTER.subtest(
    "exposedTo with an insecure origin is a SecurityError",
    spec("registerTool()", "Only secure origins are allowed in the exposedTo list."),
)
async def _(t: TestContext) -> None:
    outcome = await _register(t, "ua.tool('exposed')", "{exposedTo: ['http://example.com']}")
    equal(outcome[:2], ["rejected", "SecurityError"], "outcome")


@REGISTER.subtest(
    "a tool registered by the page reaches the agent's catalog with its origin",
    spec("getTools()", "the tools … from the document's origin"),
)
async def _(t: TestContext) -> None:
    await _register(t, "ua.tool('cataloged', {annotations: {readOnlyHint: true}})")
    tool = await t.session.wait_for_tool("cataloged")
    equal(
        (tool.source, tool.frame, tool.origin, tool.annotations.get("readOnlyHint")),
        ("script", "main", t.fixtures.origin(0), True),
        "(source, frame, origin, readOnlyHint)",
    )


SUBSET = TestFile(
    "/webmcp/imperative/register-tool-schema-subset.tentative.html",
    "blank.html",
    "registerTool() refuses schemas outside the WebMCP subset (tentative)",
)
SUBSET_RULE = spec(
    "registerTool() (tentative)", "registerTool rejects … keywords outside the WebMCP subset"
)
SUBSET_CASES = {
    "$ref": "{type: 'object', properties: {x: {$ref: '#/foo'}}}",
    "$defs": "{type: 'object', properties: {x: {type: 'string', $defs: {}}}}",
    "format": "{type: 'object', properties: {x: {type: 'string', format: 'email'}}}",
    "additionalProperties: true": "{type: 'object', additionalProperties: true}",
    "an additionalProperties schema": "{type: 'object', additionalProperties: {type: 'string'}}",
    "unevaluatedProperties": "{type: 'object', unevaluatedProperties: false}",
    "dependentRequired": "{type: 'object', dependentRequired: {x: ['y']}}",
    "contentEncoding": "{type: 'object', properties: {x: {type: 'string', contentEncoding: 'base64'}}}",
    "an invalid pattern": "{type: 'string', pattern: '['}",
}


def _subset_case(keyword: str, schema: str) -> None:
    name = "subset_" + "".join(c if c.isalnum() else "_" for c in keyword)

    @SUBSET.subtest(
        f"registerTool() rejects {keyword} with TypeError", SUBSET_RULE, cite("004-schema-subset")
    )
    async def _(t: TestContext) -> None:
        outcome = await _register(t, f"ua.tool('{name}', {{inputSchema: {schema}}})")
        equal(outcome[:2], ["rejected", "TypeError"], "outcome")


for _keyword, _schema in SUBSET_CASES.items():
    _subset_case(_keyword, _schema)


GET_TOOLS = TestFile("/webmcp/imperative/get-tools.html", "get_tools.html", "getTools()")


@GET_TOOLS.subtest("getTools() lists the tools sorted by name", spec("getTools()", "sorted"))
async def _(t: TestContext) -> None:
    equal(await t.js("ua.names()"), ["alpha", "beta", "gamma"], "names")


@GET_TOOLS.subtest(
    "getTools() gives the inputSchema the page registered",
    spec("getTools()", "inputSchema … the tool's input schema"),
)
async def _(t: TestContext) -> None:
    schema = await t.js(
        "async () => (await document.modelContext.getTools()).find(x => x.name === 'alpha')"
        ".inputSchema"
    )
    equal(
        schema,
        {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
        "inputSchema",
    )


@GET_TOOLS.subtest(
    "getTools() reports readOnlyHint and untrustedContentHint",
    spec("ToolAnnotations", "readOnlyHint, untrustedContentHint"),
)
async def _(t: TestContext) -> None:
    annotations = await t.js(
        "async () => (await document.modelContext.getTools()).find(x => x.name === 'beta')"
        ".annotations"
    )
    check(isinstance(annotations, dict), "beta has no annotations object")
    equal(
        (annotations.get("readOnlyHint"), annotations.get("untrustedContentHint")),
        (True, True),
        "(readOnlyHint, untrustedContentHint)",
    )


@GET_TOOLS.subtest(
    "changing what getTools() returned does not change the registry",
    spec("getTools()", "a new object per call"),
)
async def _(t: TestContext) -> None:
    description = await t.js(
        "async () => { const [first] = await document.modelContext.getTools();"
        " first.description = 'changed by the page';"
        " const [again] = await document.modelContext.getTools(); return again.description; }"
    )
    equal(description, "Searches alpha.", "the description on a second getTools()")


@GET_TOOLS.subtest(
    "the agent's catalog matches what getTools() lists",
    spec("getTools()", "the tools the agent can see"),
)
async def _(t: TestContext) -> None:
    names = [tool.name for tool in await t.session.tools()]
    equal(names, ["alpha", "beta", "gamma"], "catalog names")


EXECUTE = TestFile("/webmcp/imperative/execute-tool.html", "execute_tool.html", "executeTool()")


@EXECUTE.subtest(
    "executeTool() resolves to the JSON text of an object result",
    spec("executeTool()", "resolves with the serialized result"),
)
async def _(t: TestContext) -> None:
    text = await t.js(
        "async () => { const tool = (await document.modelContext.getTools())"
        ".find(x => x.name === 'object_result');"
        " return document.modelContext.executeTool(tool, {n: 2}); }"
    )
    equal(text, '{"doubled":4}', "result")


@EXECUTE.subtest(
    "executeTool() resolves a string result as it is",
    spec("executeTool()", "a string result"),
)
async def _(t: TestContext) -> None:
    text = await t.js(
        "async () => { const tool = (await document.modelContext.getTools())"
        ".find(x => x.name === 'string_result');"
        " return document.modelContext.executeTool(tool, {}); }"
    )
    equal(text, "plain words", "result")


@EXECUTE.subtest(
    "executeTool() of a throwing tool rejects with UnknownError",
    spec("executeTool()", "the invocation failed … UnknownError"),
)
async def _(t: TestContext) -> None:
    outcome = await t.js(
        "async () => { const tool = (await document.modelContext.getTools())"
        ".find(x => x.name === 'throws');"
        " return ua.outcome(() => document.modelContext.executeTool(tool, {})); }"
    )
    equal(outcome[:2], ["rejected", "UnknownError"], "outcome")


@EXECUTE.subtest(
    "aborting executeTool() rejects with AbortError and fires toolcancel",
    spec("executeTool()", "signal … AbortError; fire toolcancel"),
)
async def _(t: TestContext) -> None:
    outcome = await t.js(
        "async () => { const mc = document.modelContext; const seen = [];"
        " mc.addEventListener('toolcancel', (e) => seen.push(e.toolName), {once: true});"
        " const tool = (await mc.getTools()).find(x => x.name === 'hangs');"
        " const c = new AbortController();"
        " const run = ua.outcome(() => mc.executeTool(tool, {}, {signal: c.signal}));"
        " await ua.sleep(50); c.abort(); const got = await run; await ua.sleep(20);"
        " return [got[1], seen]; }"
    )
    equal(outcome, ["AbortError", ["hangs"]], "[rejection, toolcancel names]")


@EXECUTE.subtest(
    "executeTool() with input that breaks the inputSchema rejects with DataError (tentative)",
    spec("executeTool() (tentative)", "input that breaks the tool's inputSchema … DataError"),
)
async def _(t: TestContext) -> None:
    outcome = await t.js(
        "async () => { const tool = (await document.modelContext.getTools())"
        ".find(x => x.name === 'object_result');"
        " const before = ua.calls.object_result || 0;"
        " const got = await ua.outcome(() => document.modelContext.executeTool(tool, {n: 'two'}));"
        " return [got[1], (ua.calls.object_result || 0) - before]; }"
    )
    equal(outcome, ["DataError", 0], "[rejection, executions]")


CALLS = TestFile(
    "/webmcp/imperative/agent-calls.html",
    "execute_tool.html",
    "What the agent gets from a script tool",
    setup=SessionSetup(call_timeout=5.0),
)


@CALLS.subtest(
    "an object result reaches the agent as text and structuredContent",
    spec("executeTool()", "the serialized result"),
)
async def _(t: TestContext) -> None:
    outcome = await t.call("object_result", {"n": 3})
    check(not outcome.is_error, f"isError: {t.text_blocks(outcome)}")
    equal(outcome.result.structured_content, {"doubled": 6}, "structuredContent")


@CALLS.subtest(
    "a result that is already an MCP result passes through",
    spec("executeTool()", "the result … CallToolResult"),
)
async def _(t: TestContext) -> None:
    outcome = await t.call("mcp_result")
    equal(len(outcome.result.content), 2, "content blocks")
    is_in("first", t.text_blocks(outcome)[0], "first block")


@CALLS.subtest(
    "a thrown error reaches the agent as isError with its message",
    spec("executeTool()", "the invocation failed"),
)
async def _(t: TestContext) -> None:
    outcome = await t.call("throws")
    check(outcome.is_error, "the result is not isError")
    is_in("the tool broke", " ".join(t.text_blocks(outcome)), "the agent's error text")


@CALLS.subtest(
    "arguments that break the inputSchema never reach execute",
    cite("004-schema-subset"),
    spec("executeTool() (tentative)", "execute is not called"),
)
async def _(t: TestContext) -> None:
    before = await t.js("ua.calls.object_result || 0")
    outcome = await t.call("object_result", {"n": "three"})
    check(outcome.is_error, "a string for an integer was not refused")
    equal(await t.js("ua.calls.object_result || 0"), before, "executions")


@CALLS.subtest(
    "a call past its time aborts the tool's signal and is isError",
    spec("ToolExecuteCallback", "options.signal … aborted when the call is cancelled"),
)
async def _(t: TestContext) -> None:
    outcome = await t.call("hangs", timeout=0.5)
    check(outcome.is_error, "the timed-out call is not isError")
    await t.eventually(lambda: t.js("window.hangAborted === true"), "the tool's signal aborted")


@CALLS.subtest(
    "the page sees toolactivated when the agent calls a tool",
    spec("toolactivated", "fired at the ModelContext … toolName"),
)
async def _(t: TestContext) -> None:
    await t.js("ua.events.length = 0")
    await t.call("string_result")
    seen = await t.js("ua.events.filter(e => e.startsWith('activated'))")
    is_in("activated string_result", seen, "toolactivated events")


@CALLS.subtest(
    "a tool registered after load reaches the catalog",
    spec("toolchange", "fired when the tools change"),
)
async def _(t: TestContext) -> None:
    await t.js("document.modelContext.registerTool(ua.tool('late_arrival'))")
    tool = await t.session.wait_for_tool("late_arrival")
    equal(tool.name, "late_arrival", "name")


@CALLS.subtest(
    "an unknown tool name is the caller's mistake, not a page call",
    spec("executeTool()", "no such tool … NotFoundError"),
)
async def _(t: TestContext) -> None:
    try:
        await t.call("no_such_tool")
    except UnknownTool as exc:
        is_in("object_result", exc.available, "names offered")
        return
    raise AssertionError("calling an unknown tool did not raise UnknownTool")


@CALLS.subtest(
    "a call the page navigates away from ends as isError",
    spec("executeTool()", "the document is unloaded … the call fails"),
    fresh=True,
)
async def _(t: TestContext) -> None:
    outcome = await t.call("navigates")
    check(outcome.is_error, "the interrupted call is not isError")
    is_in("navigation", " ".join(t.text_blocks(outcome)), "the agent's error text")


@CALLS.subtest(
    "execute receives the arguments as an object",
    spec("ToolExecuteCallback", "the input object"),
)
async def _(t: TestContext) -> None:
    await t.call("object_result", {"n": 7})
    equal(await t.js("ua.inputs.object_result"), {"n": 7}, "input")


EVENTS = TestFile("/webmcp/imperative/events.html", "blank.html", "toolchange and its kin")
TOOLCHANGE = spec("toolchange", "fire an event named toolchange at the ModelContext")


@EVENTS.subtest("toolchange fires when a tool is registered", TOOLCHANGE)
async def _(t: TestContext) -> None:
    count = await t.js(
        "async () => { let n = 0; const f = () => n++;"
        " document.modelContext.addEventListener('toolchange', f);"
        " await document.modelContext.registerTool(ua.tool('changes_one')); await ua.sleep(20);"
        " document.modelContext.removeEventListener('toolchange', f); return n; }"
    )
    equal(count, 1, "toolchange events")


@EVENTS.subtest("toolchange fires when a tool is unregistered", TOOLCHANGE)
async def _(t: TestContext) -> None:
    count = await t.js(
        "async () => { const c = new AbortController();"
        " await document.modelContext.registerTool(ua.tool('changes_two'), {signal: c.signal});"
        " await ua.sleep(20); let n = 0; const f = () => n++;"
        " document.modelContext.addEventListener('toolchange', f); c.abort(); await ua.sleep(20);"
        " document.modelContext.removeEventListener('toolchange', f); return n; }"
    )
    equal(count, 1, "toolchange events")


@EVENTS.subtest("the ontoolchange handler attribute is called", TOOLCHANGE)
async def _(t: TestContext) -> None:
    count = await t.js(
        "async () => { let n = 0; document.modelContext.ontoolchange = () => n++;"
        " await document.modelContext.registerTool(ua.tool('changes_three')); await ua.sleep(20);"
        " document.modelContext.ontoolchange = null; return n; }"
    )
    equal(count, 1, "handler calls")


@EVENTS.subtest(
    "toolactivated carries the tool's name and fires on window too",
    spec("toolactivated", "ToolActivatedEvent … toolName; fired on window"),
)
async def _(t: TestContext) -> None:
    seen = await t.js(
        "async () => { const mc = document.modelContext; const seen = [];"
        " mc.addEventListener('toolactivated', (e) => seen.push('mc:' + e.toolName), {once: true});"
        " window.addEventListener('toolactivated', (e) => seen.push('window:' + e.toolName),"
        " {once: true});"
        " await mc.registerTool(ua.tool('activates'));"
        " const tool = (await mc.getTools()).find(x => x.name === 'activates');"
        " await mc.executeTool(tool, {}); await ua.sleep(20); return seen.sort(); }"
    )
    equal(seen, ["mc:activates", "window:activates"], "events")


@EVENTS.subtest(
    "toolactivated is not cancelable and does not bubble",
    spec("toolactivated", "bubbles false, cancelable false"),
)
async def _(t: TestContext) -> None:
    shape = await t.js(
        "async () => { const mc = document.modelContext; let event;"
        " mc.addEventListener('toolactivated', (e) => { event = e; }, {once: true});"
        " await mc.registerTool(ua.tool('shaped'));"
        " const tool = (await mc.getTools()).find(x => x.name === 'shaped');"
        " await mc.executeTool(tool, {}); await ua.sleep(20);"
        " return event ? [event.bubbles, event.cancelable, event.target === mc] : null; }"
    )
    equal(shape, [False, False, True], "[bubbles, cancelable, target is the ModelContext]")


@EVENTS.subtest(
    "events the browser fires are trusted",
    spec("events", "isTrusted is true for events the user agent dispatches"),
)
async def _(t: TestContext) -> None:
    trusted = await t.js(
        "async () => { let event; document.modelContext.addEventListener('toolchange',"
        " (e) => { event = e; }, {once: true});"
        " await document.modelContext.registerTool(ua.tool('trusted_event')); await ua.sleep(20);"
        " return event?.isTrusted; }"
    )
    equal(trusted, True, "isTrusted")


LEGACY = TestFile(
    "/webmcp/imperative/legacy-surfaces.html",
    "blank.html",
    "navigator.modelContext and the older API",
)
LEGACY_RULE = seed("004 API Proposal", "undefined unregisterTool(DOMString function_name);")


@LEGACY.subtest(
    "navigator.modelContext is document.modelContext",
    spec("history", "the API moved from navigator.modelContext to document.modelContext"),
)
async def _(t: TestContext) -> None:
    equal(await t.js("navigator.modelContext === document.modelContext"), True, "same object")


@LEGACY.subtest("unregisterTool(name) removes a tool", LEGACY_RULE)
async def _(t: TestContext) -> None:
    listed = await t.js(
        "async () => { await document.modelContext.registerTool(ua.tool('legacy_gone'));"
        " document.modelContext.unregisterTool('legacy_gone'); await ua.sleep(20);"
        " return (await ua.names()).includes('legacy_gone'); }"
    )
    equal(listed, False, "listed after unregisterTool")


@LEGACY.subtest(
    "provideContext({tools}) registers its tools",
    seed("004 API Proposal", "registerTool(ToolResigtrationParams params);"),
)
async def _(t: TestContext) -> None:
    names = await t.js(
        "async () => { document.modelContext.provideContext({tools: [ua.tool('provided_a'),"
        " ua.tool('provided_b')]}); await ua.sleep(20); return ua.names(); }"
    )
    check("provided_a" in names and "provided_b" in names, f"provided tools not listed: {names}")


@LEGACY.subtest(
    "clearContext() removes every tool",
    seed("004 API Proposal", "Can be used to disable/re-enable a tool"),
)
async def _(t: TestContext) -> None:
    names = await t.js(
        "async () => { await document.modelContext.registerTool(ua.tool('cleared'));"
        " document.modelContext.clearContext(); await ua.sleep(20); return ua.names(); }"
    )
    equal(names, [], "names after clearContext()")


@LEGACY.subtest(
    "tools registered through navigator.modelContext reach the agent",
    spec("history", "older pages still use them"),
)
async def _(t: TestContext) -> None:
    await t.js("navigator.modelContext.registerTool(ua.tool('old_style'))")
    tool = await t.session.wait_for_tool("old_style")
    equal(tool.name, "old_style", "name")


FRAMES = TestFile(
    "/webmcp/imperative/frames.html",
    "frames.html",
    "Tools in iframes",
    ready="document.body?.dataset.ready === 'true' && window.framesLoaded === 2",
)


@FRAMES.subtest(
    "a same-origin iframe's tools are in the catalog",
    spec("getTools()", "tools of the document's descendant navigables exposed to its origin"),
)
async def _(t: TestContext) -> None:
    tool = await t.session.wait_for_tool("child_tool")
    equal((tool.name, tool.frame != "main"), ("child_tool", True), "(name, in a child frame)")


@FRAMES.subtest(
    "a cross-origin iframe's tools are not offered without exposedTo",
    spec("registerTool()", "exposedTo … defaults to the tool's own origin"),
)
async def _(t: TestContext) -> None:
    names = [tool.name for tool in await t.session.tools()]
    check("foreign_tool" not in names, f"the cross-origin frame's tool is offered: {names}")


@FRAMES.subtest(
    "a same-origin iframe keeps its tools when the top document has a toolname form",
    spec("getTools()", "tools of … descendant navigables"),
)
async def _(t: TestContext) -> None:
    names = [tool.name for tool in await t.session.tools()]
    is_in("child_tool", names, "catalog names")
    is_in("top_form", names, "catalog names")


FILES = [REGISTER, SUBSET, GET_TOOLS, EXECUTE, CALLS, EVENTS, LEGACY, FRAMES]
