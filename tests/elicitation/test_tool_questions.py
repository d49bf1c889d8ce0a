"""Questions a tool asks from inside ``execute``, end to end, on both backends.

``options.client.requestUserInput({mode, message, requestedSchema, url})`` and the 2025
``agent.requestUserInteraction(callback)`` reach the session's elicitation handler through
the channel (``elicit`` message, ``elicit-answer`` op); the page's promise settles with the
answer. The scripted and auto handlers play the user.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from harness import BrowserPool, Harness, Session
from harness.elicitation.answers import ScriptedAnswer, ScriptedHandler
from harness.elicitation.base import AutoHandler, ElicitationRequest, ElicitationResult
from harness.elicitation.wording import TOOL_QUESTION
from harness.models import CallOutcome
from tests.conftest import PageServer

BACKENDS = ["polyfill", "native"]


class Silent:
    """A user who never answers."""

    async def elicit(self, request: ElicitationRequest) -> ElicitationResult:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


@pytest.fixture(scope="session", params=BACKENDS)
async def harness(
    browser_pool: BrowserPool, request: pytest.FixtureRequest
) -> AsyncIterator[Harness]:
    async with Harness(browsers=browser_pool, backend=request.param, call_timeout=10) as h:
        yield h


@pytest.fixture
async def session(harness: Harness, page_server: PageServer) -> AsyncIterator[Session]:
    s = await harness.open(page_server.url("q_questions.html"))
    yield s
    await s.close()


def scripted(**entry: Any) -> ScriptedHandler:
    return ScriptedHandler([ScriptedAnswer(**entry)])


def returned(outcome: CallOutcome) -> Any:
    """What the tool's execute returned (a JSON object)."""
    assert not outcome.is_error, outcome.agent_json()
    return outcome.agent_json()["structuredContent"]


async def test_an_accepted_form_question_returns_the_users_values(session: Session) -> None:
    session.elicitation = scripted(tool="ask_name", action="accept", values={"name": "Ada"})
    outcome = await session.call("ask_name")
    assert returned(outcome) == {"action": "accept", "content": {"name": "Ada"}}
    [record] = session.elicitations
    assert record.source == "tool-question" and record.mode == "form"
    # The harness's sentence, and the page's question quoted apart from it.
    assert record.tool == "ask_name" and record.message == TOOL_QUESTION
    assert [(q.label, q.text, q.by) for q in record.quoted] == [
        ("the page's question", "What is your name?", "page")
    ]
    assert record.origin == session.url.rsplit("/", 1)[0]
    assert record.fields == ["name"] and record.action == "accept"
    assert record.values == {"name": "Ada"}


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_decline_and_cancel_reach_the_tool(session: Session, action: str) -> None:
    session.elicitation = AutoHandler(action)  # type: ignore[arg-type]
    outcome = await session.call("ask_name")
    assert returned(outcome) == {"action": action}
    assert [r.action for r in session.elicitations] == [action]
    assert session.elicitations[0].source == "tool-question"


async def test_an_answer_that_breaks_the_schema_is_cancel(session: Session) -> None:
    session.elicitation = scripted(tool="ask_name", action="accept", values={"name": "A"})
    outcome = await session.call("ask_name")
    assert returned(outcome) == {"action": "cancel"}
    [record] = session.elicitations
    assert record.action == "cancel" and "at least 2 characters" in (record.reason or "")


async def test_an_unmatched_question_is_cancel(session: Session) -> None:
    session.elicitation = scripted(tool="another_tool", action="accept")
    outcome = await session.call("ask_name")
    assert returned(outcome) == {"action": "cancel"}


async def test_request_user_interaction_runs_the_callback_when_accepted(session: Session) -> None:
    session.elicitation = AutoHandler("accept")
    outcome = await session.call("interact")
    assert returned(outcome) == {"ran": "the callback ran"}
    [record] = session.elicitations
    assert record.source == "tool-question" and record.mode == "interactive"
    assert record.tool == "interact"


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_request_user_interaction_rejects_when_refused(session: Session, action: str) -> None:
    session.elicitation = scripted(tool="interact", action=action)
    outcome = await session.call("interact")
    assert returned(outcome) == {"rejected": "NotAllowedError"}


async def test_a_malformed_question_rejects_with_type_error(session: Session) -> None:
    session.elicitation = AutoHandler("accept")
    outcome = await session.call("bad_question")
    assert returned(outcome) == {"rejected": "TypeError"}
    assert session.elicitations == []  # never asked


async def test_a_timeout_rejects_the_open_question_with_abort_error(session: Session) -> None:
    session.elicitation = Silent()
    outcome = await session.call("ask_and_wait", timeout=1.0)
    assert outcome.is_error and outcome.error_kind == "timeout"
    errors = "window.questionErrors.ask_and_wait"
    for _ in range(100):
        if await session.page.evaluate(errors) is not None:
            break
        await asyncio.sleep(0.02)
    assert await session.page.evaluate(errors) == "AbortError"
    # The harness stopped asking: the question is recorded as interrupted.
    for _ in range(100):
        if session.elicitations:
            break
        await asyncio.sleep(0.02)
    [record] = session.elicitations
    assert record.action == "cancel" and record.reason == "interrupted before an answer"


async def test_a_question_outside_a_harness_call_is_invalid_state(session: Session) -> None:
    # The page runs its own tool: no call of the harness's runs, nobody is asked.
    session.elicitation = AutoHandler("accept")
    await session.page.evaluate(
        """async () => {
            const mc = document.modelContext;
            const tool = (await mc.getTools()).find((t) => t.name === "ask_and_wait");
            await mc.executeTool(tool, {}).catch(() => null);
        }"""
    )
    assert await session.page.evaluate("window.questionErrors.ask_and_wait") == "InvalidStateError"
    assert session.elicitations == []
