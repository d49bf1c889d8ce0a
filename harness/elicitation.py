"""Elicitation: the user in the loop.

Every place the specs put a person between the agent and an action (a
``tool-elicit`` field, a form waiting for its submit, a policy escalation, a
question a tool asks mid-execution) becomes one :class:`ElicitationRequest`,
answered by one :class:`ElicitationHandler` with the shape of MCP's
``ElicitResult``: ``accept`` (with values), ``decline`` or ``cancel``.

Always ask through :func:`ask`: a handler that does not answer within the
request's time limit, fails, or accepts values that break the form's rules has
answered ``cancel`` — the safe side; nothing the user did not approve goes on.

Handlers here: :class:`AutoHandler` (the same answer every time) and
:class:`ScriptedHandler` (an answers file, for tests and CI). The terminal and
browser handlers live in ``elicitation_terminal`` and ``elicitation_browser``;
:func:`handler_from_option` builds any of them from the ``--elicit`` option.
:class:`RecordingHandler` keeps the session's record of every elicitation,
without the values of password and ``x-sensitive`` fields. The form's fields
and rules are in ``elicitation_form``; questions a tool asks from inside
``execute`` are turned into requests in ``elicitation_questions``.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, TextIO, runtime_checkable

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic import ValidationError as ModelError

from harness.elicitation_form import answer_problems, is_sensitive, properties_of, required_of
from harness.elicitation_form import defaults_of as defaults_of  # an original name, kept here
from harness.errors import ConfigError

if TYPE_CHECKING:
    from rich.console import Console

    from harness.elicitation_browser import BrowserSource

log = logging.getLogger("harness.elicitation")

Action = Literal["accept", "decline", "cancel"]
Source = Literal["tool-elicit", "form-review", "policy", "tool-question"]
Mode = Literal["form", "url", "interactive"]

ACTIONS: tuple[Action, ...] = ("accept", "decline", "cancel")
DEFAULT_ELICITATION_TIMEOUT_S = 300.0

SOURCE_TITLES: dict[Source, str] = {
    "tool-elicit": "The page's form needs your input before it is sent",
    "form-review": "Review the filled form before it is submitted",
    "policy": "A policy asks you to confirm",
    "tool-question": "A tool asks you",
}
"""How the terminal and browser handlers title a request, by source."""


class ElicitationRequest(BaseModel):
    """One question for the user.

    ``requested_schema`` is a flat JSON Schema object (MCP elicitation-compatible:
    string, number, integer, boolean, enum properties) with titles and
    descriptions; ``prefilled`` holds the agent's values, which the user may change.
    A property is sensitive (never recorded) when it has ``"x-sensitive": true``,
    ``"format": "password"`` or ``"writeOnly": true``.

    ``mode`` is ``form`` (fill the fields), ``url`` (the page asks the user to open
    ``url``) or ``interactive`` (the page asks to interact with the user itself).
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
            return ElicitationResult(
                action="cancel", reason=f"the answer breaks the form's rules: {listed}"
            )
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


class ScriptedAnswer(BaseModel):
    """One entry of an answers file: match keys (all optional), then the answer.

    ``tool`` and ``rule`` match exactly, ``field`` matches a request that asks for
    that field, ``message`` matches a substring of the request's message.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    tool: str | None = None
    field: str | None = None
    rule: str | None = None
    message: str | None = None
    action: Action
    values: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _values_only_with_accept(self) -> ScriptedAnswer:
        if self.values and self.action != "accept":
            raise ValueError(f"values only go with action: accept, not {self.action}")
        return self

    def matches(self, request: ElicitationRequest) -> bool:
        """Whether every key this entry names matches ``request``."""
        return (
            (self.tool is None or self.tool == request.tool)
            and (self.field is None or self.field in request.fields)
            and (self.rule is None or self.rule == request.rule)
            and (self.message is None or self.message in request.message)
        )


class AnswersFile(BaseModel):
    """The whole answers file: ``answers:``, a list of :class:`ScriptedAnswer`."""

    model_config = ConfigDict(extra="forbid")

    answers: list[ScriptedAnswer]


def load_answers(path: str | Path) -> list[ScriptedAnswer]:
    """Read an answers file (YAML or JSON); :class:`ConfigError` says what is wrong."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"Cannot read the answers file {path}: {exc.strerror or exc}") from exc
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        raise ConfigError(f"The answers file {path} is not valid YAML/JSON: {exc}") from exc
    try:
        return AnswersFile.model_validate(data).answers
    except ModelError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(top)'}: {e['msg']}" for e in exc.errors()
        )
        raise ConfigError(
            f"The answers file {path} does not fit the format "
            f"(answers: [{{tool, field, rule, message, action, values}}]): {problems}"
        ) from exc


class ScriptedHandler:
    """Answers from a list (an answers file): the first entry whose keys all match.

    An ``accept`` answers the form as shown (defaults, the agent's values) with
    the entry's ``values`` on top — the user's answer wins. A request no entry
    matches is ``cancel``, with the reason; :attr:`misses` keeps those requests.
    """

    def __init__(self, answers: list[ScriptedAnswer]) -> None:
        self.answers = list(answers)
        self.misses: list[ElicitationRequest] = []

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedHandler:
        """A handler reading ``path`` (see :func:`load_answers`)."""
        return cls(load_answers(path))

    @classmethod
    def from_data(cls, data: Any) -> ScriptedHandler:
        """A handler from the file's content already parsed (``{"answers": [...]}``)."""
        try:
            return cls(AnswersFile.model_validate(data).answers)
        except ModelError as exc:
            raise ConfigError(f"Scripted answers do not fit the format: {exc}") from exc

    async def elicit(self, request: ElicitationRequest) -> ElicitationResult:
        """The first matching entry's answer, or ``cancel`` with the reason."""
        for index, entry in enumerate(self.answers):
            if not entry.matches(request):
                continue
            reason = f"scripted answer #{index + 1}"
            if entry.action != "accept":
                return ElicitationResult(action=entry.action, reason=reason)
            values = request.starting_values()
            values.update({k: v for k, v in entry.values.items() if k in request.fields})
            return ElicitationResult(action="accept", content=values, reason=reason)
        self.misses.append(request)
        asked = ", ".join(request.fields) or "none"
        return ElicitationResult(
            action="cancel",
            reason=(
                f"no scripted answer matches (tool={request.tool!r}, rule={request.rule!r}, "
                f"fields: {asked}, message {request.message[:80]!r})"
            ),
        )


# ---------------------------------------------------------------------------
# The record.


class ElicitationRecord(BaseModel):
    """One elicitation as the session's record keeps it.

    The question (source, message, who asked, which fields, the policy rule and
    facts), the answer's action, which fields the user changed from what was
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
        include={"source", "mode", "message", "origin", "tool", "rule", "facts", "url"}
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
            self.records.append(record_of(request, result, at=at, duration_ms=elapsed))
        return result


# ---------------------------------------------------------------------------
# The --elicit option.

ELICIT_CHOICES = ("accept", "decline", "cancel", "terminal", "browser")


def handler_from_option(
    text: str | None,
    *,
    browser: BrowserSource | None = None,
    stdin: TextIO | None = None,
    console: Console | None = None,
    timeout: float | None = None,
) -> ElicitationHandler:
    """The handler ``--elicit accept|decline|cancel|terminal|browser|FILE`` names.

    Without a value: the terminal handler when standard input is a terminal,
    ``cancel`` otherwise. ``browser`` needs the harness's browser (``browser=``,
    e.g. ``lambda: harness.browser``); ``timeout`` caps every request's time limit.
    """
    handler: ElicitationHandler
    if not text:
        source = stdin if stdin is not None else sys.stdin
        text = "terminal" if source is not None and source.isatty() else "cancel"
    if text in ("accept", "decline", "cancel"):
        handler = AutoHandler(text)  # type: ignore[arg-type]
    elif text == "terminal":
        from harness.elicitation_terminal import TerminalHandler

        handler = TerminalHandler(console=console, stream=stdin)
    elif text == "browser":
        if browser is None:
            raise ConfigError("--elicit browser needs the harness's browser to open its tab in.")
        from harness.elicitation_browser import BrowserHandler

        handler = BrowserHandler(browser)
    elif Path(text).is_file():
        handler = ScriptedHandler.from_file(text)
    else:
        raise ConfigError(
            f"--elicit {text!r}: not one of {', '.join(ELICIT_CHOICES)}, and no answers file "
            "by that name."
        )
    return handler if timeout is None else TimeLimit(handler, timeout)
