"""Normalization: whatever a tool returned becomes an MCP ``CallToolResult``.

A value that already has ``content`` (an MCP result) passes through. Any other
value becomes one text block; a JSON object also becomes ``structuredContent``.
"""

from __future__ import annotations

import json
from typing import Any

from mcp_types import CallToolResult, TextContent
from pydantic import ValidationError

from harness.browser.backends.base import RawResult
from harness.models import error_result


def normalize(raw: RawResult) -> CallToolResult:
    """The agent-facing result for what the backend brought back."""
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
        value: Any = json.loads(json_text)
    except ValueError:
        return CallToolResult(content=[TextContent(type="text", text=json_text)])
    if isinstance(value, dict) and isinstance(value.get("content"), list):
        try:
            return CallToolResult.model_validate(value)
        except ValidationError:
            pass  # not a well-formed MCP result: treat it as plain data below
    if isinstance(value, str):
        return CallToolResult(content=[TextContent(type="text", text=value)])
    structured = value if isinstance(value, dict) else None
    return CallToolResult(
        content=[TextContent(type="text", text=json_text)], structured_content=structured
    )
