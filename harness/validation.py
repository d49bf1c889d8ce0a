"""Argument validation: the user agent checks arguments before any tool runs.

Native Chromium does not validate arguments against ``inputSchema``; the harness
does, on both backends, with JSON Schema Draft 2020-12 and format checking. Bad
arguments never reach ``execute``: the agent gets an ``isError`` result naming
each problem's JSON pointer, reason and schema path.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from pydantic import BaseModel, ConfigDict

from harness.models import Tool

_FORMATS = Draft202012Validator.FORMAT_CHECKER


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
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return f"{exc.message} (at {_pointer(exc.absolute_path) or '/'})"
    return None


@lru_cache(maxsize=512)
def _validator(schema_json: str) -> Draft202012Validator:
    return Draft202012Validator(json.loads(schema_json), format_checker=_FORMATS)


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
