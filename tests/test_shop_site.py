"""The shop site: tools that are `<form toolname>` forms, end to end.

The server answers JSON or HTML as asked; an agent searches, fills the cart and checks
out through the harness on both backends, and through `webmcp-harness tools` / `call`.
The checkout form has no `toolautosubmit`: the harness's form review decides (cancel by
default), and the server's order list and request log prove what was, and was not, sent.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from harness.sites.server import RunningSites, serve_sites

from harness import BrowserPool, Harness, Session
from harness.elicitation.answers import ScriptedAnswer, ScriptedHandler
from tests.console_script import run_script

BACKENDS = ("polyfill", "native")
ADA = {"name": "Ada Lovelace", "email": "ada@example.org", "address": "12 Loop Road"}


@pytest.fixture(scope="module")
async def sites() -> AsyncIterator[RunningSites]:
    async with serve_sites(["shop"]) as running:
        yield running


@pytest.fixture(scope="module")
async def harnesses(browser_pool: BrowserPool) -> AsyncIterator[dict[str, Harness]]:
    started: dict[str, Harness] = {}
    try:
        for backend in BACKENDS:
            started[backend] = await Harness(
                browsers=browser_pool, backend=backend, call_timeout=15
            ).start()  # type: ignore[arg-type]
        yield started
    finally:
        for harness in started.values():
            await harness.close()


def shop(sites: RunningSites) -> Any:
    return sites["shop"].site


def text_of(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


async def test_the_server_answers_json_or_html_as_asked(sites: RunningSites) -> None:
    await sites.reset("shop")
    json_accept = {"Accept": "application/json"}
    async with aiohttp.ClientSession() as client:
        url = sites.url("shop", "/search?category=garden&colors=blue")
        async with client.get(url, headers=json_accept) as response:
            assert response.status == 200
            assert [p["id"] for p in (await response.json())["products"]] == ["hose"]
        async with client.get(url) as response:
            page = await response.text()
            assert response.content_type == "text/html"
            assert '<tr data-id="hose">' in page and '<tr data-id="board">' not in page
            assert 'toolname="search_products"' in page and 'toolname="add_to_cart"' in page
        async with client.post(
            sites.url("shop", "/cart"), json={"product": "mug", "quantity": 2}, headers=json_accept
        ) as response:
            assert response.status == 201
            assert (await response.json())["cart"]["total"] == 24
        async with client.post(
            sites.url("shop", "/checkout"), data={"name": "x"}, headers=json_accept
        ) as response:
            assert response.status == 400
            assert await response.json() == {"error": "missing email, address, shipping"}
        async with client.post(sites.url("shop", "/checkout"), data={"name": "x"}) as response:
            assert response.status == 400 and response.content_type == "text/html"
            assert "missing email, address, shipping" in await response.text()
    await sites.reset("shop")


async def shop_journey(session: Session, sites: RunningSites) -> dict[str, Any]:
    """Search, add to the cart, open it, check out (cancelled by default, then accepted)."""
    seen: dict[str, Any] = {}
    tools = await session.tools()
    seen["tools"] = {t.name: (t.source, t.annotations, t.input_schema) for t in tools}
    found = await session.call(
        "search_products",
        {
            "category": "kitchen",
            "max_price": 50,
            "colors": ["red", "black"],
            "available_by": "2026-01-01",
        },
    )
    seen["search"] = found.result.structured_content
    added = await session.call("add_to_cart", {"product": "mug", "quantity": 2})
    seen["cart"] = added.result.structured_content
    opened = await session.call("view_cart", {})
    seen["view"] = text_of(opened.agent_json())
    seen["cart_tools"] = [t.name for t in await session.tools()]
    checkout = {**ADA, "shipping": "express", "newsletter": True}
    refused = await session.call("checkout", checkout)
    seen["refused"] = (refused.error_kind, text_of(refused.agent_json()))
    seen["orders_after_refusal"] = len(shop(sites).orders)
    # The user changes the shipping while reviewing, and submits.
    session.elicitation = ScriptedHandler(
        [ScriptedAnswer(tool="checkout", action="accept", values={"shipping": "standard"})]
    )
    placed = await session.call("checkout", checkout)
    seen["placed"] = (placed.error_kind, text_of(placed.agent_json()))
    seen["reviews"] = [(r.source, r.action, r.changed) for r in session.elicitations]
    seen["order"] = {
        k: shop(sites).orders[-1][k] for k in ("id", "total", "shipping", "newsletter")
    }
    seen["url"] = session.url
    return seen


async def test_an_agent_shops_the_same_way_on_both_backends(
    sites: RunningSites, harnesses: dict[str, Harness]
) -> None:
    journeys: dict[str, dict[str, Any]] = {}
    for backend, harness in harnesses.items():
        await sites.reset("shop")
        sites["shop"].clear_log()
        session = await harness.open(sites.url("shop"))
        try:
            journeys[backend] = await shop_journey(session, sites)
            posts = [(r.method, r.path) for r in sites.requests("shop") if r.method == "POST"]
            journeys[backend]["posts"] = posts
        finally:
            await session.close()
    polyfill = journeys["polyfill"]
    origin = sites.origin("shop")
    assert journeys["native"] == polyfill
    assert {
        name: (source, annotations) for name, (source, annotations, _) in polyfill["tools"].items()
    } == {
        "add_to_cart": ("declarative", {"autosubmit": True}),
        "search_products": ("declarative", {"autosubmit": True}),
        "view_cart": ("declarative", {"autosubmit": True}),
    }
    schema = polyfill["tools"]["search_products"][2]["properties"]
    assert schema["max_price"] == {
        "type": "number",
        "minimum": 0,
        "maximum": 200,
        "multipleOf": 5,
        "description": "Maximum price in dollars",
    }
    assert schema["colors"]["type"] == "array" and schema["colors"]["uniqueItems"] is True
    assert schema["colors"]["description"] == "Colours the product comes in (any of them)"
    assert schema["available_by"]["format"] == "date"
    assert schema["category"]["enum"] == ["", "kitchen", "garden", "books", "toys"]
    # respondWith() handed the agent the server's JSON (fetched with Accept: application/json).
    assert [p["id"] for p in polyfill["search"]["products"]] == ["mug", "board"]
    assert polyfill["cart"]["cart"]["total"] == 24
    assert f"the page navigated to {origin}/cart" in polyfill["view"]
    assert polyfill["cart_tools"] == ["checkout"]
    assert polyfill["refused"] == (
        "cancelled",
        "Tool call cancelled: the form was not submitted: the review was cancelled (auto-cancel)",
    )
    assert polyfill["orders_after_refusal"] == 0
    assert polyfill["placed"][0] is None
    assert (
        f"The form was submitted (POST {origin}/checkout); the page navigated to {origin}/orders/1."
        in polyfill["placed"][1]
    )
    assert polyfill["reviews"] == [
        ("form-review", "cancel", []),
        ("form-review", "accept", ["shipping"]),
    ]
    assert polyfill["order"] == {"id": 1, "total": 24, "shipping": "standard", "newsletter": True}
    assert polyfill["url"] == f"{origin}/orders/1"
    # Nothing was posted to /checkout while the review said no.
    assert polyfill["posts"] == [("POST", "/cart"), ("POST", "/checkout")]


@pytest.mark.slow  # two console scripts per backend (~8 s each); tests/slow_suites.py runs it
@pytest.mark.parametrize("backend", BACKENDS)
async def test_the_cli_lists_and_calls_the_forms(sites: RunningSites, backend: str) -> None:
    await sites.reset("shop")
    code, out, err = await run_script("tools", sites.url("shop"), "--json", "--backend", backend)
    assert code == 0, err
    listed = json.loads(out)
    assert [(t["name"], t["source"]) for t in listed["tools"]] == [
        ("add_to_cart", "declarative"),
        ("search_products", "declarative"),
        ("view_cart", "declarative"),
    ]
    assert listed["warnings"] == []
    code, out, err = await run_script(
        "call", sites.url("shop"), "add_to_cart", "--args", '{"product": "kite", "quantity": 1}',
        "--json", "--backend", backend,
    )  # fmt: skip
    assert code == 0, err
    result = json.loads(out)["result"]
    assert result["structuredContent"]["cart"]["items"][0]["product"]["id"] == "kite"
    checkout = json.dumps({**ADA, "shipping": "express"})
    code, out, err = await run_script(
        "call", sites.url("shop", "/cart"), "checkout", "--args", checkout,
        "--elicit", "accept", "--json", "--backend", backend,
    )  # fmt: skip
    assert code == 0, err
    placed = json.loads(out)["result"]
    assert placed.get("isError") is not True
    assert "/orders/1." in text_of(placed)
    assert shop(sites).orders[-1]["total"] == 80
    await sites.reset("shop")
