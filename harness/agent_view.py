"""The agent view of the catalog: what any agent (loop, MCP client) may see of the tools.

Tool names, descriptions and schemas are page-provided, untrusted data. Every
front end that shows tools to an agent builds that list here, so there is one
place that decides what leaves the user agent about a tool.
"""

from __future__ import annotations

from typing import Any

from mcp.types import CallToolResult, ContentBlock, TextContent
from pydantic import BaseModel, ConfigDict, Field

from harness.models import META_PREFIX, ErrorKind, Tool


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


def frame_untrusted(text: str, origin: str) -> str:
    """Mark page-provided text as data from ``origin``, not instructions.

    The closing marker cannot be forged from inside: any occurrence of it in the
    text is defused first.
    """
    defused = text.replace("</untrusted-data", "<\\/untrusted-data")
    return f'<untrusted-data origin="{origin}">\n{defused}\n</untrusted-data>'


def agent_tool(tool: Tool, *, framing: bool = True) -> AgentTool:
    """The agent view of one tool; with ``framing``, its description is marked untrusted."""
    description = frame_untrusted(tool.description, tool.origin) if framing else tool.description
    return AgentTool(
        name=tool.name,
        title=tool.title,
        description=description,
        input_schema=tool.input_schema,
        output_schema=tool.output_schema,
        annotations=dict(tool.annotations),
        origin=tool.origin,
    )


def agent_tools(tools: list[Tool], *, framing: bool = True) -> list[AgentTool]:
    """The agent view of a catalog, in catalog order."""
    return [agent_tool(t, framing=framing) for t in tools]


# -- results -------------------------------------------------------------------------------

USER_AGENT_BLOCK = META_PREFIX + "user-agent"
"""Content-block ``_meta`` key marking text the harness itself wrote into a result."""

# Results whose content the page produced (a value, or a thrown error's message); every
# other kind (validation, refusal, timeout, cancel, navigation) is the harness's own text.
PAGE_RESULT_KINDS: tuple[ErrorKind | None, ...] = (None, "thrown")


def user_agent_text(text: str) -> TextContent:
    """A text block the harness writes into a result: never framed as page data."""
    return TextContent(type="text", text=text, meta={USER_AGENT_BLOCK: True})


def is_user_agent_block(block: ContentBlock) -> bool:
    """Whether a content block was written by the harness (see :func:`user_agent_text`)."""
    meta = getattr(block, "meta", None)
    return isinstance(meta, dict) and meta.get(USER_AGENT_BLOCK) is True


def frame_result(result: CallToolResult, origin: str) -> CallToolResult:
    """The result with every page-provided text block marked as untrusted data from ``origin``.

    ``structuredContent`` and ``_meta`` are left as they are (machine-readable data, not
    text an agent reads as prose); blocks the harness wrote stay unframed.
    """
    content: list[ContentBlock] = [
        block.model_copy(update={"text": frame_untrusted(block.text, origin)})
        if isinstance(block, TextContent) and not is_user_agent_block(block)
        else block
        for block in result.content
    ]
    return result.model_copy(update={"content": content})
