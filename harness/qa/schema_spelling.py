"""Spellings with one meaning: JSON values equal as JSON (``1`` and ``1.0``, an object's keys
in any order), and JSON Schemas written differently that accept exactly the same values.

:func:`normal_form` writes each such schema one way, so that :mod:`harness.qa.schema_change`
sees no change where there is none: a ``const`` as an ``enum`` of its one value, and an
``allOf`` branch that only asks for ``required`` names, ``properties`` or a ``type`` merged into
the schema that holds it. Each rewrite is made only where it is exact, read as the harness
validates (Draft 2020-12) and as a Draft 7 validator reads it alike:
a branch's ``properties`` are merged only where no ``additionalProperties`` or
``unevaluatedProperties`` beside them reads which names are declared, a property declared
twice asks for both schemas (``allOf``), and a ``type`` moves only where every branch that
declares one declares the same.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, TypeGuard

# Keywords whose value is a schema, a list of schemas, or a map of names to schemas.
_SCHEMA_KEYWORDS = frozenset(
    {
        *("not", "if", "then", "else", "propertyNames", "additionalProperties"),
        *("additionalItems", "items", "contains", "unevaluatedProperties", "unevaluatedItems"),
    }
)
_LIST_KEYWORDS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems", "items"})
_MAP_KEYWORDS = frozenset(
    {"properties", "patternProperties", "dependentSchemas", "dependencies", "$defs", "definitions"}
)
_NONE: Any = object()  # a keyword the schema does not have (null is a value it can have)
# What an allOf branch may hold to be merged into the schema that holds it.
_MERGEABLE = frozenset({"required", "properties", "type"})


def canonical(value: Any) -> Hashable:
    """``value`` as a hashable key with JSON's equality: ``true`` is not ``1`` (as it is in
    Python), ``1`` is ``1.0``, and the order of an object's keys does not count."""
    if isinstance(value, dict):
        return ("object", frozenset((key, canonical(item)) for key, item in value.items()))
    if isinstance(value, list):
        return ("array", tuple(canonical(item) for item in value))
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return (type(value).__name__, value)
    if isinstance(value, int | float):
        return ("number", "NaN" if value != value else value)
    return ("other", repr(value))


def same_json(was: Any, now: Any) -> bool:
    """Whether two JSON values are equal as JSON: ``true`` is not ``1``, ``1`` is ``1.0``,
    an object's keys in any order (and too deep to tell: not the same)."""
    try:
        return was is now or canonical(was) == canonical(now)
    except RecursionError:
        return False  # too deep to tell: not the same, which gates


def normal_form(schema: Any) -> Any:
    """``schema`` written the one way this module gives every spelling of its meaning (the
    module says which); ``schema`` itself when it is written so already. Takes any JSON
    value: one not of the shape a keyword gives it is left as it is."""
    if not isinstance(schema, dict):
        return schema
    node = {key: _normal_value(key, value) for key, value in schema.items()}
    _const_as_enum(node)
    _merge_branches(node)
    if len(node) == len(schema) and all(key in schema and node[key] is schema[key] for key in node):
        return schema
    return node


def _normal_value(key: str, value: Any) -> Any:
    """The value of keyword ``key`` with the subschemas it holds in normal form."""
    if key in _SCHEMA_KEYWORDS and isinstance(value, dict):
        return normal_form(value)
    if key in _LIST_KEYWORDS and isinstance(value, list):
        items = [normal_form(item) for item in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    if key in _MAP_KEYWORDS and isinstance(value, dict):
        # (A dependencies entry may list names: normal_form leaves a list as it is.)
        named = {name: normal_form(item) for name, item in value.items()}
        return value if all(named[n] is value[n] for n in value) else named
    return value


def _const_as_enum(node: dict[str, Any]) -> None:
    """``const: v`` is ``enum: [v]``; beside an ``enum`` that lists v, the two ask for v alone."""
    if "const" not in node:
        return
    value, listed = node["const"], node.get("enum", _NONE)
    if listed is _NONE or (
        isinstance(listed, list) and any(same_json(value, item) for item in listed)
    ):
        node["enum"] = [node.pop("const")]


def _merge_branches(node: dict[str, Any]) -> None:
    """Merge into ``node`` what its ``allOf`` branches of ``required`` names, ``properties``
    and ``type`` ask for, where the merged keyword means the same; whatever the branches'
    order, the same normal form."""
    branches = node.get("allOf")
    if not isinstance(branches, list):
        return
    mergeable = [
        dict(b) if isinstance(b, dict) and b.keys() <= _MERGEABLE else None for b in branches
    ]
    parts = [b for b in mergeable if b is not None]
    _merge_required(node, parts)
    _merge_type(node, parts)
    _merge_properties(node, parts)
    kept = [
        branch if part is None else part
        for branch, part in zip(branches, mergeable, strict=True)
        if not _free(branch if part is None else part)  # a branch that asks for nothing
    ]
    emptied = any(
        part is not None and len(part) < len(branch)
        for branch, part in zip(branches, mergeable, strict=True)
    )
    if not kept:
        del node["allOf"]
    elif emptied or len(kept) < len(branches):
        node["allOf"] = kept  # (else the list as it was: normal_form gives the schema itself)


def _merge_required(node: dict[str, Any], branches: list[dict[str, Any]]) -> None:
    """Every name a branch requires is one ``node`` requires."""
    names = node.get("required", [])
    asking = [b for b in branches if _names(b.get("required"))]
    if not (asking and _names(names)):
        return
    for branch in asking:
        names = [*names, *branch.pop("required")]
    node["required"] = list(dict.fromkeys(names))


def _merge_type(node: dict[str, Any], branches: list[dict[str, Any]]) -> None:
    """A type the branches (and ``node``) all declare alike is ``node``'s."""
    typed = [b for b in branches if "type" in b]
    declared = [b["type"] for b in typed] + ([node["type"]] if "type" in node else [])
    if typed and all(same_json(declared[0], kind) for kind in declared):
        node["type"] = declared[0]
        for branch in typed:
            del branch["type"]


def _merge_properties(node: dict[str, Any], branches: list[dict[str, Any]]) -> None:
    """The branches' ``properties`` are ``node``'s, a name declared more than once asking
    for each of its schemas (``allOf``); only where nothing beside ``node``'s properties reads
    which names they declare (``additionalProperties``, ``unevaluatedProperties``)."""
    declared = node.get("properties", {})
    giving = [b for b in branches if isinstance(b.get("properties"), dict)]
    names_read = not all(
        _free(node.get(k, True)) for k in ("additionalProperties", "unevaluatedProperties")
    )
    if not giving or names_read or not isinstance(declared, dict):
        return
    schemas: dict[str, list[Any]] = {name: [schema] for name, schema in declared.items()}
    for branch in giving:
        for name, schema in branch.pop("properties").items():
            schemas.setdefault(name, []).append(schema)
    merged = {}
    for name, each in schemas.items():
        distinct = list({canonical(schema): schema for schema in each}.values())
        merged[name] = distinct[0] if len(distinct) == 1 else normal_form({"allOf": distinct})
    node["properties"] = merged


def _names(value: Any) -> TypeGuard[list[str]]:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _free(schema: Any) -> bool:
    """A schema that accepts anything: ``true`` or ``{}``."""
    return schema is True or (isinstance(schema, dict) and not schema)
