"""Normalization: whatever a tool returned becomes an MCP ``CallToolResult``.

A value that already has ``content`` (an MCP result) passes through. Any other
value becomes one text block; a JSON object also becomes ``structuredContent``.

A result too big (over the session's cap, default 10 MB) or nested too deep (JSON
that no later stage, MCP client or trace reader could walk safely) is refused here:
:class:`ResultRefused` carries the ``isError`` message that names the size or depth.
"""

from __future__ import annotations

from typing import Any

from mcp_types import CallToolResult, TextContent
from pydantic import ValidationError

from harness.browser.backends.base import RawResult
from harness.browser.wellformed import TooDeep, loads, well_formed_text
from harness.models import error_result
from harness.stages.framing import without_harness_marks

# The default cap on one result's size, in bytes of UTF-8 (the page refuses bigger ones
# before they cross the channel; this is the backstop for every backend).
DEFAULT_MAX_RESULT_BYTES = 10 * 1024 * 1024
# The deepest nesting a result may have: deeper JSON breaks recursive readers (Python's
# own json module stops near 1000 levels; pydantic's JSON reader at 200).
MAX_RESULT_DEPTH = 128


class ResultRefused(Exception):
    """A tool's result that the harness will not pass on; ``str()`` says why, for the agent."""


def check_size(raw: RawResult, max_bytes: int) -> None:
    """Raise :class:`ResultRefused` when the result's text (or error message) is over
    ``max_bytes``."""
    text = raw.json_text if raw.status == "ok" else raw.error_message
    if text is None or len(text) * 4 <= max_bytes:
        return  # at most 4 bytes a character: surely within the cap
    size = len(text) if len(text) > max_bytes else len(text.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise ResultRefused(too_large_message(size, max_bytes))


def too_large_message(size: int, max_bytes: int) -> str:
    """The refusal of a ``size``-byte result (also what the page says for the same cap)."""
    return (
        f"Tool result refused: it is {size:,} bytes ({size / 1048576:.1f} MB), over the "
        f"harness's cap of {max_bytes:,} bytes ({max_bytes / 1048576:.1f} MB). Ask the tool "
        "for less (a page, a filter), or raise the cap (Harness(max_result_bytes=...))."
    )


def too_deep_message() -> str:
    """The refusal of a result nested deeper than :data:`MAX_RESULT_DEPTH`."""
    return (
        f"Tool result refused: its JSON is nested deeper than {MAX_RESULT_DEPTH} levels, "
        "which the harness does not pass on. Ask the tool for a flatter result."
    )


def json_depth(value: Any) -> int:
    """How deeply ``value`` nests (a scalar: 0), without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth + 1)
        if deepest > MAX_RESULT_DEPTH:
            return deepest
        stack.extend((child, depth + 1) for child in children)
    return deepest


def normalize(raw: RawResult) -> CallToolResult:
    """The agent-facing result for what the backend brought back.

    Raises :class:`ResultRefused` for a result nested too deep to pass on.
    """
    if raw.status == "ok":
        return normalize_value(raw.json_text)
    if raw.status == "error":
        name = raw.error_name or "Error"
        return error_result(f"Tool error: {name}: {raw.error_message or '(no message)'}")
    if raw.status == "navigation":
        return error_result("Tool call interrupted by navigation: the page went away mid-call.")
    return error_result(f"Tool call cancelled: {raw.error_message or 'no reason given'}")


def normalize_value(json_text: str | None) -> CallToolResult:
    """Normalize the JSON string ``executeTool`` resolves to (None: no value)."""
    if json_text is None:
        return CallToolResult(content=[])
    try:
        value: Any = loads(json_text)
    except TooDeep:
        raise ResultRefused(too_deep_message()) from None
    except ValueError:
        return CallToolResult(content=[TextContent(type="text", text=well_formed_text(json_text))])
    # Each level of nesting takes an opening and a closing bracket: a text shorter than
    # twice the limit cannot nest deeper than it (no walk needed).
    if len(json_text) > 2 * MAX_RESULT_DEPTH and json_depth(value) > MAX_RESULT_DEPTH:
        raise ResultRefused(too_deep_message())
    if isinstance(value, dict) and isinstance(value.get("content"), list):
        try:
            # Keys in the harness's _meta namespace are the harness's own: a page's go.
            return without_harness_marks(CallToolResult.model_validate(value))
        except ValidationError:
            pass  # not a well-formed MCP result: treat it as plain data below
    if isinstance(value, str):
        return CallToolResult(content=[TextContent(type="text", text=value)])
    structured = value if isinstance(value, dict) else None
    return CallToolResult(
        content=[TextContent(type="text", text=json_text)], structured_content=structured
    )
