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
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from mcp.types import CallToolResult

from harness.backends.base import Backend, RawResult
from harness.catalog import Catalog
from harness.errors import UnknownTool
from harness.models import META_PREFIX, CallOutcome, ErrorKind, Tool, error_result
from harness.normalization import normalize
from harness.validation import describe_problems, schema_problem, validate_arguments

# How long a cancelled tool gets to settle before the harness stops waiting.
CANCEL_GRACE_S = 2.0


@dataclass
class CallRequest:
    """One call on its way through the pipeline."""

    tool: Tool
    arguments: dict[str, Any]
    timeout: float
    call_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    meta: dict[str, Any] = field(default_factory=dict)  # extra `execute` options for the page
    notes: list[str] = field(default_factory=list)


BeforeCall = Callable[[CallRequest], Awaitable[CallToolResult | None]]
AfterCall = Callable[[CallRequest, CallToolResult], Awaitable[CallToolResult]]


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
        raw = await self._execute(request)
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

    async def _execute(self, request: CallRequest) -> RawResult | None:
        """Run the tool in the page; None when it timed out (after aborting its signal)."""
        task = asyncio.ensure_future(
            self.backend.execute(request.tool, request.arguments, request.call_id, request.meta)
        )
        done, _ = await asyncio.wait({task}, timeout=request.timeout)
        if done:
            return task.result()
        await self.backend.cancel(request.call_id, f"timed out after {request.timeout:g} s")
        done, _ = await asyncio.wait({task}, timeout=CANCEL_GRACE_S)
        if not done:
            task.cancel()
        return None


def check_arguments(tool: Tool, arguments: Any) -> CallToolResult | None:
    """The validation stage: an ``isError`` result when the arguments do not fit."""
    problem = schema_problem(tool.input_schema)
    if problem is not None:
        return error_result(
            f"Tool {tool.name!r} has an invalid inputSchema, so its arguments cannot be "
            f"checked; the tool was not run. Schema problem: {problem}"
        )
    problems = validate_arguments(tool, arguments)
    if problems:
        return error_result(
            describe_problems(tool, problems),
            {META_PREFIX + "validation": [p.model_dump() for p in problems]},
        )
    return None
