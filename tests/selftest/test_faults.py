"""Each fault scenario against a real browser: a clear result and a usable session (or a
clear "cannot, here is how to recover", then the recovery works), never a hang, never a
traceback; the trace stays valid JSONL."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from harness import Harness
from harness.models import BackendName
from harness.selftest.faults import (
    FAULT_CALL_TIMEOUT_S,
    FAULT_CALLS,
    FAULTS_PAGE,
    SMALL_HEAP_FLAG,
    FaultRun,
)
from harness.selftest.pages import FaultPages
from harness.trace.events import read_trace

# The heavy runs are the full selftest's (`make selftest`, whose report is committed).
FULL_ONLY = pytest.mark.skipif(
    os.environ.get("WEBMCP_SELFTEST_FULL") != "1",
    reason="heavy: runs in `make selftest` (the full selftest); set WEBMCP_SELFTEST_FULL=1",
)


@pytest.fixture(scope="module")
async def fault_pages() -> AsyncIterator[FaultPages]:
    async with FaultPages() as pages:
        yield pages


@pytest.fixture(scope="module")
async def harnesses(chromium_path: str) -> AsyncIterator[dict[BackendName, Harness]]:
    """A harness per backend, shared by the module's tests that need no browser of their own
    (a crash or a kill ends one; a small heap needs its own launch)."""
    async with (
        Harness(executable_path=chromium_path, call_timeout=FAULT_CALL_TIMEOUT_S) as polyfill,
        Harness(
            executable_path=chromium_path, backend="native", call_timeout=FAULT_CALL_TIMEOUT_S
        ) as native,
    ):
        yield {"polyfill": polyfill, "native": native}


@pytest.fixture(scope="module")
def fault_harness(harnesses: dict[BackendName, Harness]) -> Harness:
    return harnesses["polyfill"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("tool", "group", "arguments", "expected"),
    FAULT_CALLS,
    ids=[f"{tool}-{'-'.join(map(str, args.values()))}" for tool, _, args, _ in FAULT_CALLS],
)
async def test_a_misbehaving_tool_ends_clearly_and_the_session_still_works(
    fault_harness: Harness,
    fault_pages: FaultPages,
    tmp_path: Path,
    tool: str,
    group: str,
    arguments: dict[str, Any],
    expected: set[str],
) -> None:
    run = FaultRun(fault_pages, tmp_path / "trace")
    session = await fault_harness.open(fault_pages.url("faults.html", id=FAULTS_PAGE))
    try:
        result = await run.one(session, tool, group, arguments, expected)
    finally:
        await session.close()
    assert run.close(), "the trace is not valid JSONL"
    assert result.survived, result
    assert result.outcome in expected
    events = read_trace(tmp_path / "trace")
    assert [e.tool for e in events if e.type == "tool-result"] == [tool, "echo"]  # type: ignore[union-attr]


async def test_a_result_over_the_cap_is_refused_naming_its_size(
    fault_harness: Harness, fault_pages: FaultPages
) -> None:
    session = await fault_harness.open(fault_pages.url("faults.html", id=FAULTS_PAGE))
    try:
        session.max_result_bytes = 1_000_000
        refused = await session.call("return_big", {"mb": 1})
        session.max_result_bytes = 2_000_000
        passed = await session.call("return_big", {"mb": 1})
    finally:
        await session.close()
    assert refused.error_kind == "too_large"
    assert "1,048,576 bytes" in refused.result.content[0].text  # type: ignore[union-attr]
    assert "1,000,000" in refused.result.content[0].text  # type: ignore[union-attr]
    assert passed.error_kind is None


async def test_a_canary_secret_never_reaches_the_agent_view(
    fault_harness: Harness, fault_pages: FaultPages
) -> None:
    session = await fault_harness.open(fault_pages.url("faults.html", id=FAULTS_PAGE))
    try:
        outcome = await session.call("secret", {})
        user_view = session.user_view(outcome)
    finally:
        await session.close()
    assert "HXCANARY" not in outcome.result.model_dump_json()
    assert user_view is not None and "HXCANARY" in user_view.model_dump_json()


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["polyfill", "native"])
async def test_a_renderer_crash_ends_the_call_as_crashed_and_says_how_to_recover(
    chromium_path: str, fault_pages: FaultPages, tmp_path: Path, backend: BackendName
) -> None:
    # The crashed renderer also fails the call's own command ("the page is gone"): the
    # outcome must still say the page crashed (not "navigation"), with how to recover.
    run = FaultRun(fault_pages, tmp_path / "trace")
    async with Harness(
        executable_path=chromium_path,
        backend=backend,
        call_timeout=FAULT_CALL_TIMEOUT_S,
        launch_args=[SMALL_HEAP_FLAG],
    ) as harness:
        result = await run.crash(harness)
    assert run.close()
    assert result.survived, result
    assert result.outcome == "crashed", result
    assert "new session" in result.detail
    call = next(e for e in read_trace(tmp_path / "trace") if e.type == "tool-result")
    assert "crashed" in call.model_dump_json() and "Harness.open" in call.model_dump_json()


async def test_a_killed_browser_ends_the_call_and_the_harness_relaunches(
    chromium_path: str, fault_pages: FaultPages, tmp_path: Path
) -> None:
    run = FaultRun(fault_pages, tmp_path / "trace")
    async with Harness(executable_path=chromium_path, call_timeout=FAULT_CALL_TIMEOUT_S) as h:
        result = await run.browser_killed(h)
    assert run.close()
    assert result.survived, result
    assert result.outcome == "crashed", result


@pytest.mark.slow
async def test_registration_storms_leave_a_consistent_catalog(
    fault_harness: Harness, fault_pages: FaultPages, tmp_path: Path
) -> None:
    run = FaultRun(fault_pages, tmp_path / "trace")
    await run.storms(fault_harness, many=10_000)
    assert run.close()
    assert [(r.name, r.survived) for r in run.results] == [
        ("register_storm_10000", True),
        ("tools_10000", True),
        ("register_forever", True),
    ], run.results


@pytest.mark.slow
@FULL_ONLY
async def test_a_hundred_thousand_tools(
    fault_harness: Harness, fault_pages: FaultPages, tmp_path: Path
) -> None:
    run = FaultRun(fault_pages, tmp_path / "trace")
    await run.storms(fault_harness, many=100_000)
    assert run.close()
    assert all(r.survived for r in run.results), run.results


@pytest.mark.parametrize("backend", ["polyfill", "native"])
async def test_a_tool_unregistered_mid_call_runs_on_as_in_native_chromium(
    harnesses: dict[BackendName, Harness], fault_pages: FaultPages, backend: BackendName
) -> None:
    # Chromium's native WebMCP keeps running a tool whose registration is withdrawn while
    # it runs, and delivers its answer (CDP toolsRemoved, then toolResponded "Completed");
    # seed 002 forbids unmounting a running tool before its result is delivered. Both
    # backends must behave so: the answer comes back, and the tool is gone afterwards.
    session = await harnesses[backend].open(fault_pages.url("faults.html", id=FAULTS_PAGE))
    try:
        outcome = await session.call("unregister_then_answer", {}, timeout=60)
        names = {t.name for t in await session.tools()}
    finally:
        await session.close()
    assert outcome.error_kind is None, outcome.result
    assert "after unregistering" in outcome.result.model_dump_json()
    assert "unregister_then_answer" not in names and "echo" in names


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["polyfill", "native"])
@pytest.mark.parametrize("tool", ["navigate_away", "reload_mid_call", "detach_frame"])
async def test_the_document_going_away_mid_call_ends_it_at_once_on_both_backends(
    harnesses: dict[BackendName, Harness], fault_pages: FaultPages, backend: BackendName, tool: str
) -> None:
    # With a call timeout far beyond the test's, the call ends by the navigation itself
    # (not by the timeout), saying so.
    session = await harnesses[backend].open(fault_pages.url("faults.html", id=FAULTS_PAGE))
    try:
        outcome = await asyncio.wait_for(session.call(tool, {}, timeout=600), 60)
    finally:
        await session.close()
    assert outcome.error_kind == "navigation", outcome.result
    assert "interrupted by navigation" in outcome.result.model_dump_json()
