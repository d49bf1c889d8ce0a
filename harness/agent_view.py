"""The agent view of the catalog: what any agent (loop, MCP client) may see of the tools.

Tool names, descriptions and schemas are page-provided, untrusted data. Every
front end that shows tools to an agent builds that list here, so there is one
place that decides what leaves the user agent about a tool.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from harness.models import Tool
from harness.stages.framing import frame_schema, frame_untrusted


class AgentTool(BaseModel):
    """One tool as the agent sees it."""

    model_config = ConfigDict(frozen=True, populate_by_name=True)

    name: str
    title: str | None = None
    description: str
    input_schema: dict[str, Any] = Field(alias="inputSchema")
    output_schema: dict[str, Any] | None = Field(default=None, alias="outputSchema")
    annotations: dict[str, Any] = Field(default_factory=dict)
    origin: str

    def as_json(self) -> dict[str, Any]:
        """camelCase JSON, as MCP spells tool fields."""
        return self.model_dump(by_alias=True, exclude_none=True)


def agent_tool(tool: Tool, *, framing: bool = True) -> AgentTool:
    """The agent view of one tool; with ``framing``, every text of the page's in it — the
    description, the title (``title`` and ``annotations.title``), and the titles and
    descriptions inside its schemas — is marked untrusted."""
    if not framing:
        return AgentTool(
            name=tool.name,
            title=tool.title,
            description=tool.description,
            input_schema=tool.input_schema,
            output_schema=tool.output_schema,
            annotations=dict(tool.annotations),
            origin=tool.origin,
        )
    origin = tool.origin
    annotations = dict(tool.annotations)
    if isinstance(annotations.get("title"), str):
        annotations["title"] = frame_untrusted(annotations["title"], origin)
    return AgentTool(
        name=tool.name,
        title=frame_untrusted(tool.title, origin) if tool.title is not None else None,
        description=frame_untrusted(tool.description, origin),
        input_schema=frame_schema(tool.input_schema, origin),
        output_schema=frame_schema(tool.output_schema, origin) if tool.output_schema else None,
        annotations=annotations,
        origin=origin,
    )


def agent_tools(tools: list[Tool], *, framing: bool = True) -> list[AgentTool]:
    """The agent view of a catalog, in catalog order."""
    return [agent_tool(t, framing=framing) for t in tools]
