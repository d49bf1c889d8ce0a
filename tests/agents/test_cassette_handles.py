"""Cassettes replay in another session: vault handles match by role, and the model's
replies quote the live session's handles.

A handle (``wmh-secret-…``) is random per session, so the requests of a replayed run
never carry the recorded run's handles. The first tests drive a cassette by hand; the
last runs the agent loop twice against a page whose secret the model passes back
(``tests/pages/handing_back.html``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from harness import BrowserPool, Harness
from harness.agents.anthropic import AnthropicAgent
from harness.agents.cassette import (
    Cassette,
    CassetteFile,
    Interaction,
    RecordedRequest,
    RecordedResponse,
)
from harness.agents.llm import LLMAgent
from harness.agents.loop import RunResult, run_agent
from harness.agents.openai import OpenAIAgent
from harness.errors import CassetteError
from harness.stages.scrubbing import HANDLE
from tests.conftest import PageServer
from tests.llm_servers import AnthropicServer, OpenAIServer, Reply

# The recording's session and the replay's: the same roles, other digits.
RECORDED = {
    "key": "wmh-secret-" + "a" * 16,
    "backup": "wmh-secret-" + "b" * 16,
    "ref": "wmh-ref-" + "c" * 16,
}
LIVE = {
    "key": "wmh-secret-" + "1" * 16,
    "backup": "wmh-secret-" + "2" * 16,
    "ref": "wmh-ref-" + "3" * 16,
}
NEVER_SHOWN = "wmh-secret-" + "f" * 16  # the recorded model made it up


def shown(key: str, backup: str, ref: str, again: str | None = None) -> dict[str, Any]:
    """A request whose tool result shows three handles, the key twice (unless ``again``)."""
    again = key if again is None else again
    result = {"structuredContent": {"key": key, "backup": backup, "again": again}, "ref": ref}
    return {
        "messages": [
            {"role": "user", "content": "Task: make a key, then use it."},
            {"role": "tool", "tool_call_id": "c1", "content": json.dumps(result)},
        ]
    }


def passed_back(handles: dict[str, str]) -> dict[str, Any]:
    """The next request: the model passed the key back, and the page echoed it."""
    body = shown(handles["key"], handles["backup"], handles["ref"])
    arguments = json.dumps({"token": handles["key"]})
    body["messages"] += [
        {"role": "assistant", "tool_calls": [{"id": "c2", "function": {"arguments": arguments}}]},
        {"role": "tool", "tool_call_id": "c2", "content": json.dumps({"used": handles["key"]})},
    ]
    return body


def request(body: dict[str, Any]) -> RecordedRequest:
    return RecordedRequest(method="POST", path="/v1/chat/completions", json_body=body)


def cassette(tmp_path: Path) -> Cassette:
    """Two exchanges recorded in the session of RECORDED."""
    call = {"function": {"name": "use_token", "arguments": json.dumps({"token": RECORDED["key"]})}}
    done = f"Used {RECORDED['key']}; {RECORDED['ref']} is yours to redeem; not {NEVER_SHOWN}."
    interactions = [
        Interaction(
            request=request(shown(**RECORDED)),
            response=RecordedResponse(status=200, json_body={"tool_calls": [call]}),
        ),
        Interaction(
            request=request(passed_back(RECORDED)),
            response=RecordedResponse(status=200, json_body={"content": done}),
        ),
    ]
    path = tmp_path / "c.json"
    path.write_text(CassetteFile(interactions=interactions).model_dump_json(by_alias=True))
    return Cassette(path, "replay")


def test_the_same_conversation_in_another_session_replays_with_its_handles(
    tmp_path: Path,
) -> None:
    playing = cassette(tmp_path)
    first = playing.replay(request(shown(**LIVE)))
    # The model's call quotes the live session's key: the recorded one does not exist here.
    [call] = first.json_body["tool_calls"]
    assert json.loads(call["function"]["arguments"]) == {"token": LIVE["key"]}
    second = playing.replay(request(passed_back(LIVE)))
    assert second.json_body["content"] == (
        f"Used {LIVE['key']}; {LIVE['ref']} is yours to redeem; not {NEVER_SHOWN}."
    )
    assert playing.unused == 0


@pytest.mark.parametrize(
    "sent",
    [
        # the key shown again where the recording showed it: the backup instead
        shown(LIVE["key"], LIVE["backup"], LIVE["ref"], again=LIVE["backup"]),
        # one handle where the recording had two
        shown(LIVE["key"], LIVE["key"], LIVE["ref"]),
        # a reference where the recording had a secret, and the other way round
        shown(LIVE["ref"], LIVE["backup"], LIVE["key"]),
    ],
    ids=["other-handle", "merged", "other-kind"],
)
def test_a_conversation_with_handles_in_other_roles_does_not_match(
    tmp_path: Path, sent: dict[str, Any]
) -> None:
    with pytest.raises(CassetteError, match="request #1 does not match") as caught:
        cassette(tmp_path).replay(request(sent))
    # The message shows handles by role, not by their random digits.
    assert "wmh-secret-#" in str(caught.value) or "wmh-ref-#" in str(caught.value)
    assert not HANDLE.search(str(caught.value))


def test_a_model_that_passes_the_recorded_handle_back_does_not_match(tmp_path: Path) -> None:
    """The run must act on the live handle: had the replay sent the recorded one to the
    page, the page's echo would be a handle the conversation never showed."""
    playing = cassette(tmp_path)
    playing.replay(request(shown(**LIVE)))
    stale = passed_back(LIVE)
    stale["messages"][-1]["content"] = json.dumps({"used": RECORDED["key"]})
    with pytest.raises(CassetteError, match="request #2 does not match"):
        playing.replay(request(stale))


# --- the loop: a page whose secret the model passes back --------------------------------


HANDLE_SHOWN = "{the handle shown}"


def handing_back(body: dict[str, Any], reply: Reply) -> Reply:
    """``reply`` with ``HANDLE_SHOWN`` replaced by the first handle the request shows."""
    found = HANDLE.search(json.dumps(body["messages"]))
    handle = found.group(0) if found else "(none shown)"
    calls = [
        (name, json.loads(json.dumps(args).replace(HANDLE_SHOWN, handle)))
        for name, args in reply.calls
    ]
    return replace(reply, calls=calls, text=reply.text.replace(HANDLE_SHOWN, handle))


class OpenAIHandingBack(OpenAIServer):
    """A stand-in model that passes back the first handle it was shown."""

    def answer(self, body: dict[str, Any], reply: Reply, number: int) -> dict[str, Any]:
        return super().answer(body, handing_back(body, reply), number)


class AnthropicHandingBack(AnthropicServer):
    """A stand-in model that passes back the first handle it was shown."""

    def answer(self, body: dict[str, Any], reply: Reply, number: int) -> dict[str, Any]:
        return super().answer(body, handing_back(body, reply), number)


PROVIDERS = {
    "openai": (OpenAIHandingBack, OpenAIAgent),
    "anthropic": (AnthropicHandingBack, AnthropicAgent),
}


SCRIPT = [
    Reply(calls=[("get_token", {})]),
    Reply(calls=[("use_token", {"token": HANDLE_SHOWN})]),
    Reply(text=f"Used the token {HANDLE_SHOWN}."),
]


@pytest.fixture(scope="module")
async def harness(browser_pool: BrowserPool) -> AsyncIterator[Harness]:
    async with Harness(
        browsers=browser_pool, backend="polyfill", call_timeout=10, policy=None
    ) as harness:
        yield harness


async def loop_run(harness: Harness, agent: LLMAgent, url: str) -> RunResult:
    session = await harness.new_session()
    try:
        return await run_agent(session, agent, url, task="Use the CI token.")
    finally:
        await session.close()
        await agent.aclose()


def secret_of(result: RunResult) -> str:
    first = result.calls()[0].result
    assert first is not None
    token = first["structuredContent"]["token"]
    assert isinstance(token, str) and HANDLE.fullmatch(token)
    return token


@pytest.mark.parametrize("provider", list(PROVIDERS))
async def test_a_run_that_passes_a_secret_s_handle_back_replays_in_a_new_session(
    harness: Harness, page_server: PageServer, tmp_path: Path, provider: str
) -> None:
    server_type, agent_type = PROVIDERS[provider]
    path = tmp_path / "cassette.json"
    url = page_server.url("handing_back.html")
    async with server_type(SCRIPT, api_key="test-key") as server:
        agent = agent_type(
            "m",
            base_url=server.base_url,
            api_key="test-key",
            prices={},
            cassette=Cassette(path, "record"),
        )
        recorded = await loop_run(harness, agent, url)
    assert recorded.ok, recorded.detail
    assert server.problems == []
    recorded_secret = secret_of(recorded)
    assert [c.arguments for c in recorded.calls()] == [{}, {"token": recorded_secret}]

    # The server is gone; a new session withholds the same secret behind a new handle.
    player = agent_type("m", base_url=server.base_url, prices={}, cassette=Cassette(path, "replay"))
    replayed = await loop_run(harness, player, url)

    assert replayed.ok, replayed.detail
    live_secret = secret_of(replayed)
    assert live_secret != recorded_secret
    # The replayed model passed the live handle to the page, and answered with it.
    use = replayed.calls()[1]
    assert use.arguments == {"token": live_secret}
    assert use.result is not None and use.result["structuredContent"] == {"used": live_secret}
    assert replayed.answer == f"Used the token {live_secret}."
    assert player.cassette is not None and player.cassette.unused == 0
