"""The typed values that cross a boundary, each defined once.

A :class:`Tool` is what the catalog knows about one tool; a :class:`CallOutcome`
is what one call produced. The *agent view* of a result is an MCP
``CallToolResult`` (the official SDK's model); front ends convert at their edge.
"""

from __future__ import annotations

from typing import Any, Literal

from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel, ConfigDict, Field

ToolSource = Literal["script", "declarative"]
BackendName = Literal["polyfill", "native"]


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


ErrorKind = Literal["validation", "refused", "thrown", "timeout", "cancelled", "navigation"]

# Namespace for the `_meta` keys the harness adds to results (MCP's reverse-DNS style).
META_PREFIX = "webmcp-harness/"


class CallOutcome(BaseModel):
    """What one call produced. ``result`` is the agent view (an MCP CallToolResult)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    call_id: str
    tool: str
    arguments: dict[str, Any]
    result: CallToolResult
    duration_ms: float
    error_kind: ErrorKind | None = None
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
