"""The ``openai`` and ``anthropic`` agents, through their official client libraries.

Every test talks to a loopback server that speaks the provider's real wire
format (``tests/llm_servers.py``); no test needs the network. Most tests feed
the agent contexts by hand, with results shaped like the agent view; the last
ones run the agent loop on the bundled todo site, record a cassette, and replay
it with the LLM server stopped.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from harness.sites.server import serve_sites

from harness import BrowserPool, Harness
from harness.agent_view import AgentTool
from harness.agents import make_agent
from harness.agents.anthropic import AnthropicAgent
from harness.agents.base import AgentContext, StepRecord
from harness.agents.cassette import Cassette
from harness.agents.llm import NAVIGATE_TOOL, LLMAgent, ToolNameMap
from harness.agents.loop import RunResult, run_agent
from harness.agents.openai import OpenAIAgent
from harness.agents.usage import Price, PriceTable
from harness.errors import CassetteError, ConfigError, ProviderError
from harness.models import CallAction, FinishAction, NavigateAction
from harness.trace.events import TokensUsed
from tests.conftest import free_port
from tests.llm_servers import AnthropicServer, OpenAIServer, Reply, ScriptedLLMServer

PAGE = "http://127.0.0.1:9/"
KEY = "test-key"


def tool(name: str, description: str = "A tool.", **properties: Any) -> AgentTool:
    return AgentTool(
        name=name,
        description=f'<untrusted-data origin="http://127.0.0.1:9">\n{description}\n</untrusted-data>',
        input_schema={"type": "object", "properties": properties},
        origin="http://127.0.0.1:9",
    )


TODO_TOOLS = [
    tool("list_todos", "List the todos."),
    tool("add_todo", "Add one.", text={"type": "string"}),
]


def result(structured: dict[str, Any], *, is_error: bool = False) -> dict[str, Any]:
    """An agent-view CallToolResult."""
    return {
        "content": [{"type": "text", "text": json.dumps(structured)}],
        "structuredContent": structured,
        "isError": is_error,
    }


def replied(result: dict[str, Any]) -> dict[str, Any]:
    """What the model is sent of an agent-view result: its content and isError."""
    return {"content": result["content"], "isError": bool(result.get("isError"))}


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class Provider:
    """One wire format: its server, its agent, and how to read its requests."""

    name: str
    server: type[ScriptedLLMServer]
    make: Callable[..., LLMAgent]

    def agent(self, server: ScriptedLLMServer, **options: Any) -> LLMAgent:
        options.setdefault("api_key", KEY)
        options.setdefault("prices", {})
        return self.make("test-model", base_url=server.base_url, **options)

    def latest_tool_results(self, body: dict[str, Any]) -> list[tuple[str, str, bool]]:
        """(call id, content, is_error) of the results the request sends back."""
        messages = body["messages"]
        if self.name == "openai":
            tail: list[dict[str, Any]] = []
            for message in reversed(messages):
                if message["role"] == "assistant":
                    break
                tail.insert(0, message)
            return [
                (m["tool_call_id"], m["content"], json.loads(m["content"]).get("isError", False))
                for m in tail
                if m["role"] == "tool"
            ]
        return [
            (b["tool_use_id"], b["content"], b.get("is_error", False))
            for b in messages[-1]["content"]
            if b["type"] == "tool_result"
        ]

    def latest_notes(self, body: dict[str, Any]) -> list[str]:
        last = body["messages"][-1]
        if self.name == "openai":
            return [last["content"]] if last["role"] == "user" and len(body["messages"]) > 2 else []
        if isinstance(last["content"], str):
            return []
        return [b["text"] for b in last["content"] if b["type"] == "text"]

    def tool_names(self, body: dict[str, Any]) -> list[str]:
        if self.name == "openai":
            return [t["function"]["name"] for t in body["tools"]]
        return [t["name"] for t in body["tools"]]

    def reported(self, answer: dict[str, Any]) -> tuple[int, int]:
        usage = answer["usage"]
        if self.name == "openai":
            return usage["prompt_tokens"], usage["completion_tokens"]
        return usage["input_tokens"], usage["output_tokens"]


PROVIDERS = [
    Provider("openai", OpenAIServer, OpenAIAgent),
    Provider("anthropic", AnthropicServer, AnthropicAgent),
]


@pytest.fixture(params=PROVIDERS, ids=lambda p: p.name)
def provider(request: pytest.FixtureRequest) -> Provider:
    return request.param  # type: ignore[no-any-return]


class Run:
    """Drives an agent by hand, as the loop would, with scripted tool results."""

    def __init__(self, agent: LLMAgent, task: str = "Add 'buy milk' to my todos.") -> None:
        self.agent = agent
        self.task = task
        self.history: list[StepRecord] = []
        self.url = PAGE

    async def step(
        self, tools: list[AgentTool] = TODO_TOOLS, *, tools_changed: bool = False
    ) -> CallAction | NavigateAction | FinishAction:
        context = AgentContext(
            task=self.task,
            start_url=PAGE,
            url=self.url,
            tools=tools,
            history=list(self.history),
            tools_changed=tools_changed,
        )
        return await self.agent.next_action(context)

    def record(
        self,
        action: CallAction | NavigateAction,
        result: dict[str, Any] | None = None,
        error: str | None = None,
    ) -> None:
        self.history.append(
            StepRecord(index=len(self.history) + 1, action=action, result=result, error=error)
        )


LISTED = result({"todos": [{"id": 1, "text": "call mum", "done": False}]})
ADDED = result({"todo": {"id": 2, "text": "buy milk", "done": False}})
TODO_SCRIPT = [
    Reply(calls=[("list_todos", {})]),
    Reply(text="Adding it now.", calls=[("add_todo", {"text": "buy milk"})]),
    Reply(text="Added 'buy milk' (todo 2)."),
]


async def run_todo_script(run: Run) -> list[CallAction | NavigateAction | FinishAction]:
    """The three-step conversation of TODO_SCRIPT, with fake results."""
    first = await run.step()
    assert isinstance(first, CallAction)
    run.record(first, LISTED)
    second = await run.step()
    assert isinstance(second, CallAction)
    run.record(second, ADDED)
    third = await run.step()
    return [first, second, third]


# --- the conversation ------------------------------------------------------------------


async def test_a_multi_step_tool_conversation(provider: Provider) -> None:
    async with provider.server(TODO_SCRIPT, api_key=KEY) as server:
        agent = provider.agent(server)
        actions = await run_todo_script(Run(agent))
        await agent.aclose()

    first, second, third = actions
    assert isinstance(first, CallAction) and first.tool == "list_todos" and first.arguments == {}
    assert isinstance(second, CallAction) and second.tool == "add_todo"
    assert second.arguments == {"text": "buy milk"}
    assert second.note == "Adding it now."  # the model's words, for the trace
    assert first.call_ref and second.call_ref and first.call_ref != second.call_ref
    assert third == FinishAction(answer="Added 'buy milk' (todo 2).")
    assert agent.name == f"{provider.name}:test-model"

    assert server.problems == []
    assert len(server.requests) == 3
    first_request, second_request, third_request = server.requests
    assert "Add 'buy milk' to my todos." in json.dumps(first_request["messages"])
    assert provider.tool_names(first_request) == ["list_todos", "add_todo", NAVIGATE_TOOL]
    # Results go back as the agent view's content (structuredContent's data is in its text
    # block), each answering the call it belongs to.
    assert provider.latest_tool_results(second_request) == [
        (first.call_ref, compact(replied(LISTED)), False)
    ]
    assert provider.latest_tool_results(third_request) == [
        (second.call_ref, compact(replied(ADDED)), False)
    ]
    assert provider.latest_notes(second_request) == []


async def test_usage_is_counted_per_request_and_in_total(provider: Provider) -> None:
    async with provider.server(TODO_SCRIPT, api_key=KEY) as server:
        agent = provider.agent(server, price=Price(input=2.0, output=8.0))
        run = Run(agent)
        first = await run.step()
        assert isinstance(first, CallAction)
        after_first = agent.drain_usage()
        run.record(first, LISTED)
        second = await run.step()
        assert isinstance(second, CallAction)
        run.record(second, ADDED)
        await run.step()
        rest = agent.drain_usage()
        await agent.aclose()

    reported = [provider.reported(a) for a in server.answers]
    assert [(u.input_tokens, u.output_tokens) for u in after_first + rest] == reported
    assert len(after_first) == 1 and agent.drain_usage() == []
    cost = sum(i * 2.0 + o * 8.0 for i, o in reported) / 1_000_000
    total = agent.usage
    assert (total.model, total.input_tokens, total.output_tokens) == (
        "test-model",
        sum(i for i, _ in reported),
        sum(o for _, o in reported),
    )
    assert total.cost_usd == pytest.approx(cost)
    assert sum(u.cost_usd or 0 for u in after_first + rest) == pytest.approx(cost)


async def test_without_a_price_the_cost_is_unknown(provider: Provider) -> None:
    async with provider.server([Reply(text="Nothing to do.")], api_key=KEY) as server:
        agent = provider.agent(server)
        assert await Run(agent).step() == FinishAction(answer="Nothing to do.")
        await agent.aclose()
    assert agent.usage.cost_usd is None and agent.usage.input_tokens > 0


async def test_after_a_tools_change_the_next_request_offers_the_new_tools(
    provider: Provider,
) -> None:
    script = [
        Reply(calls=[("list_todos", {})]),
        Reply(calls=[("archive_clear", {"older_than": 7})]),
        Reply(text="Cleared."),
    ]
    changed = [tool("list_todos"), tool("archive.clear", older_than={"type": "integer"})]
    async with provider.server(script, api_key=KEY) as server:
        agent = provider.agent(server)
        run = Run(agent, "Clear the archive.")
        first = await run.step()
        assert isinstance(first, CallAction)
        run.record(first, LISTED)
        second = await run.step(changed, tools_changed=True)
        assert isinstance(second, CallAction)
        run.record(second, result({"cleared": 3}))
        assert await run.step(changed) == FinishAction(answer="Cleared.")
        await agent.aclose()

    # The page's name comes back from the provider's; the dot is not allowed on the wire.
    assert second.tool == "archive.clear" and second.arguments == {"older_than": 7}
    assert server.problems == []
    assert provider.tool_names(server.requests[0]) == ["list_todos", "add_todo", NAVIGATE_TOOL]
    assert provider.tool_names(server.requests[1]) == ["list_todos", "archive_clear", NAVIGATE_TOOL]
    (note,) = provider.latest_notes(server.requests[1])
    assert "tool list changed" in note and PAGE in note
    assert provider.latest_notes(server.requests[2]) == []


async def test_several_calls_in_one_answer_are_handed_out_one_per_step(
    provider: Provider,
) -> None:
    script = [
        Reply(calls=[("add_todo", {"text": "a"}), ("remove_todo", {"id": 1})]),
        Reply(text="Done."),
    ]
    async with provider.server(script, api_key=KEY) as server:
        agent = provider.agent(server)
        run = Run(agent)
        first = await run.step()
        assert isinstance(first, CallAction)
        run.record(first, ADDED)
        second = await run.step()
        # The second call came from the same answer: no request in between.
        assert len(server.requests) == 1
        assert isinstance(second, CallAction) and second.tool == "remove_todo"
        unknown = "No tool named 'remove_todo' on this page (available: add_todo, list_todos)."
        run.record(second, error=unknown)
        assert await run.step() == FinishAction(answer="Done.")
        await agent.aclose()

    assert server.problems == []
    results = provider.latest_tool_results(server.requests[1])
    assert [r[0] for r in results] == [first.call_ref, second.call_ref]
    assert results[0][1:] == (compact(replied(ADDED)), False)
    assert json.loads(results[1][1]) == {
        "content": [{"type": "text", "text": unknown}],
        "isError": True,
    }
    assert results[1][2] is True


async def test_the_navigate_tool_becomes_a_navigation(provider: Provider) -> None:
    script = [Reply(calls=[(NAVIGATE_TOOL, {"url": "/archive"})]), Reply(text="Here.")]
    async with provider.server(script, api_key=KEY) as server:
        agent = provider.agent(server)
        run = Run(agent, "Open the archive.")
        action = await run.step()
        assert action == NavigateAction(url="/archive")
        run.record(action)
        run.url = PAGE + "archive"
        assert await run.step(tools_changed=True) == FinishAction(answer="Here.")
        await agent.aclose()
    ((_, content, is_error),) = provider.latest_tool_results(server.requests[1])
    assert json.loads(content) == {"navigated": True, "url": PAGE + "archive"} and not is_error


async def test_without_navigation_no_navigate_tool_is_offered(provider: Provider) -> None:
    async with provider.server([Reply(text="ok")], api_key=KEY) as server:
        agent = provider.agent(server, navigation=False)
        await Run(agent).step()
        await agent.aclose()
    assert provider.tool_names(server.requests[0]) == ["list_todos", "add_todo"]


async def test_arguments_that_are_not_json_go_back_to_the_model_not_to_the_page() -> None:
    script = [
        Reply(calls=[("add_todo", '{"text": "buy milk"')]),
        Reply(calls=[("add_todo", {"text": "buy milk"})]),
    ]
    async with OpenAIServer(script, api_key=KEY) as server:
        agent = PROVIDERS[0].agent(server)
        action = await Run(agent).step()
        await agent.aclose()
    assert isinstance(action, CallAction) and action.arguments == {"text": "buy milk"}
    assert server.problems == [] and len(server.requests) == 2
    ((_, content, is_error),) = PROVIDERS[0].latest_tool_results(server.requests[1])
    assert is_error and "not valid JSON" in content


# --- provider errors -------------------------------------------------------------------


async def test_a_refused_key_is_a_clear_error_that_does_not_show_the_key(
    provider: Provider,
) -> None:
    secret = "sk-live-0123456789abcdefghij"
    async with provider.server([Reply(text="never")], api_key=KEY) as server:
        agent = provider.agent(server, api_key=secret)
        with pytest.raises(ProviderError) as caught:
            await Run(agent).step()
        await agent.aclose()
    message = str(caught.value)
    assert "HTTP 401" in message and server.base_url in message and "key" in message.lower()
    assert secret not in message and "0123456789" not in message
    assert caught.value.reason == "provider-error"


async def test_a_server_error_is_retried(provider: Provider) -> None:
    script = [
        Reply(status=503, error="Overloaded.", headers={"retry-after-ms": "10"}),
        Reply(text="Fine now."),
    ]
    async with provider.server(script, api_key=KEY) as server:
        agent = provider.agent(server, max_retries=1)
        assert await Run(agent).step() == FinishAction(answer="Fine now.")
        await agent.aclose()
    assert len(server.requests) == 2 and len(agent.requests) == 1


async def test_a_server_error_without_retries_left_stops_the_agent(provider: Provider) -> None:
    script = [Reply(status=500, error="Something broke.")]
    async with provider.server(script, api_key=KEY) as server:
        agent = provider.agent(server, max_retries=0)
        with pytest.raises(ProviderError, match=r"HTTP 500.*Something broke\."):
            await Run(agent).step()
        await agent.aclose()


async def test_an_unreachable_endpoint_is_a_clear_error(provider: Provider) -> None:
    base = f"http://127.0.0.1:{free_port()}" + ("/v1" if provider.name == "openai" else "")
    agent = provider.make("m", base_url=base, api_key=KEY, max_retries=0, prices={})
    with pytest.raises(ProviderError, match="could not be reached") as caught:
        await Run(agent).step()
    assert base in str(caught.value)
    await agent.aclose()


async def test_missing_model_or_key_are_config_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("OPENAI_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_MODEL"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_MODEL"):
        OpenAIAgent()
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        OpenAIAgent("gpt-4o")
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        AnthropicAgent("claude-x")
    # A local server needs no key, and the environment supplies what options leave out.
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1")
    monkeypatch.setenv("OPENAI_MODEL", "llama3.1")
    agent = OpenAIAgent()
    assert agent.name == "openai:llama3.1" and agent.endpoint == "http://127.0.0.1:11434/v1"
    await agent.aclose()


# --- cassettes -------------------------------------------------------------------------


async def test_a_replayed_run_repeats_the_recorded_one_offline(
    provider: Provider, tmp_path: Path
) -> None:
    cassette = tmp_path / "run.json"
    async with provider.server(TODO_SCRIPT, api_key=KEY) as server:
        recorder = provider.agent(server, cassette=Cassette(cassette, "record"))
        recorded = await run_todo_script(Run(recorder))
        await recorder.aclose()
    assert len(server.requests) == 3

    # The server is gone: only the cassette can answer.
    player = provider.agent(server, api_key=None, cassette=Cassette(cassette, "replay"))
    replayed = await run_todo_script(Run(player))
    await player.aclose()

    assert replayed == recorded
    assert player.requests == recorder.requests and player.usage == recorder.usage
    assert player.cassette is not None and player.cassette.unused == 0
    text = cassette.read_text()
    assert KEY not in text and "authorization" not in text.lower()
    data = json.loads(text)
    assert data["cassette"] == "webmcp-harness" and len(data["interactions"]) == 3


async def test_a_replay_that_asks_something_else_is_a_clear_error(
    provider: Provider, tmp_path: Path
) -> None:
    cassette = tmp_path / "run.json"
    async with provider.server(TODO_SCRIPT, api_key=KEY) as server:
        recorder = provider.agent(server, cassette=cassette, cassette_mode="record")
        await run_todo_script(Run(recorder))
        await recorder.aclose()

    player = provider.agent(server, cassette=cassette, cassette_mode="replay")
    with pytest.raises(CassetteError) as caught:
        await Run(player, task="Delete everything.").step()
    await player.aclose()
    message = str(caught.value)
    assert "request #1 does not match" in message and "/messages/" in message
    assert "Delete everything." in message and caught.value.reason == "cassette-error"


async def test_a_replay_cannot_go_past_the_recording(provider: Provider, tmp_path: Path) -> None:
    cassette = tmp_path / "short.json"
    async with provider.server([Reply(calls=[("list_todos", {})])], api_key=KEY) as server:
        recorder = provider.agent(server, cassette=cassette)  # auto: no file yet, so record
        assert recorder.cassette is not None and recorder.cassette.mode == "record"
        action = await Run(recorder).step()
        await recorder.aclose()

    player = provider.agent(server, cassette=cassette)  # auto: the file exists, so replay
    assert player.cassette is not None and player.cassette.replaying
    run = Run(player)
    assert await run.step() == action
    assert isinstance(action, CallAction)
    run.record(action, LISTED)
    with pytest.raises(CassetteError, match=r"holds 1 requests.*request #2"):
        await run.step()
    await player.aclose()


def test_replaying_a_missing_cassette_says_to_record_one(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match="Record one first"):
        Cassette(tmp_path / "none.json", "replay")
    (tmp_path / "bad.json").write_text('{"cassette": "something else"}')
    with pytest.raises(CassetteError, match="Cannot read the cassette"):
        Cassette(tmp_path / "bad.json", "replay")


# --- names and prices ------------------------------------------------------------------


def test_tool_names_map_to_the_provider_pattern_without_collisions() -> None:
    names = ToolNameMap(reserved=[NAVIGATE_TOOL])
    long_name = "x." * 60 + "end"
    page = ["todo.add", "todo_add", long_name, NAVIGATE_TOOL, "ok-name"]
    names.assign(page)
    mapped = {n: names.provider_name(n) for n in page}
    # Kept names win: the page's own `todo_add` keeps it; `todo.add` gets a hashed name.
    assert mapped["todo_add"] == "todo_add" and mapped["ok-name"] == "ok-name"
    assert mapped["todo.add"].startswith("todo_add-") and len(mapped["todo.add"]) == 17
    assert mapped[NAVIGATE_TOOL] != NAVIGATE_TOOL
    assert len(set(mapped.values())) == len(page)
    assert all(
        len(v) <= 64 and v.replace("_", "").replace("-", "").isalnum() for v in mapped.values()
    )
    assert all(names.page_name(v) == k for k, v in mapped.items())
    assert names.page_name("never_given") is None
    # Stable for the run, and the same for another run that sees the same names.
    names.assign(["new.tool", *page])
    assert {n: names.provider_name(n) for n in page} == mapped
    again = ToolNameMap(reserved=[NAVIGATE_TOOL])
    again.assign(page)
    assert {n: again.provider_name(n) for n in page} == mapped


async def test_prices_come_from_options_files_and_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert Price.parse("2.5, 10") == Price(input=2.5, output=10)
    with pytest.raises(ConfigError, match="INPUT,OUTPUT"):
        Price.parse("cheap")
    prices = tmp_path / "prices.yaml"
    prices.write_text("gpt-4o: {input: 2.5, output: 10, cache_read: 1.25}\n")
    table = PriceTable.load(prices)
    assert table.lookup("gpt-4o-2024-08-06") == Price(input=2.5, output=10, cache_read=1.25)
    assert table.lookup("gpt-4o-latest") == table.lookup("gpt-4o")
    assert table.lookup("gpt-4o-mini") is None  # another model, not a snapshot
    assert table.lookup("claude") is None
    (tmp_path / "bad.yaml").write_text("gpt-4o: {input: -1, output: 2}\n")
    with pytest.raises(ConfigError, match="Bad price"):
        PriceTable.load(tmp_path / "bad.yaml")
    monkeypatch.setenv("WEBMCP_HARNESS_PRICES", str(prices))
    agent = OpenAIAgent("gpt-4o", base_url="http://127.0.0.1:9/v1")
    assert agent.price == Price(input=2.5, output=10, cache_read=1.25)
    await agent.aclose()


# --- through the agent loop, on the bundled todo site ----------------------------------

E2E_SCRIPT = [
    Reply(calls=[("list_todos", {})]),
    Reply(text="Adding it.", calls=[("add_todo", {"text": "buy milk"})]),
    Reply(calls=[(NAVIGATE_TOOL, {"url": "/archive"})]),
    Reply(calls=[("list_archived", {})]),
    Reply(text="Added 'buy milk'; the archive has the done todos."),
]


@pytest.fixture(scope="module")
async def harness(browser_pool: BrowserPool) -> AsyncIterator[Harness]:
    async with Harness(browsers=browser_pool, backend="polyfill", call_timeout=10) as harness:
        yield harness


async def loop_run(harness: Harness, agent: LLMAgent, url: str, trace: Path) -> RunResult:
    session = await harness.new_session()
    try:
        return await run_agent(
            session, agent, url, task="Add 'buy milk' to my todos.", trace_dir=trace
        )
    finally:
        await session.close()
        await agent.aclose()


def token_events(result: RunResult) -> list[tuple[int, int, int]]:
    return [
        (e.step, e.input_tokens, e.output_tokens)
        for e in result.events
        if isinstance(e, TokensUsed)
    ]


@pytest.mark.slow  # `agent` console scripts, a run and its replay (~4 s per backend)
async def test_a_loop_run_on_the_todo_site_and_its_exact_replay(
    provider: Provider, harness: Harness, tmp_path: Path
) -> None:
    cassette = tmp_path / "cassette.json"
    async with serve_sites(["todo"]) as sites:
        url = sites.url("todo")
        async with provider.server(E2E_SCRIPT, api_key=KEY) as server:
            agent = provider.agent(server, cassette=Cassette(cassette, "record"))
            recorded = await loop_run(harness, agent, url, tmp_path / "recorded")

        assert recorded.ok, recorded.detail
        assert server.problems == []
        calls = recorded.calls()
        assert [c.tool for c in calls] == ["list_todos", "add_todo", "list_archived"]
        assert calls[1].result is not None
        assert calls[1].result["structuredContent"]["todo"]["text"] == "buy milk"
        assert isinstance(recorded.steps[2].action, NavigateAction)
        # The model got each result's content exactly as the agent view the loop recorded.
        ((_, content, _),) = provider.latest_tool_results(server.requests[1])
        assert json.loads(content) == replied(calls[0].result)
        # After the navigation the next request offers the archive page's tools, and says so.
        assert provider.tool_names(server.requests[3]) == ["list_archived", NAVIGATE_TOOL]
        assert "tool list changed" in provider.latest_notes(server.requests[3])[0]
        # One token-use event per model request, as the provider reported it.
        reported = [provider.reported(a) for a in server.answers]
        assert [(i, o) for _, i, o in token_events(recorded)] == reported
        trace = (tmp_path / "recorded" / "trace.jsonl").read_text()
        assert trace.count('"token-use"') == len(reported) and KEY not in trace

        # The same page state, the LLM server gone: the cassette answers every request.
        await sites.reset("todo")
        player = provider.agent(server, api_key=None, cassette=Cassette(cassette, "replay"))
        replayed = await loop_run(harness, player, url, tmp_path / "replayed")

    assert replayed.ok, replayed.detail
    assert replayed.steps == recorded.steps and replayed.answer == recorded.answer
    assert token_events(replayed) == token_events(recorded)
    assert player.usage == agent.usage
    assert player.cassette is not None and player.cassette.unused == 0


# --- the registry ----------------------------------------------------------------------


async def test_make_agent_builds_the_llm_agents(tmp_path: Path) -> None:
    openai_agent = make_agent(
        "openai:gpt-4o",
        base_url="http://127.0.0.1:9/v1",
        api_key=KEY,
        price="1,2",  # as a CLI option gives it
        max_steps=5,  # an option for another part of the CLI: ignored
        cassette=None,
    )
    assert isinstance(openai_agent, OpenAIAgent) and openai_agent.name == "openai:gpt-4o"
    assert openai_agent.price == Price(input=1, output=2)
    anthropic_agent = make_agent(
        "anthropic:claude-x", api_key=KEY, cassette=tmp_path / "c.json", cassette_mode="record"
    )
    assert isinstance(anthropic_agent, AnthropicAgent)
    assert anthropic_agent.cassette is not None and anthropic_agent.cassette.mode == "record"
    await openai_agent.aclose()
    await anthropic_agent.aclose()


def test_without_the_client_library_the_error_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delitem(sys.modules, "harness.agents.anthropic")
    monkeypatch.setitem(sys.modules, "anthropic", None)  # as if not installed
    with pytest.raises(ConfigError, match=r"pip install 'webmcp-harness\[anthropic\]'"):
        make_agent("anthropic:claude-x", api_key=KEY)
