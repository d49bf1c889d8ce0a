"""What the fuzzer reports about a call is what the harness lets be seen: a value redaction
withheld (a sensitive tool's error, an ``x-sensitive`` key) is in no message, reproduction
or report of it, on both backends — though the checks read the page's own result."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from harness import BrowserPool, Harness, Session
from harness.catalog import Settle
from harness.qa.fuzz import Failure, FuzzOptions, FuzzReport, fuzz
from harness.stages.scrubbing import HANDLE
from tests.qa.pages import CANARY, QAServer, page, serve

# Not shaped like a key: only redaction keeps it from the agent, nothing that looks at it.
SECRET = "swordfish-4821"

TOOLS = """
const mc = document.modelContext;
const ro = {readOnlyHint: true};
mc.registerTool({
  name: "pin_lookup", description: "Looks up the account's PIN (a secret).",
  annotations: {...ro, sensitiveHint: true},
  inputSchema: {type: "object", required: ["account"],
                properties: {account: {type: "string", maxLength: 4, "x-sensitive": true}}},
  execute: async ({account}) => { throw new Error("PIN SECRET is locked for " + account); },
});
mc.registerTool({
  name: "vault_sizes", description: "The size of each vault, by its secret name.",
  annotations: ro, inputSchema: {type: "object", properties: {}},
  outputSchema: {type: "object", properties: {sizes: {
    type: "object", propertyNames: {"x-sensitive": true}, additionalProperties: {type: "integer"}}}},
  execute: async () => ({sizes: {"SECRET-vault": "many"}}),
});
mc.registerTool({
  name: "key_ring", description: "The API key of each vault, by its secret name.",
  annotations: ro, inputSchema: {type: "object", properties: {}},
  outputSchema: {type: "object", properties: {keys: {
    type: "object", propertyNames: {"x-sensitive": true}, additionalProperties: {type: "string"}}}},
  execute: async () => ({keys: {"SECRET-vault": "CANARY"}}),
});
""".replace("SECRET", SECRET).replace("CANARY", CANARY)


@pytest.fixture(scope="module")
async def server() -> AsyncIterator[QAServer]:
    async with serve({"/": page(TOOLS)}) as qa:
        yield qa


@pytest.fixture(scope="module", params=["polyfill", "native"])
async def session(
    browser_pool: BrowserPool, server: QAServer, request: pytest.FixtureRequest
) -> AsyncIterator[Session]:
    async with Harness(
        browsers=browser_pool, backend=request.param, call_timeout=10, settle=Settle.quiet_ms(100)
    ) as harness:
        opened = await harness.open(server.url("/"))
        yield opened
        await opened.close()


@pytest.fixture(scope="module")
async def report(session: Session) -> FuzzReport:
    options = FuzzOptions(
        properties=["no-throw", "output-schema", "sensitive-marked"],
        examples=3,
        seed=1,
        database=None,
    )
    return await fuzz(session, options)


def failure(report: FuzzReport, tool: str, prop: str) -> Failure:
    [found] = [f for t, p, f in report.failures() if (t, p) == (tool, prop)]
    return found


def test_the_report_holds_nothing_redaction_withheld(report: FuzzReport) -> None:
    assert sorted((t, p) for t, p, _ in report.failures()) == [
        ("key_ring", "sensitive-marked"),
        ("pin_lookup", "no-throw"),
        ("vault_sizes", "output-schema"),
    ]
    for shown in (report.describe(), report.model_dump_json()):
        assert SECRET not in shown and CANARY not in shown
        # A handle is made anew for each call: the report names its kind only, so that
        # two runs with one seed print the same report.
        assert HANDLE.search(shown) is None


def test_a_sensitive_tool_s_error_is_reported_as_the_agent_saw_it(report: FuzzReport) -> None:
    threw = failure(report, "pin_lookup", "no-throw")
    assert threw.message.startswith("pin_lookup threw on valid input: ")
    assert "withheld" in threw.message
    # The input is the fuzzer's own, drawn from the published schema (an x-sensitive
    # parameter included): the reproduction needs it, and it is no one's secret.
    assert threw.arguments == {"account": ""}
    assert '--example \'{"account": ""}\'' in threw.cli


def test_a_withheld_key_is_no_part_of_a_failure_s_place(report: FuzzReport) -> None:
    broken = failure(report, "vault_sizes", "output-schema").message
    assert "/sizes/«key»: fails `type`" in broken
    assert "(schema /properties/sizes/additionalProperties/type)" in broken
    unmarked = failure(report, "key_ring", "sensitive-marked").message
    assert "/structuredContent/keys/«key»" in unmarked
