"""Questions a tool asks from inside ``execute``: the harness's side.

A page's tool calls ``requestUserInput({mode, message, requestedSchema, url})``
(on the ``client`` member of ``execute``'s options; the open spec proposal) or the
2025 ``agent.requestUserInteraction(callback)``. The injected JS sends it to the
harness as ``{type: "elicit", callId, name, requestId, request}``;
:func:`answer_tool_question` asks the session's handler and returns the command
that settles the page's promise: ``{op: "elicit-answer", requestId, answer}`` (or
``error``). The page's request is untrusted data: its schema must be a flat form,
its URL http(s), and it is only taken while a call of the tool runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

from harness.elicitation.base import (
    DEFAULT_ELICITATION_TIMEOUT_S,
    ElicitationHandler,
    ElicitationRequest,
    ElicitationResult,
    Quoted,
    ask,
)
from harness.elicitation.form import flat_schema_problem
from harness.elicitation.wording import TOOL_INTERACT, TOOL_OPEN_URL, TOOL_QUESTION

QUESTION_MESSAGE_LIMIT = 4000


class PageError(BaseModel):
    """An error the page's promise rejects with (a ``DOMException`` name and message)."""

    model_config = ConfigDict(frozen=True)

    name: str
    message: str


def question_request(
    asked: Any,
    *,
    origin: str,
    tool: str,
    timeout: float = DEFAULT_ELICITATION_TIMEOUT_S,
) -> ElicitationRequest | PageError:
    """The request for a page's ``requestUserInput({mode, message, requestedSchema, url})``.

    A malformed request becomes the ``TypeError`` the page's promise rejects with.
    """
    if not isinstance(asked, dict):
        return PageError(name="TypeError", message="requestUserInput needs an options object")
    mode = asked.get("mode", "form")
    if mode not in ("form", "url", "interactive"):
        return PageError(
            name="TypeError", message=f"mode must be 'form', 'url' or 'interactive', not {mode!r}"
        )
    message = asked.get("message")
    if mode == "interactive" and message is None:
        message = ""  # the harness's own sentence says it all
    if not isinstance(message, str) or (mode != "interactive" and not message.strip()):
        return PageError(name="TypeError", message="requestUserInput needs a non-empty message")
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    url: str | None = None
    if mode == "form":
        schema = asked.get("requestedSchema", schema)
        problem = flat_schema_problem(schema)
        if problem is not None:
            return PageError(name="TypeError", message=problem)
    if mode == "url":
        url = asked.get("url")
        if not isinstance(url, str) or not url.startswith(("https://", "http://")):
            return PageError(name="TypeError", message="mode 'url' needs an http(s) url")
    wording = {"form": TOOL_QUESTION, "url": TOOL_OPEN_URL, "interactive": TOOL_INTERACT}[mode]
    return ElicitationRequest(
        source="tool-question",
        mode=mode,
        message=wording,
        quoted=[Quoted(label="the page's question", text=message[:QUESTION_MESSAGE_LIMIT])]
        if message
        else [],
        origin=origin,
        tool=tool,
        requested_schema=schema,
        url=url,
        timeout=timeout,
    )


def question_answer(request: ElicitationRequest, result: ElicitationResult) -> dict[str, Any]:
    """The ``{action, content}`` the page's promise resolves to (content only for a form accept)."""
    if result.action == "accept" and request.mode == "form":
        content = {k: v for k, v in (result.content or {}).items() if k in request.fields}
        return {"action": "accept", "content": content}
    return {"action": result.action}


async def answer_tool_question(
    message: Mapping[str, Any],
    *,
    handler: ElicitationHandler,
    origin: str,
    tool: str | None,
    timeout: float = DEFAULT_ELICITATION_TIMEOUT_S,
) -> dict[str, Any]:
    """Answer a page's ``{type: "elicit", callId, requestId, request}`` message.

    Returns the command for the frame's entry point:
    ``{op: "elicit-answer", requestId, answer: {action, content?}}``, or
    ``{op: "elicit-answer", requestId, error: {name, message}}`` for a malformed
    request or one made when no call of the tool is running (``tool`` is None).
    """
    reply: dict[str, Any] = {"op": "elicit-answer", "requestId": message.get("requestId")}
    if tool is None:
        error = PageError(
            name="InvalidStateError",
            message="requestUserInput is only available while the tool's execute runs",
        )
        return {**reply, "error": error.model_dump()}
    request = question_request(message.get("request"), origin=origin, tool=tool, timeout=timeout)
    if isinstance(request, PageError):
        return {**reply, "error": request.model_dump()}
    result = await ask(handler, request)
    return {**reply, "answer": question_answer(request, result)}
