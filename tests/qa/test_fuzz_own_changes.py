"""The fuzzer on a page that changes by itself — a live clock in a control and in its text,
a ``localStorage`` heartbeat — on both backends: what changes with no call running is not
blamed on a tool (``read-only``, ``idempotent`` and ``invalid-refused`` failed a tool that
only returned a value), and a tool's own writes are still found beside it, a timer it
started too."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from harness import Harness
from harness.qa.fuzz import FuzzOptions, FuzzReport, PropertyResult, fuzz
from tests.qa.pages import serve

# Every tool refuses what its schema does not allow; get_price changes nothing.
RESTLESS = """<!doctype html><html><body>
<label>Server time <input id="clock" name="clock" readonly></label><p id="now"></p>
<script>
setInterval(() => {
  document.getElementById("clock").value = new Date().toISOString();
  document.getElementById("now").textContent = String(Date.now());
  localStorage.setItem("lastActive", String(Date.now()));
}, 40);
const mc = document.modelContext;
const sku = {type: "object", properties: {sku: {type: "string", pattern: "^[A-Z]{3}$"}},
             required: ["sku"], additionalProperties: false};
const checked = (input) => {
  if (Object.keys(input).length !== 1 || !/^[A-Z]{3}$/.test(input.sku)) {
    throw new Error("sku must be three capital letters");
  }
};
mc.registerTool({
  name: "get_price", description: "Reads a price.",
  annotations: {readOnlyHint: true, idempotentHint: true}, inputSchema: sku,
  execute: async (input) => { checked(input); return {sku: input.sku, price: 3}; },
});
mc.registerTool({
  name: "remember_sku", description: "Reads a price (and remembers the sku).",
  annotations: {readOnlyHint: true}, inputSchema: sku,
  execute: async (input) => { checked(input); localStorage.setItem("sku", input.sku); return {}; },
});
mc.registerTool({
  name: "add_to_cart", description: "Puts one in the cart (says idempotent).",
  annotations: {idempotentHint: true}, inputSchema: sku,
  execute: async (input) => {
    checked(input);
    localStorage.setItem("cart", String(Number(localStorage.getItem("cart") || 0) + 1));
    return {};
  },
});
mc.registerTool({
  name: "watch_price", description: "Reads a price (and starts a timer that writes).",
  annotations: {readOnlyHint: true}, inputSchema: sku,
  execute: async (input) => {
    checked(input);
    if (!window.watching) {
      window.watching = setInterval(() => localStorage.setItem("watched", String(Date.now())), 40);
    }
    return {sku: input.sku};
  },
});
mc.registerTool({
  name: "log_then_check", description: "Reads a price (logs what it was asked first).",
  annotations: {readOnlyHint: true}, inputSchema: sku,
  execute: async (input) => {
    if (Object.keys(input).length !== 1 || !/^[A-Z]{3}$/.test(input.sku)) {
      localStorage.setItem("refused", JSON.stringify(input));
    }
    checked(input);
    return {sku: input.sku};
  },
});
</script></body></html>"""


@pytest.fixture(scope="module")
async def report(harness: Harness) -> AsyncIterator[FuzzReport]:
    async with serve({"/": RESTLESS}) as server:
        session = await harness.open(server.url("/"))
        options = FuzzOptions(
            properties=["read-only", "idempotent", "invalid-refused"],
            allow_writes=True,
            examples=5,
            seed=2,
            database=None,
        )
        try:
            yield await fuzz(session, options)
        finally:
            await session.close()


def result(report: FuzzReport, tool: str, prop: str) -> PropertyResult:
    [found] = [t for t in report.tools if t.tool == tool]
    [checked] = [r for r in found.results if r.property == prop]
    return checked


def test_what_the_page_changes_by_itself_is_not_the_tool_s(report: FuzzReport) -> None:
    for prop in ("read-only", "idempotent", "invalid-refused"):
        checked = result(report, "get_price", prop)
        assert checked.status == "passed", report.describe()
        # What was left out is said, never a value of it.
        assert "left out what the page changes by itself" in checked.reason
        assert "localStorage['lastActive']" in checked.reason
        assert "form control 'clock'" in checked.reason


@pytest.mark.parametrize(
    ("tool", "prop", "says"),
    [
        ("remember_sku", "read-only", "localStorage['sku'] changed"),
        # A timer the call started keeps writing after it, as the page's own clock does; the
        # page loaded again without the call shows it is the tool's.
        ("watch_price", "read-only", "localStorage['watched'] changed"),
        ("add_to_cart", "idempotent", "localStorage['cart'] changed"),
        ("log_then_check", "invalid-refused", "localStorage['refused'] changed"),
    ],
)
def test_a_tool_s_own_write_is_still_found(
    report: FuzzReport, tool: str, prop: str, says: str
) -> None:
    checked = result(report, tool, prop)
    assert checked.status == "failed" and checked.failure is not None, report.describe()
    message = checked.failure.message
    assert says in message
    assert "lastActive" not in message.split("(left out")[0]
    assert "'clock'" not in message.split("(left out")[0]


def test_a_tool_that_refused_a_near_miss_is_told_to_check_before_it_writes(
    report: FuzzReport,
) -> None:
    failure = result(report, "log_then_check", "invalid-refused").failure
    assert failure is not None
    assert "the tool refused it, but changed state first" in failure.message
    assert "check the input before execute changes anything" in failure.message
    assert "check the input in execute and throw" not in failure.message
