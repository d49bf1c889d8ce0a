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
  mistaken for keywords), for every duty that reads schemas (redaction, framing);
- :func:`compiled_validator_for` gives a compiled (``jsonschema-rs``) validator for the
  schemas whose every keyword means the same to it as to jsonschema — a fast *yes* for
  a hot path; a *no* (or a schema outside that set) is left to :func:`validator_for`.

May import: nothing of the harness (it sits with ``models`` at the bottom).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote

import jsonschema_rs
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
    "compiled_validator_for",
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


def local_target(root: Any, ref: str) -> Any:
    """What a local ``$ref`` (``#``, ``#/json/pointer``, ``#anchor``) in ``root`` points at;
    None when it leads nowhere inside ``root``."""
    if not ref.startswith("#"):
        return None
    fragment = unquote(ref[1:])
    if not fragment:
        return root
    if not fragment.startswith("/"):
        return _anchor(root, fragment)
    node: Any = root
    for token in fragment[1:].split("/"):
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdecimal() and int(token) < len(node):
            node = node[int(token)]
        else:
            return None
    return node


def _anchor(root: Any, name: str) -> Any:
    stack, seen = [root], set()
    while stack:
        node = stack.pop()
        if not isinstance(node, dict) or id(node) in seen:
            continue
        seen.add(id(node))
        if name in (node.get("$anchor"), node.get("$dynamicAnchor")):
            return node
        stack.extend(subschemas(node))
    return None


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


# Keywords jsonschema-rs and jsonschema read alike (tests/test_schemas.py holds them to it).
# Left out, so such schemas keep the reference validator: `pattern`/`patternProperties`
# (a regex dialect of its own), `format`, `multipleOf` (float arithmetic), `uniqueItems`,
# `unevaluated*`, `$id`/`$anchor`/`$dynamic*` (base URIs) and anything unknown.
_SAME_MEANING = frozenset(
    {
        "type", "enum", "const", "properties", "additionalProperties", "required",
        "minProperties", "maxProperties", "dependentRequired", "dependentSchemas",
        "propertyNames", "items", "prefixItems", "minItems", "maxItems", "contains",
        "minContains", "maxContains", "minLength", "maxLength", "minimum", "maximum",
        "exclusiveMinimum", "exclusiveMaximum", "allOf", "anyOf", "oneOf", "not", "if",
        "then", "else", "$ref", "$defs", "definitions", "title", "description", "default",
        "examples", "readOnly", "writeOnly", "deprecated", "$comment",
    }
)  # fmt: skip
_DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"


def _same_meaning(schema: Any) -> bool:
    """Whether jsonschema-rs reads every schema object in ``schema`` as jsonschema does."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, bool):
            continue
        if not isinstance(node, dict):
            return False
        for keyword, value in node.items():
            if keyword.startswith("x-") or keyword in _SAME_MEANING:
                continue
            if keyword == "$schema" and value == _DRAFT_2020_12:
                continue
            return False
        ref = node.get("$ref")
        if ref is not None and not (isinstance(ref, str) and (ref == "#" or ref[:2] == "#/")):
            return False  # only JSON pointers inside the document
        if isinstance(node.get("items"), list):
            return False  # the tuple form of drafts before 2020-12
        stack.extend(child for child in subschemas(node) if child is not None)
    return not _loops_in_place(schema)


_IN_PLACE = ("allOf", "anyOf", "oneOf", "not", "if", "then", "else")  # the same value again


def _loops_in_place(root: Any) -> bool:
    """Whether a ``$ref`` leads back to itself without descending into the value (``{"$ref":
    "#"}`` at the root): jsonschema recurses until it fails, which the compiled validator
    does not; such schemas keep jsonschema's answer (no fit)."""

    def in_place(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
        ref = node.get("$ref")
        targets = [local_target(root, ref)] if isinstance(ref, str) else []
        for keyword in _IN_PLACE:
            value = node.get(keyword)
            targets += value if isinstance(value, list) else [value]
        return iter([t for t in targets if isinstance(t, dict)])

    done: set[int] = set()
    for start in _every_schema(root):
        if id(start) in done:
            continue
        # Depth-first with an explicit path: a node met again on the path is a loop.
        path: set[int] = {id(start)}
        stack: list[tuple[dict[str, Any], Iterator[Any]]] = [(start, in_place(start))]
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:  # every way on from `node` explored: no loop through it
                stack.pop()
                path.discard(id(node))
                done.add(id(node))
                continue
            if id(child) in done:
                continue
            if id(child) in path:
                return True
            path.add(id(child))
            stack.append((child, in_place(child)))
    return False


def _every_schema(root: Any) -> Iterator[dict[str, Any]]:
    stack, seen = [root], set()
    while stack:
        node = stack.pop()
        if isinstance(node, dict) and id(node) not in seen:
            seen.add(id(node))
            yield node
            stack.extend(subschemas(node))


def compiled_validator_for(schema: Any) -> Any | None:
    """A compiled validator (``jsonschema-rs``, offline: it never retrieves) for ``schema``,
    or None when the schema uses a keyword the two may read differently, or it does not
    compile. Its ``is_valid`` may raise for a value Rust cannot hold (a lone surrogate):
    the caller then asks :func:`validator_for`. Trust only its *yes*."""
    if not _same_meaning(schema):
        return None
    try:
        return jsonschema_rs.Draft202012Validator(schema, offline=True)
    except Exception:  # a malformed schema: the reference validator says what it makes of it
        return None


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
