"""The call pipeline: one call's way through the user agent.

    look up → validate → [before-call stages] → execute (with timeout) → normalize
            → [after-call stages] → agent view

Each step is a separate typed function. Later duties (trust and policy,
elicitation, redaction) are inserted as before-call or after-call stages,
without touching the others. A before-call stage may stop the call by
returning a result; an after-call stage returns the (possibly rewritten) result.

Stages that have nothing to do for a tool cost nothing: a stage may say, once per tool,
whether it has work for that tool's calls (``works_on(tool) -> bool``, see
:class:`StageWork`); the pipeline asks once per :class:`~harness.models.Tool` object (a
tool the page changes is a new object) and runs only the stages that do. A stage that
does not say always runs. What a stage derives from a tool alone (a compiled schema, a
declaration) it keeps per tool the same way (:class:`~harness.models.PerTool`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, runtime_checkable

from mcp_types import CallToolResult

from harness.browser.backends.base import Backend, RawResult
from harness.catalog import Catalog
from harness.errors import UnknownTool
from harness.models import (
    AfterCall,
    BeforeCall,
    CallOutcome,
    CallRequest,
    ErrorKind,
    PerTool,
    Tool,
    error_result,
)
from harness.stages.normalization import (
    DEFAULT_MAX_RESULT_BYTES,
    ResultRefused,
    check_size,
    normalize,
    too_large_message,
)
from harness.stages.validation import check_arguments, check_arguments_async

__all__ = ["AfterCall", "BeforeCall", "CallRequest", "Pipeline", "StageWork", "check_arguments"]

# How long a cancelled tool gets to settle before the harness stops waiting.
CANCEL_GRACE_S = 2.0
# How long a call whose document went away waits to learn whether the renderer crashed
# (the crash and the call's failing command reach Python by different ways, either first),
# unless the page answers sooner.
CRASH_CONFIRM_S = 2.0
PROBE_RETRY_S = 0.05


@runtime_checkable
class StageWork(Protocol):
    """A stage that says whether it has work for a tool's calls (asked once per tool)."""

    def works_on(self, tool: Tool) -> bool:
        """False when the stage would do nothing for any call of ``tool``."""
        ...


def _works_on(stage: object, tool: Tool) -> bool:
    return not isinstance(stage, StageWork) or stage.works_on(tool)


class Pipeline:
    """Runs calls for one session through the stages, in order."""

    def __init__(
        self,
        catalog: Catalog,
        backend: Backend,
        *,
        before: list[BeforeCall] | None = None,
        after: list[AfterCall] | None = None,
    ) -> None:
        self.catalog = catalog
        self.backend = backend
        self.before: list[BeforeCall] = list(before or [])
        self.after: list[AfterCall] = list(after or [])
        self._abandoned: set[asyncio.Future[None]] = set()  # aborts of calls given up on
        # The biggest result passed on (bytes of UTF-8); the session sets it.
        self.max_result_bytes = DEFAULT_MAX_RESULT_BYTES
        # Set (with why, and how to recover) when the page crashed or the browser went away:
        # running calls end at once instead of waiting for a page that will never answer.
        self.broken = asyncio.Event()
        self.broken_reason = ""
        self._broken_signal: asyncio.Future[None] | None = None  # made on the first call
        # Returns once the page answers (the session sets it); a call whose document went
        # away asks it, to tell a navigation from a crash whose news is still on its way.
        self.page_answers: Callable[[], Awaitable[object]] | None = None
        # The stages with work for each tool, for the stage lists as they are (_stages).
        self._stage_lists: tuple[object, ...] = ()
        self._plans = PerTool(self._plan)

    def _stages(self, tool: Tool) -> tuple[list[BeforeCall], list[AfterCall]]:
        """The before- and after-call stages that have work for ``tool``'s calls, decided
        once per tool (anew when the stage lists changed)."""
        lists = (*self.before, None, *self.after)
        if lists != self._stage_lists:
            self._stage_lists = lists
            self._plans = PerTool(self._plan)
        return self._plans(tool)

    def _plan(self, tool: Tool) -> tuple[list[BeforeCall], list[AfterCall]]:
        return (
            [stage for stage in self.before if _works_on(stage, tool)],
            [stage for stage in self.after if _works_on(stage, tool)],
        )

    def break_down(self, reason: str) -> None:
        """The page answers no more (``reason`` says why, and how to recover): running
        calls end now, with ``reason``."""
        self.broken_reason = reason
        self.broken.set()
        if self._broken_signal is not None and not self._broken_signal.done():
            self._broken_signal.set_result(None)

    def _broken_future(self) -> asyncio.Future[None]:
        """A future done once the page broke (cheaper to wait on than ``broken.wait()``,
        which would need a task per call)."""
        if self._broken_signal is None:
            self._broken_signal = asyncio.get_running_loop().create_future()
            if self.broken.is_set():
                self._broken_signal.set_result(None)
        return self._broken_signal

    def lookup(self, name: str) -> Tool:
        """The tool to call, or :class:`UnknownTool`."""
        tool = self.catalog.get(name)
        if tool is None:
            raise UnknownTool(name, self.catalog.names())
        return tool

    async def call(self, request: CallRequest) -> CallOutcome:
        """Run one call and return its outcome (tool failures are ``isError`` results)."""
        started = time.perf_counter()
        before, after = self._stages(request.tool)
        result, kind = await self._run(request, before)
        request.error_kind = kind
        for stage in after:
            result = await stage(request, result)
        return CallOutcome(
            call_id=request.call_id,
            tool=request.tool.name,
            arguments=request.arguments,
            result=result,
            duration_ms=(time.perf_counter() - started) * 1000,
            error_kind=kind,
            form_refusal=request.form_refusal,
            backend=self.backend.name,
            notes=request.notes,
        )

    async def _run(
        self, request: CallRequest, before: list[BeforeCall]
    ) -> tuple[CallToolResult, ErrorKind | None]:
        refused = await check_arguments_async(request.tool, request.arguments)
        if refused is not None:
            return refused, "validation"
        for stage in before:
            stopped = await stage(request)
            if stopped is not None:
                return stopped, "refused"
        # The stages may have waited (resolve(), the user's answer): the call runs the
        # definition its arguments and policy were checked against, or not at all.
        changed = await self._changed(request.tool)
        if changed is not None:
            return changed, "refused"
        if self.catalog.paused is not None:  # the page left the origins the user allowed
            return error_result(f"Tool {request.tool.name!r} was not run. {self.catalog.paused}"), (
                "refused"
            )
        raw = await self._execute(request)
        if raw is not None and raw.status == "changed":
            return _changed_result(request.tool), "refused"
        if raw is not None and raw.status == "too_large":
            size = raw.size or 0
            return error_result(too_large_message(size, self.max_result_bytes)), "too_large"
        if raw is not None and raw.status == "unanswered":
            waited = raw.waited_ms or 0
            return error_result(unanswered_message(request.tool.name, waited)), "timeout"
        if raw is None and self.broken.is_set():
            return error_result(f"Tool {request.tool.name!r}: {self.broken_reason}"), "crashed"
        if raw is None:
            return (
                error_result(
                    f"Tool {request.tool.name!r} timed out after {request.timeout:g} s; "
                    "its signal was aborted."
                ),
                "timeout",
            )
        kinds: dict[str, ErrorKind | None] = {
            "ok": None,
            "error": "thrown",
            "cancelled": "cancelled",
            "navigation": "navigation",
            "too_large": "too_large",
        }
        try:
            check_size(raw, self.max_result_bytes)
            result = normalize(raw)
            if raw.status == "error" and request.tool.source == "declarative":
                request.form_refusal = raw.refusal
            return result, kinds[raw.status]
        except ResultRefused as refused:
            return error_result(str(refused)), "too_large"

    async def _changed(self, checked: Tool) -> CallToolResult | None:
        """An ``isError`` result when the page no longer offers ``checked`` as it was.

        A script tool carries its registration number, and the page itself refuses to run
        any other registration (atomically, at ``invoke``): nothing to re-read here. A
        declarative tool is re-read from the page and compared.
        """
        if checked.registration is not None:
            return None
        await self.backend.refresh_for(checked)
        if self.catalog.get(checked.name) == checked:
            return None
        return _changed_result(checked)

    async def _execute(self, request: CallRequest) -> RawResult | None:
        """Run the tool in the page; None when it timed out (after aborting its signal) or
        the page broke (:attr:`broken`)."""
        task = asyncio.ensure_future(
            self.backend.execute(request.tool, request.arguments, request.call_id, request.meta)
        )
        try:
            await _first(task, self._broken_future(), request.timeout)
        except asyncio.CancelledError:
            # The caller gave up (e.g. an MCP client's notifications/cancelled): the page's
            # tool must see its signal abort, even though nobody waits for its answer now.
            abandon = asyncio.ensure_future(self._abandon(task, request.call_id))
            self._abandoned.add(abandon)
            abandon.add_done_callback(self._abandoned.discard)
            raise
        if task.done():
            raw = task.result()
            # A crashed renderer also fails the call's own command (its document is gone),
            # often before the crash is heard: the crash is the outcome.
            if raw.status == "navigation" and not self.broken.is_set():
                await self._crash_or_answer()
            if raw.status == "navigation" and self.broken.is_set():
                return None
            return raw
        if self.broken.is_set():
            task.cancel()  # the page will never answer
            return None
        await self._stop(task, request.call_id, f"timed out after {request.timeout:g} s")
        return None

    async def _crash_or_answer(self) -> None:
        """Wait until the page answers (it navigated: the call's document went away, the
        page lives on) or is known to have crashed, at most :data:`CRASH_CONFIRM_S`."""
        if self.page_answers is None:
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + CRASH_CONFIRM_S
        broken = self._broken_future()
        while not broken.done() and (left := deadline - loop.time()) > 0:
            probe = asyncio.ensure_future(self.page_answers())
            racing: set[asyncio.Future[Any]] = {probe, broken}
            try:
                await asyncio.wait(racing, timeout=left, return_when=asyncio.FIRST_COMPLETED)
            finally:
                answered = probe.done()
                if not answered:
                    probe.cancel()  # the crash was heard, or the time is up
                # Its outcome is read, so that asyncio does not log it as never retrieved.
                probe.add_done_callback(lambda done: done.cancelled() or done.exception())
            if not answered or probe.exception() is None:
                return  # the crash was heard, the time is up, or the page answered: it lives
            # Not answered (between documents, or going away): ask again shortly.
            await asyncio.wait({broken}, timeout=min(PROBE_RETRY_S, left))

    async def _stop(self, task: asyncio.Future[RawResult], call_id: str, reason: str) -> None:
        """Abort a call's signal; a page too busy to hear it (a tool that never yields)
        has its script stopped, so that the session stays usable."""
        try:
            await asyncio.wait_for(self.backend.cancel(call_id, reason), CANCEL_GRACE_S)
        except TimeoutError:
            await self.backend.interrupt()
        done, _ = await asyncio.wait({task}, timeout=CANCEL_GRACE_S)
        if not done:
            await self.backend.interrupt()
            task.cancel()

    async def _abandon(self, task: asyncio.Future[RawResult], call_id: str) -> None:
        """Abort a call nobody waits for any more, and let its execution end."""
        await self._stop(task, call_id, "cancelled by the caller")


async def _first(task: asyncio.Future[Any], broken: asyncio.Future[None], timeout: float) -> None:
    """Return once ``task`` is done, ``broken`` is, or ``timeout`` seconds passed: what
    ``asyncio.wait(FIRST_COMPLETED)`` does, without its sets (once per call)."""
    loop = asyncio.get_running_loop()
    waiter: asyncio.Future[None] = loop.create_future()

    def wake(_: object = None) -> None:
        if not waiter.done():
            waiter.set_result(None)

    task.add_done_callback(wake)
    broken.add_done_callback(wake)
    timer = loop.call_later(timeout, wake)
    try:
        await waiter
    finally:
        timer.cancel()
        task.remove_done_callback(wake)
        broken.remove_done_callback(wake)


def unanswered_message(name: str, waited_ms: int) -> str:
    return (
        f"Tool {name!r} was not run: Chromium's WebMCP did not answer in its frame (the "
        f"lookup of the tool, getTools(), had not settled after {waited_ms / 1000:g} s). "
        "This is a Chromium fault: under load, now and then, a frame's WebMCP requests are "
        "never answered, and its registrations never reach the browser. Load the page again; "
        "the polyfill backend does not depend on it."
    )


def _changed_result(tool: Tool) -> CallToolResult:
    return error_result(
        f"Tool {tool.name!r} changed while the call was being checked (the page registered it "
        "again, or removed it), so it was not run: its arguments and the policy were checked "
        "against the old definition. List the tools again, then call it again."
    )
