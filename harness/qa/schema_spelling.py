"""Spellings with one meaning: JSON values equal as JSON (``1`` and ``1.0``, an object's keys
in any order), and JSON Schemas written differently that accept exactly the same values.

:func:`normal_form` writes each such schema one way, so that :mod:`harness.qa.schema_change`
sees no change where there is none: every local ``$ref`` written out where it points
(:func:`harness.qa.schema_refs.inlined`: a definition's name, or whether a subschema lies in
``$defs``, does not count), a ``const`` as an ``enum`` of its one value, an ``allOf`` branch
that only asks for ``required`` names, ``properties`` or a ``type`` merged into the schema that
holds it, ``anyOf`` (``oneOf``) branches that each take a type of their own as one ``type``
list (``anyOf: [{type: string}, {type: null}]`` is ``type: [string, null]``), and an integer's
bounds at whole numbers (``exclusiveMinimum: 0`` is ``minimum: 1``; a number that is a
multiple of 1 is an integer). A merged branch's annotations (``title``, ``description``…,
:data:`~harness.qa.schema_refs.ANNOTATIONS`: no validator reads them) do not keep it apart:
they stand beside what it merged into, or, where that says one otherwise, in an ``allOf``
branch of their own — a pydantic ``Optional[Model]`` is ``type: [object, null]`` with the
model's ``title`` beside it. Each rewrite is made only where it is exact, read as the harness
validates (Draft 2020-12) and as a Draft 7 validator reads it alike:
a branch's ``properties`` are merged only where no ``additionalProperties`` or
``unevaluatedProperties`` beside them reads which names are declared, a property declared
twice asks for both schemas (``allOf``), a ``type`` moves only where every branch that
declares one declares the same, ``oneOf`` branches become a type list only where no value is
of two of their types, and a ``$ref`` beside a keyword that constrains (which Draft 7 ignores)
or one that reaches itself is left as it is.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Any, TypeGuard

from harness.qa.schema_refs import ANNOTATIONS, SCHEMA_MAPS, inlined
from harness.schemas import SUBSCHEMA_KEYWORDS, SUBSCHEMA_LISTS

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
    written = inlined(schema)
    if written is None:
        return schema  # a $ref reads a place a rewrite could move: left as it is written
    return _normal(written)


def _normal(schema: Any) -> Any:
    """:func:`normal_form` of a schema whose $refs it has written out."""
    if not isinstance(schema, dict):
        return schema
    node = {key: _normal_value(key, value) for key, value in schema.items()}
    _const_as_enum(node)
    _merge_branches(node)
    _merge_types(node)
    _whole_numbers(node)
    if len(node) == len(schema) and all(key in schema and node[key] is schema[key] for key in node):
        return schema
    return node


def _normal_value(key: str, value: Any) -> Any:
    """The value of keyword ``key`` with the subschemas it holds in normal form."""
    if key in SUBSCHEMA_KEYWORDS and isinstance(value, dict):
        return _normal(value)
    if key in SUBSCHEMA_LISTS and isinstance(value, list):
        items = [_normal(item) for item in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    if key in SCHEMA_MAPS and isinstance(value, dict):
        # (A dependencies entry may list names: normal_form leaves a list as it is.)
        named = {name: _normal(item) for name, item in value.items()}
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
        dict(b) if isinstance(b, dict) and b.keys() <= _MERGEABLE | ANNOTATIONS else None
        for b in branches
    ]
    parts = [b for b in mergeable if b is not None]
    _merge_required(node, parts)
    _merge_type(node, parts)
    _merge_properties(node, parts)
    _lift_annotations(node, parts)
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
        merged[name] = distinct[0] if len(distinct) == 1 else _normal({"allOf": distinct})
    node["properties"] = merged


def _lift_annotations(node: dict[str, Any], parts: list[dict[str, Any]]) -> None:
    """Move the annotations of ``parts`` (branches merged into ``node``) into ``node``, each
    that ``node`` and every other part say alike or not at all; one said otherwise stays in
    its part. No validator reads them: where they stand changes no meaning, and the
    comparison still sees each (a description change)."""
    for key in sorted({key for part in parts for key in part.keys() & ANNOTATIONS}):
        said = [part[key] for part in parts if key in part]
        if key in node:
            said.append(node[key])
        if all(same_json(said[0], value) for value in said):
            node[key] = said[0]
            for part in parts:
                part.pop(key, None)


def _names(value: Any) -> TypeGuard[list[str]]:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _free(schema: Any) -> bool:
    """A schema that accepts anything: ``true`` or ``{}``."""
    return schema is True or (isinstance(schema, dict) and not schema)


# -- one type of several: anyOf / oneOf branches that each take a type of their own ---------

_TYPES = frozenset({"null", "boolean", "object", "array", "number", "string", "integer"})
# The keywords that constrain values of some types only, and those types (a number's
# keywords constrain integers too): beside a type of none of them, such a keyword asks for
# nothing. format is a string's: every format the harness asserts passes any other value,
# and one it does not know asks nothing; content* are a string's too, and asserted by none.
_TYPED_KEYWORDS: dict[str, frozenset[str]] = {
    **dict.fromkeys(
        (
            *("minLength", "maxLength", "pattern", "format"),
            *("contentEncoding", "contentMediaType", "contentSchema"),
        ),
        frozenset({"string"}),
    ),
    **dict.fromkeys(
        ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
        frozenset({"number", "integer"}),
    ),
    **dict.fromkeys(
        (
            *("items", "prefixItems", "additionalItems", "minItems", "maxItems"),
            *("uniqueItems", "contains", "minContains", "maxContains"),
        ),
        frozenset({"array"}),
    ),
    **dict.fromkeys(
        (
            *("properties", "patternProperties", "additionalProperties", "required"),
            *("minProperties", "maxProperties", "propertyNames", "dependentRequired"),
            *("dependentSchemas", "dependencies"),
        ),
        frozenset({"object"}),
    ),
}


def _type_names(kind: Any) -> list[str] | None:
    """The type names a ``type`` keyword lists, in order; None for a value not of its shape
    (or a name no validator knows)."""
    names = [kind] if isinstance(kind, str) else kind
    if not isinstance(names, list) or not all(isinstance(n, str) and n in _TYPES for n in names):
        return None
    return list(dict.fromkeys(names))


def _values_of(names: list[str]) -> frozenset[str]:
    """The types of the values ``names`` take (an integer is a number)."""
    return frozenset(names) | ({"integer"} if "number" in names else set())


def _merge_types(node: dict[str, Any]) -> None:
    """``anyOf`` (``oneOf``) branches that each take values of a type of their own, with
    keywords that constrain that type only, are one ``type`` listing theirs with the branches'
    keywords beside it: ``anyOf: [{type: string}, {type: null}]`` is ``type: [string, null]``.
    The keywords that read others (``additionalProperties``, ``items``, ``unevaluated…``) stay
    with the ones they read; ``oneOf`` only where no value is of two branches' types."""
    if "type" in node or "$ref" in node or "unevaluatedProperties" in node:
        return
    if "unevaluatedItems" in node:
        return
    for key in ("anyOf", "oneOf"):
        branches = node.get(key)
        if "type" in node or not isinstance(branches, list) or not branches:
            continue
        if not all(isinstance(b, dict) and "type" in b for b in branches):
            continue
        names = [_type_names(b["type"]) for b in branches]
        if any(n is None for n in names):
            continue
        values = [_values_of(n or []) for n in names]
        disjoint = sum(map(len, values)) == len(frozenset().union(*values))
        keywords = {k: v for b in branches for k, v in _constraints(b).items() if k != "type"}
        if not disjoint and (key == "oneOf" or keywords):
            continue  # a value two branches take: oneOf refuses it, and a bound may not apply
        if keywords and not _typed_apart(node, branches, values):
            continue
        # A branch's annotations (a model's title) go beside the type; one said otherwise
        # there (the field's own description) stays in an allOf branch of its own.
        annotated = [{k: v for k, v in b.items() if k in ANNOTATIONS} for b in branches]
        if not isinstance(node.get("allOf", []), list):
            continue
        node["type"] = list(dict.fromkeys(n for listed in names for n in listed or []))
        node.update(keywords)
        del node[key]
        _lift_annotations(node, annotated)
        apart = [part for part in annotated if part]
        if apart:
            node["allOf"] = [*node.get("allOf", []), *apart]


def _typed_apart(node: dict[str, Any], branches: list[Any], values: list[frozenset[str]]) -> bool:
    """Whether every keyword beside a branch's type constrains values of that branch's types
    alone (none another branch takes), appears once, and reads or is read by nothing in
    ``node`` (a keyword of the same types)."""
    seen: set[str] = set()
    beside = {types for k in node if (types := _TYPED_KEYWORDS.get(k)) is not None}
    for branch, own in zip(branches, values, strict=True):
        others = frozenset().union(*(v for v in values if v is not own))
        for keyword in _constraints(branch).keys() - {"type"}:
            types = _TYPED_KEYWORDS.get(keyword)
            if types is None or types & others or keyword in seen or types in beside:
                return False
            seen.add(keyword)
    return True


def _constraints(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` without its annotations (:data:`~harness.qa.schema_refs.ANNOTATIONS`)."""
    return {k: v for k, v in schema.items() if k not in ANNOTATIONS}


# -- whole numbers: an integer's bounds, a number that is a multiple of a whole one -----------


def _whole(value: Any) -> TypeGuard[int | float]:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value == int(value)
    )


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _whole_numbers(node: dict[str, Any]) -> None:
    """A number that is a multiple of a whole number is an integer; an integer's bounds are
    ``minimum`` and ``maximum`` at whole numbers: ``exclusiveMinimum: 0`` is ``minimum: 1``,
    ``maximum: 9.5`` is ``maximum: 9``, ``multipleOf: 1`` asks for nothing more."""
    names = _type_names(node.get("type"))
    if names is None:
        return
    step = node.get("multipleOf")
    if "number" in names and _whole(step) and step > 0:
        names = list(dict.fromkeys("integer" if n == "number" else n for n in names))
        node["type"] = names[0] if isinstance(node["type"], str) else names
    if "integer" not in names or "number" in names:
        return
    if _whole(step) and step == 1:
        del node["multipleOf"]
    _whole_bound(node, "minimum", "exclusiveMinimum")
    _whole_bound(node, "maximum", "exclusiveMaximum")


def _whole_bound(node: dict[str, Any], inclusive: str, exclusive: str) -> None:
    """An integer's lower (upper) bound as ``minimum`` (``maximum``) at a whole number: the
    nearest whole number inside each bound, the narrower of the two."""
    bound, strict = node.get(inclusive, _NONE), node.get(exclusive, _NONE)
    if not all(v is _NONE or _finite(v) for v in (bound, strict)):
        return  # draft 4's boolean exclusiveMinimum, or a value not a number
    lower = inclusive == "minimum"
    found: list[int] = []
    if bound is not _NONE:
        found.append(math.ceil(bound) if lower else math.floor(bound))
    if strict is not _NONE:
        found.append(math.floor(strict) + 1 if lower else math.ceil(strict) - 1)
        del node[exclusive]
    if found:
        node[inclusive] = max(found) if lower else min(found)
