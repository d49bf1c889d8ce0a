"""Inputs for a tool, generated from its ``inputSchema``: valid ones, and near-misses.

Valid arguments come from hypothesis-jsonschema, kept only when the harness's own
validation (:mod:`harness.stages.validation`: ECMAScript patterns, JavaScript numbers)
agrees that they fit. A near-miss is a valid argument object with one thing made wrong
— a required parameter left out, a number one past its bound, a string one character
too long, a value outside its ``enum``, the wrong type — kept only when the harness
refuses it. Hypothesis shrinks both the valid part and the choice of mistake.

Hypothesis is an optional dependency (the ``qa`` extra): :func:`require_hypothesis` says
how to install it.
"""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness.errors import ConfigError
from harness.models import Tool
from harness.schemas import local_target
from harness.stages.validation import (
    outside_references_problem,
    schema_problem,
    validate_arguments,
)

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

INSTALL_HINT = "pip install 'webmcp-harness[qa]'"

JsonPath = tuple[str | int, ...]


def require_hypothesis() -> None:
    """Raise a :class:`ConfigError` that says how to install the QA extra when Hypothesis
    or hypothesis-jsonschema is missing."""
    try:
        import hypothesis  # noqa: F401
        import hypothesis_jsonschema  # noqa: F401
    except ImportError as exc:
        raise ConfigError(
            f"Fuzzing needs Hypothesis and hypothesis-jsonschema ({exc.name} is not "
            f"installed): {INSTALL_HINT}"
        ) from None


@dataclass(frozen=True)
class NearMiss:
    """Arguments one step outside the schema, and which step."""

    arguments: dict[str, Any]
    mistake: str


@dataclass(frozen=True)
class _Mistake:
    path: JsonPath
    what: str
    apply: Callable[[Any], Any]  # the old value (or _ABSENT) → the new one (or _ABSENT)


_ABSENT = object()


def _fits(tool: Tool, arguments: Any) -> bool:
    try:
        return not validate_arguments(tool, arguments)
    except Exception:  # a schema the harness cannot use: nothing fits it
        return False


def unusable_schema(tool: Tool) -> str | None:
    """Why the harness refuses every call of ``tool`` for its ``inputSchema`` (not a valid
    schema, or one that refers outside itself: :mod:`harness.stages.validation`); None when
    its calls can be checked."""
    schema = tool.input_schema
    invalid = schema_problem(schema)
    if invalid is not None:
        return f"it is not a valid JSON Schema ({invalid})"
    return outside_references_problem("inputSchema", schema)


def valid_arguments(tool: Tool) -> SearchStrategy[dict[str, Any]]:
    """Argument objects that fit ``tool.input_schema`` (as the harness validates it).

    Raises :class:`ConfigError` when no inputs can be made from the schema, or when the
    harness refuses every call of the tool for it (an invalid schema, one that refers
    outside itself).
    """
    require_hypothesis()
    from hypothesis.errors import InvalidArgument

    problem = unusable_schema(tool)
    if problem is not None:
        raise ConfigError(
            f"{tool.name}'s inputSchema cannot be used: {problem}. The harness refuses every "
            "call of the tool, so there is nothing to fuzz until the site fixes its schema"
        )
    schema = tool.input_schema
    try:
        strategy = _strategy(schema, schema, ())
        strategy.validate()
    except (InvalidArgument, ValueError, TypeError, KeyError, RecursionError) as exc:
        raise ConfigError(f"No inputs can be made from {tool.name}'s inputSchema: {exc}") from None
    return strategy.filter(lambda value: isinstance(value, dict) and _fits(tool, value))


_COMBINED = ("allOf", "not", "if", "then", "else", "dependentSchemas", "patternProperties")

MAX_DEPTH = 32
"""How deep a schema is followed to draw a value."""
MAX_REF_EXPANSIONS = 3
"""How often one ``$ref`` is followed within one value: a recursive schema's optional
members are left out below that, so its values stay shallow but are still drawn."""


class _TooDeep(ValueError):
    """The schema goes on deeper than values are drawn (a required member, past the limits)."""

    def __init__(self) -> None:
        super().__init__("the schema nests too deeply to draw from")


def _strategy(schema: Any, root: dict[str, Any], refs: tuple[str, ...]) -> SearchStrategy[Any]:
    """Values of ``schema``: objects, arrays of objects and alternatives built here (the
    current hypothesis-jsonschema cannot draw objects on the current Hypothesis), the
    rest by hypothesis-jsonschema. ``refs``: the ``$ref``s followed on the way here, one
    entry per level (``""`` for a level that followed none).

    An object's combinators (``allOf``, ``if``/``then``, ``patternProperties``, …) are left
    to the filter of :func:`valid_arguments`: its members are drawn from ``properties``.
    """
    from hypothesis import strategies as st
    from hypothesis_jsonschema import from_schema

    if len(refs) > MAX_DEPTH:
        raise _TooDeep
    if not isinstance(schema, dict):
        return from_schema(schema)
    ref = schema.get("$ref")
    if isinstance(ref, str):
        if refs.count(ref) >= MAX_REF_EXPANSIONS:
            raise _TooDeep
        target = local_target(root, ref)
        if target is None:
            raise ValueError(f"$ref {ref!r} leads outside the schema")
        return _strategy(target, root, (*refs, ref))
    deeper = (*refs, "")
    kind = schema.get("type")
    if isinstance(kind, list) and len(kind) > 1 and all(isinstance(k, str) for k in kind):
        # One type at a time (hypothesis-jsonschema fails on a list that names "object").
        return _one_of([{**schema, "type": k} for k in kind], root, refs)
    is_object = kind == "object" or (kind is None and "properties" in schema)
    if any(key in schema for key in _COMBINED) and not is_object:
        return from_schema({**schema, **_definitions(root)})
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and "type" not in schema:
            return _one_of(schema[key], root, deeper)
    if is_object:
        properties = schema.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        required = [n for n in schema.get("required") or [] if isinstance(n, str)]
        drawn = {n: _strategy(properties.get(n, {}), root, deeper) for n in required}
        optional = {}
        for name, sub in properties.items():
            if name not in drawn:
                with contextlib.suppress(_TooDeep):  # past the limits: left out
                    optional[name] = _strategy(sub, root, deeper)
        return st.fixed_dictionaries(drawn, optional=optional)
    items = schema.get("items")
    if kind == "array" and isinstance(items, dict) and "prefixItems" not in schema:
        low = schema.get("minItems", 0)
        low = low if isinstance(low, int) else 0
        high = schema.get("maxItems")
        try:
            each = _strategy(items, root, deeper)
        except _TooDeep:
            if low > 0:
                raise
            return st.just([])
        return st.lists(
            each,
            min_size=low,
            max_size=high if isinstance(high, int) else max(5, low),
        )
    return from_schema({**schema, **_definitions(root)})


def _one_of(schemas: list[Any], root: dict[str, Any], refs: tuple[str, ...]) -> SearchStrategy[Any]:
    """Values of any of ``schemas``; those past the limits are left out (all of them: too
    deep)."""
    from hypothesis import strategies as st

    branches = []
    for schema in schemas:
        with contextlib.suppress(_TooDeep):
            branches.append(_strategy(schema, root, refs))
    if not branches:
        raise _TooDeep
    return st.one_of(branches)


def _definitions(root: dict[str, Any]) -> dict[str, Any]:
    """The root's ``$defs`` (and ``definitions``), for a part of it drawn on its own."""
    return {k: root[k] for k in ("$defs", "definitions") if isinstance(root.get(k), dict)}


def near_misses(tool: Tool) -> SearchStrategy[NearMiss] | None:
    """Near-miss arguments for ``tool``, or None when its schema leaves nothing to miss
    (an object that takes anything)."""
    require_hypothesis()
    from hypothesis import strategies as st

    mistakes = list(_mistakes(tool.input_schema, ()))
    if not mistakes:
        return None
    base = valid_arguments(tool)

    def made(pair: tuple[dict[str, Any], _Mistake]) -> NearMiss:
        arguments, mistake = pair
        return NearMiss(_apply(arguments, mistake), mistake.what)

    return (
        st.tuples(base, st.sampled_from(mistakes))
        .map(made)
        .filter(lambda miss: not _fits(tool, miss.arguments))
    )


def _apply(arguments: dict[str, Any], mistake: _Mistake) -> dict[str, Any]:
    """``arguments`` with the value at ``mistake.path`` replaced (parents made as needed)."""
    changed = copy.deepcopy(arguments)
    *parents, last = mistake.path
    node: Any = changed
    for key in parents:
        if not isinstance(node, dict):
            return changed
        node = node.setdefault(key, {})
    if not isinstance(node, dict):
        return changed
    new = mistake.apply(node.get(last, _ABSENT))
    if new is _ABSENT:
        node.pop(last, None)
    else:
        node[last] = new
    return changed


def _pointer(path: JsonPath) -> str:
    return "".join(f"/{p}" for p in path) or "/"


def _mistakes(schema: Any, path: JsonPath, depth: int = 0) -> list[_Mistake]:
    """The ways to get an object of ``schema`` wrong by one step, its members' included."""
    if not isinstance(schema, dict) or depth > 3:
        return []
    found: list[_Mistake] = []
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    for name in schema.get("required") or []:
        if isinstance(name, str):
            found.append(
                _Mistake(
                    (*path, name),
                    f"{_pointer((*path, name))}: left out (required)",
                    lambda _old: _ABSENT,
                )
            )
    if schema.get("additionalProperties") is False:
        extra = "unexpected_parameter"
        while extra in properties:
            extra += "_"
        found.append(
            _Mistake(
                (*path, extra), f"{_pointer(path)}: an unknown parameter {extra!r}", lambda _old: 1
            )
        )
    for name, sub in properties.items():
        if isinstance(name, str) and isinstance(sub, dict):
            found += _value_mistakes(sub, (*path, name), depth)
    return found


def _value_mistakes(schema: dict[str, Any], path: JsonPath, depth: int) -> list[_Mistake]:
    """One-step-wrong values for a parameter of ``schema`` at ``path``."""
    where = _pointer(path)
    found: list[_Mistake] = []

    def to(value: Any, what: str) -> None:
        found.append(_Mistake(path, f"{where}: {what}", _replace_with(value)))

    kinds = schema.get("type")
    kinds = set(kinds) if isinstance(kinds, list) else {kinds} if kinds else set()
    if kinds and not kinds & {"string"}:
        to("1", 'the string "1" (wrong type)')
    if kinds and not kinds & {"number", "integer"}:
        to(1, "the number 1 (wrong type)")
    if kinds and "boolean" not in kinds and "string" in kinds:
        to(True, "true (wrong type)")
    if "integer" in kinds and "number" not in kinds:
        to(1.5, "1.5 (not an integer)")
    for key, step in (("minimum", -1), ("maximum", 1)):
        bound = schema.get(key)
        if isinstance(bound, int | float) and not isinstance(bound, bool):
            to(bound + step, f"{bound + step} (one past {key} {bound})")
    for key in ("exclusiveMinimum", "exclusiveMaximum"):
        bound = schema.get(key)
        if isinstance(bound, int | float) and not isinstance(bound, bool):
            to(bound, f"{bound} (equal to {key})")
    low, high = schema.get("minLength"), schema.get("maxLength")
    if isinstance(low, int) and low > 0:
        to("a" * (low - 1), f"a string of {low - 1} characters (minLength {low})")
    if isinstance(high, int) and high < 10_000:
        to("a" * (high + 1), f"a string of {high + 1} characters (maxLength {high})")
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        outside = _outside(enum)
        if outside is not None:
            to(outside, f"{json.dumps(outside)} (not in enum)")
    if "const" in schema:
        outside = _outside([schema["const"]])
        if outside is not None:
            to(outside, f"{json.dumps(outside)} (not the const)")
    if isinstance(schema.get("pattern"), str):
        for text in ("", " ", "!", "a b"):
            to(text, f"{json.dumps(text)} (does not match the pattern)")
    formats = {
        "email": "not-an-email",
        "date": "2024-13-45",
        "date-time": "yesterday",
        "time": "25:61",
        "uri": "not a uri",
        "uuid": "not-a-uuid",
    }
    if schema.get("format") in formats:
        to(formats[schema["format"]], f"not a {schema['format']}")
    items = schema.get("minItems")
    if isinstance(items, int) and items > 0:
        found.append(
            _Mistake(
                path,
                f"{where}: {items - 1} items (minItems {items})",
                _shorten_to(items - 1),
            )
        )
    if "object" in kinds or "properties" in schema:
        found += _mistakes(schema, path, depth + 1)
    return found


def _replace_with(value: Any) -> Callable[[Any], Any]:
    """A mistake that puts ``value`` (a fresh copy each time) where the valid one was."""
    return lambda _old: copy.deepcopy(value)


def _shorten_to(length: int) -> Callable[[Any], Any]:
    """A mistake that keeps only the first ``length`` items of a list."""
    return lambda old: (old if isinstance(old, list) else [])[:length]


def _outside(values: list[Any]) -> Any:
    """A value of the same kind as the first, not among ``values`` (None: none found)."""
    first = values[0]
    if isinstance(first, str):
        candidates: list[Any] = [first + "_x", first.upper() + "!", "other"]
    elif isinstance(first, bool):
        candidates = [not first]
    elif isinstance(first, int | float):
        candidates = [max(v for v in values if isinstance(v, int | float)) + 1]
    else:
        candidates = ["other", 0]
    return next((c for c in candidates if c not in values), None)
