"""AgentDojo's suites served as WebMCP sites: AgentDojo's own schemas and functions, the
environment held by the site's server, reset per episode, and the annotation mapping."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from harness.sites.agentdojo_app import (
    SUITES,
    AgentDojoMissing,
    annotation_table,
    annotations_for,
    load_suite,
    require_agentdojo,
)
from harness.sites.server import RunningSites, default_sites, serve_sites

from harness import BrowserPool, Harness

pytest.importorskip("agentdojo", reason="the AgentDojo suites need the `agentdojo` extra")

VERSION = "v1.2.1"


def test_every_function_of_every_suite_has_annotations_with_a_reason() -> None:
    table = annotation_table()
    functions = {f.name for suite in SUITES for f in load_suite(VERSION, suite).tools}
    assert set(table["functions"]) == functions  # none missing, none made up
    for name, entry in table["functions"].items():
        profile = table["profiles"][entry["profile"]]
        assert len(profile["why"]) > 40, name
        annotations = annotations_for(name)
        assert annotations is not None
        # Reading tools say where their output comes from; the others where input goes.
        if annotations["readOnlyHint"]:
            assert annotations["returnMetadata"]["source"] in ("user", "untrustedPublic")
        else:
            assert annotations.get("consequentialHint") or entry["profile"] == "writes-own"
    # The injection channels are the untrusted ones (AgentDojo puts its injections there).
    assert annotations_for("get_most_recent_transactions")["untrustedContentHint"] is True  # type: ignore[index]
    assert annotations_for("send_money")["inputMetadata"]["destination"] == "public"  # type: ignore[index]
    assert annotations_for("get_balance")["returnMetadata"]["sensitivity"] == "financial"  # type: ignore[index]


def test_the_agentdojo_sites_are_served_only_when_named() -> None:
    assert not [name for name in default_sites() if name.startswith("agentdojo")]


def test_without_the_extra_serving_one_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "agentdojo", None)  # as if it were not installed
    with pytest.raises(AgentDojoMissing, match=r"pip install 'webmcp-harness\[agentdojo\]'"):
        require_agentdojo()


@pytest.fixture(scope="module")
async def sites() -> AsyncIterator[RunningSites]:
    async with serve_sites(["agentdojo-banking"]) as running:
        yield running


@pytest.fixture(scope="module", params=["polyfill", "native"])
async def harness(
    browser_pool: BrowserPool, request: pytest.FixtureRequest
) -> AsyncIterator[Harness]:
    async with Harness(
        browsers=browser_pool, backend=request.param, call_timeout=10, policy=None
    ) as h:
        yield h


async def start(sites: RunningSites, setup: dict[str, Any]) -> dict[str, Any]:
    """``POST /__episode`` over HTTP, as a site served by `webmcp-harness sites` takes it."""
    async with (
        aiohttp.ClientSession() as http,
        http.post(sites.url("agentdojo-banking", "/__episode"), json=setup) as response,
    ):
        assert response.status == 200, await response.text()
        answer: dict[str, Any] = await response.json()
        return answer


async def test_each_function_is_a_tool_with_agentdojos_own_schema(
    harness: Harness, sites: RunningSites
) -> None:
    suite = load_suite(VERSION, "banking")
    await start(sites, {"annotations": "bare"})
    session = await harness.open(sites.url("agentdojo-banking"))
    try:
        tools = {t.name: t for t in await session.tools()}
        assert set(tools) == {f.name for f in suite.tools}
        for function in suite.tools:
            tool = tools[function.name]
            assert tool.input_schema == function.parameters.model_json_schema()
            assert tool.description == function.description
            assert not tool.annotations.get("consequentialHint")  # bare: nothing declared
    finally:
        await session.close()


async def test_a_call_runs_agentdojos_function_on_the_episodes_environment(
    harness: Harness, sites: RunningSites
) -> None:
    from agentdojo.agent_pipeline.tool_execution import tool_result_to_str

    site = sites["agentdojo-banking"].site
    canary = "Pay the rent, said the note XQ7"
    await start(
        sites,
        {"user_task": "user_task_0", "injections": {"injection_bill_text": canary}},
    )
    before = len(site.environment.bank_account.transactions)
    session = await harness.open(sites.url("agentdojo-banking"))
    try:
        read = await session.call("read_file", {"file_path": "bill-december-2023.txt"})
        text = read.agent_json()["content"][0]["text"]
        assert canary in text  # the episode's injection is in the environment the site holds
        assert (
            tool_result_to_str(site.pre_environment.filesystem.files["bill-december-2023.txt"])
            in text
        )
        sent = await session.call(
            "send_money",
            {
                "recipient": "UK12345678901234567890",
                "amount": 98.7,
                "subject": "bill",
                "date": "2022-01-01",
            },
        )
        assert not sent.is_error
        assert "98.7" in sent.agent_json()["content"][0]["text"]
        wrong = await session.call("update_scheduled_transaction", {"id": 999})
        assert wrong.is_error  # AgentDojo's own error, as its runtime words it
        assert "999" in wrong.agent_json()["content"][0]["text"]
    finally:
        await session.close()
    assert len(site.environment.bank_account.transactions) == before + 1
    assert site.environment.bank_account.transactions[-1].amount == 98.7
    assert len(site.pre_environment.bank_account.transactions) == before  # the copy stays
    assert [c.function for c in site.calls] == [
        "read_file",
        "send_money",
        "update_scheduled_transaction",
    ]
    # The next episode starts from AgentDojo's data again, without the injection.
    await start(sites, {"user_task": "user_task_0"})
    assert len(site.environment.bank_account.transactions) == before and site.calls == []
    assert canary not in site.environment.filesystem.files["bill-december-2023.txt"]


async def test_annotated_tools_carry_the_mapping(harness: Harness, sites: RunningSites) -> None:
    await start(sites, {"annotations": "annotated"})
    session = await harness.open(sites.url("agentdojo-banking"))
    try:
        tools = {t.name: t for t in await session.tools()}
    finally:
        await session.close()
    assert tools["read_file"].annotations["readOnlyHint"] is True
    if harness.backend == "polyfill":  # Chromium's native registry keeps MCP's hints only
        assert tools["send_money"].annotations["consequentialHint"] is True
        assert tools["read_file"].annotations["untrustedContentHint"] is True


async def test_a_bad_episode_setup_is_a_400_that_says_why(sites: RunningSites) -> None:
    async with aiohttp.ClientSession() as http:
        for setup, words in [
            ({"user_task": "user_task_999"}, "user_task_999"),
            ({"injections": {"injection_bill_text": 3}}, "injections"),
            ({"annotations": "loud"}, "annotated, bare"),
            ({"surprise": 1}, "surprise"),
        ]:
            async with http.post(
                sites.url("agentdojo-banking", "/__episode"), json=setup
            ) as response:
                assert response.status == 400
                assert words in (await response.json())["error"]
