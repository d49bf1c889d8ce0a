"""A Draft 2020-12 schema in the words of Draft 7, which hypothesis-jsonschema reads.

The harness reads every schema as Draft 2020-12 (:mod:`harness.stages.validation`);
hypothesis-jsonschema reads Drafts 4 to 7, and passes over the keywords it does not know.
Before :mod:`harness.qa.strategies` draws anything, :func:`as_draft7` says the schema in
Draft 7's words, and lists what those words cannot say (:attr:`Draft7.unread`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote

from harness.schemas import (
    SUBSCHEMA_KEYWORDS,
    SUBSCHEMA_LISTS,
    SUBSCHEMA_MAPS,
    local_target,
    subschemas,
)

_REWORDED = (
    *("$schema", "prefixItems", "items", "unevaluatedItems", "unevaluatedProperties"),
    *("dependentRequired", "dependentSchemas", "$dynamicRef", "additionalItems", "dependencies"),
)
# The keywords that hold subschemas and keep their words in Draft 7: every one but those
# reworded (or left out) above.
_SCHEMA_MAPS = tuple(keyword for keyword in SUBSCHEMA_MAPS if keyword not in _REWORDED)
_SCHEMA_ONE = tuple(keyword for keyword in SUBSCHEMA_KEYWORDS if keyword not in _REWORDED)
_SCHEMA_LISTS = tuple(keyword for keyword in SUBSCHEMA_LISTS if keyword not in _REWORDED)
_IN_PLACE = ("allOf", "anyOf", "oneOf", "if", "dependentSchemas", "$ref", "$dynamicRef")
"""Keywords that apply subschemas to the value itself: what they evaluate decides what
``unevaluatedItems``/``unevaluatedProperties`` apply to."""


@dataclass(frozen=True)
class Draft7:
    """A Draft 2020-12 schema in the words of Draft 7, which hypothesis-jsonschema reads,
    and what of it those words cannot say."""

    schema: Any
    unread: tuple[str, ...]
    """Each keyword left unsaid, and where: ``"`unevaluatedItems` at /properties/pt"``.
    Values are drawn without it; the filter against the schema itself still applies it."""


@dataclass
class _Rewording:
    root: Any
    one_resource: bool  # no `$id` below the root: a `$dynamicRef` resolves as a `$ref`
    moved: dict[str, str] = field(default_factory=dict)  # each subschema's pointer → its new one
    refs: list[dict[str, Any]] = field(default_factory=list)  # the reworded schemas with a $ref
    unread: list[str] = field(default_factory=list)


def as_draft7(schema: Any) -> Draft7:
    """``schema``, read as the harness reads it (Draft 2020-12), in the words of Draft 7.

    hypothesis-jsonschema reads Drafts 4 to 7: a 2020-12 tuple (``prefixItems``, then
    ``items: false``) it would read as "no item at all", and the keywords it does not know
    it passes over. Everywhere in the schema (``$defs`` too, where ``$ref``s lead):

    - ``prefixItems: [A, B]`` and ``items: S`` → ``items: [A, B]`` and ``additionalItems: S``
      (without ``items``, nothing after the prefix is constrained: no ``additionalItems``);
    - ``dependentRequired`` and ``dependentSchemas`` → ``dependencies``;
    - ``unevaluatedItems``/``unevaluatedProperties`` next to no keyword that applies a
      subschema to the value itself (``allOf``, ``$ref``, ``if``, …) → the ``items``,
      ``additionalItems`` or ``additionalProperties`` they then mean;
    - ``$dynamicRef`` to a place in the schema → ``$ref``: in a schema that is one resource
      (no ``$id`` below its root) it resolves as ``$ref`` does, in others it is a guess;
    - ``minContains: 0`` drops ``contains`` (any array has none, and that is enough); a
      larger one raises ``minItems`` to it;
    - ``$schema`` is left out (a 2020-12 one makes hypothesis-jsonschema check these words
      against 2020-12's meta-schema), and so are ``additionalItems`` and ``dependencies``
      written by the page, which Draft 2020-12 does not read;
    - a ``$ref`` by JSON pointer to a subschema that moved points where it went.

    ``$defs``, ``$anchor``, ``const`` and ``contains`` it reads as they are. What Draft 7
    cannot say — ``unevaluated*`` next to ``allOf``, ``$ref`` and the like, or next to
    ``contains``; ``maxContains``; a ``$dynamicRef`` in a schema of several resources (or
    to a place outside it) — is kept and listed in :attr:`Draft7.unread`.
    """
    how = _Rewording(root=schema, one_resource=_one_resource(schema))
    reworded = _reworded(schema, "", "", how)
    for node in how.refs:
        node["$ref"] = _repointed(node["$ref"], how.moved)
    return Draft7(reworded, tuple(dict.fromkeys(how.unread)))


def unread_keywords(schema: Any) -> tuple[str, ...]:
    """The keywords of ``schema`` the input generator cannot read, each with where it is
    (``"`maxContains` at /properties/tags"``): values are drawn without them."""
    return as_draft7(schema).unread


def _reworded(node: Any, old: str, new: str, how: _Rewording) -> Any:
    """The subschema at JSON pointer ``old`` in Draft 7's words, to sit at ``new``."""
    if not isinstance(node, dict):
        return node
    how.moved[old] = new

    def inner(value: Any, old_at: str, new_at: str) -> Any:
        return _reworded(value, f"{old}/{old_at}", f"{new}/{new_at}", how)

    out = {key: value for key, value in node.items() if key not in _REWORDED}
    for key in _SCHEMA_MAPS:
        if isinstance(node.get(key), dict):
            out[key] = {
                name: inner(sub, f"{key}/{_token(name)}", f"{key}/{_token(name)}")
                for name, sub in node[key].items()
            }
    for key in _SCHEMA_ONE:
        if key in node:
            out[key] = inner(node[key], key, key)
    for key in _SCHEMA_LISTS:
        if isinstance(node.get(key), list):
            out[key] = [inner(sub, f"{key}/{i}", f"{key}/{i}") for i, sub in enumerate(node[key])]
    in_place = any(key in node for key in _IN_PLACE)
    unread = _array_reworded(node, out, inner, in_place)
    unread += _object_reworded(node, out, inner, in_place)
    dynamic = node.get("$dynamicRef")
    followed = isinstance(dynamic, str) and local_target(how.root, dynamic) is not None
    if followed:
        if "$ref" in out:
            also = {"$ref": dynamic}
            out["allOf"] = [*out.get("allOf", []), also]
            how.refs.append(also)
        else:
            out["$ref"] = dynamic
    elif "$dynamicRef" in node:
        out["$dynamicRef"] = dynamic
    if "$dynamicRef" in node and not (followed and how.one_resource):
        # Across resources, where it leads depends on the way the value was reached.
        unread.append("$dynamicRef")
    if isinstance(out.get("$ref"), str):
        how.refs.append(out)
    how.unread += [f"`{keyword}` at {old or '/'}" for keyword in unread]
    return out


_Inner = Callable[[Any, str, str], Any]


def _array_reworded(
    node: dict[str, Any], out: dict[str, Any], inner: _Inner, in_place: bool
) -> list[str]:
    """Put ``node``'s array keywords into ``out`` in Draft 7's words; the keywords left unsaid."""
    unread = []
    rest = "items"  # where Draft 7 says what comes after the prefix
    if isinstance(node.get("prefixItems"), list):
        out["items"] = [
            inner(sub, f"prefixItems/{i}", f"items/{i}")
            for i, sub in enumerate(node["prefixItems"])
        ]
        rest = "additionalItems"
    if "items" in node:
        out[rest] = inner(node["items"], "items", rest)
    if "unevaluatedItems" in node:
        if "items" not in node and "contains" not in node and not in_place:
            out[rest] = inner(node["unevaluatedItems"], "unevaluatedItems", rest)
        else:  # with `items`, every item is evaluated: it checks nothing
            out["unevaluatedItems"] = inner(
                node["unevaluatedItems"], "unevaluatedItems", "unevaluatedItems"
            )
            if "items" not in node:
                unread.append("unevaluatedItems")
    if "contains" in node:
        least = as_count(node.get("minContains"))
        if least == 0:
            del out["contains"]
        elif least is not None and least > 1:
            out["minItems"] = max(least, as_count(node.get("minItems")) or 0)
        if "maxContains" in node:
            unread.append("maxContains")
    return unread


def _object_reworded(
    node: dict[str, Any], out: dict[str, Any], inner: _Inner, in_place: bool
) -> list[str]:
    """Put ``node``'s object keywords into ``out`` in Draft 7's words; the keywords left unsaid."""
    unread = []
    dependencies: dict[str, Any] = {}
    needs = node.get("dependentRequired")
    if isinstance(needs, dict):
        dependencies.update({name: n for name, n in needs.items() if isinstance(n, list)})
    schemas = node.get("dependentSchemas")
    if isinstance(schemas, dict):
        for name, sub in schemas.items():
            at = f"dependentSchemas/{_token(name)}"
            if name in dependencies:  # both: the names required, and the schema
                both = inner(sub, at, f"dependencies/{_token(name)}/allOf/0")
                dependencies[name] = {"required": dependencies[name], "allOf": [both]}
            else:
                dependencies[name] = inner(sub, at, f"dependencies/{_token(name)}")
    if dependencies:
        out["dependencies"] = dependencies
    if "unevaluatedProperties" in node:
        if "additionalProperties" not in node and not in_place:
            out["additionalProperties"] = inner(
                node["unevaluatedProperties"], "unevaluatedProperties", "additionalProperties"
            )
        else:  # with `additionalProperties`, every member is evaluated: it checks nothing
            out["unevaluatedProperties"] = inner(
                node["unevaluatedProperties"], "unevaluatedProperties", "unevaluatedProperties"
            )
            if "additionalProperties" not in node:
                unread.append("unevaluatedProperties")
    return unread


def _one_resource(schema: Any) -> bool:
    """Whether no subschema below ``schema``'s root has an ``$id`` of its own."""
    stack = list(subschemas(schema)) if isinstance(schema, dict) else []
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if "$id" in node:
                return False
            stack.extend(subschemas(node))
    return True


def _repointed(ref: str, moved: dict[str, str]) -> str:
    """``ref`` to where its target went (a JSON pointer whose path moved), else ``ref``."""
    if not ref.startswith("#/"):
        return ref
    pointer = unquote(ref[1:])
    at = pointer
    while at and at not in moved:
        at = at.rsplit("/", 1)[0]
    if moved.get(at, at) == at:
        return ref
    return "#" + quote(moved[at] + pointer[len(at) :], safe="/~$!&'()*+,;=:@")


def _token(name: str) -> str:
    """``name`` as a JSON pointer's token."""
    return name.replace("~", "~0").replace("/", "~1")


def as_count(value: Any) -> int | None:
    """``value`` when it is a count (a non-negative integer), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
