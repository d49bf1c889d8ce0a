"""Elicitation: the user in the loop.

Every place the specs put a person between the agent and an action (a
``tool-elicit`` field, a form waiting for its submit, a policy escalation, a
question a tool asks mid-execution) becomes one :class:`ElicitationRequest`,
answered by one :class:`ElicitationHandler` with the shape of MCP's
``ElicitResult``: ``accept`` (with values), ``decline`` or ``cancel``.

A handler that does not answer within the request's time limit has answered
``cancel`` — the safe side.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

Action = Literal["accept", "decline", "cancel"]
Source = Literal["tool-elicit", "form-review", "policy", "tool-question"]

DEFAULT_ELICITATION_TIMEOUT_S = 300.0


class ElicitationRequest(BaseModel):
    """One question for the user.

    ``requested_schema`` is a flat JSON Schema object (MCP elicitation-compatible:
    string, number, integer, boolean, enum properties) with titles and
    descriptions; ``prefilled`` holds the agent's values, which the user may change.
    """

    model_config = ConfigDict(frozen=True)

    source: Source
    message: str
    origin: str = ""
    tool: str = ""
    rule: str | None = None  # the policy rule, for escalations
    facts: dict[str, Any] = Field(default_factory=dict)  # what a policy decision used
    requested_schema: dict[str, Any] = Field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )
    prefilled: dict[str, Any] = Field(default_factory=dict)
    timeout: float = DEFAULT_ELICITATION_TIMEOUT_S


class ElicitationResult(BaseModel):
    """The user's answer, shaped like MCP's ``ElicitResult``."""

    model_config = ConfigDict(frozen=True)

    action: Action
    content: dict[str, Any] | None = None
    reason: str | None = None  # why the harness answered for the user (timeout, no match)


@runtime_checkable
class ElicitationHandler(Protocol):
    """Anything that can answer the user's questions."""

    async def elicit(self, request: ElicitationRequest) -> ElicitationResult:
        """Answer one request."""
        ...


class AutoHandler:
    """Answers every request the same way: accept (with defaults), decline or cancel."""

    def __init__(self, action: Action) -> None:
        self.action: Action = action

    async def elicit(self, request: ElicitationRequest) -> ElicitationResult:
        if self.action != "accept":
            return ElicitationResult(action=self.action, reason=f"auto-{self.action}")
        values = dict(defaults_of(request.requested_schema))
        values.update(request.prefilled)
        return ElicitationResult(action="accept", content=values, reason="auto-accept")


def defaults_of(schema: dict[str, Any]) -> dict[str, Any]:
    """The ``default`` of every property that declares one."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return {}
    return {
        name: prop["default"]
        for name, prop in properties.items()
        if isinstance(prop, dict) and "default" in prop
    }


async def ask(handler: ElicitationHandler, request: ElicitationRequest) -> ElicitationResult:
    """Ask ``handler``; no answer within ``request.timeout`` seconds is ``cancel``."""
    try:
        return await asyncio.wait_for(handler.elicit(request), request.timeout)
    except TimeoutError:
        return ElicitationResult(action="cancel", reason=f"no answer within {request.timeout:g} s")
