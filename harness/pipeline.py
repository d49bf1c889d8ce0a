"""The call pipeline: one call's way through the user agent.

    look up → validate → [before-call stages] → execute (with timeout) → normalize
            → [after-call stages] → agent view

Each step is a separate typed function. Later duties (trust and policy,
elicitation, redaction) are inserted as before-call or after-call stages,
without touching the others. A before-call stage may stop the call by
returning a result; an after-call stage returns the (possibly rewritten) result.
"""

from __future__ import annotations

import asyncio
import time

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
    Tool,
    error_result,
)
from harness.stages.normalization import normalize
from harness.stages.validation import check_arguments

__all__ = ["AfterCall", "BeforeCall", "CallRequest", "Pipeline", "check_arguments"]

# How long a cancelled tool gets to settle before the harness stops waiting.
CANCEL_GRACE_S = 2.0


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

    def lookup(self, name: str) -> Tool:
        """The tool to call, or :class:`UnknownTool`."""
        tool = self.catalog.get(name)
        if tool is None:
            raise UnknownTool(name, self.catalog.names())
        return tool

    async def call(self, request: CallRequest) -> CallOutcome:
        """Run one call and return its outcome (tool failures are ``isError`` results)."""
        started = time.perf_counter()
        result, kind = await self._run(request)
        request.error_kind = kind
        for stage in self.after:
            result = await stage(request, result)
        return CallOutcome(
            call_id=request.call_id,
            tool=request.tool.name,
            arguments=request.arguments,
            result=result,
            duration_ms=(time.perf_counter() - started) * 1000,
            error_kind=kind,
            backend=self.backend.name,
            notes=request.notes,
        )

    async def _run(self, request: CallRequest) -> tuple[CallToolResult, ErrorKind | None]:
        refused = check_arguments(request.tool, request.arguments)
        if refused is not None:
            return refused, "validation"
        for stage in self.before:
            stopped = await stage(request)
            if stopped is not None:
                return stopped, "refused"
        # The stages may have waited (resolve(), the user's answer): the call runs the
        # definition its arguments and policy were checked against, or not at all.
        changed = await self._changed(request.tool)
        if changed is not None:
            return changed, "refused"
        raw = await self._execute(request)
        if raw is not None and raw.status == "changed":
            return _changed_result(request.tool), "refused"
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
        }
        return normalize(raw), kinds[raw.status]

    async def _changed(self, checked: Tool) -> CallToolResult | None:
        """An ``isError`` result when the page no longer offers ``checked`` as it was.

        A script tool carries its registration number, and the page itself refuses to run
        any other registration (atomically, at ``invoke``): nothing to re-read here. A
        declarative tool is re-read from the page and compared.
        """
        if checked.registration is not None:
            return None
        await self.backend.refresh()
        if self.catalog.get(checked.name) == checked:
            return None
        return _changed_result(checked)

    async def _execute(self, request: CallRequest) -> RawResult | None:
        """Run the tool in the page; None when it timed out (after aborting its signal)."""
        task = asyncio.ensure_future(
            self.backend.execute(request.tool, request.arguments, request.call_id, request.meta)
        )
        try:
            done, _ = await asyncio.wait({task}, timeout=request.timeout)
        except asyncio.CancelledError:
            # The caller gave up (e.g. an MCP client's notifications/cancelled): the page's
            # tool must see its signal abort, even though nobody waits for its answer now.
            abandon = asyncio.ensure_future(self._abandon(task, request.call_id))
            self._abandoned.add(abandon)
            abandon.add_done_callback(self._abandoned.discard)
            raise
        if done:
            return task.result()
        await self.backend.cancel(request.call_id, f"timed out after {request.timeout:g} s")
        done, _ = await asyncio.wait({task}, timeout=CANCEL_GRACE_S)
        if not done:
            task.cancel()
        return None

    async def _abandon(self, task: asyncio.Future[RawResult], call_id: str) -> None:
        """Abort a call nobody waits for any more, and let its execution end."""
        await self.backend.cancel(call_id, "cancelled by the caller")
        done, _ = await asyncio.wait({task}, timeout=CANCEL_GRACE_S)
        if not done:
            task.cancel()


def _changed_result(tool: Tool) -> CallToolResult:
    return error_result(
        f"Tool {tool.name!r} changed while the call was being checked (the page registered it "
        "again, or removed it), so it was not run: its arguments and the policy were checked "
        "against the old definition. List the tools again, then call it again."
    )
