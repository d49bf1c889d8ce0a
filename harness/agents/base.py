"""The :class:`Agent` protocol and the actions an agent can take.

An agent sees only the agent view: the task, the agent view of the catalog
(:class:`~harness.agent_view.AgentTool`) and the history of its own steps with
the agent view of each result. It returns the next action: call a tool,
navigate, or finish with an answer.

Besides :meth:`Agent.next_action`, the loop (:mod:`harness.loop`) uses these
optional members when an agent has them:

- ``async observe(step: StepRecord) -> None``: called right after each call or
  navigation with what the agent will see of it; raising
  :class:`~harness.errors.AgentStopped` ends the run with that stop reason
  (the scripted agent fails an unmet ``expect`` this way);
- ``drain_usage() -> list[TokenUsage]``: the token use since the last drain,
  recorded as ``token-use`` trace events after each decision;
- ``default_task: str``: the task when none is given (a plan's, a recording's);
- ``async aclose() -> None``: called by :func:`~harness.loop.run_agent` at the end.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from harness.agent_view import AgentTool


class CallAction(BaseModel):
    """Call a tool with arguments."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["call"] = "call"
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    # Opaque id the agent uses to match the result (LLM tool-call ids).
    call_ref: str | None = None
    # Why the agent chose this step, for the trace (e.g. the instruction it obeyed).
    note: str | None = None


class NavigateAction(BaseModel):
    """Navigate the page (a URL, or a path relative to the start URL)."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["navigate"] = "navigate"
    url: str
    note: str | None = None  # why, for the trace


class FinishAction(BaseModel):
    """Stop with an answer."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["finish"] = "finish"
    answer: str = ""


AgentAction = Annotated[CallAction | NavigateAction | FinishAction, Field(discriminator="kind")]


class StepRecord(BaseModel):
    """One step the agent took, and what it saw come back (agent view only)."""

    model_config = ConfigDict(frozen=True)

    index: int
    action: AgentAction
    result: dict[str, Any] | None = None  # the MCP CallToolResult JSON, for calls
    error: str | None = None  # e.g. an unknown tool or a failed navigation


class AgentContext(BaseModel):
    """Everything an agent may see when choosing its next action."""

    model_config = ConfigDict(frozen=True)

    task: str
    start_url: str
    url: str
    tools: list[AgentTool]
    history: list[StepRecord] = Field(default_factory=list)
    tools_changed: bool = False  # the catalog changed since the previous step


def describe_action(action: CallAction | NavigateAction | FinishAction) -> str:
    """One line for people: ``call add_todo {"text": "x"}``, ``navigate /archive``, ``finish "ok"``."""
    if isinstance(action, CallAction):
        return f"call {action.tool} {json.dumps(action.arguments, ensure_ascii=False)}"
    if isinstance(action, NavigateAction):
        return f"navigate {action.url}"
    return f"finish {json.dumps(action.answer, ensure_ascii=False)}"


class TokenUsage(BaseModel):
    """Tokens one model request used, and what they cost (when prices are configured)."""

    model_config = ConfigDict(frozen=True)

    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None


@runtime_checkable
class Agent(Protocol):
    """Anything that can choose the next action."""

    name: str

    async def next_action(
        self, context: AgentContext
    ) -> CallAction | NavigateAction | FinishAction:
        """The next step, given what the agent may see."""
        ...
