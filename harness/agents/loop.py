"""The agent loop: an agent drives one page's tools, step by step, within a step limit.

Each step the agent gets an :class:`~harness.agents.base.AgentContext` (the
task, the agent view of the catalog, its history) and returns an action:

- a **call** goes through :meth:`Session.call`, the full pipeline (validation,
  trust and policy, elicitation, redaction); the agent sees the agent view of
  the result, and a tool the page does not offer is an error it sees;
- a **navigation** is resolved against the start URL (``/archive``), and only
  ``http``/``https`` URLs are followed;
- **finish** ends the run.

After the catalog changes (a navigation, a tool that registers others) the
agent sees the new catalog on its next step, with ``tools_changed`` set. The
run ends with one stop reason (:data:`~harness.trace.StopReason`), and every
step is recorded as trace events (:mod:`harness.trace`).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame
from pydantic import BaseModel, ConfigDict, Field

from harness.agent_view import AgentTool, agent_tool
from harness.agents.base import Agent, AgentContext, StepRecord, TokenUsage
from harness.errors import (
    AgentStopped,
    ConfigError,
    HarnessError,
    PageUnreachable,
    SessionClosed,
    UnknownTool,
)
from harness.models import CallAction, FinishAction, NavigateAction, ToolChange
from harness.session import Session
from harness.stages.navigation import navigate_as_agent, resolve_url
from harness.trace.events import (
    AgentActed,
    ErrorOccurred,
    Navigated,
    PageOpened,
    RunFinished,
    RunStarted,
    StopReason,
    Timing,
    TokensUsed,
    ToolsChanged,
    TraceEvent,
    call_events,
    elicitation_event,
    policy_event,
)
from harness.trace.recorder import TraceOptions, TraceRecorder

DEFAULT_MAX_STEPS = 20
# Pages register tools from script after `load`: wait at most this long for the catalog
# to settle (the session's readiness; harness/catalog.py).
DEFAULT_SETTLE_TIMEOUT_S = 5.0


class CallSummary(BaseModel):
    """One call of a run, as the agent saw it."""

    model_config = ConfigDict(frozen=True)

    step: int
    tool: str
    arguments: dict[str, Any]
    result: dict[str, Any] | None = None
    error: str | None = None


class RunResult(BaseModel):
    """What an agent run did and why it stopped."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    stop_reason: StopReason
    detail: str = ""
    answer: str = ""
    task: str
    agent: str
    start_url: str
    steps: list[StepRecord] = Field(default_factory=list)
    events: list[TraceEvent] = Field(default_factory=list)
    trace_dir: Path | None = None
    duration_ms: float = 0.0

    @property
    def ok(self) -> bool:
        """True when the agent finished (rather than failing or running out of steps)."""
        return self.stop_reason == "finished"

    def calls(self) -> list[CallSummary]:
        """Every call, with the agent view of its result (or the error the agent saw)."""
        return [
            CallSummary(
                step=s.index,
                tool=s.action.tool,
                arguments=s.action.arguments,
                result=s.result,
                error=s.error,
            )
            for s in self.steps
            if isinstance(s.action, CallAction)
        ]

    def summary(self) -> dict[str, Any]:
        """The ``--json`` summary: stop reason, steps, each call's agent-view result."""
        return {
            "stopReason": self.stop_reason,
            "detail": self.detail,
            "answer": self.answer,
            "task": self.task,
            "agent": self.agent,
            "startUrl": self.start_url,
            "steps": len(self.steps),
            "calls": [c.model_dump(exclude_none=True) for c in self.calls()],
            "traceDir": str(self.trace_dir) if self.trace_dir is not None else None,
            "durationMs": round(self.duration_ms, 1),
        }


class _Stop(Exception):
    """Ends the run with a stop reason (inside the loop only)."""

    def __init__(self, reason: StopReason, detail: str) -> None:
        super().__init__(detail)
        self.reason: StopReason = reason
        self.detail = detail


class AgentLoop:
    """Runs ``agent`` in a :class:`Session`, starting by opening ``start_url``.

    The caller owns the session: the loop neither makes nor closes it.
    """

    def __init__(
        self,
        session: Session,
        agent: Agent,
        start_url: str,
        *,
        task: str | None = None,
        max_steps: int = DEFAULT_MAX_STEPS,
        recorder: TraceRecorder | None = None,
        settle_timeout: float = DEFAULT_SETTLE_TIMEOUT_S,
        wait_for_tools: Sequence[str] = (),
    ) -> None:
        if max_steps < 1:
            raise ConfigError(f"max_steps must be at least 1, not {max_steps}")
        self.session = session
        self.agent = agent
        self.start_url = start_url
        # An agent may bring its own task (a plan's, a recording's); --task overrides it.
        default_task = getattr(agent, "default_task", "")
        if not task:
            task = default_task if isinstance(default_task, str) else ""
        self.task = task
        self.max_steps = max_steps
        self.recorder = recorder or TraceRecorder()
        self.recorder.watch(session.scrubber)  # what the session withholds stays out of the trace
        self.settle_timeout = settle_timeout
        # Tools the page registers late, waited for after the start page settled.
        self.wait_for_tools = list(wait_for_tools)
        self.step = 0
        self.history: list[StepRecord] = []
        self._tools_changed = False
        self._changed_during_step = False
        self._changed = asyncio.Event()
        self._audit_seen = 0  # entries of session.audit already in the trace
        self._elicitations_seen = 0  # entries of session.elicitations already in the trace
        self._agent_navigating = False  # the page's navigations are the agent's own meanwhile

    # -- catalog changes ------------------------------------------------------------
    def _on_tools_changed(self, change: ToolChange) -> None:
        self._tools_changed = True
        self._changed_during_step = True
        self._changed.set()
        catalog = self.session.catalog
        shown = [catalog.get(n) for n in [*change.added, *change.changed]]
        self.recorder.record(
            ToolsChanged(
                step=self.step or None,
                added=list(change.added),
                removed=list(change.removed),
                changed=list(change.changed),
                tools=[
                    agent_tool(t, framing=self.session.untrusted_framing).as_json()
                    for t in shown
                    if t is not None
                ],
                names=catalog.names(),
            )
        )

    def _page_navigated(self, frame: Frame) -> None:
        """A navigation of the page the agent did not ask for (the page's own — a script,
        a refresh, a tool that set ``location`` — or the user agent's going back from a
        refused one): where the page went, with ``requested`` empty."""
        if frame.parent_frame is None and not self._agent_navigating:
            url = frame.url
            self.recorder.record(
                Navigated(step=self.step or None, requested="", url=url, final_url=url, ok=True)
            )

    async def _settle(self) -> None:
        """Wait for the page's catalog to settle: the session's readiness (harness/catalog.py),
        for this document and after the changes of the last step, at most ``settle_timeout``."""
        settle = self.session.settle.model_copy(update={"timeout": self.settle_timeout})
        await self.session.ready(settle)
        if settle.enabled:
            await self.session.catalog.readiness.wait(settle)

    async def _catalog(self) -> list[AgentTool]:
        return await self.session.agent_tools()

    # -- the run ----------------------------------------------------------------------
    async def run(self) -> RunResult:
        """Run until the agent finishes, fails, or the step limit is reached."""
        started = time.perf_counter()
        agent_name = str(getattr(self.agent, "name", type(self.agent).__name__))
        self.recorder.record(
            RunStarted(
                task=self.task,
                agent=agent_name,
                start_url=self.start_url,
                backend=self.session.backend_name,
                max_steps=self.max_steps,
                artifacts=self.recorder.options.requested(),
            )
        )
        unsubscribe = self.session.on_tools_changed(self._on_tools_changed)
        self._audit_seen = len(self.session.audit)
        self._elicitations_seen = len(self.session.elicitations)
        answer = ""
        try:
            await self.recorder.start_artifacts(self.session.context)
            await self._open()
            self.session.page.on("framenavigated", self._page_navigated)
            answer = await self._steps(agent_name)
            reason: StopReason = "finished"
            detail = ""
        except _Stop as stop:
            reason, detail = stop.reason, stop.detail
        except SessionClosed as exc:
            reason, detail = "session-closed", str(exc)
        except (HarnessError, PlaywrightError) as exc:
            reason, detail = "harness-error", _first_line(exc)
            self.recorder.record(
                ErrorOccurred(step=self.step or None, where="harness", message=detail)
            )
        finally:
            unsubscribe()
            with contextlib.suppress(HarnessError, PlaywrightError):
                self.session.page.remove_listener("framenavigated", self._page_navigated)
        artifacts: list[str] = []
        with contextlib.suppress(HarnessError, PlaywrightError):
            artifacts = await self.recorder.finish_artifacts(
                self.session.context, ok=reason == "finished"
            )
        duration = (time.perf_counter() - started) * 1000
        self.recorder.record(
            RunFinished(
                stop_reason=reason,
                detail=detail,
                answer=answer,
                steps=len(self.history),
                duration_ms=round(duration, 1),
                artifacts=artifacts,
            )
        )
        return RunResult(
            stop_reason=reason,
            detail=detail,
            answer=answer,
            task=self.task,
            agent=agent_name,
            start_url=self.start_url,
            steps=list(self.history),
            events=list(self.recorder.events),
            trace_dir=self.recorder.run_dir,
            duration_ms=duration,
        )

    async def _open(self) -> None:
        try:
            await self.session.open(self.start_url)
        except PageUnreachable as exc:
            self.recorder.record(ErrorOccurred(where="page", message=str(exc)))
            raise _Stop("page-error", str(exc)) from exc
        await self._settle()
        try:
            for name in self.wait_for_tools:
                await self.session.wait_for_tool(name, timeout=self.settle_timeout)
        except UnknownTool as exc:
            self.recorder.record(ErrorOccurred(where="page", message=str(exc)))
            raise _Stop("page-error", str(exc)) from exc
        self._tools_changed = False  # the first look is not a change
        self.recorder.record(
            PageOpened(url=self.session.url, tools=[t.as_json() for t in await self._catalog()])
        )

    async def _steps(self, agent_name: str) -> str:
        while True:
            if self.step >= self.max_steps:
                raise _Stop(
                    "max-steps",
                    f"stopped after {self.max_steps} steps without a finish; "
                    "raise the limit (--max-steps) if the task needs more.",
                )
            self.step += 1
            tools = await self._catalog()  # first: reading it lets a navigation settle
            context = AgentContext(
                task=self.task,
                start_url=self.start_url,
                url=self.session.scrubber.text(self.session.url),  # the page's URL
                tools=tools,
                history=list(self.history),
                tools_changed=self._tools_changed,
            )
            self._tools_changed = False
            decided = time.perf_counter()
            action = await self._decide(context)
            agent_ms = (time.perf_counter() - decided) * 1000
            self.recorder.record(AgentActed(step=self.step, agent=agent_name, action=action))
            if isinstance(action, FinishAction):
                self.recorder.record(
                    Timing(step=self.step, agent_ms=round(agent_ms, 1), action_ms=0)
                )
                return action.answer
            acted = time.perf_counter()
            self._changed_during_step = False
            self._changed.clear()
            if isinstance(action, CallAction):
                record = await self._call(action)
                # §6.1: the catalog's change (and any navigation) follows the delivered
                # result; both belong to this step.
                await self.session.settled()
            else:
                record = await self._navigate(action)
            if self._changed_during_step:
                await self._settle()
            self.history.append(record)
            self.recorder.record(
                Timing(
                    step=self.step,
                    agent_ms=round(agent_ms, 1),
                    action_ms=round((time.perf_counter() - acted) * 1000, 1),
                )
            )
            await self._observe(record)

    async def _decide(self, context: AgentContext) -> CallAction | NavigateAction | FinishAction:
        try:
            action = await self.agent.next_action(context)
        except AgentStopped as exc:
            self._record_usage()
            raise _Stop(_reason(exc.reason), exc.detail) from exc
        except Exception as exc:
            self._record_usage()
            message = f"the agent raised {type(exc).__name__}: {exc}"
            self.recorder.record(ErrorOccurred(step=self.step, where="agent", message=message))
            raise _Stop("agent-error", message) from exc
        self._record_usage()
        if not isinstance(action, CallAction | NavigateAction | FinishAction):
            message = (
                f"the agent returned {type(action).__name__}, not a call, navigate or finish action"
            )
            self.recorder.record(ErrorOccurred(step=self.step, where="agent", message=message))
            raise _Stop("agent-error", message)
        return action

    def _record_usage(self) -> None:
        drain = getattr(self.agent, "drain_usage", None)
        if not callable(drain):
            return
        for usage in drain():
            if isinstance(usage, TokenUsage):
                self.recorder.record(
                    TokensUsed(
                        step=self.step,
                        model=usage.model,
                        input_tokens=usage.input_tokens,
                        output_tokens=usage.output_tokens,
                        cost_usd=usage.cost_usd,
                    )
                )

    async def _observe(self, record: StepRecord) -> None:
        observe = getattr(self.agent, "observe", None)
        if not callable(observe):
            return
        try:
            await observe(record)
        except AgentStopped as exc:
            raise _Stop(_reason(exc.reason), exc.detail) from exc
        except Exception as exc:
            message = f"the agent raised {type(exc).__name__}: {exc}"
            self.recorder.record(ErrorOccurred(step=self.step, where="agent", message=message))
            raise _Stop("agent-error", message) from exc

    async def _call(self, action: CallAction) -> StepRecord:
        try:
            outcome = await self.session.call(action.tool, dict(action.arguments))
        except UnknownTool as exc:
            self.recorder.record(ErrorOccurred(step=self.step, where="call", message=str(exc)))
            # It lists the page's tool names: what the session withheld stays withheld.
            error = self.session.scrubber.text(str(exc))
            return StepRecord(index=self.step, action=action, error=error)
        self._record_trails()
        if outcome.error_kind == "navigation":
            # The page is leaving: wait for the next document's catalog to replace this one's.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), self.settle_timeout)
        for event in call_events(self.step, action, outcome):
            self.recorder.record(event)
        result = outcome.agent_json()
        await self.recorder.screenshot(self.session.page, self.step)
        return StepRecord(index=self.step, action=action, result=result)

    def _record_trails(self) -> None:
        """What the session's audit trail and elicitation record gained during the step."""
        audit = self.session.audit.records
        for record in audit[self._audit_seen :]:
            self.recorder.record(policy_event(record, self.step))
        self._audit_seen = len(audit)
        asked = self.session.elicitations
        for entry in asked[self._elicitations_seen :]:
            self.recorder.record(elicitation_event(entry, self.step))
        self._elicitations_seen = len(asked)

    async def _navigate(self, action: NavigateAction) -> StepRecord:
        try:
            url = resolve_url(self.start_url, action.url)
        except ValueError as exc:
            return self._navigated(action, action.url, str(exc))
        self._agent_navigating = True
        try:
            refusal = await navigate_as_agent(self.session, self.start_url, url)
        except PageUnreachable as exc:
            return self._navigated(action, url, str(exc))
        finally:
            self._agent_navigating = False
        if refusal is not None:
            self._record_trails()
            return self._navigated(action, url, refusal)
        await self._settle()
        self._record_trails()
        for name in action.wait_for_tool:
            try:
                await self.session.wait_for_tool(name, timeout=self.settle_timeout)
            except UnknownTool as exc:
                waited = f"{exc} (waited {self.settle_timeout:g} s after the navigation)"
                return self._navigated(action, url, waited)
        return self._navigated(action, url)

    def _navigated(self, action: NavigateAction, url: str, error: str | None = None) -> StepRecord:
        self.recorder.record(
            Navigated(
                step=self.step,
                requested=action.url,
                url=url,
                final_url=self.session.url,
                ok=error is None,
                error=error,
            )
        )
        if error is not None:
            self.recorder.record(ErrorOccurred(step=self.step, where="navigation", message=error))
        # The harness's message quotes URLs: what the session withheld stays withheld.
        error = self.session.scrubber.text(error) if error is not None else None
        return StepRecord(index=self.step, action=action, error=error)


_REASONS: dict[str, StopReason] = {
    "expect-failed": "expect-failed",
    "step-failed": "step-failed",
    "replay-diverged": "replay-diverged",
    "finished": "finished",
}


def _reason(reason: str) -> StopReason:
    return _REASONS.get(reason, "agent-error")


async def run_agent(
    session: Session,
    agent: Agent,
    start_url: str,
    *,
    task: str | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
    trace_dir: str | Path | None = None,
    trace_options: TraceOptions | None = None,
    on_event: Callable[[TraceEvent], None] | None = None,
    settle_timeout: float = DEFAULT_SETTLE_TIMEOUT_S,
    wait_for_tools: Sequence[str] = (),
) -> RunResult:
    """Run ``agent`` on ``session`` from ``start_url``; with ``trace_dir``, write the trace there.

    The session stays open; a HAR (``trace_options.har``) is written when it closes.

    >>> async with Harness() as harness:
    ...     session = await harness.new_session()
    ...     result = await run_agent(session, ScriptedAgent.from_file("plan.yaml"), url)
    ...     assert result.ok, result.detail
    """
    recorder = TraceRecorder(trace_dir, trace_options, listener=on_event)
    try:
        loop = AgentLoop(
            session,
            agent,
            start_url,
            task=task,
            max_steps=max_steps,
            recorder=recorder,
            settle_timeout=settle_timeout,
            wait_for_tools=wait_for_tools,
        )
        return await loop.run()
    finally:
        recorder.close()
        close = getattr(agent, "aclose", None)
        if callable(close):
            await close()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
