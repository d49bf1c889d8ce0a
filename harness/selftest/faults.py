"""Fault scenarios: hostile pages (``pages/faults.html``, ``pages/storm.html``) against a
real browser. Each ends in a clear result and a session that still works, or one that says
it cannot, and how to recover (and the recovery is then taken and must work).

Every call's agent view is written to a trace, which must read back as valid JSONL.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from harness.errors import HarnessError, PageCrashed
from harness.harness import Harness
from harness.models import CallAction, CallOutcome
from harness.selftest.pages import FaultPages
from harness.session import Session
from harness.trace.events import call_events, read_trace
from harness.trace.recorder import TraceRecorder

# The per-call timeout the fault scenarios run with (a hanging tool ends by it).
FAULT_CALL_TIMEOUT_S = 5.0
# A fault that takes longer than this to end counts as a hang.
HANG_LIMIT_S = 60.0
# How long listing and calling among 10^5 tools may take before it counts as a hang.
MANY_TOOLS_LIMIT_S = 600.0
# The `id` the fault page is opened with (each echo names it).
FAULTS_PAGE = "faults"
# The V8 heap the crash scenario's browser gets: a huge allocation crashes the renderer fast.
SMALL_HEAP_FLAG = "--js-flags=--max-old-space-size=128"


class FaultResult(BaseModel):
    """How one fault scenario ended."""

    name: str
    group: str
    survived: bool
    outcome: str  # the call's error kind ("ok" for a plain result), or what was raised
    detail: str  # the first line of what the agent (or caller) was told
    seconds: float


# tool, arguments, the error kinds that count as a clear result ("ok": a plain result).
FAULT_CALLS: list[tuple[str, str, dict[str, Any], set[str]]] = [
    ("hang", "hang", {}, {"timeout"}),
    ("busy_loop", "hang", {}, {"timeout"}),
    ("throw_string", "throw", {}, {"thrown"}),
    ("throw_undefined", "throw", {}, {"thrown"}),
    ("throw_null", "throw", {}, {"thrown"}),
    ("throw_symbol", "throw", {}, {"thrown"}),
    ("throw_getters", "throw", {}, {"thrown"}),
    ("throw_revoked_proxy", "throw", {}, {"thrown"}),
    ("reject_later", "throw", {}, {"thrown"}),
    ("return_cyclic", "return", {}, {"thrown"}),
    ("return_bigint", "return", {}, {"thrown"}),
    ("return_undefined", "return", {}, {"ok"}),
    ("return_function", "return", {}, {"ok"}),
    ("return_symbol", "return", {}, {"thrown"}),
    ("return_proxy", "return", {}, {"thrown"}),
    ("return_tojson_throws", "return", {}, {"thrown"}),
    ("return_thenable_throws", "return", {}, {"thrown"}),
    ("return_big", "size", {"mb": 50}, {"too_large"}),
    ("return_big", "size", {"mb": 11}, {"too_large"}),
    ("return_deep", "size", {"depth": 100000}, {"too_large"}),
    ("return_deep_object", "size", {"depth": 100000}, {"too_large"}),
    ("dialog_alert", "dialog", {}, {"ok"}),
    ("dialog_confirm", "dialog", {}, {"ok"}),
    ("dialog_prompt", "dialog", {}, {"ok"}),
    ("dialog_print", "dialog", {}, {"ok"}),
    ("dialog_beforeunload", "dialog", {}, {"navigation"}),
    ("navigate_away", "document", {}, {"navigation"}),
    ("reload_mid_call", "document", {}, {"navigation"}),
    ("detach_frame", "document", {}, {"navigation"}),
    # Unregistration does not end a running call (seed 002 §"Change detection"; native
    # Chromium alike): its answer is delivered, and one that never answers times out.
    ("unregister_then_answer", "document", {}, {"ok"}),
    ("unregister_self", "document", {}, {"timeout"}),
]


class FaultRun:
    """Runs the fault scenarios with one page server and one trace."""

    def __init__(self, pages: FaultPages, trace_dir: Path) -> None:
        """``trace_dir``: a new directory for the run's ``trace.jsonl``."""
        self.pages = pages
        self.trace = TraceRecorder(trace_dir)
        self.trace_dir = trace_dir
        self.results: list[FaultResult] = []
        self._step = 0

    def _record(self, tool: str, arguments: dict[str, Any], outcome: CallOutcome) -> None:
        self._step += 1
        for event in call_events(self._step, CallAction(tool=tool, arguments=arguments), outcome):
            self.trace.record(event)

    async def _call(self, session: Session, tool: str, arguments: dict[str, Any]) -> CallOutcome:
        outcome = await asyncio.wait_for(session.call(tool, arguments), HANG_LIMIT_S)
        self.trace.watch(session.scrubber)  # what any of its sessions withheld stays out
        self._record(tool, arguments, outcome)
        return outcome

    async def _usable(self, session: Session, page_id: str) -> bool:
        """The session still works: ``echo`` answers, naming its page and call."""
        outcome = await self._call(session, "echo", {"n": self._step})
        text = outcome.result.content[0].text if outcome.result.content else ""  # type: ignore[union-attr]
        return not outcome.is_error and f'"page":"{page_id}"' in text

    async def scenario(
        self,
        name: str,
        group: str,
        body: Callable[[], Awaitable[tuple[bool, str, str]]],
        *,
        limit: float = HANG_LIMIT_S * 2,
    ) -> FaultResult:
        """Run one scenario; a hang (no end within ``limit`` seconds), or any exception, is
        a failure that says so."""
        started = time.perf_counter()
        try:
            survived, outcome, detail = await asyncio.wait_for(body(), limit)
        except TimeoutError:
            survived, outcome, detail = False, "hang", f"no result within {limit:g} s"
        except Exception as exc:  # a selftest reports every failure instead of stopping
            survived, outcome, detail = False, type(exc).__name__, _first_line(str(exc))
        result = FaultResult(
            name=name,
            group=group,
            survived=survived,
            outcome=outcome,
            detail=detail,
            seconds=round(time.perf_counter() - started, 2),
        )
        self.results.append(result)
        return result

    async def calls(self, harness: Harness) -> None:
        """Every misbehaving tool of ``faults.html``, each followed by a working call."""
        session = await harness.open(self.pages.url("faults.html", id=FAULTS_PAGE))
        for tool, group, arguments, expected in FAULT_CALLS:
            await self.one(session, tool, group, arguments, expected)
        await session.close()

    async def one(
        self,
        session: Session,
        tool: str,
        group: str,
        arguments: dict[str, Any],
        expected: set[str],
    ) -> FaultResult:
        """One misbehaving call on ``faults.html``: it must end as one of ``expected``, and
        ``echo`` must answer afterwards (after re-listing, when the document changed)."""
        names = {t.name for t in session.catalog.tools()}
        if f"faults.html?id={FAULTS_PAGE}" not in session.url or "detach_frame" not in names:
            await session.open(self.pages.url("faults.html", id=FAULTS_PAGE))

        async def body() -> tuple[bool, str, str]:
            outcome = await self._call(session, tool, arguments)
            kind = outcome.error_kind or "ok"
            now = FAULTS_PAGE
            if kind == "navigation":  # as an agent is told to: list the tools again
                await session.page.wait_for_load_state("load")
                await session.tools()
                now = "navigated" if tool == "navigate_away" else FAULTS_PAGE
            return kind in expected and await self._usable(session, now), kind, _told(outcome)

        label = tool + ("" if not arguments else f"({_args(arguments)})")
        return await self.scenario(label, group, body)

    async def crash(self, harness: Harness) -> FaultResult:
        """The renderer dies of a huge allocation mid-call: a clear result, a clear
        refusal afterwards, and a new session that works."""

        async def body() -> tuple[bool, str, str]:
            session = await harness.open(self.pages.url("faults.html", id="crash"))
            outcome = await self._call(session, "crash_allocation", {})
            kind = outcome.error_kind or "ok"
            try:
                await asyncio.wait_for(session.call("echo", {}), HANG_LIMIT_S)
                return False, kind, "the crashed session went on answering"
            except PageCrashed as exc:
                told = str(exc)
            await session.close()
            fresh = await harness.open(self.pages.url("faults.html", id="after-crash"))
            usable = await self._usable(fresh, "after-crash")
            await fresh.close()
            clear = kind == "crashed" and "new session" in told
            return clear and usable, kind, _first_line(told)

        return await self.scenario("renderer_crash", "process", body)

    async def browser_killed(self, harness: Harness) -> FaultResult:
        """The browser process is killed mid-call: the call ends clearly, the session says
        how to recover, and ``Harness.open`` launches a new browser that works."""

        async def body() -> tuple[bool, str, str]:
            session = await harness.open(self.pages.url("faults.html", id="kill"))
            running = asyncio.ensure_future(session.call("hang", {}, timeout=HANG_LIMIT_S))
            await asyncio.sleep(0.5)
            await _kill_browser(harness)
            outcome = await asyncio.wait_for(running, HANG_LIMIT_S)
            self._record("hang", {}, outcome)
            kind = outcome.error_kind or "ok"
            try:
                await asyncio.wait_for(session.call("echo", {}), HANG_LIMIT_S)
                return False, kind, "the session of a killed browser went on answering"
            except PageCrashed as exc:
                told = str(exc)
            fresh = await harness.open(self.pages.url("faults.html", id="relaunched"))
            usable = await self._usable(fresh, "relaunched")
            await fresh.close()
            clear = kind == "crashed" and "Harness.open" in told
            return clear and usable, kind, _first_line(told)

        return await self.scenario("browser_killed", "process", body)

    async def storms(self, harness: Harness, *, many: int) -> None:
        """Registration storms: a consistent catalog, coalesced change events."""

        async def burst() -> tuple[bool, str, str]:
            session = await harness.open(self.pages.url("storm.html", mode="burst", n="10000"))
            changes: list[int] = []
            session.on_tools_changed(lambda change: changes.append(1))
            await _until(session, "window.stormDone === true")
            names = {t.name for t in await session.tools()}
            expected = {"echo", *(f"burst_{i}" for i in range(0, 10000, 100))}
            await session.close()
            ok = names == expected and len(changes) < 1000
            return ok, "ok", f"{len(names)} tools listed, {len(changes)} change events"

        async def many_tools() -> tuple[bool, str, str]:
            session = await harness.open(self.pages.url("storm.html", mode="many", n=str(many)))
            await _until(session, "window.stormDone === true")
            tools = await session.tools()
            outcome = await self._call(session, f"many_{many - 1}", {"n": 7})
            await session.close()
            ok = len(tools) == many + 1 and not outcome.is_error
            return ok, "ok", f"{len(tools)} tools listed; the last one answered"

        async def forever() -> tuple[bool, str, str]:
            session = await harness.open(self.pages.url("storm.html", mode="forever"))
            tools = await session.tools()
            outcome = await self._call(session, "echo", {"n": 1})
            await session.close()
            ok = "echo" in {t.name for t in tools} and not outcome.is_error
            return ok, "ok", "listed and called while the page registers in a loop"

        await self.scenario("register_storm_10000", "registry", burst)
        # Each of 10^5 tools is checked and diffed on every listing: minutes on a busy machine.
        await self.scenario(f"tools_{many}", "registry", many_tools, limit=MANY_TOOLS_LIMIT_S)
        await self.scenario("register_forever", "registry", forever)

    def close(self) -> bool:
        """Close the trace; True when it reads back as valid JSONL."""
        self.trace.close()
        try:
            read_trace(self.trace_dir)
        except HarnessError:
            return False
        return True


async def _until(session: Session, condition: str) -> None:
    """Wait (at most a minute) for a page condition."""
    await session.page.wait_for_function(condition, timeout=60_000)


async def _kill_browser(harness: Harness) -> None:
    """Kill the browser process (SIGKILL), as an out-of-memory killer would."""
    cdp = await harness.browser.new_browser_cdp_session()
    info = await cdp.send("SystemInfo.getProcessInfo")
    pids = [p["id"] for p in info.get("processInfo", []) if p.get("type") == "browser"]
    if not pids:
        raise HarnessError("cannot find the browser's process id to kill it")
    os.kill(int(pids[0]), signal.SIGKILL)


def _told(outcome: CallOutcome) -> str:
    for block in outcome.result.content:
        text = getattr(block, "text", None)
        if isinstance(text, str):
            lines = [line for line in text.splitlines() if not line.startswith("<")]
            return _first_line("\n".join(lines))[:160]
    return "(no content)"


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def _args(arguments: dict[str, Any]) -> str:
    return ",".join(f"{key}={value}" for key, value in arguments.items())
