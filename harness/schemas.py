"""JSON Schemas a page wrote: compiled and walked without the harness acting for the page.

A tool's ``inputSchema`` and ``outputSchema``, and the ``requestedSchema`` of a question a
tool asks, are page data. Left to itself, jsonschema resolves a ``$ref`` to ``http://``
or ``file://`` by fetching it — from the harness's machine, inside the event loop, with
no timeout: a request the page chose, a local file's contents in a validation message,
and every session frozen behind a server that never answers. So:

- every validator the harness makes of a schema comes from :func:`validator_for`, whose
  registry holds the JSON Schema meta-schemas and nothing else, and never retrieves: a
  reference outside the schema document stays unresolved (:class:`Unresolvable`);
- :func:`unresolvable_references` finds such references before anything runs, so a tool
  is refused with a clear message and the catalog warns;
- :func:`subschemas` walks a schema keyword by keyword (property *names* are never
  mistaken for keywords), for every duty that reads schemas (redaction, framing).

May import: nothing of the harness (it sits with ``models`` at the bottom).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.protocols import Validator
from jsonschema_specifications import REGISTRY as _SPECIFICATIONS  # type: ignore[import-untyped]
from referencing import Registry
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012
from referencing.jsonschema import SchemaRegistry as _SchemaRegistry

__all__ = [
    "NO_RETRIEVAL",
    "Unresolvable",
    "subschemas",
    "unresolvable_references",
    "validator_for",
]

NO_RETRIEVAL: _SchemaRegistry = Registry()
"""A registry that never retrieves: jsonschema adds the meta-schemas, and that is all."""

_KNOWN: Any = _SPECIFICATIONS.combine(NO_RETRIEVAL)  # what validation resolves besides the schema

# Keywords whose value is a map of name → schema, one schema, or a list of schemas.
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_ONE = (
    "additionalProperties",
    "unevaluatedProperties",
    "items",
    "additionalItems",
    "unevaluatedItems",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
)
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems", "items")
_REFERENCES = ("$ref", "$dynamicRef")


def subschemas(schema: dict[str, Any]) -> Iterator[Any]:
    """The schemas directly inside ``schema`` (values only; may include non-dicts)."""
    for keyword in _SCHEMA_MAPS:
        members = schema.get(keyword)
        if isinstance(members, dict):
            yield from members.values()
    for keyword in _SCHEMA_ONE:
        yield schema.get(keyword)
    for keyword in _SCHEMA_LISTS:
        members = schema.get(keyword)
        if isinstance(members, list):
            yield from members


def validator_for(
    schema: Any,
    cls: type[Validator] = Draft202012Validator,
    *,
    format_checker: Any = None,
) -> Validator:
    """A validator for a page's ``schema`` that never resolves a reference outside it.

    ``cls`` may be an extension of Draft 2020-12 (the harness's own ``multipleOf``).
    Validation that reaches an outside reference raises :class:`Unresolvable`.
    """
    return cls(schema, registry=NO_RETRIEVAL, format_checker=format_checker)


def unresolvable_references(schema: Any) -> list[str]:
    """Every ``$ref`` / ``$dynamicRef`` of ``schema`` that does not lead inside it.

    References are resolved the way validation resolves them (``$id`` changes the base
    URI, anchors and JSON pointers count), against a registry that never retrieves; the
    JSON Schema meta-schemas are the only documents known besides the schema itself.
    """
    if not isinstance(schema, dict):
        return []
    try:
        resolver: Any = _KNOWN.resolver_with_root(DRAFT202012.create_resource(schema))
    except Exception:  # a malformed $id: nothing can be resolved against it
        return [str(schema.get("$id"))]
    found: list[str] = []
    # Iterative, not recursive: a page can nest a schema deeper than Python's stack.
    stack: list[tuple[Any, Any]] = [(schema, resolver)]
    while stack:
        node, current = stack.pop()
        if not isinstance(node, dict):
            continue
        if node is not schema and isinstance(node.get("$id"), str):
            try:
                current = current.in_subresource(DRAFT202012.create_resource(node))
            except Exception:
                found.append(str(node["$id"]))
                continue
        for keyword in _REFERENCES:
            ref = node.get(keyword)
            if isinstance(ref, str) and ref not in found:
                try:
                    current.lookup(ref)
                except Unresolvable:
                    found.append(ref)
                except Exception:  # a reference referencing cannot even parse
                    found.append(ref)
        stack.extend((child, current) for child in subschemas(node))
    return found
