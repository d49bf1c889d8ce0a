"""Elicitation over MCP: the calling client answers the user agent's questions when it can.

:class:`McpElicitationHandler` is the ``mcp`` elicitation handler. While the MCP
server serves a ``tools/call``, it sets :data:`client_channel` to a way back to
that client:

- :class:`RequestChannel` (handshake era, 2025-11-25 and before): an
  ``elicitation/create`` request on the stream of the running call;
- :class:`ParkedCall` (2026-07-28, stateless: the server may not send requests):
  the call runs on in a task of its own, and each question is parked until the
  server returns it in an ``InputRequiredResult`` and the client retries the call
  with the answers and the opaque ``requestState``.

Questions the client cannot answer (no call running, no elicitation capability,
a URL question for a form-only client, an ``interactive`` one) go to the local
handler the user configured.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import json
import secrets
from collections.abc import Mapping
from typing import Any, Protocol

import mcp.types as types
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPError

from harness.elicitation.base import (
    ElicitationHandler,
    ElicitationRequest,
    ElicitationResult,
    TimeLimit,
    ask,
    time_limit_of,
)
from harness.elicitation.form import field_title
from harness.elicitation.wording import one_line, question_text, quote


class ClientChannel(Protocol):
    """A way to put one question to the MCP client whose call is running."""

    def can_answer(self, request: ElicitationRequest) -> bool:
        """Whether the client declared that it can answer a question like this."""
        ...

    async def ask(self, request: ElicitationRequest) -> ElicitationResult:
        """The client's answer."""
        ...


client_channel: contextvars.ContextVar[ClientChannel | None] = contextvars.ContextVar(
    "webmcp_harness_mcpclient_channel", default=None
)


class McpElicitationHandler:
    """The ``mcp`` elicitation handler: the calling MCP client answers when it can.

    During a ``tools/call`` from a client that declared the elicitation capability
    (form mode, or URL mode for URL questions), a question goes to that client: as
    ``elicitation/create`` on handshake-era connections, as an
    ``InputRequiredResult`` on 2026-07-28 requests. Otherwise — no client call
    running, a client without the capability, a mode MCP has no form for
    (``interactive``) — ``fallback``, the configured local handler, answers.
    Ask it through :func:`harness.elicitation.ask` like any handler: the request's time
    limit and the form's rules apply to the client's answers too; :func:`asking_clients`
    puts it under the local handler's :class:`~harness.elicitation.base.TimeLimit`.
    """

    def __init__(self, fallback: ElicitationHandler) -> None:
        self.fallback = fallback

    async def elicit(self, request: ElicitationRequest) -> ElicitationResult:
        """Forward ``request`` to the calling client, or ask the local handler."""
        channel = client_channel.get()
        if channel is None or not channel.can_answer(request):
            return await ask(self.fallback, request)
        return await channel.ask(request)

    async def aclose(self) -> None:
        """Release what the local handler holds."""
        closer = getattr(self.fallback, "aclose", None)
        if closer is not None and asyncio.iscoroutinefunction(closer):
            await closer()


def asking_clients(local: ElicitationHandler) -> ElicitationHandler:
    """The handler of a page MCP clients drive: the calling client answers when it can
    (:class:`McpElicitationHandler`), ``local`` otherwise — both within ``local``'s time
    limit (``--elicit-timeout``): a client's answer after it is a ``cancel``, and what it
    would have let through does not happen."""
    handler = McpElicitationHandler(local)
    seconds = time_limit_of(local)
    return handler if seconds is None else TimeLimit(handler, seconds)


def elicit_params(request: ElicitationRequest) -> types.ElicitRequestParams:
    """The MCP form (or URL) parameters for a question; the agent's values become defaults.

    The message is the harness's sentence, then a line per thing it is about, each text a
    page or the agent wrote quoted on one line and marked as theirs
    (:func:`~harness.elicitation.wording.question_text`); the form's fields show the page's
    labels as the terminal and the browser tab do (:func:`form_field`).
    """
    message = question_text(request)
    if request.mode == "url" and request.url is not None:
        return types.ElicitRequestURLParams(
            message=message, url=request.url, elicitation_id=secrets.token_hex(8)
        )
    properties = {name: form_field(name, prop) for name, prop in request.fields.items()}
    for name, value in request.starting_values().items():
        properties[name]["default"] = value
    # Only what MCP's requestedSchema has. The page's own heading (its `title`,
    # `description`), comments and extensions stay out, as on the 2026-07-28 path and in
    # the terminal and browser tab: a client draws them above the form, where they would
    # read as the harness's words; the message is the heading, the page's words quoted in it.
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    required = [name for name in request.required if name in properties]
    if required:
        schema["required"] = required
    return types.ElicitRequestFormParams(message=message, requested_schema=schema)


PAGE_WORDS = " (the page's words)"
"""How a field's description is marked as the page's, after its quotation."""


def form_field(name: str, prop: Mapping[str, Any]) -> dict[str, Any]:
    """A field of the client's form, its page text shown as every display shows it: its
    title (its name, when it has none) and its choices' titles on one line, capped
    (:func:`~harness.elicitation.wording.one_line`), its description quoted and marked as
    the page's (:func:`~harness.elicitation.wording.quote`). A client draws these as the
    form's own labels, where a page's lines would read as the harness's. What a client
    answers with — names, values, ``const`` — stays the page's own."""
    field = {key: value for key, value in _with_titled_choices(prop).items() if key in _FIELD_KEYS}
    field["title"] = one_line(field_title(name, prop))
    description = prop.get("description")
    if isinstance(description, str):
        field["description"] = quote(description) + PAGE_WORDS
    else:
        field.pop("description", None)
    items = prop.get("items")
    if isinstance(items, dict):
        titled = _with_titled_choices(items, several=True)
        field["items"] = {key: value for key, value in titled.items() if key in _ITEM_KEYS}
    else:
        field.pop("items", None)
    if field.get("format") not in _FORMATS:
        field.pop("format", None)
    return field


# What MCP's form fields (its PrimitiveSchemaDefinition) are made of, and the marks of a
# secret a client may mask its input for; a page's other keys ($comment, examples, x-…)
# are its words a client could show unquoted, and the harness checks the answers itself.
_FIELD_KEYS = frozenset(
    {
        "type", "title", "description", "default", "enum", "enumNames", "oneOf", "anyOf",
        "items", "minItems", "maxItems", "minLength", "maxLength", "minimum", "maximum",
        "format", "writeOnly", "x-sensitive",
    }
)  # fmt: skip
_ITEM_KEYS = frozenset({"type", "enum", "anyOf", "oneOf"})
_FORMATS = frozenset({"email", "uri", "date", "date-time", "password"})


def _with_titled_choices(schema: Mapping[str, Any], *, several: bool = False) -> dict[str, Any]:
    """``schema`` (a field, or the items of a multi-select) with each title of its choices
    on one line: titled ``oneOf``/``anyOf`` options, ``enumNames``. An untitled ``enum``
    with a value that would not show on one line gets titles: MCP's legacy ``enumNames``
    for one choice, its titled ``anyOf`` items for ``several``."""
    shown = dict(schema)
    for key in ("oneOf", "anyOf"):
        options = schema.get(key)
        if isinstance(options, list):
            # A choice is its value and its title: nothing else of the page's is shown.
            shown[key] = [_choice(o) if isinstance(o, dict) else o for o in options]
    names = schema.get("enumNames")
    values = schema.get("enum")
    if isinstance(names, list):
        shown["enumNames"] = [one_line(n) for n in names]
    elif isinstance(values, list) and any(one_line(_label(v)) != _label(v) for v in values):
        if several:
            return {"anyOf": [{"const": v, "title": one_line(_label(v))} for v in values]}
        shown["enumNames"] = [one_line(_label(v)) for v in values]
    return shown


def _choice(option: Mapping[str, Any]) -> dict[str, Any]:
    """A choice as a client shows it: its value, and its title on one line."""
    choice = {key: option[key] for key in ("const", "title") if key in option}
    if "title" in choice:
        choice["title"] = one_line(choice["title"])
    return choice


def _label(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _answer(result: types.ElicitResult) -> ElicitationResult:
    content = dict(result.content) if result.content is not None else None
    return ElicitationResult(action=result.action, content=content)


def _can_answer(capabilities: types.ClientCapabilities | None, request: ElicitationRequest) -> bool:
    """Whether a client with these capabilities can answer this question.

    MCP has forms and URLs; a page that asks to interact with the user itself
    (``interactive``) needs the local handler.
    """
    if capabilities is None or capabilities.elicitation is None:
        return False
    modes = capabilities.elicitation
    if request.mode == "url":
        return modes.url is not None
    if request.mode != "form":
        return False
    # An empty elicitation capability means form mode (the spec's backward-compatible reading).
    return modes.form is not None or modes.url is None


class RequestChannel:
    """Handshake era: ``elicitation/create`` on the stream of the running ``tools/call``."""

    def __init__(self, session: ServerSession, request_id: types.RequestId | None) -> None:
        self.session = session
        self.request_id = request_id

    def can_answer(self, request: ElicitationRequest) -> bool:
        return self.session.can_send_request and _can_answer(
            self.session.client_capabilities, request
        )

    async def ask(self, request: ElicitationRequest) -> ElicitationResult:
        params = elicit_params(request)
        try:
            if isinstance(params, types.ElicitRequestURLParams):
                result = await self.session.elicit_url(
                    params.message, params.url, params.elicitation_id or "", self.request_id
                )
            else:
                result = await self.session.elicit_form(
                    params.message, params.requested_schema, self.request_id
                )
        except MCPError as exc:
            return ElicitationResult(action="cancel", reason=f"the MCP client did not ask: {exc}")
        return _answer(result)


class ParkedCall:
    """A 2026-07-28 ``tools/call`` that waits, between rounds, for the client's answers.

    The call runs in a task of its own; each question it asks is parked here
    under a key until the client retries the call with the answers and the
    opaque ``requestState`` (a random token that names this call).
    """

    def __init__(self, tool: str, capabilities: types.ClientCapabilities | None) -> None:
        self.token = secrets.token_urlsafe(24)
        self.tool = tool
        self.capabilities = capabilities
        self.questions: dict[str, tuple[ElicitationRequest, asyncio.Future[ElicitationResult]]] = {}
        self.asked = asyncio.Event()
        self.task: asyncio.Task[types.CallToolResult] | None = None
        self._keys = itertools.count(1)

    def renew_token(self) -> None:
        """A new opaque ``requestState`` (each round gets one; a used one is spent)."""
        self.token = secrets.token_urlsafe(24)

    def can_answer(self, request: ElicitationRequest) -> bool:
        return _can_answer(self.capabilities, request)

    async def ask(self, request: ElicitationRequest) -> ElicitationResult:
        key = f"elicitation-{next(self._keys)}"
        answer: asyncio.Future[ElicitationResult] = asyncio.get_running_loop().create_future()
        self.questions[key] = (request, answer)
        self.asked.set()
        try:
            return await answer
        finally:
            self.questions.pop(key, None)

    def open_requests(self) -> dict[str, types.InputRequest]:
        """The questions still waiting for an answer, as MCP input requests."""
        return {
            key: types.ElicitRequest(params=elicit_params(request))
            for key, (request, answer) in self.questions.items()
            if not answer.done()
        }

    def take_answers(self, responses: Mapping[str, types.InputResponse]) -> None:
        """Settle the questions the client answered; unrelated keys are ignored."""
        for key, response in responses.items():
            question = self.questions.get(key)
            if (
                question is None
                or question[1].done()
                or not isinstance(response, types.ElicitResult)
            ):
                continue
            question[1].set_result(_answer(response))
        if self.open_requests():  # asked and not answered: ask again in this round
            self.asked.set()
