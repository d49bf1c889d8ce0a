"""The :class:`Agent` protocol; the actions an agent can take (defined in :mod:`harness.models`).

An agent sees only the agent view: the task, the agent view of the catalog
(:class:`~harness.agent_view.AgentTool`) and the history of its own steps with
the agent view of each result. It returns the next action: call a tool,
navigate, or finish with an answer.

Besides :meth:`Agent.next_action`, the loop (:mod:`harness.agents.loop`) uses these
optional members when an agent has them:

- ``async observe(step: StepRecord) -> None``: called right after each call or
  navigation with what the agent will see of it; raising
  :class:`~harness.errors.AgentStopped` ends the run with that stop reason
  (the scripted agent fails an unmet ``expect`` this way);
- ``drain_usage() -> list[TokenUsage]``: the token use since the last drain,
  recorded as ``token-use`` trace events after each decision;
- ``default_task: str``: the task when none is given (a plan's, a recording's);
- ``async aclose() -> None``: called by :func:`~harness.agents.loop.run_agent` at the end.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from harness.agent_view import AgentTool
from harness.models import AgentAction, CallAction, FinishAction, NavigateAction, describe_action

__all__ = [
    "Agent",
    "AgentAction",
    "AgentContext",
    "CallAction",
    "FinishAction",
    "NavigateAction",
    "StepRecord",
    "TokenUsage",
    "describe_action",
]


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
