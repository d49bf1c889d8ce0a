"""Whether two JSON Schemas can match one value: ``oneOf`` refuses a value two of its branches
match, so where no value can, it takes what ``anyOf`` takes, and :mod:`harness.qa.schema_change`
orders a change inside it as inside ``anyOf``.

Only what proves them apart is read — ``type``, ``enum``/``const``, and for objects a property
one of them requires whose schemas are apart (a discriminator, ``kind: {const: "book"}``) —
and each of those is a conjunct of its schema, so a keyword left unread can only make the two
more apart. Where nothing proves it, they may overlap (:func:`disjoint` says False).
"""

from __future__ import annotations

from typing import Any

from harness.qa.schema_spelling import canonical

# How deep :func:`disjoint` follows a property that tells two objects apart.
_DEPTH = 8
# Keywords that draft 7 reads alone, leaving the others beside them unread.
_REFS = ("$ref", "$dynamicRef", "$recursiveRef")


def separate(branches: list[Any]) -> bool:
    """Whether no value can match two of ``branches`` (False when that cannot be told)."""
    return all(
        disjoint(first, second)
        for index, first in enumerate(branches)
        for second in branches[index + 1 :]
    )


def disjoint(first: Any, second: Any, depth: int = 0) -> bool:
    """Whether no value matches both schemas, as far as what they say shows (a schema
    beside a ``$ref`` is left unread: draft 7 reads the ``$ref`` alone)."""
    if first is False or second is False:
        return True
    if not (isinstance(first, dict) and isinstance(second, dict)) or depth > _DEPTH:
        return False
    if any(k in s for s in (first, second) for k in _REFS):
        return False
    types = [_types(s) for s in (first, second)]
    values = [_values(s) for s in (first, second)]
    if types[0] is not None and types[1] is not None and not types[0] & types[1]:
        return True
    if (
        values[0] is not None
        and values[1] is not None
        and not {canonical(v) for v in values[0]} & {canonical(v) for v in values[1]}
    ):
        return True
    for listed, kinds in ((values[0], types[1]), (values[1], types[0])):
        if (
            listed is not None
            and kinds is not None
            and not any(_json_types(v) & kinds for v in listed)
        ):
            return True
    # Two objects told apart by a property one of them requires (a discriminator).
    if not any(t is not None and t <= {"object"} for t in types):
        return False
    required = _required(first) | _required(second)
    properties = [_properties(s) for s in (first, second)]
    return any(
        name in properties[0]
        and name in properties[1]
        and disjoint(properties[0][name], properties[1][name], depth + 1)
        for name in sorted(required)
    )


def _types(schema: dict[str, Any]) -> frozenset[str] | None:
    """The types ``schema``'s ``type`` allows, ``number`` with ``integer`` (None: any, or a
    value not of its shape)."""
    kind = schema.get("type")
    names = kind if isinstance(kind, list) else [kind]
    if kind is None or not all(isinstance(n, str) for n in names):
        return None
    found = frozenset(names)
    return found | {"integer"} if "number" in found else found


def _values(schema: dict[str, Any]) -> list[Any] | None:
    """The only values ``schema``'s ``const`` and ``enum`` allow (None: any, or an ``enum``
    not of its shape)."""
    listed = schema.get("enum")
    if "enum" in schema and not isinstance(listed, list):
        return None
    if "const" in schema:
        const = schema["const"]
        if isinstance(listed, list) and canonical(const) not in {canonical(v) for v in listed}:
            return []
        return [const]
    return listed


def _json_types(value: Any) -> frozenset[str]:
    """The ``type`` names ``value`` matches (1 and 1.0 are integers and numbers)."""
    if value is None:
        return frozenset({"null"})
    if isinstance(value, bool):
        return frozenset({"boolean"})
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return frozenset({"integer", "number"})
    if isinstance(value, float):
        return frozenset({"number"})
    if isinstance(value, str):
        return frozenset({"string"})
    return frozenset({"array" if isinstance(value, list) else "object"})


def _required(schema: dict[str, Any]) -> frozenset[str]:
    """The names ``schema`` requires (none when ``required`` is not a list of names)."""
    names = schema.get("required")
    if isinstance(names, list) and all(isinstance(n, str) for n in names):
        return frozenset(names)
    return frozenset()


def _properties(schema: dict[str, Any]) -> dict[str, Any]:
    found = schema.get("properties")
    return found if isinstance(found, dict) else {}
