"""The :class:`Agent` protocol and the actions an agent can take.

An agent sees only the agent view: the task, the agent view of the catalog
(:class:`~harness.agent_view.AgentTool`) and the history of its own steps with
the agent view of each result. It returns the next action: call a tool,
navigate, or finish with an answer.
"""

from __future__ import annotations

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


class NavigateAction(BaseModel):
    """Navigate the page (a URL, or a path relative to the start URL)."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["navigate"] = "navigate"
    url: str


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


@runtime_checkable
class Agent(Protocol):
    """Anything that can choose the next action."""

    name: str

    async def next_action(
        self, context: AgentContext
    ) -> CallAction | NavigateAction | FinishAction:
        """The next step, given what the agent may see."""
        ...
