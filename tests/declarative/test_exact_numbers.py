"""A number the agent sends to a ``<form toolname>`` is filled exactly, on both backends:
Chromium's own fill writes a double with 6 significant digits (12345.67 became
"12345.7", 3000000001 "3e+09"), changing the agent's value unsaid — the call reported
success. The harness sends such numbers as the text JavaScript writes for them (a page's
own ``executeTool()`` keeps Chromium's way, on the polyfill too)."""

from __future__ import annotations

import pytest

from harness import Session
from harness.browser.backends.polyfill import js_number_text
from tests.conftest import PageServer

PAGE = "d_exact_numbers.html"

pytestmark = pytest.mark.timeout(120)


@pytest.mark.parametrize(
    ("amount", "reference", "query"),
    [
        (12345.67, 3000000001, "amount=12345.67&reference=3000000001"),
        (0.1, 7, "amount=0.1&reference=7"),
        (1234567.891, 2**40, "amount=1234567.891&reference=1099511627776"),
    ],
)
async def test_the_form_submits_the_number_the_agent_sent(
    page_session: Session, page_server: PageServer, amount: float, reference: int, query: str
) -> None:
    outcome = await page_session.call("transfer", {"amount": amount, "reference": reference})
    assert outcome.result.is_error is False, outcome.agent_json()
    assert any(line.endswith(f"/__nocontent/0?{query}") for line in page_server.requests), [
        line for line in page_server.requests if "__nocontent" in line
    ]


# What node's String(x) gives for each (checked with node 20 when written).
JAVASCRIPT = {
    12345.67: "12345.67",
    3000000001.0: "3000000001",
    1e21: "1e+21",
    1e-7: "1e-7",
    0.000001: "0.000001",
    123e-20: "1.23e-18",
    -0.1: "-0.1",
    1e16: "10000000000000000",
    0.1 + 0.2: "0.30000000000000004",
    5e-324: "5e-324",
    1.7976931348623157e308: "1.7976931348623157e+308",
}


@pytest.mark.parametrize("number", list(JAVASCRIPT))
def test_numbers_are_written_as_javascript_writes_them(number: float) -> None:
    assert js_number_text(number) == JAVASCRIPT[number]
