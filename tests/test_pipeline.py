"""The pipeline's own decisions, on a backend that runs nothing (no browser).

A crashed renderer fails the call's command ("the document is gone") and raises Playwright's
``crash`` event; the two reach Python by different ways, in either order. Whatever the
order, the call's outcome is the crash, with how to recover, never "navigation".
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import harness.pipeline as pipeline_module
from harness.browser.backends.base import RawResult
from harness.catalog import Catalog, FrameInfo
from harness.models import CallOutcome, CallRequest, Tool
from harness.pipeline import Pipeline
from tests.stages.test_trust import ORIGIN, FakeBackend, tool

CRASHED = "the page crashed; open a new session"


class Page:
    """What the pipeline asks of the page after a call's document went away."""

    def __init__(self, *, answers: bool) -> None:
        self.answers = answers
        self.asked = 0

    async def probe(self) -> None:
        self.asked += 1
        if not self.answers:
            raise RuntimeError("Target crashed")


def rig(page: Page | None) -> Pipeline:
    backend = FakeBackend()
    backend.results["work"] = RawResult(status="navigation")
    pipeline = Pipeline(Catalog(), backend)
    if page is not None:
        pipeline.page_answers = page.probe
    main = FrameInfo(key="main", url=ORIGIN + "/page", origin=ORIGIN, is_main=True)
    pipeline.catalog.replace_frame(main, [work()])
    return pipeline


def work() -> Tool:
    return tool("work")


async def call(pipeline: Pipeline) -> CallOutcome:
    return await pipeline.call(CallRequest(tool=work(), arguments={}, timeout=5))


async def test_a_crash_heard_after_the_calls_failing_command_is_the_outcome() -> None:
    page = Page(answers=False)
    pipeline = rig(page)
    asyncio.get_running_loop().call_later(0.2, pipeline.break_down, CRASHED)
    outcome = await call(pipeline)
    assert outcome.error_kind == "crashed", outcome
    assert CRASHED in outcome.result.model_dump_json()
    assert page.asked >= 1


async def test_a_crash_heard_first_needs_no_question_to_the_page() -> None:
    page = Page(answers=False)
    pipeline = rig(page)
    pipeline.break_down(CRASHED)
    outcome = await call(pipeline)
    assert outcome.error_kind == "crashed", outcome
    assert page.asked == 0


async def test_a_page_that_answers_after_its_document_went_away_navigated() -> None:
    page = Page(answers=True)
    pipeline = rig(page)
    outcome = await call(pipeline)
    assert outcome.error_kind == "navigation", outcome
    assert page.asked == 1


async def test_a_page_between_documents_is_asked_again_until_it_answers() -> None:
    answers: list[bool] = [False, False, True]

    async def probe() -> Any:
        if not answers.pop(0):
            raise RuntimeError("Execution context was destroyed")

    pipeline = rig(None)
    pipeline.page_answers = probe
    outcome = await call(pipeline)
    assert outcome.error_kind == "navigation", outcome
    assert answers == []


async def test_a_page_that_neither_answers_nor_crashes_is_called_navigated_in_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pipeline_module, "CRASH_CONFIRM_S", 0.2)
    probes: list[asyncio.Future[None]] = []

    async def never() -> None:
        probes.append(asyncio.get_running_loop().create_future())
        await probes[-1]

    pipeline = rig(None)
    pipeline.page_answers = never
    outcome = await call(pipeline)
    assert outcome.error_kind == "navigation", outcome
    await asyncio.sleep(0)
    assert len(probes) == 1 and probes[0].cancelled()  # the question is not left running


# -- stages that have nothing to do for a tool cost nothing ----------------------------------


class Counting:
    """A before- or after-call stage that has work only for the tools it names, and counts
    how often it was asked, and run."""

    def __init__(self, *names: str) -> None:
        self.names = set(names)
        self.asked: list[str] = []
        self.ran: list[str] = []

    def works_on(self, tool: Tool) -> bool:
        self.asked.append(tool.name)
        return tool.name in self.names

    async def __call__(self, request: CallRequest, *result: Any) -> Any:
        self.ran.append(request.tool.name)
        return result[0] if result else None


async def test_a_stage_is_asked_once_per_tool_and_runs_only_where_it_has_work() -> None:
    pipeline = Pipeline(Catalog(), FakeBackend())
    before, after = Counting("busy"), Counting("busy")
    pipeline.before.append(before)
    pipeline.after.append(after)
    # Registered script tools: the page checks the registration, nothing is re-read here.
    busy, idle = tool("busy", registration=1), tool("idle", registration=2)
    for _ in range(3):
        for one in (busy, idle):
            outcome = await pipeline.call(CallRequest(tool=one, arguments={}, timeout=5))
            assert not outcome.result.is_error
    assert before.ran == after.ran == ["busy"] * 3
    assert sorted(before.asked) == sorted(after.asked) == ["busy", "idle"]  # once per tool
    # The page registered `idle` again: a new Tool object, asked anew.
    await pipeline.call(CallRequest(tool=tool("idle", registration=3), arguments={}, timeout=5))
    assert before.asked.count("idle") == 2


async def test_a_stage_added_later_is_asked_too_and_one_that_does_not_say_always_runs() -> None:
    pipeline = Pipeline(Catalog(), FakeBackend())
    idle = tool("idle", registration=1)
    await pipeline.call(CallRequest(tool=idle, arguments={}, timeout=5))
    later, always = Counting(), []

    async def plain_stage(request: CallRequest) -> None:
        always.append(request.tool.name)

    pipeline.before += [later, plain_stage]
    await pipeline.call(CallRequest(tool=idle, arguments={}, timeout=5))
    assert later.asked == ["idle"] and later.ran == [] and always == ["idle"]
