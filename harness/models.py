"""The typed values that cross a boundary, each defined once.

A :class:`Tool` is what the catalog knows about one tool; a :class:`CallRequest`
is one call on its way through the pipeline's stages, a :class:`CallOutcome` what it
produced; the agent's actions (:data:`AgentAction`) are what agents decide and traces record. The *agent view* of a result is an MCP
``CallToolResult`` (the official SDK's model); front ends convert at their edge.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Generic, Literal, Protocol, TypeVar

from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel, ConfigDict, Field

ToolSource = Literal["script", "declarative"]
BackendName = Literal["polyfill", "native"]

# The boolean annotation hints: MCP's four, WebMCP's two, and the trust SEP's
# maliciousActivityHint (seed 000's sensitiveHint is read by redaction).
BOOLEAN_HINTS: tuple[str, ...] = (
    "readOnlyHint",
    "destructiveHint",
    "idempotentHint",
    "openWorldHint",
    "untrustedContentHint",
    "consequentialHint",
    "maliciousActivityHint",
)


class Tool(BaseModel):
    """One tool in a page's catalog, as the harness (the user agent) sees it."""

    model_config = ConfigDict(frozen=True, populate_by_name=True)

    name: str
    title: str | None = None
    description: str
    input_schema: dict[str, Any] = Field(
        default_factory=lambda: {"type": "object"}, alias="inputSchema"
    )
    output_schema: dict[str, Any] | None = Field(default=None, alias="outputSchema")
    annotations: dict[str, Any] = Field(default_factory=dict)
    source: ToolSource = "script"
    origin: str
    frame: str = Field(description="Session-local frame id: 'main' or 'frame-N'.")
    frame_url: str = Field(default="", alias="frameUrl")
    surface: str = Field(
        default="document.modelContext", description="The page API that registered it."
    )
    has_resolve: bool = Field(default=False, alias="hasResolve")
    registration: int | None = Field(
        default=None,
        description="Which registration of a script tool this is (the page's registry "
        "numbers them): a call runs only the definition it was checked against.",
    )

    def public(self) -> dict[str, Any]:
        """The JSON shape the CLI and reports print (camelCase, as MCP spells it)."""
        return self.model_dump(
            by_alias=True,
            include={
                "name",
                "title",
                "description",
                "input_schema",
                "output_schema",
                "annotations",
                "source",
                "origin",
                "frame",
            },
        )


class CatalogWarning(BaseModel):
    """Something about a tool the user should know, e.g. a refused duplicate."""

    model_config = ConfigDict(frozen=True)

    code: str
    message: str
    tool: str | None = None


class ToolChange(BaseModel):
    """The diff a catalog change carries: names added, removed and changed."""

    model_config = ConfigDict(frozen=True)

    added: list[str] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)
    changed: list[str] = Field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed)


ErrorKind = Literal[
    "validation", "refused", "thrown", "timeout", "cancelled", "navigation", "crashed", "too_large"
]

# Namespace for the `_meta` keys the harness adds to results (MCP's reverse-DNS style).
META_PREFIX = "webmcp-harness/"


class FormRefusal(BaseModel):
    """How a ``<form toolname>`` refused a call's input, as the backend knows it from where
    the refusal happened (never from the message's words, which differ between Chromium and
    the polyfill, and which a page's own error can imitate).

    ``kind``: ``fill`` — the browser's fill refused a value the control cannot hold (nothing
    was filled); ``changed`` — the harness refused a value the form would change as it is
    set (nothing was filled); ``validation`` — the form's constraint validation refused the
    filled form at submission. ``parameter``: the one refused (None for ``validation``)."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["fill", "changed", "validation"]
    parameter: str | None = None


class CallOutcome(BaseModel):
    """What one call produced. ``result`` is the agent view (an MCP CallToolResult)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    call_id: str
    tool: str
    arguments: dict[str, Any]
    result: CallToolResult
    duration_ms: float
    error_kind: ErrorKind | None = None
    form_refusal: FormRefusal | None = None
    """A ``<form toolname>``'s refusal of the input, when that is how the call ended."""
    backend: BackendName
    notes: list[str] = Field(
        default_factory=list, description="What later stages add: warnings, decisions."
    )

    @property
    def is_error(self) -> bool:
        """True when the agent view is an error result."""
        return bool(self.result.is_error)

    def agent_json(self) -> dict[str, Any]:
        """The agent view as MCP JSON (camelCase)."""
        return dump_result(self.result)


def dump_result(result: CallToolResult) -> dict[str, Any]:
    """An MCP CallToolResult as wire JSON, without SDK-internal defaults."""
    data = result.model_dump(by_alias=True, exclude_none=True, mode="json")
    data.pop("resultType", None)
    return data


def error_result(message: str, meta: dict[str, Any] | None = None) -> CallToolResult:
    """An ``isError`` result with one text block (and optional ``_meta``)."""
    return CallToolResult(
        content=[TextContent(type="text", text=message)], is_error=True, meta=meta or None
    )


T = TypeVar("T")


class PerTool(Generic[T]):
    """A value worked out once per tool, for the call path ("decide once per tool").

    A catalog's :class:`Tool` is never changed once made (a tool the page registers again,
    or changes, is a new Tool object), so what a stage derives from it alone — a compiled
    schema, a declaration, whether it has work for the tool — holds as long as the object.
    Kept by identity, at most ``size`` tools (the oldest forgotten first).
    """

    def __init__(self, compute: Callable[[Tool], T], size: int = 4096) -> None:
        self._compute = compute
        self._size = size
        self._values: dict[int, tuple[Tool, T]] = {}
        self._lock = threading.Lock()

    def __call__(self, tool: Tool) -> T:
        """``compute(tool)``, worked out on the first call for this very object."""
        entry = self._values.get(id(tool))
        if entry is not None and entry[0] is tool:
            return entry[1]
        value = self._compute(tool)
        with self._lock:  # worker threads work values out too (validation's, off the loop)
            while len(self._values) >= self._size:
                del self._values[next(iter(self._values))]
            self._values[id(tool)] = (tool, value)  # the tool kept alive: its id stays its own
        return value

    def known(self, tool: Tool) -> T | None:
        """The value for ``tool`` when it was worked out already; None (nothing computed)
        otherwise: for the event loop, when working it out is a worker thread's job."""
        entry = self._values.get(id(tool))
        return entry[1] if entry is not None and entry[0] is tool else None


def new_call_id() -> str:
    """A call's id: 12 random hex digits (48 bits from the system's random source)."""
    return os.urandom(6).hex()


@dataclass
class CallRequest:
    """One call on its way through the pipeline: the value every stage receives."""

    tool: Tool
    arguments: dict[str, Any]
    timeout: float
    call_id: str = field(default_factory=new_call_id)
    meta: dict[str, Any] = field(default_factory=dict)  # extra `execute` options for the page
    notes: list[str] = field(default_factory=list)
    # How the call ended, set by the pipeline before the after-call stages run (None: the
    # tool returned a value); those stages tell page output from the harness's own words.
    error_kind: ErrorKind | None = None
    # A <form toolname>'s refusal of the input, set with error_kind when that is how it ended.
    form_refusal: FormRefusal | None = None


BeforeCall = Callable[[CallRequest], Awaitable[CallToolResult | None]]
"""A stage before ``execute``: returns a result to stop the call, or None to go on."""

AfterCall = Callable[[CallRequest, CallToolResult], Awaitable[CallToolResult]]
"""A stage after ``execute``: returns the (possibly rewritten) result."""


class StageSlots(Protocol):
    """Where stages are installed (a :class:`~harness.pipeline.Pipeline` has both lists)."""

    before: list[BeforeCall]
    after: list[AfterCall]


# -- what agents decide ---------------------------------------------------------------------


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
    """Navigate the page (a URL, or a path relative to the start URL), and then wait for
    the tools ``wait_for_tool`` names (a page that registers them late)."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["navigate"] = "navigate"
    url: str
    note: str | None = None  # why, for the trace
    wait_for_tool: list[str] = Field(default_factory=list)


class FinishAction(BaseModel):
    """Stop with an answer."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["finish"] = "finish"
    answer: str = ""


AgentAction = Annotated[CallAction | NavigateAction | FinishAction, Field(discriminator="kind")]


def describe_action(action: CallAction | NavigateAction | FinishAction) -> str:
    """One line for people: ``call add_todo {"text": "x"}``, ``navigate /archive``, ``finish "ok"``."""
    if isinstance(action, CallAction):
        return f"call {action.tool} {json.dumps(action.arguments, ensure_ascii=False)}"
    if isinstance(action, NavigateAction):
        waits = "".join(f" (wait for {name})" for name in action.wait_for_tool)
        return f"navigate {action.url}{waits}"
    return f"finish {json.dumps(action.answer, ensure_ascii=False)}"
