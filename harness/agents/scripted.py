"""The ``scripted`` agent: a YAML plan, for QA and CI.

The plan format is stable; other tools depend on it::

    task: Add a todo and list them
    steps:
      - call: add_todo
        args: {text: buy milk}
        expect: {isError: false}      # optional subset match on the agent view of the result
      - navigate: /archive             # relative to the start URL
        wait_for_tool: list_archived   # optional: a tool the new page registers late
      - call: list_todos
      - finish: done

Each step has exactly one of ``call``, ``navigate`` or ``finish``. ``args`` and
``expect`` belong to ``call`` steps; ``wait_for_tool`` (a name or a list) to ``navigate``
steps: after the new page's catalog settled, the step waits for those tools too (at most
the settle cap), and fails with ``step-failed`` when one never comes. ``expect`` is matched against the result
as the agent sees it (MCP ``CallToolResult`` JSON: ``content``,
``structuredContent``, ``isError``, ``_meta``): every key it names must be
there with a matching value; arrays match element by element. An unmet
``expect`` ends the run with stop reason ``expect-failed`` and a diff; a call
to a tool the page does not offer, or a navigation that fails, ends it with
``step-failed``. A plan that runs out of steps without ``finish`` finishes
with an empty answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from harness.agents.base import AgentContext, StepRecord
from harness.agents.matching import subset_mismatches, unified_diff
from harness.errors import AgentStopped, ConfigError
from harness.inputs import load_input
from harness.models import CallAction, FinishAction, NavigateAction, describe_action


class CallStep(BaseModel):
    """``- call: TOOL`` with optional ``args`` and ``expect``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    call: str = Field(min_length=1)
    args: dict[str, Any] = Field(default_factory=dict)
    expect: dict[str, Any] | None = None


class NavigateStep(BaseModel):
    """``- navigate: URL`` (a path is relative to the start URL), with an optional
    ``wait_for_tool: NAME`` (or a list of names) the new page registers late."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    navigate: str = Field(min_length=1)
    wait_for_tool: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list)

    @field_validator("wait_for_tool", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        """``wait_for_tool: NAME`` is a list of one; left empty, none."""
        if value is None:
            return []
        return [value] if isinstance(value, str) else value


class FinishStep(BaseModel):
    """``- finish: ANSWER``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    finish: str = ""


PlanStep = CallStep | NavigateStep | FinishStep

_KINDS: dict[str, type[BaseModel]] = {
    "call": CallStep,
    "navigate": NavigateStep,
    "finish": FinishStep,
}


class Plan(BaseModel):
    """A parsed plan: the task and its steps."""

    model_config = ConfigDict(frozen=True)

    task: str = ""
    steps: list[PlanStep] = Field(default_factory=list)

    def action(self, index: int) -> CallAction | NavigateAction | FinishAction:
        """The action for step ``index`` (0-based)."""
        step = self.steps[index]
        if isinstance(step, CallStep):
            return CallAction(tool=step.call, arguments=dict(step.args))
        if isinstance(step, NavigateStep):
            return NavigateAction(url=step.navigate, wait_for_tool=list(step.wait_for_tool))
        return FinishAction(answer=step.finish)


def parse_plan(data: Any, source: str = "plan") -> Plan:
    """A :class:`Plan` from parsed YAML, or a :class:`ConfigError` naming the bad step."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: a plan is a mapping with `task` and `steps`.")
    unknown = sorted(set(data) - {"task", "steps"})
    if unknown:
        raise ConfigError(
            f"{source}: unknown top-level key(s) {', '.join(unknown)}; a plan has `task` and `steps`."
        )
    # Left empty in YAML (null) means none; any other value must have the right type.
    task = "" if data.get("task") is None else data["task"]
    if not isinstance(task, str):
        raise ConfigError(f"{source}: `task` must be text.")
    raw_steps = [] if data.get("steps") is None else data["steps"]
    if not isinstance(raw_steps, list):
        raise ConfigError(f"{source}: `steps` must be a list.")
    steps = [_parse_step(raw, f"{source}: step {n}") for n, raw in enumerate(raw_steps, 1)]
    return Plan(task=task, steps=steps)


def _parse_step(raw: Any, where: str) -> PlanStep:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: a step is a mapping like `call: TOOL`, not {raw!r}.")
    kinds = [k for k in _KINDS if k in raw]
    if len(kinds) != 1:
        raise ConfigError(
            f"{where}: a step has exactly one of `call`, `navigate` or `finish` "
            f"(found: {', '.join(kinds) or 'none'})."
        )
    kind = kinds[0]
    values = dict(raw)
    # `args:` or `finish:` left empty in YAML is null; it means "none".
    for key, empty in (("args", {}), ("finish", "")):
        if key in values and values[key] is None:
            values[key] = empty
    try:
        return _KINDS[kind].model_validate(values)  # type: ignore[return-value]
    except ValidationError as exc:
        problems = "; ".join(
            f"`{'.'.join(str(p) for p in e['loc']) or kind}`: "
            + (
                f"unknown key; a {kind} step takes {_ALLOWED[kind]}"
                if e["type"] == "extra_forbidden"
                else str(e["msg"])
            )
            for e in exc.errors()
        )
        raise ConfigError(f"{where} ({kind}): {problems}") from None


_ALLOWED = {
    "call": "`call`, `args` and `expect`",
    "navigate": "`navigate` and `wait_for_tool`",
    "finish": "only `finish`",
}


def load_plan(path: str | Path) -> Plan:
    """Read a YAML plan file."""
    path = Path(path)
    # YAML whatever the suffix; with the limits of every input file (aliases, depth).
    return parse_plan(load_input(path, "plan", kind="yaml"), str(path))


def expectation_failure(
    step: StepRecord, expected: dict[str, Any], plan_step: int | None = None
) -> str | None:
    """A readable report when ``step``'s result does not contain ``expected``; else None."""
    label = f"step {step.index}" + (f" (plan step {plan_step})" if plan_step else "")
    head = f"{label}, {describe_action(step.action)}: the result does not match `expect`"
    if step.result is None:
        return f"{head}: there is no result ({step.error or 'the call did not run'})."
    mismatches = subset_mismatches(expected, step.result)
    if not mismatches:
        return None
    lines = [head + ":"]
    lines += [f"  {m.describe()}" for m in mismatches]
    lines += ["", unified_diff(expected, step.result)]
    return "\n".join(lines)


class ScriptedAgent:
    """Plays a :class:`Plan` step by step and checks each ``expect``."""

    name = "scripted"

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.default_task = plan.task
        self._next = 0  # index into plan.steps
        self._pending: tuple[int, CallStep] | None = None  # the step whose result is awaited

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedAgent:
        """The agent for a YAML plan file."""
        return cls(load_plan(path))

    async def next_action(
        self, context: AgentContext
    ) -> CallAction | NavigateAction | FinishAction:
        if self._next >= len(self.plan.steps):
            return FinishAction(answer="")
        index = self._next
        self._next += 1
        step = self.plan.steps[index]
        self._pending = (index + 1, step) if isinstance(step, CallStep) else None
        return self.plan.action(index)

    async def observe(self, step: StepRecord) -> None:
        """Fail the run on an unmet ``expect`` or a step the page refused."""
        pending, self._pending = self._pending, None
        plan_step = pending[0] if pending else self._next
        if pending is not None and pending[1].expect is not None:
            failure = expectation_failure(step, pending[1].expect, plan_step)
            if failure is not None:
                raise AgentStopped("expect-failed", failure)
        if step.error is not None:
            raise AgentStopped(
                "step-failed",
                f"step {step.index} (plan step {plan_step}), {describe_action(step.action)}: "
                f"{step.error}",
            )
