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

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness.errors import ConfigError
from harness.models import Tool
from harness.schemas import local_target
from harness.stages.validation import validate_arguments

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


def valid_arguments(tool: Tool) -> SearchStrategy[dict[str, Any]]:
    """Argument objects that fit ``tool.input_schema`` (as the harness validates it).

    Raises :class:`ConfigError` when no inputs can be made from the schema.
    """
    require_hypothesis()
    from hypothesis.errors import InvalidArgument

    schema = tool.input_schema
    try:
        strategy = _strategy(schema, schema, 0)
        strategy.validate()
    except (InvalidArgument, ValueError, TypeError, KeyError, RecursionError) as exc:
        raise ConfigError(f"No inputs can be made from {tool.name}'s inputSchema: {exc}") from None
    return strategy.filter(lambda value: isinstance(value, dict) and _fits(tool, value))


_COMBINED = ("allOf", "not", "if", "then", "else", "dependentSchemas", "patternProperties")


def _strategy(schema: Any, root: dict[str, Any], depth: int) -> SearchStrategy[Any]:
    """Values of ``schema``: objects, arrays of objects and alternatives built here (the
    current hypothesis-jsonschema cannot draw objects on the current Hypothesis), the
    rest by hypothesis-jsonschema."""
    from hypothesis import strategies as st
    from hypothesis_jsonschema import from_schema

    if depth > 8:
        raise ValueError("the schema nests too deeply to draw from")
    if not isinstance(schema, dict):
        return from_schema(schema)
    ref = schema.get("$ref")
    if isinstance(ref, str):
        target = local_target(root, ref)
        if target is None:
            raise ValueError(f"$ref {ref!r} leads outside the schema")
        return _strategy(target, root, depth + 1)
    if any(key in schema for key in _COMBINED):
        return from_schema({**schema, **_definitions(root)})
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and "type" not in schema:
            return st.one_of([_strategy(s, root, depth + 1) for s in schema[key]])
    kind = schema.get("type")
    if kind == "object" or (kind is None and "properties" in schema):
        properties = schema.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        required = [n for n in schema.get("required") or [] if isinstance(n, str)]
        drawn = {n: _strategy(properties.get(n, {}), root, depth + 1) for n in required}
        optional = {
            n: _strategy(s, root, depth + 1) for n, s in properties.items() if n not in drawn
        }
        return st.fixed_dictionaries(drawn, optional=optional)
    items = schema.get("items")
    if kind == "array" and isinstance(items, dict) and "prefixItems" not in schema:
        low = schema.get("minItems", 0)
        high = schema.get("maxItems")
        return st.lists(
            _strategy(items, root, depth + 1),
            min_size=low if isinstance(low, int) else 0,
            max_size=high if isinstance(high, int) else max(5, low if isinstance(low, int) else 0),
        )
    return from_schema({**schema, **_definitions(root)})


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
