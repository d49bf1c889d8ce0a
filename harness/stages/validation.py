"""Argument validation: the user agent checks arguments before any tool runs.

Native Chromium does not validate arguments against ``inputSchema``; the harness
does, on both backends, with JSON Schema Draft 2020-12 and format checking. Bad
arguments never reach ``execute``: the agent gets an ``isError`` result naming
each problem's JSON pointer, reason and schema path. The reasons are the harness's own
words (:mod:`harness.stages.reasons`): a refusal never quotes the page's schema texts.

Two things are refused besides what the schema says:

- a schema with a ``$ref`` outside itself: the harness never fetches one
  (:mod:`harness.schemas`), so such arguments cannot be checked;
- numbers JavaScript cannot hold as sent: NaN and ±Infinity, integers too large for a
  double (they would reach ``execute`` as ``null``), and integers beyond ±(2⁵³−1) where
  the schema says ``integer`` (they would reach it rounded).

A check takes at most :data:`~harness.schemas.SCHEMA_BUDGET_S` for all its work; arguments
it could not finish checking are refused, never sent (fail closed). In the pipeline it runs
off the event loop (:func:`check_arguments_async`), so other sessions go on meanwhile.
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Iterable, Iterator
from fractions import Fraction
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import SchemaError, ValidationError, best_match
from mcp_types import CallToolResult
from pydantic import BaseModel, ConfigDict

from harness.models import META_PREFIX, CatalogWarning, PerTool, Tool, error_result
from harness.schemas import (
    SchemaTimeout,
    Unresolvable,
    compiled_validator_for,
    keyword_locations,
    off_loop,
    patterns,
    unresolvable_references,
    validator_for,
    within_budget,
)
from harness.stages.normalization import MAX_RESULT_DEPTH, json_depth
from harness.stages.reasons import place, reason, token

FORMAT_CHECKER = Draft202012Validator.FORMAT_CHECKER
"""The formats arguments and results are checked with: every format jsonschema asserts with
the packages installed (``uuid``, ``duration``, ``date-time``, ``email``, …)."""
_FORMATS = FORMAT_CHECKER
_TYPE_KEYWORD = Draft202012Validator.VALIDATORS["type"]

MAX_SAFE_INTEGER = 2**53 - 1
"""JavaScript's ``Number.MAX_SAFE_INTEGER``: the last integer every double holds exactly."""


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


def _type(
    validator: Any, types: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[ValidationError]:
    """``type``, and an ``integer`` JavaScript cannot hold exactly is no integer for the page.

    ``2**53 + 1`` passes ``{"type": "integer"}`` in Python and reaches ``execute`` as
    ``2**53``, the nearest double: another number than the agent sent.
    """
    yield from _TYPE_KEYWORD(validator, types, instance, schema)
    kinds = types if isinstance(types, list) else [types]
    if "integer" not in kinds or isinstance(instance, bool):
        return
    if isinstance(instance, int):
        whole = True
    else:
        whole = isinstance(instance, float) and math.isfinite(instance) and instance.is_integer()
    if whole and abs(instance) > MAX_SAFE_INTEGER:
        yield ValidationError(
            f"{_short(instance)} is beyond ±(2**53 − 1), so JavaScript cannot hold this "
            "integer exactly (the tool would get a rounded number); send a smaller integer"
        )


_Validator: Any = validators.extend(  # type: ignore[no-untyped-call]
    Draft202012Validator, {"multipleOf": _multiple_of, "type": _type, **patterns.KEYWORDS}
)
# A form's schema (a declarative tool): the same, its `pattern`s read as HTML reads them.
_FormValidator: Any = validators.extend(  # type: ignore[no-untyped-call]
    Draft202012Validator, {"multipleOf": _multiple_of, "type": _type, **patterns.FORM_KEYWORDS}
)
_VALIDATORS = {patterns.JSON_SCHEMA: _Validator, patterns.HTML: _FormValidator}
# A page's own results: the same reading, but a result holds the number it has (the
# 2**53 rule is about what a call would hand the page).
_ResultValidator: Any = validators.extend(  # type: ignore[no-untyped-call]
    Draft202012Validator, {"multipleOf": _multiple_of, **patterns.KEYWORDS}
)


def _short(number: int | float) -> str:
    try:
        text = repr(number)
    except ValueError:  # more digits than Python converts to text
        return "an integer of thousands of digits"
    return text if len(text) <= 24 else f"{text[:10]}…({len(text)} digits)"


class ArgumentProblem(BaseModel):
    """One reason the arguments do not fit the tool's ``inputSchema``."""

    model_config = ConfigDict(frozen=True)

    path: str  # JSON pointer into the arguments ("" is the whole object)
    message: str
    schema_path: str  # JSON pointer into the schema

    def describe(self) -> str:
        """One human line: where, what, and which schema rule."""
        where = place(self.path) or "(the arguments object)"
        rule = f" [schema {place(self.schema_path)}]" if self.schema_path else ""
        return f"{where}: {self.message}{rule}"


def _pointer(parts: Any) -> str:
    return "".join("/" + token(p) for p in parts)


def schema_problem(schema: dict[str, Any]) -> str | None:
    """Why ``schema`` is not a valid Draft 2020-12 schema, or None when it is."""
    try:
        Draft202012Validator.check_schema(
            patterns.checkable_schema(schema), format_checker=patterns.SCHEMA_FORMATS
        )
    except SchemaError as exc:
        # The value judged is the page's: worded so that it is not quoted (only a number is).
        where = _pointer(exc.absolute_path)
        why = reason(
            exc, _pointer(exc.absolute_schema_path), agents_value=False, pages_schema=False
        )
        return f"{why} (at {place(where) or '/'})"
    except RecursionError:
        return "it is nested too deeply to be checked"
    return None


def outside_references_problem(what: str, schema: Any) -> str | None:
    """Why ``schema`` cannot be used: ``$ref``s that lead outside it (None: there are none)."""
    refs = unresolvable_references(schema)
    if not refs:
        return None
    # Named by their places: a reference is the page's text, which a refusal never quotes.
    places = _places_of(schema, set(refs))
    shown = ", ".join(place(p) for p in places[:3]) + (" …" if len(places) > 3 else "")
    where = f"at {shown}" if places else "its `$id`"
    return (
        f"its {what} refers outside itself ({where}); the harness never fetches a "
        "schema (a page could make it request any URL or read a local file)"
    )


def _places_of(schema: Any, refs: set[str]) -> list[str]:
    """The JSON pointers of every ``$ref``, ``$dynamicRef`` or ``$id`` in ``schema`` whose
    value is one of ``refs``, in document order."""
    found = []
    # Iterative, not recursive: a page can nest a schema deeper than Python's stack.
    stack: list[tuple[Any, str]] = [(schema, "")]
    while stack:
        node, where = stack.pop()
        if isinstance(node, dict):
            found += [
                f"{where}/{key}"
                for key in ("$id", "$ref", "$dynamicRef")
                if isinstance(node.get(key), str) and node[key] in refs
            ]
            stack += [(v, f"{where}/{token(k)}") for k, v in reversed(node.items())]
        elif isinstance(node, list):
            stack += [(v, f"{where}/{i}") for i, v in reversed(list(enumerate(node)))]
    return found


def schema_warnings(tools: Iterable[Tool]) -> list[CatalogWarning]:
    """A catalog warning for every tool whose schemas refer outside themselves."""
    warnings = []
    for tool in tools:
        for what, schema in (
            ("inputSchema", tool.input_schema),
            ("outputSchema", tool.output_schema),
        ):
            problem = outside_references_problem(what, schema)
            if problem is not None:
                consequence = (
                    "its calls are refused"
                    if what == "inputSchema"
                    else "its results are withheld from the agent"
                )
                warnings.append(
                    CatalogWarning(
                        code="schema-outside-reference",
                        tool=tool.name,
                        message=f"Tool {tool.name!r}: {problem}, so {consequence}. "
                        "Put the referenced schema in $defs.",
                    )
                )
    return warnings


class _Checked(BaseModel):
    """What a tool's ``inputSchema`` allows, worked out once per schema (not per call)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    invalid: str | None = None  # why it is not a valid Draft 2020-12 schema
    outside: str | None = None  # why it cannot be used: references outside itself
    validator: Any = None  # the compiled validator, when the schema is usable


@lru_cache(maxsize=1024)
def _checked(schema_json: str, dialect: patterns.PatternDialect) -> _Checked:
    """The meta-schema check, the outside-reference check and the compiled validator of one
    schema, by its canonical JSON and the dialect of its patterns: a call pays for them only
    the first time its schema is seen.

    Keyed by value, not by tool: a page that registers the same name again with another
    schema gets the other schema's checks, and nothing is shared that could differ.
    """
    schema = json.loads(schema_json)
    invalid = schema_problem(schema)
    if invalid is not None:
        return _Checked(invalid=invalid)
    outside = outside_references_problem("inputSchema", schema)
    if outside is not None:
        return _Checked(outside=outside)
    return _Checked(validator=_compiled(schema, dialect))


def _compiled(schema: Any, dialect: patterns.PatternDialect) -> Any:
    """A validator for ``schema``, its patterns checked with ECMAScript semantics as
    ``dialect`` reads them."""
    return validator_for(
        patterns.checkable_schema(schema), _VALIDATORS[dialect], format_checker=_FORMATS
    )


def _canonical(schema: Any) -> str:
    return json.dumps(schema, sort_keys=True)


def _validator(schema_json: str, dialect: patterns.PatternDialect) -> Any:
    checked = _checked(schema_json, dialect)
    if checked.validator is None:  # an unusable schema: validate it as before, uncached
        return _compiled(json.loads(schema_json), dialect)
    return checked.validator


@lru_cache(maxsize=256)
def _result_validator(schema_json: str) -> Any:
    schema = json.loads(schema_json)
    return validator_for(
        patterns.checkable_schema(schema), _ResultValidator, format_checker=_FORMATS
    )


def result_validator(schema: Any) -> Any:
    """The validator a page's result is checked against its ``outputSchema`` with, compiled
    once per schema: read as the harness reads arguments (Draft 2020-12, patterns with
    ECMAScript semantics, formats asserted, ``multipleOf`` on decimals), but for the rule on
    integers JavaScript cannot hold (a result holds the number it has). Check
    :func:`schema_problem` and :func:`outside_references_problem` first: for a schema either
    refuses, its answers mean little (or it raises)."""
    return _result_validator(_canonical(schema))


def result_error(schema: Any, structured: Any) -> ValidationError | None:
    """The most telling way ``structured`` breaks ``schema`` (None: it fits), read by
    :func:`result_validator`, within the schema budget: raises
    :class:`~harness.schemas.SchemaTimeout` when the check cannot finish in time."""
    with within_budget():
        error: ValidationError | None = best_match(result_validator(schema).iter_errors(structured))
    return error


class _Plan(BaseModel):
    """What validating one tool's calls takes, worked out once per tool: its schema's
    checks (or why they could not be made), and a compiled validator whose *yes* is
    trusted (:func:`~harness.schemas.compiled_validator_for`; None: jsonschema decides)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    checked: _Checked | None = None  # None: the schema is nested too deeply to check
    fast: Any = None


def _plan_of(tool: Tool) -> _Plan:
    schema = tool.input_schema
    try:
        checked = _checked(_canonical(schema), patterns.dialect_of(tool))
    except RecursionError:
        return _Plan()
    usable = checked.invalid is None and checked.outside is None
    # Never for a schema with a `pattern` (compiled_validator_for leaves regexes to jsonschema).
    fast = compiled_validator_for(schema) if usable else None
    return _Plan(checked=checked, fast=fast)


_plan = PerTool(_plan_of)


def unrepresentable_numbers(arguments: Any) -> list[ArgumentProblem]:
    """Numbers JavaScript cannot hold at all: NaN, ±Infinity, integers beyond a double."""
    problems = []
    stack: list[tuple[tuple[Any, ...], Any]] = [((), arguments)]
    while stack:
        path, value = stack.pop()
        message = None
        if isinstance(value, float) and not math.isfinite(value):
            message = (
                f"{value!r} is not a finite number; JSON and JavaScript arguments cannot be "
                "NaN or Infinity"
            )
        elif isinstance(value, int) and not isinstance(value, bool):
            try:
                float(value)
            except OverflowError:
                message = (
                    f"{_short(value)} is too large for a JavaScript number (the tool would "
                    "get null)"
                )
        elif isinstance(value, dict):
            stack.extend(((*path, k), v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend(((*path, i), v) for i, v in enumerate(value))
        if message is not None:
            problems.append(ArgumentProblem(path=_pointer(path), message=message, schema_path=""))
    return sorted(problems, key=lambda p: p.path)


def validate_arguments(tool: Tool, arguments: Any) -> list[ArgumentProblem]:
    """Every way ``arguments`` break ``tool.input_schema``; empty when they fit. A form's
    ``pattern`` (a declarative tool's: the control's attribute, copied as written) is read as
    HTML reads it, ``^(?:…)$`` with the ``v`` flag, where JSON Schema's matches anywhere in
    the value with the ``u`` flag (:mod:`harness.schemas.patterns`)."""
    unrepresentable = unrepresentable_numbers(arguments)
    if unrepresentable:
        return unrepresentable
    checked = _plan(tool).checked
    validator = (
        checked.validator
        if checked is not None and checked.validator is not None
        else _validator(_canonical(tool.input_schema), patterns.dialect_of(tool))
    )
    errors = sorted(validator.iter_errors(arguments), key=lambda e: (list(e.path), e.message))
    return [
        ArgumentProblem(
            path=_pointer(e.absolute_path),
            message=reason(e, _pointer(at)),
            schema_path=_pointer(at),
        )
        for e, at in zip(errors, keyword_locations(validator.schema, errors), strict=True)
    ]


def _plain_numbers(arguments: Any) -> bool:
    """Whether every number in ``arguments`` is one JavaScript holds exactly as given and
    both validators read alike: finite, and no integer beyond ±(2**53 − 1) (which this
    module's ``type`` refuses and the compiled validator would not)."""
    stack = [arguments]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, bool) or not isinstance(value, int | float):
            continue
        elif abs(value) > MAX_SAFE_INTEGER or value != value:  # beyond the range, or NaN
            return False
    return True


def describe_problems(tool: Tool, problems: list[ArgumentProblem]) -> str:
    """The text the agent reads when its arguments were refused."""
    lines = [f"Invalid arguments for tool {tool.name!r}; the tool was not run."]
    lines += [f"- {p.describe()}" for p in problems]
    return "\n".join(lines)


# The deepest arguments checked (deeper ones are refused before any recursive reader).
MAX_ARGUMENT_DEPTH = MAX_RESULT_DEPTH


def check_arguments(tool: Tool, arguments: Any) -> CallToolResult | None:
    """The validation stage: an ``isError`` result when the arguments do not fit."""
    plan = _plan(tool)
    checked = plan.checked
    if checked is None:
        return error_result(
            f"Tool {tool.name!r} has an invalid inputSchema, so its arguments cannot be "
            "checked; the tool was not run. Schema problem: it is nested too deeply to be "
            "checked"
        )
    if checked.invalid is not None:
        return error_result(
            f"Tool {tool.name!r} has an invalid inputSchema, so its arguments cannot be "
            f"checked; the tool was not run. Schema problem: {checked.invalid}"
        )
    if checked.outside is not None:
        return _unusable(tool, checked.outside)
    if json_depth(arguments) > MAX_ARGUMENT_DEPTH:
        return error_result(
            f"Invalid arguments for tool {tool.name!r}; the tool was not run: they are nested "
            f"deeper than {MAX_ARGUMENT_DEPTH} levels. Send flatter arguments."
        )
    if plan.fast is not None and _plain_numbers(arguments):
        with contextlib.suppress(Exception):  # a value Rust cannot hold: jsonschema decides
            if plan.fast.is_valid(arguments):
                return None
    try:
        with within_budget():
            problems = validate_arguments(tool, arguments)
    except SchemaTimeout as late:  # not checked, so not sent
        return _unchecked(tool, late)
    except Unresolvable:  # a reference the static check did not see: still never fetched
        return _unusable(tool, "its inputSchema refers outside itself")
    except RecursionError:
        return _unusable(tool, "its inputSchema (or the arguments) is nested too deeply")
    if problems:
        return error_result(
            describe_problems(tool, problems),
            {META_PREFIX + "validation": [p.model_dump() for p in problems]},
        )
    return None


async def check_arguments_async(tool: Tool, arguments: Any) -> CallToolResult | None:
    """:func:`check_arguments` without holding the event loop: the compiled validator's
    *yes* comes at once (its work is bounded: :data:`~harness.schemas.FAST_PATH_WORK`);
    anything else is checked in a worker thread, within its budget, while the loop serves
    every other session (a check that took its whole budget froze them all)."""
    if _fits_at_once(tool, arguments):
        return None
    return await off_loop(check_arguments, tool, arguments)


def _fits_at_once(tool: Tool, arguments: Any) -> bool:
    fast = _plan(tool).fast
    if fast is None or json_depth(arguments) > MAX_ARGUMENT_DEPTH or not _plain_numbers(arguments):
        return False
    try:
        return bool(fast.is_valid(arguments))
    except Exception:  # too much work for it, or a value Rust cannot hold: jsonschema decides
        return False


def _unchecked(tool: Tool, late: SchemaTimeout) -> CallToolResult:
    return error_result(
        f"Tool {tool.name!r} was not run: {late} on these arguments (its inputSchema takes "
        "too long on them: a pattern that backtracks, alternatives nested in alternatives, "
        "or very large arguments), so they were not checked. Send smaller or simpler "
        "arguments; if that does not help, the site has to simplify its schema."
    )


def _unusable(tool: Tool, problem: str) -> CallToolResult:
    return error_result(
        f"Tool {tool.name!r} cannot be called: {problem}. Its arguments cannot be checked, "
        "so the tool was not run; the site has to fix its schema."
    )
