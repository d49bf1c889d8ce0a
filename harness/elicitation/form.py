"""The elicitation form: its fields, and the rules an answer must keep.

A request's ``requested_schema`` is a flat JSON Schema object (MCP's restricted
elicitation schema). This module reads it the way a form does: each field's
kind (text, number, yes/no, a choice, several choices), its label, and its HTML
constraints (``required``, ``minLength``/``maxLength``, ``pattern``,
``minimum``/``maximum``, ``format``, ``enum``). Every handler checks answers with
:func:`field_problem` / :func:`answer_problems`, so the terminal, the browser
handler's server and :func:`harness.elicitation.ask` apply the same rules the
browser's own constraint validation applies in the browser handler's page. A field's
``pattern`` is the page's ECMAScript regex: it is matched as every page pattern is
(:mod:`harness.schemas.patterns`), never with Python's ``re``, and a match that runs long
is stopped at its budget.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError

from harness.schemas import SchemaTimeout, patterns, validator_for, within_budget


def properties_of(schema: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The object schema's properties that are themselves schemas."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return {}
    return {name: prop for name, prop in properties.items() if isinstance(prop, dict)}


def defaults_of(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The ``default`` of every property that declares one."""
    return {
        name: prop["default"] for name, prop in properties_of(schema).items() if "default" in prop
    }


def is_sensitive(prop: Mapping[str, Any]) -> bool:
    """Whether a field's value must never be kept (passwords, ``x-sensitive`` data)."""
    return (
        prop.get("x-sensitive") is True
        or prop.get("format") == "password"
        or prop.get("writeOnly") is True
    )


def field_title(name: str, prop: Mapping[str, Any]) -> str:
    """The label a person sees: the title (a label, ``tool-param-title``) or the name."""
    title = prop.get("title")
    return title if isinstance(title, str) and title.strip() else name


def enum_choices(prop: Mapping[str, Any]) -> list[tuple[Any, str]] | None:
    """``(value, label)`` pairs for an enum field (``enum``, titled ``oneOf``), else None."""
    if isinstance(prop.get("enum"), list):
        values: list[Any] = prop["enum"]
        names = prop.get("enumNames")
        if isinstance(names, list) and len(names) == len(values):
            return [(v, str(n)) for v, n in zip(values, names, strict=True)]
        return [(v, _plain(v)) for v in values]
    for key in ("oneOf", "anyOf"):
        options = prop.get(key)
        if (
            isinstance(options, list)
            and options
            and all(isinstance(o, dict) and "const" in o for o in options)
        ):
            return [(o["const"], str(o.get("title") or _plain(o["const"]))) for o in options]
    return None


def item_choices(prop: Mapping[str, Any]) -> list[tuple[Any, str]] | None:
    """For an array field whose items are an enum (a multi-select), its choices."""
    items = prop.get("items")
    if prop.get("type") == "array" and isinstance(items, dict):
        return enum_choices(items)
    return None


def field_kind(prop: Mapping[str, Any]) -> str:
    """One of ``enum``, ``multi``, ``list``, ``boolean``, ``integer``, ``number``, ``string``."""
    if enum_choices(prop) is not None:
        return "enum"
    kind = prop.get("type")
    if kind == "array":
        return "multi" if item_choices(prop) is not None else "list"
    if kind in ("boolean", "integer", "number"):
        return str(kind)
    return "string"


def _plain(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


_FORMATS = Draft202012Validator.FORMAT_CHECKER
_FORMAT_WORDS = {
    "email": "an email address",
    "uri": "a URL (with its scheme, e.g. https://…)",
    "date": "a date (YYYY-MM-DD)",
    "date-time": "a date and time (e.g. 2025-01-31T09:00:00Z)",
    "time": "a time (e.g. 09:00:00Z)",
}
_TYPE_WORDS = {
    "string": "text",
    "number": "a number",
    "integer": "a whole number",
    "boolean": "yes or no",
    "array": "a list",
}


# A field's `pattern` (and any `patternProperties`) read as JSON Schema reads them: ECMAScript.
_FieldValidator: Any = validators.extend(  # type: ignore[no-untyped-call]
    Draft202012Validator, patterns.KEYWORDS
)


@lru_cache(maxsize=256)
def _field_validator(prop_json: str) -> Any:
    # A field's schema can be page-written (a tool's question): never fetched through.
    return validator_for(json.loads(prop_json), _FieldValidator, format_checker=_FORMATS)


def field_problem(prop: Mapping[str, Any], value: Any) -> str | None:
    """Why ``value`` breaks the field's rules (in words a person reads), or None.

    The words never repeat the value itself, so problems can be shown and
    recorded even for password fields.
    """
    try:
        validator = _field_validator(json.dumps(prop, sort_keys=True))
        with within_budget():  # a page's field schema can branch without end
            error = next(iter(validator.iter_errors(value)), None)
    except SchemaTimeout:
        return _TOO_LONG
    except Exception as exc:  # a schema jsonschema cannot use (a reference outside it)
        return f"the field's rules cannot be checked ({type(exc).__name__})"
    return None if error is None else _describe(error, prop)


# A pattern that backtracks without end, or a schema that branches without end.
_TOO_LONG = (
    "could not be checked against the field's rules in time: give a shorter or simpler answer"
)


def _describe(error: ValidationError, prop: Mapping[str, Any]) -> str:
    if isinstance(error.cause, patterns.PatternTimeout):
        return _TOO_LONG
    rule, limit = error.validator, error.validator_value
    if rule == "type":
        kinds = limit if isinstance(limit, list) else [limit]
        return "must be " + " or ".join(_TYPE_WORDS.get(str(k), str(k)) for k in kinds)
    if rule in ("enum", "const", "oneOf", "anyOf"):
        choices = enum_choices(prop) or item_choices(prop) or []
        return "must be one of: " + ", ".join(label for _, label in choices)
    words = {
        "minLength": f"must be at least {limit} characters long",
        "maxLength": f"must be at most {limit} characters long",
        "pattern": f"must match the pattern {limit}",
        "minimum": f"must be at least {limit}",
        "maximum": f"must be at most {limit}",
        "exclusiveMinimum": f"must be more than {limit}",
        "exclusiveMaximum": f"must be less than {limit}",
        "multipleOf": f"must be a multiple of {limit}",
        "format": f"must be {_FORMAT_WORDS.get(str(limit), f'a valid {limit}')}",
        "minItems": f"choose at least {limit}",
        "maxItems": f"choose at most {limit}",
        "uniqueItems": "must not repeat a choice",
    }
    return words.get(str(rule), f"does not fit the field's rule {rule!r}")


def required_of(schema: Mapping[str, Any]) -> list[str]:
    """The names the object schema's ``required`` lists."""
    required = schema.get("required")
    return [r for r in required if isinstance(r, str)] if isinstance(required, list) else []


def answer_problems(schema: Mapping[str, Any], content: Mapping[str, Any] | None) -> dict[str, str]:
    """Every field of an ``accept`` that breaks the form's rules, by name; empty when it fits.

    Only the schema's fields are checked; a missing required field is a problem,
    a missing optional one is not (it was left empty).
    """
    given = content or {}
    required = required_of(schema)
    problems: dict[str, str] = {}
    for name, prop in properties_of(schema).items():
        if name not in given:
            if name in required:
                problems[name] = "is required"
            continue
        problem = field_problem(prop, given[name])
        if problem is not None:
            problems[name] = problem
    return problems


def describe_field(prop: Mapping[str, Any], *, required: bool) -> str:
    """The field's kind and rules in a few words, e.g. ``text, required, 3–140 characters``."""
    kind = field_kind(prop)
    words = {
        "enum": "choose one",
        "multi": "choose any",
        "list": "a list",
        "boolean": "yes/no",
        "integer": "whole number",
        "number": "number",
        "string": "text",
    }
    parts = [words[kind]]
    fmt = prop.get("format")
    if kind == "string" and isinstance(fmt, str) and fmt in _FORMAT_WORDS:
        parts = [_FORMAT_WORDS[fmt]]
    if is_sensitive(prop):
        parts.append("secret")
    if required:
        parts.append("required")
    low, high = prop.get("minLength"), prop.get("maxLength")
    if low is not None or high is not None:
        parts.append(_range(low, high) + " characters")
    low, high = prop.get("minimum"), prop.get("maximum")
    if low is not None or high is not None:
        parts.append(_range(low, high))
    if isinstance(prop.get("pattern"), str):
        parts.append(f"pattern {prop['pattern']}")
    return ", ".join(parts)


def _range(low: Any, high: Any) -> str:
    if low is not None and high is not None:
        return f"{low}–{high}"
    return f"at least {low}" if low is not None else f"at most {high}"


def value_from_text(prop: Mapping[str, Any], text: str) -> Any:
    """A typed value from what a person typed; ``ValueError`` says what is wrong.

    Enum fields take a choice's value or its number in the list; booleans take
    yes/no; lists take comma-separated items (or a JSON array).
    """
    kind = field_kind(prop)
    text = text.strip() if kind != "string" else text
    if kind == "enum":
        return _choice(enum_choices(prop) or [], text)
    if kind == "multi":
        choices = item_choices(prop) or []
        return [_choice(choices, part) for part in _items(text)]
    if kind == "list":
        return _items(text)
    if kind == "boolean":
        lowered = text.lower()
        if lowered in ("y", "yes", "true", "1", "on"):
            return True
        if lowered in ("n", "no", "false", "0", "off"):
            return False
        raise ValueError("answer yes or no")
    if kind in ("integer", "number"):
        try:
            return int(text)
        except ValueError:
            pass
        try:
            number = float(text)
        except ValueError:
            raise ValueError(f"must be {_TYPE_WORDS[kind]}") from None
        if kind == "integer" and not number.is_integer():
            raise ValueError("must be a whole number")
        return int(number) if kind == "integer" else number
    return text


def _choice(choices: list[tuple[Any, str]], text: str) -> Any:
    for value, label in choices:
        if text in (_plain(value), label):
            return value
    if text.isdigit() and 1 <= int(text) <= len(choices):
        return choices[int(text) - 1][0]
    raise ValueError("must be one of: " + ", ".join(label for _, label in choices))


def _items(text: str) -> list[Any]:
    if text.startswith("["):
        try:
            parsed = json.loads(text)
        except ValueError:
            raise ValueError("is not a JSON list") from None
        if isinstance(parsed, list):
            return parsed
    return [part.strip() for part in text.split(",") if part.strip()]


def flat_schema_problem(schema: Any) -> str | None:
    """Why ``schema`` is not a flat form (MCP's restricted elicitation schema), or None."""
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        return "requestedSchema must be an object schema with properties"
    properties = schema.get("properties", {})
    if not isinstance(properties, dict):
        return "requestedSchema.properties must be an object"
    for name, prop in properties.items():
        if not isinstance(prop, dict):
            return f"property {name!r} must be a schema object"
        kind = prop.get("type")
        if enum_choices(prop) is not None:
            continue
        if kind == "array" and item_choices(prop) is not None:
            continue
        if kind not in ("string", "number", "integer", "boolean"):
            return (
                f"property {name!r} must be a string, number, integer, boolean or enum "
                "(elicitation forms are flat)"
            )
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(r in properties for r in required):
        return "requestedSchema.required must list declared properties"
    return None
