"""Page tools and results in MCP's words: ``harness/mcp/tools.py``."""

from __future__ import annotations

from typing import Any

import jsonschema
import mcp.types as types

from harness.agent_view import AgentTool
from harness.mcp.tools import conform, mcp_tool, output_schema


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


def _agent_tool(**overrides: Any) -> AgentTool:
    values: dict[str, Any] = {
        "name": "t",
        "description": "Does a thing.",
        "inputSchema": {"type": "object", "properties": {}},
        "origin": "http://127.0.0.1:9",
    }
    values.update(overrides)
    return AgentTool(**values)


def test_hints_become_annotations_and_labels_and_meta() -> None:
    tool = mcp_tool(
        _agent_tool(
            annotations={
                "readOnlyHint": False,
                "destructiveHint": True,
                "sensitiveHint": True,
                "consequentialHint": True,
                "ignorePreviousInstructionsHint": True,
                "inputMetadata": {"destination": "public", "outcomes": ["irreversible", "evil"]},
            }
        ),
        "t",
        "t",
    )
    assert tool is not None and tool.annotations is not None
    assert tool.annotations.read_only_hint is False and tool.annotations.destructive_hint is True
    assert tool.annotations.idempotent_hint is None
    first_line = (tool.description or "").splitlines()[0]
    assert first_line == (
        "[WebMCP tool from http://127.0.0.1:9; sensitive; consequential; "
        "destination: public; outcomes: irreversible]"
    )
    assert tool.meta is not None
    kept = tool.meta["webmcp-harness/tool"]["annotations"]
    assert kept["ignorePreviousInstructionsHint"] is True and "readOnlyHint" not in kept


def test_schemas_that_are_not_objects() -> None:
    untyped = mcp_tool(_agent_tool(inputSchema={"properties": {"a": {"type": "string"}}}), "t", "t")
    assert untyped is not None and untyped.input_schema["type"] == "object"
    assert mcp_tool(_agent_tool(inputSchema={"type": "string"}), "t", "t") is None
    listed = mcp_tool(_agent_tool(outputSchema={"type": "array"}), "t", "t")
    assert listed is not None and listed.output_schema is None
    assert listed.meta is not None
    assert listed.meta["webmcp-harness/tool"]["outputSchema"] == {"type": "array"}


def test_the_listed_output_schema_fits_redacted_results() -> None:
    secret = {"type": "integer", "x-sensitive": True}
    marked = _agent_tool(
        outputSchema={
            "type": "object",
            "properties": {"pin": secret, "n": {"type": "integer"}},
            "required": ["pin"],
        }
    )
    relaxed = output_schema(marked)
    assert relaxed is not None
    assert relaxed["properties"]["pin"]["type"] == "string"
    assert relaxed["properties"]["n"] == {"type": "integer"} and relaxed["required"] == ["pin"]
    whole = _agent_tool(
        outputSchema={"type": "object", "properties": {"n": {"type": "integer"}}},
        annotations={"sensitiveHint": True},
    )
    assert output_schema(whole) is None


def test_a_marked_subschema_named_by_a_reference_still_resolves_for_the_client() -> None:
    # The value withheld sits under an anchor (and a `$defs` of its own) that references
    # elsewhere name: the handle keeps what names it, so the client's SDK (jsonschema, a
    # registry of the schema alone) resolves every `$ref` and the redacted result fits.
    marked = {
        "$anchor": "tok",
        "type": "object",
        "x-sensitive": True,
        "$defs": {"inner": {"$anchor": "deep", "type": "integer"}},
    }
    tool = _agent_tool(
        outputSchema={
            "type": "object",
            "properties": {"key": {"$ref": "#tok"}, "copy": {"$ref": "#deep"}, "t": marked},
        }
    )
    relaxed = output_schema(tool)
    assert relaxed is not None
    redacted = {"key": "wmh-secret-0123456789ab", "copy": 3, "t": "wmh-secret-0123456789ab"}
    jsonschema.validate(redacted, relaxed)  # raised NoSuchAnchor: `#tok` led nowhere
    # A JSON pointer into what became a handle cannot be kept: no outputSchema is listed
    # (the client gets the framed text), rather than one its SDK cannot read.
    into = _agent_tool(
        outputSchema={
            "type": "object",
            "properties": {
                "key": {"x-sensitive": True, "properties": {"a": {"type": "string"}}},
                "copy": {"$ref": "#/properties/key/properties/a"},
            },
        }
    )
    assert output_schema(into) is None


def test_results_that_break_the_output_schema_become_errors() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    good = types.CallToolResult(content=[], structured_content={"n": 1})
    assert conform(good, schema) is good
    bad = conform(types.CallToolResult(content=[], structured_content={"n": "x"}), schema)
    assert bad.is_error is True and "does not match the tool's outputSchema" in text_of(bad)
    missing = conform(types.CallToolResult(content=[]), schema)
    assert missing.is_error is True and "no structured content" in text_of(missing)
    failed = types.CallToolResult(content=[], is_error=True)
    assert conform(failed, schema) is failed


def test_a_title_a_client_shows_a_person_comes_without_the_agent_s_frame() -> None:
    from harness.agent_view import agent_tool
    from harness.models import Tool

    page_tool = Tool(
        name="t",
        title="Send money",
        description="Sends money.",
        inputSchema={"type": "object"},
        origin="http://127.0.0.1:9",
        frame="main",
    )
    listed = mcp_tool(agent_tool(page_tool), "t", "t")
    assert listed is not None
    assert listed.title == "Send money"  # a client's UI shows it to a person
    assert listed.description is not None and "<untrusted-data" in listed.description  # the agent's
