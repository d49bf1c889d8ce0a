"""ECMA-262 regular expressions for JSON Schema's ``pattern`` and ``patternProperties``.

JSON Schema's patterns are ECMAScript regular expressions, and pages write them for
JavaScript: ``\\p{L}+`` (a name in any script) is valid there and means nothing to
Python's ``re``, which jsonschema uses by default. The harness checks them with ECMAScript
semantics instead (the ``regress`` library, Rust's ECMA-262 engine), with the ``u`` flag
JSON Schema recommends. A pattern no ECMAScript engine accepts is skipped — that keyword
only, never the whole tool — and the catalog warns about it (:func:`pattern_warnings`).
Also here: :func:`checkable_schema`, the schema as the harness checks it, where HTML's
empty choice lists (a ``<select>`` without options is ``anyOf: []``) mean "no value".
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import regress
from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import ValidationError

from harness.models import CatalogWarning, Tool

# Keywords whose values are schemas, or lists or maps of schemas (Draft 2020-12).
_SUBSCHEMA: tuple[str, ...] = (
    *("additionalProperties", "items", "not", "contains", "propertyNames", "if", "then"),
    *("else", "unevaluatedItems", "unevaluatedProperties", "additionalItems"),
)
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")


@lru_cache(maxsize=1024)
def compile_pattern(pattern: str) -> Any:
    """The compiled ECMAScript regex (``u`` flag, else none), or None when it is invalid."""
    for flags in ("u", ""):
        try:
            return regress.Regex(pattern, flags)
        except regress.RegressError:
            continue
    return None


def search(pattern: str, text: str) -> bool | None:
    """Whether the ECMAScript ``pattern`` matches somewhere in ``text``; None: not a regex."""
    compiled = compile_pattern(pattern)
    if compiled is None:
        return None
    return compiled.find(text) is not None


def pattern_keyword(
    validator: Any, pattern: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[ValidationError]:
    """JSON Schema's ``pattern`` with ECMAScript semantics (skipped when not a regex)."""
    if not isinstance(pattern, str) or not validator.is_type(instance, "string"):
        return
    if search(pattern, instance) is False:
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def pattern_properties_keyword(
    validator: Any, patterns: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[ValidationError]:
    """JSON Schema's ``patternProperties`` with ECMAScript semantics."""
    if not isinstance(patterns, dict) or not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if isinstance(pattern, str) and search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


KEYWORDS = {"pattern": pattern_keyword, "patternProperties": pattern_properties_keyword}
"""The keyword implementations a validator is extended with."""


def _schema_formats() -> FormatChecker:
    # The metaschema's "regex" format would judge patterns with Python's `re`; ECMAScript
    # patterns are judged here instead, and an invalid one costs its keyword, not the tool.
    checker = FormatChecker()
    checker.checkers = {
        name: check
        for name, check in Draft202012Validator.FORMAT_CHECKER.checkers.items()
        if name != "regex"
    }
    return checker


SCHEMA_FORMATS = _schema_formats()
"""The format checker for checking schemas themselves (every format but ``regex``)."""


def checkable_schema(schema: Any) -> Any:
    """``schema`` as the harness checks it: an empty ``anyOf``/``oneOf`` (HTML's ``<select>``
    without options, often filled by script later) matches nothing, as ``not: {}`` does,
    instead of making the whole schema invalid."""
    if isinstance(schema, list):
        return [checkable_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    copy: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ("anyOf", "oneOf") and value == []:
            copy["not"] = {}
        elif key in _SUBSCHEMA or key in _SCHEMA_LISTS:
            copy[key] = checkable_schema(value)
        elif key in _SCHEMA_MAPS and isinstance(value, dict):
            copy[key] = {k: checkable_schema(v) for k, v in value.items()}
        else:
            copy[key] = value
    return copy


def invalid_patterns(schema: Any, where: str = "") -> Iterator[tuple[str, str]]:
    """(schema path, pattern) of every ``pattern``/``patternProperties`` key that no
    ECMAScript engine accepts."""
    if isinstance(schema, list):
        for i, item in enumerate(schema):
            yield from invalid_patterns(item, f"{where}/{i}")
        return
    if not isinstance(schema, dict):
        return
    for key, value in schema.items():
        if key == "pattern" and isinstance(value, str) and compile_pattern(value) is None:
            yield f"{where}/pattern", value
        elif key in _SUBSCHEMA or key in _SCHEMA_LISTS:
            yield from invalid_patterns(value, f"{where}/{key}")
        elif key in _SCHEMA_MAPS and isinstance(value, dict):
            for name, sub in value.items():
                if key == "patternProperties" and compile_pattern(name) is None:
                    yield f"{where}/{key}", name
                yield from invalid_patterns(sub, f"{where}/{key}/{name}")


def pattern_warnings(tools: list[Tool]) -> list[CatalogWarning]:
    """A catalog warning per pattern that is not an ECMAScript regex (its keyword is skipped)."""
    warnings = []
    for tool in tools:
        try:
            found = list(invalid_patterns(tool.input_schema))
        except RecursionError:
            continue  # too deep to read: its calls are refused as such (validation.py)
        for path, pattern in found:
            warnings.append(
                CatalogWarning(
                    code="invalid-pattern",
                    tool=tool.name,
                    message=(
                        f"Tool {tool.name!r}: the pattern {pattern[:80]!r} at {path or '/'} of its "
                        "inputSchema is not an ECMAScript regular expression; the harness "
                        "does not check that keyword (the rest of the schema still applies)."
                    ),
                )
            )
    return warnings
