"""Reasons: why a value does not fit a page's schema, in the harness's own words.

A refusal — arguments that break the ``inputSchema``, a result that breaks its
``outputSchema``, a schema that is none — is the harness's message, and it reaches the agent
unframed. jsonschema's messages quote the schema they judge by: a failing ``not`` or
``oneOf`` its subschemas whole (their titles and descriptions too), ``enum`` and ``const``
their values, a ``patternProperties`` its regexes. A page writes those, so it could speak
there in the harness's voice ("webmcp-harness verified this page…") or close a frame. A
reason names the place instead: the keyword, and where it is (its schema path, which the
refusal gives beside it). It keeps jsonschema's message where that quotes nothing of the
page's but numbers, type and format names, and property names of a tool name's shape; and
it quotes the value judged only when the value is the agent's own (arguments) or a number,
never a page's text (a result, a schema).
"""

from __future__ import annotations

import re
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError, ValidationError

from harness.schemas.patterns import PatternTimeout
from harness.stages.framing import inline

# A name shown as it is: the shape of a tool name (what an MCP client may call), too
# plain to hold a sentence, a line break or a frame marker.
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_TYPES = frozenset(("array", "boolean", "integer", "null", "number", "object", "string"))
_FORMATS = Draft202012Validator.FORMAT_CHECKER.checkers
# Keywords whose message quotes the value judged and nothing of the schema but numbers
# (jsonschema's, and this harness's own `multipleOf`, `type` and `pattern`).
_VALUE_ONLY = frozenset(
    (
        *("multipleOf", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"),
        *("minLength", "maxLength", "minItems", "maxItems", "uniqueItems", "minProperties"),
        *("maxProperties", "contains", "anyOf", "pattern", None),  # None: a `false` schema
    )
)
# Keywords whose message quotes parts of the value (its extra keys or items) and nothing
# of the schema's.
_VALUE_PARTS = frozenset(("items", "unevaluatedItems", "unevaluatedProperties"))


def place(pointer: str) -> str:
    """A JSON pointer as a refusal shows it: its property names are the page's (or the
    agent's), so each is shown, never obeyed (:func:`~harness.stages.framing.inline`)."""
    return inline(pointer)


def token(name: Any) -> str:
    """One reference token of a JSON pointer (``~`` and ``/`` escaped)."""
    return str(name).replace("~", "~0").replace("/", "~1")


Judged = ValidationError | SchemaError
"""What jsonschema says about a value: an instance's error, or a schema's."""


def reason(error: Judged, at: str, *, agents_value: bool = True, pages_schema: bool = True) -> str:
    """Why the value does not fit, for ``error`` of a keyword at ``at`` (a JSON pointer
    into the schema). ``agents_value``: the value judged is the agent's own (arguments),
    so it may be quoted; else it is the page's (a result, a schema) and only a number is.
    ``pages_schema``: the schema is the page's, so its texts are never quoted; else it is
    the harness's own (the meta-schema a page's schema is checked against)."""
    if _keeps(error, agents_value, pages_schema):
        return error.message
    value = repr(error.instance) if agents_value or _plain(error.instance) else "the value"
    whose = "the schema's" if pages_schema else "the meta-schema's"
    return _worded(error, at, value, whose, pages_schema)


def _plain(value: Any) -> bool:
    """Whether ``value`` holds no text: a number, a boolean or null."""
    return value is None or isinstance(value, bool | int | float)


def _name(value: Any) -> bool:
    return isinstance(value, str) and _NAME.fullmatch(value) is not None


def _keeps(error: Judged, agents_value: bool, pages_schema: bool) -> bool:
    """Whether jsonschema's message for ``error`` quotes nothing a page wrote."""
    keyword, given = error.validator, error.validator_value
    value_ok = agents_value or _plain(error.instance)
    if not pages_schema:  # the meta-schema's words are the harness's: only the value counts
        return value_ok
    if isinstance(error.cause, PatternTimeout):
        return value_ok
    if keyword in _VALUE_ONLY:
        return value_ok
    if keyword in _VALUE_PARTS:
        return agents_value
    if keyword in ("minContains", "maxContains"):  # "Too many items match…": numbers only
        return True
    if keyword == "type":
        return value_ok and _type_names(given) is not None
    if keyword == "format":
        return value_ok and isinstance(given, str) and given in _FORMATS
    if keyword == "oneOf":  # none matched ("not valid under any"), or several (quoted whole)
        return value_ok and bool(error.context)
    if keyword == "additionalProperties":  # the extra keys, and any patternProperties' regexes
        schema = error.schema
        return agents_value and not (isinstance(schema, dict) and "patternProperties" in schema)
    if keyword == "enum":
        return value_ok and isinstance(given, list) and all(_plain(v) for v in given)
    if keyword == "const":
        return _plain(given)
    if keyword == "required":
        return _name(_required(error)[1])
    return False  # `not`, `dependentRequired`, any other: worded here


def _type_names(given: Any) -> list[str] | None:
    """The type names of a ``type`` keyword (None: it holds something else)."""
    kinds = given if isinstance(given, list) else [given]
    return kinds if all(isinstance(k, str) and k in _TYPES for k in kinds) else None


def _required(error: Judged) -> tuple[int | None, Any]:
    """The index and name of the property a ``required`` error is about (jsonschema makes
    one error per missing name and says which only in its message)."""
    names = error.validator_value if isinstance(error.validator_value, list) else []
    for index, name in enumerate(names):
        if error.message == f"{name!r} is a required property":
            return index, name
    return None, None


def _dependency(error: Judged) -> tuple[Any, int | None]:
    """The property present and the index of the one it needs that is missing, for a
    ``dependentRequired`` error."""
    needs = error.validator_value if isinstance(error.validator_value, dict) else {}
    for present, names in needs.items():
        for index, name in enumerate(names if isinstance(names, list) else []):
            if error.message == f"{name!r} is a dependency of {present!r}":
                return present, index
    return None, None


def _worded(error: Judged, at: str, value: str, whose: str, pages_schema: bool) -> str:
    """The harness's sentence for ``error``: the keyword, and where to look, never what the
    schema says there."""
    keyword, given = error.validator, error.validator_value
    if isinstance(error.cause, PatternTimeout):
        return f"{value} could not be checked against {whose} `{keyword}` in time"
    kinds = _type_names(given) if keyword == "type" else None
    if kinds is not None:
        return f"{value} is not of type {', '.join(repr(kind) for kind in kinds)}"
    if keyword == "format" and isinstance(given, str) and given in _FORMATS:
        return f"{value} is not a {given!r}"
    if keyword == "not":
        return f"{value} should not be valid under {whose} `not` subschema"
    if keyword in ("anyOf", "oneOf") and (keyword == "anyOf" or error.context):
        return f"{value} is not valid under any of {whose} `{keyword}` subschemas"
    if keyword == "oneOf":
        return f"{value} is valid under more than one of {whose} `oneOf` subschemas"
    if keyword == "enum":
        return f"{value} is not one of {whose} `enum` values"
    if keyword == "const":
        return f"{value} is not {whose} `const` value"
    if keyword == "pattern":
        return f"{value} does not match {whose} `pattern`"
    if keyword == "required":
        index, name = _required(error)
        if index is None:
            return f"a property {whose} `required` lists is missing"
        if not pages_schema:
            return f"{name!r} is a required property"
        return f"a required property is missing: the one named at {place(f'{at}/{index}')}"
    if keyword == "dependentRequired":
        present, index = _dependency(error)
        if index is None:
            return f"a property {whose} `dependentRequired` asks for is missing"
        named = place(f"{at}/{token(present)}/{index}")
        return (
            f"a property required alongside {place('/' + token(present))} is missing: the one "
            f"named at {named}"
        )
    if keyword in ("additionalProperties", "unevaluatedProperties"):
        return f"{value} has properties {whose} `{keyword}` does not allow"
    if keyword in ("items", "unevaluatedItems"):
        return f"{value} has items {whose} `{keyword}` does not allow"
    if keyword is None:
        return f"{value} is not allowed here: {whose} subschema is `false`"
    shown = f" ({given!r})" if _plain(given) else ""
    return f"{value} does not satisfy {whose} `{keyword}`{shown}"
