"""Elicitation's core: a request, an answer, and :func:`ask`, the only way to ask.

Always ask through :func:`ask`: a handler that does not answer within the
request's time limit, fails, or accepts values that break the form's rules has
answered ``cancel`` — the safe side; nothing the user did not approve goes on.

Here: :class:`AutoHandler` (the same answer every time), :class:`TimeLimit`, and
:class:`RecordingHandler`, which keeps the session's record of every elicitation
without the values of password and ``x-sensitive`` fields (a session's also withholds
what the session withheld: :mod:`harness.elicitation.withholding`).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, Literal, NamedTuple, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from harness.elicitation.form import (
    answer_problems,
    defaults_of,
    is_sensitive,
    properties_of,
    required_of,
)
from harness.errors import ConfigError

log = logging.getLogger("harness.elicitation")

Action = Literal["accept", "decline", "cancel"]
Source = Literal["tool-elicit", "form-review", "policy", "navigation", "tool-question"]
Mode = Literal["form", "url", "interactive"]

ACTIONS: tuple[Action, ...] = ("accept", "decline", "cancel")
DEFAULT_ELICITATION_TIMEOUT_S = 300.0

SOURCE_TITLES: dict[Source, str] = {
    "tool-elicit": "The page's form needs your input before it is sent",
    "form-review": "Review the filled form before it is submitted",
    "policy": "A policy asks you to confirm",
    "navigation": "A navigation to an origin you have not allowed",
    "tool-question": "A tool asks you",
}
"""How the terminal and browser handlers title a request, by source."""


class Quoted(BaseModel):
    """Text the harness did not write, shown in a question as quoted: ``label`` is the
    harness's name for it ("the form's title"), ``by`` who wrote it (the page, or the
    agent — whose arguments may repeat the page)."""

    model_config = ConfigDict(frozen=True)

    label: str
    text: str
    by: Literal["page", "agent"] = "page"


class ElicitationRequest(BaseModel):
    """One question for the user.

    ``requested_schema`` is a flat JSON Schema object (MCP elicitation-compatible:
    string, number, integer, boolean, enum properties) with titles and
    descriptions; ``prefilled`` holds the agent's values, which the user may change.
    A property is sensitive (never recorded) when it has ``"x-sensitive": true``,
    ``"format": "password"`` or ``"writeOnly": true``.

    ``mode`` is ``form`` (fill the fields), ``url`` (the page asks the user to open
    ``url``) or ``interactive`` (the page asks to interact with the user itself).

    The harness's words and the page's are kept apart (:mod:`harness.elicitation.wording`):
    ``message`` is one of the harness's own sentences, ``notes`` more of its words (why it
    asks), and everything a page or the agent wrote that the question shows is in
    ``quoted``, ``tool``, ``attribution`` (URLs only), ``facts`` or ``url``.
    ``origin`` (who asks) and ``destination`` (where a navigation goes) are origins the
    harness decided with the browser's URL parser.
    """

    model_config = ConfigDict(frozen=True)

    source: Source
    message: str
    origin: str = ""
    tool: str = ""
    rule: str | None = None  # the policy rule(s), for escalations
    facts: dict[str, Any] = Field(default_factory=dict)  # what a policy decision used
    notes: list[str] = Field(default_factory=list)
    quoted: list[Quoted] = Field(default_factory=list)
    attribution: list[str] = Field(default_factory=list)
    destination: str | None = None
    requested_schema: dict[str, Any] = Field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )
    prefilled: dict[str, Any] = Field(default_factory=dict)
    timeout: float = DEFAULT_ELICITATION_TIMEOUT_S
    mode: Mode = "form"
    url: str | None = None  # for mode "url": what the user is asked to open

    @property
    def fields(self) -> dict[str, dict[str, Any]]:
        """The requested properties, by name, in the schema's order."""
        return properties_of(self.requested_schema)

    @property
    def required(self) -> list[str]:
        """The names of the fields an ``accept`` must fill."""
        return required_of(self.requested_schema)

    def starting_values(self) -> dict[str, Any]:
        """What the form shows first: each field's default, overridden by the agent's value."""
        values = defaults_of(self.requested_schema)
        values.update({k: v for k, v in self.prefilled.items() if k in self.fields})
        return values


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


# ---------------------------------------------------------------------------
# Asking.


class HandlerWrapper:
    """A handler around another one (recording, time limit).

    :func:`ask` lets a wrapper apply the time limit itself (through ``ask`` on
    :attr:`inner`), so what the wrapper sees is what the caller gets.
    """

    def __init__(self, inner: ElicitationHandler) -> None:
        self.inner = inner

    async def elicit(self, request: ElicitationRequest) -> ElicitationResult:
        """Ask the wrapped handler (with the time limit and the form's rules)."""
        return await ask(self.inner, request)

    async def aclose(self) -> None:
        """Release what the wrapped handler holds."""
        await close_handler(self.inner)


BROKEN_RULES = "the answer breaks the form's rules: "
"""How the reason of an answer :func:`ask` refused begins; the fields and rules follow."""

SCRIPTED_ANSWER = "scripted answer #"
"""How the reason of an answers file's answer begins; the entry's number (from 1) follows."""


async def ask(handler: ElicitationHandler, request: ElicitationRequest) -> ElicitationResult:
    """Ask ``handler``, on the safe side: anything but a valid answer in time is ``cancel``.

    No answer within ``request.timeout`` seconds, a handler that fails, and an
    ``accept`` whose values break the form's rules all become ``cancel`` with the
    reason. (Handlers that can ask again — terminal, browser — do so themselves.)
    """
    if isinstance(handler, HandlerWrapper):
        return await handler.elicit(request)
    try:
        result = await asyncio.wait_for(handler.elicit(request), request.timeout)
    except TimeoutError:
        return ElicitationResult(action="cancel", reason=f"no answer within {request.timeout:g} s")
    except Exception as exc:  # a broken handler must not let the action through
        log.warning("elicitation handler %r failed: %s", handler, exc)
        return ElicitationResult(
            action="cancel", reason=f"the elicitation handler failed: {type(exc).__name__}: {exc}"
        )
    if result.action == "accept" and request.mode == "form":
        problems = answer_problems(request.requested_schema, result.content)
        if problems:
            listed = "; ".join(f"{name} {problem}" for name, problem in problems.items())
            return ElicitationResult(action="cancel", reason=f"{BROKEN_RULES}{listed}")
    return result


async def close_handler(handler: ElicitationHandler | None) -> None:
    """Release what a handler holds (a browser tab's server, say), if it has ``aclose``."""
    closer = getattr(handler, "aclose", None)
    if closer is not None and inspect.iscoroutinefunction(closer):
        await closer()


class TimeLimit(HandlerWrapper):
    """Caps every request's time limit at ``seconds`` (``--elicit-timeout``)."""

    def __init__(self, inner: ElicitationHandler, seconds: float) -> None:
        if seconds <= 0:
            raise ConfigError(f"the elicitation time limit must be positive, not {seconds}")
        super().__init__(inner)
        self.seconds = seconds

    async def elicit(self, request: ElicitationRequest) -> ElicitationResult:
        """Ask within the smaller of the request's limit and this one."""
        limited = request.model_copy(update={"timeout": min(request.timeout, self.seconds)})
        return await ask(self.inner, limited)


def time_limit_of(handler: ElicitationHandler) -> float | None:
    """The time limit the :class:`TimeLimit` wrappers around ``handler``'s answers set (the
    smallest, wrapped however deep); None without one."""
    limits = []
    while isinstance(handler, HandlerWrapper):
        if isinstance(handler, TimeLimit):
            limits.append(handler.seconds)
        handler = handler.inner
    return min(limits, default=None)


# ---------------------------------------------------------------------------
# Auto and scripted answers.


class AutoHandler:
    """Answers every request the same way: accept (with defaults), decline or cancel."""

    def __init__(self, action: Action) -> None:
        self.action: Action = action

    async def elicit(self, request: ElicitationRequest) -> ElicitationResult:
        """Accept the form as shown (defaults, then the agent's values), or decline, or cancel."""
        if self.action != "accept":
            return ElicitationResult(action=self.action, reason=f"auto-{self.action}")
        values = dict(defaults_of(request.requested_schema))
        values.update(request.prefilled)
        return ElicitationResult(action="accept", content=values, reason="auto-accept")


# ---------------------------------------------------------------------------
# The record.


class ElicitationRecord(BaseModel):
    """One elicitation as the session's record keeps it.

    The question (source, the harness's message and notes, who asked, the page's and
    agent's words it quoted, which fields, the policy rule and facts), the answer's action, which fields the user changed from what was
    shown, and the values — except those of sensitive fields, which are named in
    ``redacted`` and never kept.
    """

    model_config = ConfigDict(frozen=True)

    at: datetime
    source: Source
    mode: Mode
    message: str
    origin: str
    tool: str
    rule: str | None
    facts: dict[str, Any]
    url: str | None
    notes: list[str] = Field(default_factory=list)
    quoted: list[Quoted] = Field(default_factory=list)
    attribution: list[str] = Field(default_factory=list)
    destination: str | None = None
    fields: list[str]
    action: Action
    changed: list[str]
    values: dict[str, Any]
    prefilled: dict[str, Any]
    redacted: list[str]
    reason: str | None
    duration_ms: float


_MISSING = object()


def record_of(
    request: ElicitationRequest, result: ElicitationResult, *, at: datetime, duration_ms: float
) -> ElicitationRecord:
    """The record of one answered request, with sensitive values left out."""
    fields = request.fields
    secret = [name for name, prop in fields.items() if is_sensitive(prop)]
    shown = request.starting_values()
    content = result.content or {}
    changed = []
    if result.action == "accept":
        changed = [
            name for name in fields if content.get(name, _MISSING) != shown.get(name, _MISSING)
        ]
    question = request.model_dump(
        include={
            "source",
            "mode",
            "message",
            "origin",
            "tool",
            "rule",
            "facts",
            "url",
            "notes",
            "quoted",
            "attribution",
            "destination",
        }
    )
    return ElicitationRecord(
        **question,
        at=at,
        fields=list(fields),
        action=result.action,
        changed=changed,
        values={k: v for k, v in content.items() if k not in secret},
        prefilled={k: v for k, v in request.prefilled.items() if k not in secret},
        redacted=secret,
        reason=result.reason,
        duration_ms=duration_ms,
    )


class Unanswered(NamedTuple):
    """Why a question other than the policy's ended in ``cancel``, for a front end's hint."""

    form_review: bool
    """A form waited for the user to submit it (it has no ``toolautosubmit``); otherwise the
    page (a tool) asked the user a question."""
    broken_rules: str | None
    """The fields and rules an answer broke (``weeks must be at most 4``): someone answered,
    and :func:`ask` refused the values. None: nobody answered (the default ``cancel``, no
    matching answer, no answer in time)."""
    cancelled_by: str | None = None
    """Who answered ``cancel`` on purpose (``the answers file's entry #2``), when nobody
    left a question unanswered and no answer broke the rules."""

    @property
    def what(self) -> str:
        """What was asked, in a few words."""
        if self.form_review:
            return "the form waits for the user to submit it (it has no toolautosubmit)"
        return "the page asked the user a question"


def unanswered(records: Iterable[ElicitationRecord]) -> Unanswered | None:
    """What went unanswered among ``records`` (the policy's questions aside: a policy's
    refusal has a hint of its own); None when every such question was answered. An answer
    that broke the form's rules comes first: its value, not the lack of an answer, is what
    to fix; then a question nobody answered; then an answers file's deliberate ``cancel``.
    A person's or an MCP client's own ``cancel`` (a result without a reason) is an answer
    they chose: nothing to hint."""
    cancelled = [r for r in records if r.action == "cancel" and r.source != "policy"]
    for record in cancelled:
        reason = record.reason or ""
        if reason.startswith(BROKEN_RULES):
            return Unanswered(record.source == "form-review", reason.removeprefix(BROKEN_RULES))
    nobody = [r for r in cancelled if r.reason and not r.reason.startswith(SCRIPTED_ANSWER)]
    if nobody:
        return Unanswered(any(r.source == "form-review" for r in nobody), None)
    for record in cancelled:
        if record.reason and record.reason.startswith(SCRIPTED_ANSWER):
            entry = record.reason.removeprefix(SCRIPTED_ANSWER)
            return Unanswered(
                record.source == "form-review", None, f"the answers file's entry #{entry}"
            )
    return None


class RecordingHandler(HandlerWrapper):
    """Wraps any handler and appends an :class:`ElicitationRecord` for every request.

    The time limit and the form's rules are applied inside (through :func:`ask`),
    so timeouts and refused answers are recorded as the ``cancel`` they become.
    """

    def __init__(
        self, inner: ElicitationHandler, records: list[ElicitationRecord] | None = None
    ) -> None:
        super().__init__(inner)
        self.records: list[ElicitationRecord] = [] if records is None else records

    async def elicit(self, request: ElicitationRequest) -> ElicitationResult:
        """Ask the wrapped handler and record the answer (also when interrupted)."""
        at = datetime.now(UTC)
        started = time.perf_counter()
        result = ElicitationResult(action="cancel", reason="interrupted before an answer")
        try:
            result = await ask(self.inner, request)
        finally:
            elapsed = (time.perf_counter() - started) * 1000
            self.records.append(self.record(request, result, at=at, duration_ms=elapsed))
        return result

    def record(
        self,
        request: ElicitationRequest,
        result: ElicitationResult,
        *,
        at: datetime,
        duration_ms: float,
    ) -> ElicitationRecord:
        """What :attr:`records` keeps of one question and its answer (:func:`record_of`)."""
        return record_of(request, result, at=at, duration_ms=duration_ms)
