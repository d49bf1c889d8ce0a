"""Argument validation: the user agent checks arguments before any tool runs.

Native Chromium does not validate arguments against ``inputSchema``; the harness
does, on both backends, with JSON Schema Draft 2020-12 and format checking. Bad
arguments never reach ``execute``: the agent gets an ``isError`` result naming
each problem's JSON pointer, reason and schema path.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from fractions import Fraction
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import SchemaError, ValidationError
from mcp.types import CallToolResult
from pydantic import BaseModel, ConfigDict

from harness.models import META_PREFIX, Tool, error_result
from harness.stages import patterns

_FORMATS = Draft202012Validator.FORMAT_CHECKER


def _multiple_of(
    validator: Any, step: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[ValidationError]:
    """``multipleOf`` on the decimals people write: 0.07 is a multiple of 0.01.

    jsonschema divides binary floats (0.07 / 0.01 == 7.000000000000001) and so refuses
    values an HTML ``step="0.01"`` accepts; this compares the shortest decimal spellings.
    """
    if not validator.is_type(instance, "number") or isinstance(instance, bool):
        return
    try:
        quotient = Fraction(repr(instance)) / Fraction(repr(step))
    except (ValueError, ZeroDivisionError, OverflowError):
        return  # not a finite number; `type` and the metaschema say what is wrong
    if quotient.denominator != 1:
        yield ValidationError(f"{instance!r} is not a multiple of {step}")


_Validator: Any = validators.extend(  # type: ignore[no-untyped-call]
    Draft202012Validator, {"multipleOf": _multiple_of, **patterns.KEYWORDS}
)


class ArgumentProblem(BaseModel):
    """One reason the arguments do not fit the tool's ``inputSchema``."""

    model_config = ConfigDict(frozen=True)

    path: str  # JSON pointer into the arguments ("" is the whole object)
    message: str
    schema_path: str  # JSON pointer into the schema

    def describe(self) -> str:
        """One human line: where, what, and which schema rule."""
        where = self.path or "(the arguments object)"
        return f"{where}: {self.message} [schema {self.schema_path}]"


def _pointer(parts: Any) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def schema_problem(schema: dict[str, Any]) -> str | None:
    """Why ``schema`` is not a valid Draft 2020-12 schema, or None when it is."""
    try:
        Draft202012Validator.check_schema(
            patterns.checkable_schema(schema), format_checker=patterns.SCHEMA_FORMATS
        )
    except SchemaError as exc:
        return f"{exc.message} (at {_pointer(exc.absolute_path) or '/'})"
    return None


@lru_cache(maxsize=512)
def _validator(schema_json: str) -> Any:
    return _Validator(patterns.checkable_schema(json.loads(schema_json)), format_checker=_FORMATS)


def validate_arguments(tool: Tool, arguments: Any) -> list[ArgumentProblem]:
    """Every way ``arguments`` break ``tool.input_schema``; empty when they fit."""
    validator = _validator(json.dumps(tool.input_schema, sort_keys=True))
    errors = sorted(validator.iter_errors(arguments), key=lambda e: (list(e.path), e.message))
    return [
        ArgumentProblem(
            path=_pointer(e.absolute_path),
            message=e.message,
            schema_path=_pointer(e.absolute_schema_path),
        )
        for e in errors
    ]


def describe_problems(tool: Tool, problems: list[ArgumentProblem]) -> str:
    """The text the agent reads when its arguments were refused."""
    lines = [f"Invalid arguments for tool {tool.name!r}; the tool was not run."]
    lines += [f"- {p.describe()}" for p in problems]
    return "\n".join(lines)


def check_arguments(tool: Tool, arguments: Any) -> CallToolResult | None:
    """The validation stage: an ``isError`` result when the arguments do not fit."""
    problem = schema_problem(tool.input_schema)
    if problem is not None:
        return error_result(
            f"Tool {tool.name!r} has an invalid inputSchema, so its arguments cannot be "
            f"checked; the tool was not run. Schema problem: {problem}"
        )
    problems = validate_arguments(tool, arguments)
    if problems:
        return error_result(
            describe_problems(tool, problems),
            {META_PREFIX + "validation": [p.model_dump() for p in problems]},
        )
    return None
