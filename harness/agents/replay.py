"""The ``replay`` agent: re-runs a recorded trace's steps and reports where results differ.

It takes the recording's actions in order (calls, navigations, the finish)
and compares what each step produces now with what the trace recorded: a
call's agent-view result, field by field, or the error the agent saw. A
navigation the recording made to an absolute URL on the old start page's
origin is moved to the new start URL's origin, so a recording made against
a site on one port replays against the same site on another; results are
compared relative to the start URL too (the recorded start origin and the new
one both read as ``<start-origin>`` wherever they appear, e.g. in the
``<untrusted-data origin=…>`` framing), so a new port is not a difference.

Vault handles (``wmh-secret-…``) are random per session, so they are compared by
role: on each side, each handle reads as ``wmh-<kind>-#N``, N the order of its
first appearance in the run's results (:class:`~harness.agents.matching.HandleNumbering`).
The same handles in the same places are no difference; a step that shows another
handle where the recording showed a known one is. A recorded action that quotes a
handle (a call that passes it on, the answer) gets the live session's handle with
the same number, so the replay acts on handles that exist in its session.

When the recording runs out, the agent finishes with the recorded answer if
nothing differed, and otherwise stops the run with ``replay-diverged`` and
one line per difference.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict

from harness import urls
from harness.agents.base import AgentContext, StepRecord
from harness.agents.matching import (
    MISSING,
    HandleNumbering,
    Mismatch,
    differences,
    show,
    substitute_handles,
)
from harness.errors import AgentStopped, ConfigError
from harness.models import CallAction, FinishAction, NavigateAction
from harness.trace.events import (
    AgentActed,
    ErrorOccurred,
    RunFinished,
    RunStarted,
    ToolResult,
    read_trace,
)


class RecordedStep(BaseModel):
    """One step of a recording: the action, and what the agent saw of it."""

    model_config = ConfigDict(frozen=True)

    index: int
    action: CallAction | NavigateAction | FinishAction
    result: dict[str, Any] | None = None
    error: str | None = None


class Difference(BaseModel):
    """Where a replayed step differs from the recording."""

    model_config = ConfigDict(frozen=True)

    step: int  # the recording's step number
    what: str  # e.g. "call list_todos"
    mismatch: Mismatch

    def describe(self) -> str:
        """``step 3, call list_todos, at /isError: recorded false, replayed true``."""
        return f"step {self.step}, {self.what}, " + self.mismatch.describe("recorded", "replayed")


class Recording(BaseModel):
    """What a trace directory recorded: the task, where it started, and its steps."""

    model_config = ConfigDict(frozen=True)

    task: str
    start_url: str
    steps: list[RecordedStep]
    answer: str = ""


def load_recording(run_dir: str | Path) -> Recording:
    """The steps of the run recorded in ``run_dir`` (its ``trace.jsonl``)."""
    events = read_trace(run_dir)
    started = next((e for e in events if isinstance(e, RunStarted)), None)
    if started is None:
        raise ConfigError(f"{run_dir}: the trace has no run-started event; is it a run directory?")
    actions: dict[int, CallAction | NavigateAction | FinishAction] = {}
    results: dict[int, dict[str, Any]] = {}
    errors: dict[int, str] = {}
    answer = ""
    for event in events:
        if event.step is None:
            continue
        if isinstance(event, AgentActed):
            actions[event.step] = event.action
        elif isinstance(event, ToolResult):
            results[event.step] = event.result
        elif isinstance(event, ErrorOccurred) and event.where in ("call", "navigation"):
            errors.setdefault(event.step, event.message)
    for event in events:
        if isinstance(event, RunFinished):
            answer = event.answer
    steps = [
        RecordedStep(index=n, action=actions[n], result=results.get(n), error=errors.get(n))
        for n in sorted(actions)
    ]
    return Recording(task=started.task, start_url=started.start_url, steps=steps, answer=answer)


START_ORIGIN = "<start-origin>"
"""What a start origin reads as when a recorded result is compared with a replayed one."""


def origin_of(url: str) -> str:
    """The origin of ``url`` as the browser serializes it — the text a page writes its own
    URLs with ("" when it has none)."""
    origin = urls.origin_of(url)
    return "" if origin == "null" else origin


def relative_to_origin(value: Any, origin: str) -> Any:
    """``value`` (JSON) with every occurrence of ``origin`` in its strings (keys included)
    read as :data:`START_ORIGIN`."""
    if not origin:
        return value
    if isinstance(value, str):
        return value.replace(origin, START_ORIGIN)
    if isinstance(value, list):
        return [relative_to_origin(v, origin) for v in value]
    if isinstance(value, dict):
        return {
            relative_to_origin(k, origin): relative_to_origin(v, origin) for k, v in value.items()
        }
    return value


def rebase_url(url: str, recorded_start: str, start: str) -> str:
    """``url`` moved from the recorded start URL's origin to the new one's."""
    old, new, target = urlsplit(recorded_start), urlsplit(start), urlsplit(url)
    if target.scheme and (target.scheme, target.netloc) == (old.scheme, old.netloc):
        return urlunsplit((new.scheme, new.netloc, target.path, target.query, target.fragment))
    return url


class ReplayAgent:
    """Replays a :class:`Recording` and collects :class:`Difference` values."""

    name = "replay"

    def __init__(self, recording: Recording, *, ignore: list[str] | None = None) -> None:
        self.recording = recording
        self.default_task = recording.task
        # JSON pointers (prefixes) whose differences do not count, e.g. "/structuredContent/at".
        self.ignore = list(ignore or [])
        self.differences: list[Difference] = []
        self._next = 0
        self._current: RecordedStep | None = None
        self._start_url = recording.start_url  # the replay's, once the first step is asked
        # Each side's handles, numbered over the whole run.
        self._recorded_handles = HandleNumbering()
        self._live_handles = HandleNumbering()

    @classmethod
    def from_dir(cls, run_dir: str | Path, *, ignore: list[str] | None = None) -> ReplayAgent:
        """The agent for a recorded run directory."""
        return cls(load_recording(run_dir), ignore=ignore)

    async def next_action(
        self, context: AgentContext
    ) -> CallAction | NavigateAction | FinishAction:
        steps = self.recording.steps
        self._start_url = context.start_url
        if self._next < len(steps) and not isinstance(steps[self._next].action, FinishAction):
            self._current = steps[self._next]
            self._next += 1
            action = self._live(self._current.action)
            if isinstance(action, NavigateAction):
                return NavigateAction(
                    url=rebase_url(action.url, self.recording.start_url, context.start_url),
                    note=f"replaying step {self._current.index}",
                    wait_for_tool=action.wait_for_tool,
                )
            return action.model_copy(update={"note": f"replaying step {self._current.index}"})
        if self.differences:
            lines = [d.describe() for d in self.differences]
            raise AgentStopped(
                "replay-diverged",
                f"{len(lines)} difference(s) from the recording:\n" + "\n".join(lines),
            )
        answer = self.recording.answer
        if self._next < len(steps):
            action = steps[self._next].action
            answer = action.answer if isinstance(action, FinishAction) else answer
        return self._live(FinishAction(answer=answer))

    def _live(
        self, action: CallAction | NavigateAction | FinishAction
    ) -> CallAction | NavigateAction | FinishAction:
        """``action`` with each recorded handle it quotes replaced by the live one."""
        live = self._recorded_handles.correspondence(self._live_handles)
        if isinstance(action, CallAction):
            return action.model_copy(
                update={"arguments": substitute_handles(action.arguments, live)}
            )
        if isinstance(action, NavigateAction):
            return action.model_copy(update={"url": substitute_handles(action.url, live)})
        return action.model_copy(update={"answer": substitute_handles(action.answer, live)})

    async def observe(self, step: StepRecord) -> None:
        """Compare the step just replayed with the recording."""
        recorded, self._current = self._current, None
        if recorded is None:
            return
        what = _what(recorded.action)
        found: list[Mismatch] = []
        # Relative to the start URL: the site's origin (its port) may have changed.
        before, now = origin_of(self.recording.start_url), origin_of(self._start_url)
        # Handles by role: numbered in the same order on both sides (result, then error).
        recorded = recorded.model_copy(
            update={
                "result": self._recorded_handles.read(relative_to_origin(recorded.result, before)),
                "error": self._recorded_handles.read(relative_to_origin(recorded.error, before)),
            }
        )
        step = step.model_copy(
            update={
                "result": self._live_handles.read(relative_to_origin(step.result, now)),
                "error": self._live_handles.read(relative_to_origin(step.error, now)),
            }
        )
        if (recorded.error is None) != (step.error is None):
            found.append(
                Mismatch(
                    path="(error)",
                    expected=show(recorded.error) if recorded.error else MISSING,
                    actual=show(step.error) if step.error else MISSING,
                )
            )
        if recorded.result is not None or step.result is not None:
            found += differences(recorded.result, step.result)
        self.differences += [
            Difference(step=recorded.index, what=what, mismatch=m)
            for m in found
            if not any(_under(m.path, prefix) for prefix in self.ignore)
        ]


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix.rstrip("/") + "/")


def _what(action: CallAction | NavigateAction | FinishAction) -> str:
    if isinstance(action, CallAction):
        return f"call {action.tool}"
    if isinstance(action, NavigateAction):
        return f"navigate {action.url}"
    return "finish"
