"""The MCP view of tools and results: the agent view in MCP's words.

Pure functions over the agent view (:mod:`harness.agent_view`), used by the MCP
server (:mod:`harness.mcp.server`):

- :func:`mcp_tool`: a page tool as an MCP ``Tool``. ``readOnlyHint``,
  ``destructiveHint``, ``idempotentHint`` and ``openWorldHint`` become MCP
  ``ToolAnnotations``; the tool's origin, the spec's other hints and the trust
  labels (SEP's declared data flow) become a prefix of the description
  (``[WebMCP tool from ORIGIN; sensitive; ...]``) and ``_meta["webmcp-harness/tool"]``
  (with every annotation the page gave, and its page name).
- :func:`output_schema`: the outputSchema that the agent view of a result fits
  (redaction puts string handles where ``x-sensitive`` values were).
- :func:`conform`: a success result that breaks the listed outputSchema becomes an
  ``isError`` result, because MCP clients reject it otherwise.
- :data:`HARNESS_TOOLS`: ``harness.navigate`` and ``harness.reload``.
"""

from __future__ import annotations

import contextlib
import re
from typing import Any

import mcp.types as types

from harness.agent_view import AgentTool
from harness.mcp.names import NAVIGATE, RELOAD
from harness.models import META_PREFIX
from harness.schemas import SchemaTimeout, keyword_locations, unresolvable_references
from harness.stages.framing import unframed, user_agent_text
from harness.stages.reasons import place, reason, token
from harness.stages.validation import (
    fingerprint,
    output_schema_problem,
    result_error,
    result_validator,
)

# The MCP annotations the page's hints map to; every other annotation is a label.
MCP_HINTS = {
    "readOnlyHint": "read_only_hint",
    "destructiveHint": "destructive_hint",
    "idempotentHint": "idempotent_hint",
    "openWorldHint": "open_world_hint",
}
# Labels for the spec's other boolean hints. Only known keys are labelled: annotation
# keys are page-provided, and the prefix sits outside the untrusted-data frame.
HINT_LABELS = {
    "sensitiveHint": "sensitive",
    "consequentialHint": "consequential",
    "untrustedContentHint": "untrusted content",
    "maliciousActivityHint": "malicious activity suspected",
    "debugging": "debugging",
}
# The trust SEP's action metadata: only these enumerated values are labelled.
METADATA_VALUES = {
    "inputMetadata": {
        "destination": {"ephemeral", "system", "user", "internal", "public"},
        "outcomes": {"benign", "consequential", "irreversible"},
    },
    "returnMetadata": {
        "source": {"untrustedPublic", "trustedPublic", "internal", "user", "system"},
    },
}

WITHHELD = "Withheld by the user agent: an opaque handle stands in for the value."

PAGE_STATE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "url": {"type": "string", "description": "The page's URL now."},
        "tools": {
            "type": "array",
            "items": {"type": "string"},
            "description": "The MCP names of the page's tools now.",
        },
    },
    "required": ["url", "tools"],
}
NAVIGATE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "url": {
            "type": "string",
            "minLength": 1,
            "description": "An http(s) URL, or a path relative to the start URL (like /archive).",
        }
    },
    "required": ["url"],
    "additionalProperties": False,
}
RELOAD_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}

HARNESS_TOOLS = [
    types.Tool(
        name=NAVIGATE,
        title="Navigate the page",
        description=(
            "[webmcp-harness] Navigate the browser page to a URL. The page's tools change "
            "with the page: the tool list is sent again after the navigation. Leaving the "
            "start URL's origin needs the user's consent."
        ),
        input_schema=NAVIGATE_SCHEMA,
        output_schema=PAGE_STATE_SCHEMA,
        annotations=types.ToolAnnotations(
            read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=True
        ),
    ),
    types.Tool(
        name=RELOAD,
        title="Reload the page",
        description=(
            "[webmcp-harness] Reload the browser page. Its tools are registered again; the "
            "tool list is sent again if they changed."
        ),
        input_schema=RELOAD_SCHEMA,
        output_schema=PAGE_STATE_SCHEMA,
        annotations=types.ToolAnnotations(
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    ),
]


def labels(tool: AgentTool) -> list[str]:
    """The trust labels of a tool: its origin, the spec's hints, the declared data flow."""
    labels = [f"from {tool.origin}"]
    hints = tool.annotations
    labels += [label for key, label in HINT_LABELS.items() if hints.get(key) is True]
    for key, fields in METADATA_VALUES.items():
        declared = hints.get(key)
        if not isinstance(declared, dict):
            continue
        for name, allowed in fields.items():
            values = declared.get(name)
            listed = values if isinstance(values, list) else [values]
            known = [v for v in listed if isinstance(v, str) and v in allowed]
            if known:
                labels.append(f"{name}: {'|'.join(known)}")
    return labels


def object_schema(schema: dict[str, Any] | None) -> dict[str, Any] | None:
    """``schema`` as MCP's object-rooted schema, or None when it cannot be one."""
    if schema is None:
        return None
    if "type" not in schema:
        return {"type": "object", **schema}  # arguments and structured results are objects
    return schema if schema.get("type") == "object" else None


def output_schema(tool: AgentTool) -> dict[str, Any] | None:
    """The outputSchema MCP clients get: what the agent view of a result fits.

    Redaction puts an opaque string handle where an ``x-sensitive`` value was, so
    those subschemas become strings; a tool whose whole result is withheld
    (``sensitiveHint`` without marked fields, or an ``x-sensitive`` root) gets a
    placeholder, so it lists no outputSchema. None also when the page's schema has
    no object root, which MCP requires, or a ``pattern`` only ECMAScript reads
    (``\\p{Lu}``): clients on Python's ``re`` (the official SDK) refuse the whole tool's
    results over it; they get the result's (framed) text, and ``_meta`` the page's schema.
    """
    schema = object_schema(tool.output_schema)
    if schema is None or schema.get("x-sensitive") is True or not _python_reads(schema):
        return None
    if not _marks_sensitive(schema):
        return None if tool.annotations.get("sensitiveHint") is True else schema
    relaxed: dict[str, Any] = _withheld_as_handles(schema)
    # A reference into what became a handle (a JSON pointer inside it) would leave the
    # client a schema it cannot resolve, and its SDK would refuse every result: unlisted.
    return None if unresolvable_references(relaxed) else relaxed


def _python_reads(node: Any) -> bool:
    """Whether every ``pattern`` and ``patternProperties`` key in ``node`` compiles with
    Python's ``re``, as a Python MCP client checks a schema's regexes."""
    if isinstance(node, list):
        return all(_python_reads(item) for item in node)
    if not isinstance(node, dict):
        return True
    regexes = [node["pattern"]] if isinstance(node.get("pattern"), str) else []
    if isinstance(node.get("patternProperties"), dict):
        regexes += list(node["patternProperties"])
    for regex in regexes:
        try:
            re.compile(regex)
        except (re.error, RecursionError, OverflowError):
            return False
    return all(_python_reads(value) for value in node.values())


def _marks_sensitive(node: Any) -> bool:
    if isinstance(node, list):
        return any(_marks_sensitive(item) for item in node)
    if not isinstance(node, dict):
        return False
    return node.get("x-sensitive") is True or any(_marks_sensitive(v) for v in node.values())


_IDENTIFIERS = ("$id", "$anchor", "$dynamicAnchor")
_DEFINITIONS = ("$defs", "definitions")


def _withheld_as_handles(node: Any) -> Any:
    if isinstance(node, list):
        return [_withheld_as_handles(item) for item in node]
    if not isinstance(node, dict):
        return node
    if node.get("x-sensitive") is True:
        # What names the subschema for references (its `$id`, anchors, and the `$defs`
        # references elsewhere may point into) stays, so that every `$ref` still resolves.
        kept = {key: node[key] for key in _IDENTIFIERS if key in node}
        kept.update({key: _withheld_as_handles(node[key]) for key in _DEFINITIONS if key in node})
        return {**kept, "type": "string", "x-sensitive": True, "description": WITHHELD}
    return {key: _withheld_as_handles(value) for key, value in node.items()}


def mcp_tool(tool: AgentTool, name: str, page_name: str) -> types.Tool | None:
    """One page tool as an MCP tool; None when its inputSchema cannot describe an object."""
    input_schema = object_schema(tool.input_schema)
    if input_schema is None:
        return None
    hints = tool.annotations
    mapped = {
        field: hints[key] for key, field in MCP_HINTS.items() if isinstance(hints.get(key), bool)
    }
    others = {key: value for key, value in hints.items() if key not in MCP_HINTS}
    meta = {"pageName": page_name, "origin": tool.origin, "annotations": others}
    listed_output = output_schema(tool)
    if tool.output_schema is not None and listed_output != tool.output_schema:
        meta["outputSchema"] = tool.output_schema  # the page's own, for reference
    return types.Tool(
        name=name,
        # A client shows the title to a person: without the frame the agent's text has.
        title=unframed(tool.title) if tool.title is not None else None,
        description=f"[WebMCP tool {'; '.join(labels(tool))}]\n{tool.description}",
        input_schema=input_schema,
        output_schema=listed_output,
        annotations=types.ToolAnnotations(**mapped) if mapped else None,
        _meta={META_PREFIX + "tool": meta},
    )


def conform(result: types.CallToolResult, schema: dict[str, Any] | None) -> types.CallToolResult:
    """A result MCP clients accept: success results must fit the advertised outputSchema.

    A success result that does not fit (the page broke its own promise, or a later
    stage rewrote a field) comes back as an ``isError`` result saying so, with the
    content the agent would have seen; MCP clients reject the other way round.
    A tool that lists no outputSchema sends no ``structuredContent``: its values are
    page text no schema vouches for, which a client could hand its model unframed;
    their data is in the result's (framed) text (:func:`harness.stages.framing.mirror_structured`).
    A result the check cannot finish with in its budget (:func:`~harness.stages.validation.result_error`)
    is not vouched for either: an ``isError`` result saying so. The check takes up to its
    budget: run it off the event loop (:func:`harness.schemas.off_loop`).
    """
    if schema is None:
        if result.structured_content is None:
            return result
        return result.model_copy(update={"structured_content": None})
    if result.is_error:
        return result
    problem: str | None = None
    if result.structured_content is None:
        problem = "it has no structured content"
    else:
        # The schema's own checks: once per distinct schema, not per result (h20). They
        # and its validator are found by its fingerprint: worked out once a result.
        known = None
        with contextlib.suppress(RecursionError):  # too deep: output_schema_problem says so
            known = fingerprint(schema)
        problem = output_schema_problem(schema, known)
        if problem is None:
            try:
                # Read as every page schema is (ECMAScript patterns, formats asserted).
                error = result_error(schema, result.structured_content, known)
            except SchemaTimeout as late:  # not vouched for, as with an unreadable schema
                problem = f"{late} on this result"
            else:
                if error is None:
                    return result
                # The result's values are the page's: the reason never quotes them (nor the
                # schema's texts); it names the keyword and where it is.
                where = place("/".join(str(p) for p in error.absolute_path)) or "(top)"
                [at] = keyword_locations(result_validator(schema, known).schema, [error])
                at_pointer = "".join("/" + token(p) for p in at)
                why = reason(error, at_pointer, agents_value=False)
                problem = f"at {where}: {why} [schema {place(at_pointer)}]"
    note = user_agent_text(
        "webmcp-harness: this result does not match the tool's outputSchema "
        f"({problem}), so it is returned as an error result."
    )
    return result.model_copy(update={"content": [*result.content, note], "is_error": True})
