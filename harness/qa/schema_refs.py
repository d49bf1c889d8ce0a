"""Where the ``$ref`` keywords of a schema point, and which way each uses its target: a change
of the target moves the whole the same way (a ``$ref`` under ``anyOf``, ``properties``…), the other
(under ``not``) or either (under ``oneOf``, ``if``). :mod:`harness.qa.schema_change` orders a
definition's changes (``$defs``, draft 7's ``definitions``) with it.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

# Keywords whose value maps names to definitions: read only where a $ref names them.
DEFINITIONS = ("$defs", "definitions")

# A definition is compared where it is, and means something only where a $ref uses it: its
# change moves the whole as the place of every $ref to it does (through other definitions
# too). A $ref the harness does not follow (an anchor, another document, a pointer into a
# definition) may use anything: its polarity is added to every change's.

ROOT = "#"  # a $ref to the whole schema (recursion)
ANYWHERE = "*"  # a $ref the comparison does not follow
# How a subschema's change moves the whole under each keyword that holds one (the same way,
# the other, or either); by the shape of the keyword's value.
_SCHEMA_POLARITY = {
    "not": -1,
    "if": 0,  # unless then or else is missing (_if_polarity)
    "then": 1,
    "else": 1,
    "propertyNames": 1,
    "additionalProperties": 1,
    "additionalItems": 1,
    "items": 1,
    "contains": 1,
    "unevaluatedProperties": 0,
    "unevaluatedItems": 0,
}
_LIST_POLARITY = {"allOf": 1, "anyOf": 1, "oneOf": 0, "prefixItems": 1, "items": 1}
_MAP_POLARITY = {"properties": 1, "patternProperties": 1, "dependentSchemas": 1, "dependencies": 1}


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
    if not isinstance(ref, str) or not ref.startswith("#"):
        return None
    if ref == "#":
        return ()
    tokens = [unquote(t).replace("~1", "/").replace("~0", "~") for t in ref[1:].split("/")]
    if len(tokens) == 3 and tokens[0] == "" and tokens[1] in DEFINITIONS:
        return (tokens[1], tokens[2])
    return None
