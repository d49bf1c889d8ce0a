"""Where the ``$ref`` keywords of a schema point, and which way each uses its target: a change
of the target moves the whole the same way (a ``$ref`` under ``anyOf``, ``properties``…), the other
(under ``not``) or either (under ``oneOf``, ``if``). :mod:`harness.qa.schema_change` orders a
definition's changes (``$defs``, draft 7's ``definitions``) with it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from harness.schemas import (
    SUBSCHEMA_KEYWORDS,
    SUBSCHEMA_LISTS,
    SUBSCHEMA_MAPS,
    at_pointer,
    json_pointer,
)

# Keywords whose value maps names to definitions: read only where a $ref names them.
DEFINITIONS = ("$defs", "definitions")
SCHEMA_MAPS = (*SUBSCHEMA_MAPS, "dependencies")
"""The keywords whose value maps names to subschemas, as the comparison reads them: the
harness's (:data:`~harness.schemas.SUBSCHEMA_MAPS`), and draft 7's ``dependencies`` (a name
→ a schema, or a list of names) besides, which Draft 2020-12 does not read but a page's
schema may still hold (:mod:`harness.qa.schema_change` compares it): its schemas are
followed as ``dependentSchemas``' are."""

# A definition is compared where it is, and means something only where a $ref uses it: its
# change moves the whole as the place of every $ref to it does (through other definitions
# too). A $ref the harness does not follow (an anchor, another document, a pointer into a
# definition) may use anything: its polarity is added to every change's.

ROOT = "#"  # a $ref to the whole schema (recursion)
ANYWHERE = "*"  # a $ref the comparison does not follow
# How a subschema's change moves the whole under each keyword that holds one: the same way
# (1), unless the keyword turns it the other way (-1) or either way (0).
_TURNS = {
    "not": -1,
    "if": 0,  # unless then or else is missing (_if_polarity)
    "oneOf": 0,  # unless no value can match two branches (schema_change's separate)
    "unevaluatedProperties": 0,
    "unevaluatedItems": 0,
}
# By the shape of the keyword's value; definitions count only where a $ref uses them.
_SCHEMA_POLARITY = {keyword: _TURNS.get(keyword, 1) for keyword in SUBSCHEMA_KEYWORDS}
_LIST_POLARITY = {keyword: _TURNS.get(keyword, 1) for keyword in SUBSCHEMA_LISTS}
_MAP_POLARITY = {keyword: 1 for keyword in SCHEMA_MAPS if keyword not in DEFINITIONS}


def references(schema: Any, base: str) -> dict[str, set[int]]:
    """The polarities each $ref target is used with in ``schema`` (whose path is ``base``):
    ``base/$defs/Name`` for a definition, ``ROOT``, or ``ANYWHERE``."""
    uses: dict[str, set[int]] = {}
    followed: set[tuple[str, int]] = set()
    stack: list[tuple[Any, int]] = [(schema, 1)]
    while stack:
        node, polarity = stack.pop()
        if not isinstance(node, dict):
            continue
        for keyword in ("$ref", "$dynamicRef", "$recursiveRef"):
            if keyword not in node:
                continue
            target = _target(node[keyword]) if keyword == "$ref" else None
            place = (
                ANYWHERE if target is None else ROOT if not target else f"{base}/{'/'.join(target)}"
            )
            if (place, polarity) in followed:
                continue
            followed.add((place, polarity))
            uses.setdefault(place, set()).add(polarity)
            if target == ():
                stack.append((schema, polarity))
            elif target is not None and isinstance(found := schema.get(target[0]), dict):
                stack.append((found.get(target[1]), polarity))
        for keyword, value in node.items():
            if keyword == "if" and isinstance(value, dict):
                stack.append((value, polarity * _if_polarity(node)))
            elif keyword in _SCHEMA_POLARITY and isinstance(value, dict):
                turn = 0 if keyword == "contains" and "maxContains" in node else 1
                stack.append((value, polarity * _SCHEMA_POLARITY[keyword] * turn))
            elif keyword in _LIST_POLARITY and isinstance(value, list):
                stack += [(item, polarity * _LIST_POLARITY[keyword]) for item in value]
            elif keyword in _MAP_POLARITY and isinstance(value, dict):
                stack += [(item, polarity * _MAP_POLARITY[keyword]) for item in value.values()]
    return uses


def _if_polarity(node: dict[str, Any]) -> int:
    """How ``if`` moves the schema ``node``: with no then it takes what if or else takes (1),
    with no else what if refuses or then takes (-1), with both either (0)."""
    no_then, no_else = (_free(node.get(k, True)) for k in ("then", "else"))
    if no_then != no_else:
        return 1 if no_then else -1
    return 0


def _free(schema: Any) -> bool:
    return schema is True or (isinstance(schema, dict) and not schema)


def _target(ref: Any) -> tuple[str, ...] | None:
    """The definition a $ref names (``("$defs", "Shelf")`` for ``#/$defs/Shelf``), ``()`` for
    the whole schema (``#``); None for any other."""
    path = json_pointer(ref) if isinstance(ref, str) else None
    if path == () or (path is not None and len(path) == 2 and path[0] in DEFINITIONS):
        return path
    return None


# -- local $refs written out in place ------------------------------------------------------
#
# A $ref to a JSON pointer in the same schema means what it points at: written out in place, a
# definition's name (and whether a subschema lies in $defs at all) stops counting. One that
# reaches itself (a tree) cannot be written out: it stays, and so does its definition, which
# must then stay where it is.

# Keywords that lead a reference elsewhere than a pointer from the root: with them the $refs
# are left as they are.
_ANCHORED = ("$anchor", "$dynamicAnchor", "$dynamicRef", "$recursiveRef", "$recursiveAnchor")
# Keywords that describe rather than constrain: no validator reads them (JSON Schema's
# meta-data, $comment, the toolparamtitle Chromium writes for a form's control). A $ref
# written out beside them means the same to a validator of Draft 2020-12 (which applies what
# stands beside a $ref) and of Draft 7 (which ignores it).
ANNOTATIONS = frozenset(
    {
        *("title", "description", "examples", "default", "$comment", "deprecated"),
        *("readOnly", "writeOnly", "toolparamtitle"),
    }
)
# How many schemas the written-out form may hold: definitions that use each other twice over
# double at every step.
_MOST_WRITTEN = 20_000


class _TooLarge(Exception):
    """The schema with its $refs written out would hold more than ``_MOST_WRITTEN`` schemas."""


def inlined(schema: Any) -> Any | None:
    """``schema`` with every local ``$ref`` to a JSON pointer (``#/$defs/Name``, any other)
    replaced by what it points at, beside the keywords that describe, and the root definitions
    nothing refers to any more left out; ``schema`` itself when nothing changes.

    A ``$ref`` is left as it is when it reaches itself (a tree), leads to another document, or
    stands beside a keyword that constrains (Draft 7 ignores that keyword, 2020-12 applies it);
    none is written out where anchors or ``$dynamicRef`` take part. None when a rewrite that
    moves subschemas could change what a $ref left reads: an ``$id`` below the root, or a
    pointer left that leads elsewhere than to the root or a root definition."""
    if not isinstance(schema, dict):
        return schema
    nodes = list(_schemas_in(schema))
    if any("$id" in node for node in nodes if node is not schema):
        return None
    if not any("$ref" in node for node in nodes):
        return schema
    written = schema
    if not any(keyword in node for node in nodes for keyword in _ANCHORED):
        try:
            written = _Writer(schema, _looping(schema)).write(schema)
        except (_TooLarge, RecursionError):
            written = schema
    kept = {ref for ref in _refs_in(written) if ref.startswith("#")}
    for ref in kept:
        path = json_pointer(ref)
        if path and not (len(path) == 2 and path[0] in DEFINITIONS):
            return None
    return schema if written is schema else _without_unused(written, kept)


def _schemas_in(schema: Any) -> Iterator[dict[str, Any]]:
    """Every schema (object) in ``schema``, itself first, through the keywords that hold them."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            yield node
            stack.extend(_children(node))


def _children(node: dict[str, Any]) -> Iterator[Any]:
    for keyword, value in node.items():
        if keyword in SCHEMA_MAPS and isinstance(value, dict):
            yield from value.values()
        elif keyword in _LIST_POLARITY and isinstance(value, list):
            yield from value
        elif keyword in _SCHEMA_POLARITY and isinstance(value, dict):
            yield value


def _refs_in(schema: Any) -> Iterator[str]:
    for node in _schemas_in(schema):
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield ref


def _looping(root: dict[str, Any]) -> set[str]:
    """The local $refs that reach themselves (through the $refs where they lead)."""
    leads: dict[str, set[str]] = {}
    for ref in set(_refs_in(root)):
        path = json_pointer(ref)
        target = None if path is None else at_pointer(root, path)
        leads[ref] = set(_refs_in(target)) if isinstance(target, dict) else set()
    looping = set()
    for start in leads:
        seen, stack = set(), list(leads[start])
        while stack:
            ref = stack.pop()
            if ref == start:
                looping.add(start)
                break
            if ref not in seen:
                seen.add(ref)
                stack.extend(leads.get(ref, ()))
    return looping


class _Writer:
    """Writes a schema's local $refs out in place (what :func:`inlined` says)."""

    def __init__(self, root: dict[str, Any], looping: set[str]) -> None:
        self.root, self.looping = root, looping
        self.written: dict[str, Any] = {}  # each target written once, shared where used
        self.sizes: dict[str, int] = {}  # how many schemas each holds written out
        self.size = 0

    def _grow(self, count: int) -> None:
        self.size += count
        if self.size > _MOST_WRITTEN:
            raise _TooLarge

    def write(self, node: Any) -> Any:
        if not isinstance(node, dict):
            return node
        self._grow(1)
        out = {key: self._value(key, value) for key, value in node.items()}
        ref = node.get("$ref")
        if not isinstance(ref, str) or ref in self.looping:
            return out
        if not out.keys() - {"$ref"} <= ANNOTATIONS:
            return out
        path = json_pointer(ref)
        target = None if path is None else at_pointer(self.root, path)
        if not isinstance(target, dict | bool):
            return out  # another document, or nowhere: left for the validator to say
        if ref in self.written:
            self._grow(self.sizes[ref])  # written out again: as many schemas again
        else:
            before = self.size
            self.written[ref] = self.write(target)
            self.sizes[ref] = self.size - before
        rest = {key: value for key, value in out.items() if key != "$ref"}
        return {"allOf": [self.written[ref]], **rest} if rest else self.written[ref]

    def _value(self, key: str, value: Any) -> Any:
        if key in SCHEMA_MAPS and isinstance(value, dict):
            return {name: self.write(item) for name, item in value.items()}
        if (key in _LIST_POLARITY) and isinstance(value, list):
            return [self.write(item) for item in value]
        if key in _SCHEMA_POLARITY and isinstance(value, dict):
            return self.write(value)
        return value


def _without_unused(schema: dict[str, Any], kept: set[str]) -> dict[str, Any]:
    """``schema`` without the root definitions no ``kept`` $ref names."""
    named = {json_pointer(ref) for ref in kept}
    out = dict(schema)
    for keyword in DEFINITIONS:
        defined = out.get(keyword)
        if not isinstance(defined, dict):
            continue
        used = {name: body for name, body in defined.items() if (keyword, name) in named}
        if used:
            out[keyword] = used
        else:
            del out[keyword]
    return out
