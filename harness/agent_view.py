"""The agent view of the catalog: what any agent (loop, MCP client) may see of the tools.

Tool names, descriptions and schemas are page-provided, untrusted data. Every
front end that shows tools to an agent builds that list here, so there is one
place that decides what leaves the user agent about a tool: texts framed as untrusted,
and the texts the session withheld (its :class:`~harness.stages.scrubbing.Scrubber`)
replaced by their handles — a page that registers a tool after it learnt a secret
cannot hand it to the agent in a title, a description or a schema's ``enum``, and a
tool whose very name holds one is not offered.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from harness.models import Tool
from harness.stages.framing import frame_schema, frame_untrusted
from harness.stages.scrubbing import Scrubber


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


def agent_tool(tool: Tool, *, framing: bool = True, withheld: Scrubber | None = None) -> AgentTool:
    """The agent view of one tool; with ``framing``, every text of the page's in it — the
    description, the title (``title`` and ``annotations.title``), and the titles and
    descriptions inside its schemas — is marked untrusted; with ``withheld`` (the
    session's scrubber), every text withheld in the session is replaced by its handle."""
    agent = _framed(tool) if framing else _unframed(tool)
    if not withheld:
        return agent
    data = agent.as_json()
    scrubbed = withheld.scrub(data)
    return agent if scrubbed is data else AgentTool.model_validate(scrubbed)


def _unframed(tool: Tool) -> AgentTool:
    return AgentTool(
        name=tool.name,
        title=tool.title,
        description=tool.description,
        input_schema=tool.input_schema,
        output_schema=tool.output_schema,
        annotations=dict(tool.annotations),
        origin=tool.origin,
    )


def _framed(tool: Tool) -> AgentTool:
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


def agent_tools(
    tools: list[Tool], *, framing: bool = True, withheld: Scrubber | None = None
) -> list[AgentTool]:
    """The agent view of a catalog, in catalog order; a tool whose name holds a text
    withheld in the session is left out (a name cannot be replaced: it is how it is called)."""
    if withheld:
        tools = [t for t in tools if withheld.text(t.name) == t.name]
    return [agent_tool(t, framing=framing, withheld=withheld) for t in tools]
