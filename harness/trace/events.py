"""Traces: what one agent run did, as typed events, written from the agent view.

A run directory holds ``trace.jsonl``, one JSON event per line, each with a
``type`` (see :data:`TraceEvent`), a sequence number ``seq``, ``at_ms`` (since
the run started) and the agent ``step`` it belongs to. Optionally it also
holds artifacts: a Playwright ``trace.zip``, a screenshot after each call
(``screenshots/step-NNN.png``) and a HAR (``network.har``).

The events are built only from what the agent sees: its own actions, the
agent view of the catalog and of each result (``CallOutcome.agent_json()``),
and the names and decisions of the user agent's stages. Values a user gives
in answer to a question, a result's user view and the vault never enter
``trace.jsonl``. The artifacts are different: a screenshot, a HAR or a
Playwright trace records the page as the *user* sees it, so they are off by
default and may hold whatever the page shows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from harness.elicitation.base import ElicitationRecord
from harness.errors import ConfigError
from harness.models import META_PREFIX, AgentAction, CallAction, CallOutcome
from harness.stages.policy import AuditRecord

TRACE_FILE = "trace.jsonl"
PLAYWRIGHT_TRACE_FILE = "trace.zip"
HAR_FILE = "network.har"
SCREENSHOT_DIR = "screenshots"

# The `_meta` key under which the redaction stage lists what it removed (JSON pointers).
REDACTED_META_KEY = META_PREFIX + "redacted"
VALIDATION_META_KEY = META_PREFIX + "validation"

StopReason = Literal[
    "finished",  # the agent finished with an answer
    "max-steps",  # the step limit was reached
    "expect-failed",  # a scripted plan's `expect` was not met
    "step-failed",  # a scripted step could not run (unknown tool, failed navigation)
    "replay-diverged",  # a replay's results differ from the recording
    "agent-error",  # the agent raised, or returned something that is not an action
    "page-error",  # the start page could not be opened
    "session-closed",  # the page or browser went away
    "unknown-tool",  # a test called a tool the page does not offer (the pytest plugin)
    "test-failed",  # a test failed otherwise than on an expectation (the pytest plugin)
    "harness-error",  # the harness failed otherwise
    "timeout",  # the run was cut at its time limit (an experiment's episode_timeout)
]
ErrorWhere = Literal["agent", "call", "navigation", "page", "harness"]


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    seq: int = 0
    at_ms: float = 0.0
    step: int | None = None


E = TypeVar("E", bound=_Event)


class RunStarted(_Event):
    """The run began: the task, the agent, where, and how it is recorded."""

    type: Literal["run-started"] = "run-started"
    task: str
    agent: str
    start_url: str
    backend: str
    max_steps: int
    artifacts: list[str] = Field(default_factory=list)  # what was asked for: playwright, …


class PageOpened(_Event):
    """The start page opened; ``tools`` is the agent view of its catalog."""

    type: Literal["page-opened"] = "page-opened"
    url: str
    tools: list[dict[str, Any]]


class ToolsChanged(_Event):
    """The catalog changed: the diff, the agent view of new or changed tools, all names."""

    type: Literal["tools-changed"] = "tools-changed"
    added: list[str] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)
    changed: list[str] = Field(default_factory=list)
    tools: list[dict[str, Any]] = Field(default_factory=list)
    names: list[str] = Field(default_factory=list)


class AgentActed(_Event):
    """The agent chose its next action."""

    type: Literal["agent-action"] = "agent-action"
    agent: str
    action: AgentAction


class ValidationFailed(_Event):
    """The arguments did not fit the tool's ``inputSchema``; the tool did not run."""

    type: Literal["validation-error"] = "validation-error"
    tool: str
    problems: list[dict[str, Any]] = Field(default_factory=list)


class PolicyDecided(_Event):
    """A policy decision about a call, from the session's audit trail (without its facts)."""

    type: Literal["policy-decision"] = "policy-decision"
    call_id: str
    tool: str
    policy: str  # where the rules came from: a file, or "default pack"
    phase: str  # before-call | response
    effect: str  # allow | block | escalate
    rules: list[str] = Field(default_factory=list)  # the deciding rules
    answer: str | None = None  # the user's answer to an escalation
    outcome: str  # ran | not run | delivered | withheld


class ElicitationAnswered(_Event):
    """The user was asked; the question and the answer's action (never its values).

    ``message`` is empty for a question the page put to the user itself
    (``tool-question``): that text is user view.
    """

    type: Literal["elicitation"] = "elicitation"
    source: str
    tool: str = ""
    origin: str = ""
    rule: str | None = None
    message: str = ""
    fields: list[str] = Field(default_factory=list)
    action: str
    reason: str | None = None
    destination: str | None = None  # where a navigation asked about goes: its origin


class ToolResult(_Event):
    """A call's result exactly as the agent saw it, with the arguments the agent sent."""

    type: Literal["tool-result"] = "tool-result"
    call_id: str
    tool: str
    arguments: dict[str, Any]
    result: dict[str, Any]
    is_error: bool
    error_kind: str | None = None
    duration_ms: float


class Redacted(_Event):
    """The redaction stage removed values from a result; only the JSON pointers are kept."""

    type: Literal["redaction"] = "redaction"
    call_id: str
    tool: str
    paths: list[str]


class Navigated(_Event):
    """The page navigated: what the agent asked for, where that resolved, where the page
    is. ``requested`` is empty for a navigation the agent did not ask for (the page's own,
    or the user agent's going back from a refused one)."""

    type: Literal["navigation"] = "navigation"
    requested: str
    url: str
    final_url: str = ""
    ok: bool
    error: str | None = None


class ErrorOccurred(_Event):
    """Something went wrong: an unknown tool, a failed navigation, an agent that raised."""

    type: Literal["error"] = "error"
    where: ErrorWhere
    message: str


class Timing(_Event):
    """How long the agent took to decide, and the action to run."""

    type: Literal["timing"] = "timing"
    agent_ms: float
    action_ms: float


class TokensUsed(_Event):
    """Tokens a model request used, and their cost when prices are configured."""

    type: Literal["token-use"] = "token-use"
    model: str
    input_tokens: int
    output_tokens: int
    cost_usd: float | None = None


class ScreenshotTaken(_Event):
    """A screenshot after a call (a user-view artifact), relative to the run directory."""

    type: Literal["screenshot"] = "screenshot"
    path: str


class RunFinished(_Event):
    """The run ended: why, the answer, how many steps, and the artifacts kept."""

    type: Literal["run-finished"] = "run-finished"
    stop_reason: StopReason
    detail: str = ""
    answer: str = ""
    steps: int
    duration_ms: float
    artifacts: list[str] = Field(default_factory=list)


TraceEvent = Annotated[
    RunStarted
    | PageOpened
    | ToolsChanged
    | AgentActed
    | ValidationFailed
    | PolicyDecided
    | ElicitationAnswered
    | ToolResult
    | Redacted
    | Navigated
    | ErrorOccurred
    | Timing
    | TokensUsed
    | ScreenshotTaken
    | RunFinished,
    Field(discriminator="type"),
]
"""Every event a trace can hold, told apart by ``type``."""

_EVENT: TypeAdapter[TraceEvent] = TypeAdapter(TraceEvent)

EVENT_TYPES: tuple[str, ...] = (
    "run-started",
    "page-opened",
    "tools-changed",
    "agent-action",
    "validation-error",
    "policy-decision",
    "elicitation",
    "tool-result",
    "redaction",
    "navigation",
    "error",
    "timing",
    "token-use",
    "screenshot",
    "run-finished",
)


def redacted_paths(result: dict[str, Any]) -> list[str]:
    """Where the redaction stage withheld values, as its listing in ``_meta`` names them."""
    meta = result.get("_meta")
    listed = meta.get(REDACTED_META_KEY) if isinstance(meta, dict) else None
    if not isinstance(listed, list):
        return []
    return [str(item.get("path")) for item in listed if isinstance(item, dict)]


def validation_problems(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The validation problems the pipeline put in a refused call's ``_meta``."""
    meta = result.get("_meta")
    problems = meta.get(VALIDATION_META_KEY) if isinstance(meta, dict) else None
    return [p for p in problems if isinstance(p, dict)] if isinstance(problems, list) else []


def call_events(step: int, action: CallAction, outcome: CallOutcome) -> list[TraceEvent]:
    """A call's events, built from the agent view only.

    The result is ``outcome.agent_json()``, what the agent sees (after redaction);
    the arguments are the ones the agent sent (``action``), not the outcome's,
    which the user may have completed in answer to a question. Nothing else of
    the outcome (its notes, a user view) is read.
    """
    result = outcome.agent_json()
    events: list[TraceEvent] = []
    if outcome.error_kind == "validation":
        events.append(
            ValidationFailed(step=step, tool=action.tool, problems=validation_problems(result))
        )
    paths = redacted_paths(result)
    if paths:
        events.append(Redacted(step=step, call_id=outcome.call_id, tool=action.tool, paths=paths))
    events.append(
        ToolResult(
            step=step,
            call_id=outcome.call_id,
            tool=action.tool,
            arguments=dict(action.arguments),
            result=result,
            is_error=outcome.is_error,
            error_kind=outcome.error_kind,
            duration_ms=round(outcome.duration_ms, 1),
        )
    )
    return events


def read_trace(run_dir: str | Path) -> list[TraceEvent]:
    """The events of a run directory's ``trace.jsonl`` (or of that file), in order.

    A trace that cannot be used — missing, a directory, unreadable, not UTF-8, a line that
    is not a trace event — is a :class:`ConfigError` in one line naming the file and the
    problem, the wording of :func:`harness.errors.read_input_file` (whose size cap does not
    apply: the harness wrote the trace, and a long run's may be large).
    """
    path = Path(run_dir)
    if path.is_dir():
        path = path / TRACE_FILE
    head = f"Cannot read the trace {path}"
    try:
        if path.is_dir():
            raise ConfigError(f"{head}: it is a directory; give a run directory or its file.")
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{head}: {exc.strerror or exc}.") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{head}: it is not UTF-8 text (byte {exc.start:,} is {data[exc.start]:#04x}); "
            f"is it a run's {TRACE_FILE}?"
        ) from None
    events: list[TraceEvent] = []
    # Lines end at "\n" only: page text in an event may hold U+2028 or U+0085 as they are,
    # which str.splitlines() would take for line ends.
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            events.append(_EVENT.validate_json(line))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ConfigError(
                f"{path}:{number} is not a trace event ({where + ': ' if where else ''}"
                f"{first['msg']}); is it a run's {TRACE_FILE}?"
            ) from None
    return events


def elicitation_event(record: ElicitationRecord, step: int) -> ElicitationAnswered:
    """An ``elicitation`` event: the question and the answer's action, never the values.

    A question the page itself put to the user (``tool-question``) is user view: the
    page may show the user what it never gave the agent, so its text stays out.
    """
    return ElicitationAnswered(
        step=step,
        source=record.source,
        tool=record.tool,
        origin=record.origin,
        rule=record.rule,
        message="" if record.source == "tool-question" else record.message,
        fields=list(record.fields),
        action=record.action,
        reason=record.reason,
        destination=record.destination,
    )


def policy_event(record: AuditRecord, step: int) -> PolicyDecided:
    """A ``policy-decision`` event: who decided what about which call.

    The facts the decision used stay in ``session.audit``: the trace keeps the
    rules, the effect, the user's answer and what happened to the call.
    """
    return PolicyDecided(
        step=step,
        call_id=record.call_id,
        tool=record.tool,
        policy=record.policy,
        phase=record.phase,
        effect=record.effect,
        rules=list(record.rules),
        answer=record.answer,
        outcome=record.outcome,
    )
