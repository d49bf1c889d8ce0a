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

A schema's own checks — against the 2020-12 meta-schema (compiled, for its *yes*;
jsonschema says why not), its references, its compiled validators — are made once per
distinct schema (:func:`_checked`, by a fingerprint of its canonical JSON), not per call, in
a worker thread and within a budget of their own: a schema that cannot be checked in it
makes its tool unusable (an ``inputSchema``) or its results unvouched for (an
``outputSchema``), the tool named.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from fractions import Fraction
from typing import Any, NamedTuple, TypeVar, cast

import jsonschema_rs
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
from harness.schemas.budget import bounded
from harness.stages.normalization import MAX_RESULT_DEPTH, json_depth
from harness.stages.reasons import place, reason, token

T = TypeVar("T")

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


def _meta_schema_fast() -> Any:
    """The 2020-12 meta-schema compiled (jsonschema-rs), its formats checked as
    :data:`~harness.schemas.patterns.SCHEMA_FORMATS` checks them (``regex`` not at all)."""
    checker = patterns.SCHEMA_FORMATS
    formats: dict[str, Callable[..., bool]] = {
        name: functools.partial(checker.conforms, format=name) for name in checker.checkers
    }
    formats["regex"] = lambda _pattern: True
    return jsonschema_rs.validator_for(
        Draft202012Validator.META_SCHEMA, validate_formats=True, formats=formats
    )


_META_SCHEMA_FAST = _meta_schema_fast()


def meta_schema_fits_at_once(schema: Any) -> bool:
    """Whether the compiled meta-schema check says ``schema`` is a valid 2020-12 schema: a
    *yes* in milliseconds where jsonschema's check takes about 1 ms a property (its
    ``$dynamicRef``s); a *no* (or a value it cannot hold) is left to jsonschema, which says why."""
    try:
        return bool(_META_SCHEMA_FAST.is_valid(schema))
    except Exception:  # a value Rust cannot hold: jsonschema decides
        return False


def schema_problem(schema: dict[str, Any]) -> str | None:
    """Why ``schema`` is not a valid Draft 2020-12 schema, or None when it is. Inside
    :func:`~harness.schemas.within_budget`, raises :class:`~harness.schemas.SchemaTimeout`
    when jsonschema cannot finish in time."""
    meta = bounded(Draft202012Validator)(
        Draft202012Validator.META_SCHEMA, format_checker=patterns.SCHEMA_FORMATS
    )
    try:
        checkable = patterns.checkable_schema(schema)
        if meta_schema_fits_at_once(checkable):
            return None
        error = next(iter(meta.iter_errors(checkable)), None)
    except RecursionError:
        return "it is nested too deeply to be checked"
    if error is None:
        return None
    exc = SchemaError.create_from(error)
    # The value judged is the page's: worded so that it is not quoted (only a number is).
    where = _pointer(exc.absolute_path)
    why = reason(exc, _pointer(exc.absolute_schema_path), agents_value=False, pages_schema=False)
    return f"{why} (at {place(where) or '/'})"


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
    """What a schema allows, worked out once per distinct schema (not per call)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    invalid: str | None = None  # why it is not a valid Draft 2020-12 schema
    outside: str | None = None  # why it cannot be used: references outside itself
    late: str | None = None  # why it cannot be used: it could not be checked in time
    validator: Any = None  # the compiled validator, when the schema is usable
    fast: Any = None  # jsonschema-rs's, whose *yes* is trusted (None: jsonschema decides)
    small: bool = False  # small enough for the fast *yes* on the event loop

    @property
    def problem(self) -> str | None:
        """Why the schema cannot be used (None: it can)."""
        return self.invalid or self.outside or self.late


class _Remembered:
    """The last ``size`` values worked out from schemas, by a fingerprint of the schema's
    canonical JSON (a page's schema can be megabytes: the text is not kept). Worker threads
    share it: one of them works a value out while the others that need it wait."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._values: OrderedDict[tuple[str, ...], Any] = OrderedDict()
        self._lock = threading.Lock()
        self._working: dict[tuple[str, ...], threading.Lock] = {}

    def get(self, key: tuple[str, ...], compute: Callable[[], T]) -> T:
        """The value for ``key``, ``compute()`` the first time (again once forgotten). Four
        clients whose first calls of one tool come at once wait for one check, not four."""
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                return cast(T, self._values[key])
            working = self._working.setdefault(key, threading.Lock())
        with working:
            with self._lock:
                if key in self._values:
                    return cast(T, self._values[key])
            try:
                value = compute()
            except BaseException:
                with self._lock:
                    self._working.pop(key, None)
                raise
            with self._lock:
                self._values[key] = value
                self._working.pop(key, None)
                while len(self._values) > self._size:
                    self._values.popitem(last=False)
        return value


class Fingerprint(NamedTuple):
    """A schema's identity as a cache key (:func:`fingerprint`)."""

    digest: str
    """The SHA-256 of the schema's canonical JSON."""
    size: int
    """That JSON's length, in characters (what :data:`AT_ONCE_SCHEMA_CHARS` bounds)."""


def fingerprint(schema: Any) -> Fingerprint:
    """A schema's identity as a cache key: the SHA-256 of its canonical JSON, and its
    length. A page's schema can be megabytes (3 000 properties: a few ms): a caller that
    looks one schema up several ways works this out once and passes it on (``known``)."""
    text = _canonical(schema)
    return Fingerprint(hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(), len(text))


_CHECKS = _Remembered(1024)
_RESULT_VALIDATORS = _Remembered(256)


def _checked(
    schema: Any, dialect: patterns.PatternDialect, what: str, known: Fingerprint | None = None
) -> _Checked:
    """The meta-schema check, the outside-reference check and the compiled validator of one
    schema (``what``: "inputSchema" or "outputSchema", as a refusal names it), by its
    fingerprint (``known``, or worked out here) and the dialect of its patterns: paid for
    the first time the schema is seen, within the schema budget (one that cannot be checked
    in it is unusable, fail closed). May take that budget: call it off the event loop
    (:func:`~harness.schemas.off_loop`).

    Keyed by value, not by tool: a page that registers the same name again with another
    schema gets the other schema's checks, and nothing is shared that could differ.
    """
    found = fingerprint(schema) if known is None else known
    key = (found.digest, dialect.name, what)
    return _CHECKS.get(key, lambda: _check(schema, dialect, what, found.size))


def _check(schema: Any, dialect: patterns.PatternDialect, what: str, size: int) -> _Checked:
    try:
        with within_budget():  # all of a schema's own checks: one budget
            invalid = schema_problem(schema)
            if invalid is not None:
                return _Checked(invalid=invalid)
            outside = outside_references_problem(what, schema)
            if outside is not None:
                return _Checked(outside=outside)
            # An inputSchema's fast *yes* (results are checked by jsonschema). Never for a
            # schema with a `pattern` (compiled_validator_for leaves regexes to jsonschema).
            fast = compiled_validator_for(schema) if what == "inputSchema" else None
    except SchemaTimeout as late:
        return _Checked(late=f"its {what} could not be checked within {late.seconds:g} s")
    small = size <= AT_ONCE_SCHEMA_CHARS
    return _Checked(validator=_compiled(schema, dialect), fast=fast, small=small)


AT_ONCE_SCHEMA_CHARS = 20_000
"""The largest schema (in characters of JSON) checked on the event loop: its own checks on a
tool's first call, then the compiled *yes* of each call (its work estimate walks the schema:
12 000 properties, 0.75 s a call). A larger one goes to a worker thread, checks and all."""


def _compiled(schema: Any, dialect: patterns.PatternDialect) -> Any:
    """A validator for ``schema``, its patterns checked with ECMAScript semantics as
    ``dialect`` reads them."""
    return validator_for(
        patterns.checkable_schema(schema), _VALIDATORS[dialect], format_checker=_FORMATS
    )


def _canonical(schema: Any) -> str:
    return json.dumps(schema, sort_keys=True)


def output_schema_problem(schema: Any, known: Fingerprint | None = None) -> str | None:
    """Why an ``outputSchema`` cannot vouch for results (invalid, referring outside itself,
    or not checkable within the budget), or None when it can: worked out once per distinct
    schema (:func:`_checked`), not per result. ``known``: the schema's :func:`fingerprint`,
    when the caller has it (a result's check passes it on to :func:`result_error`). May
    take the schema budget: off the loop."""
    try:
        return _checked(schema, patterns.JSON_SCHEMA, "outputSchema", known).problem
    except RecursionError:
        return "it is nested too deeply to be checked"


def result_validator(schema: Any, known: Fingerprint | None = None) -> Any:
    """The validator a page's result is checked against its ``outputSchema`` with, compiled
    once per schema (found by its :func:`fingerprint`: ``known``, or worked out here): read
    as the harness reads arguments (Draft 2020-12, patterns with ECMAScript semantics,
    formats asserted, ``multipleOf`` on decimals), but for the rule on integers JavaScript
    cannot hold (a result holds the number it has). Check :func:`output_schema_problem`
    first: for a schema it refuses, its answers mean little (or it raises)."""

    def compile_() -> Any:
        return validator_for(
            patterns.checkable_schema(schema), _ResultValidator, format_checker=_FORMATS
        )

    found = fingerprint(schema) if known is None else known
    return _RESULT_VALIDATORS.get((found.digest,), compile_)


def result_error(
    schema: Any, structured: Any, known: Fingerprint | None = None
) -> ValidationError | None:
    """The most telling way ``structured`` breaks ``schema`` (None: it fits), read by
    :func:`result_validator` (``known``: the schema's :func:`fingerprint`, when the caller
    has it), within the schema budget: raises :class:`~harness.schemas.SchemaTimeout` when
    the check cannot finish in time."""
    with within_budget():
        validator = result_validator(schema, known)
        error: ValidationError | None = best_match(validator.iter_errors(structured))
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
        checked = _checked(schema, patterns.dialect_of(tool), "inputSchema")
    except RecursionError:
        return _Plan()
    return _Plan(checked=checked, fast=checked.fast)


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
        else _compiled(tool.input_schema, patterns.dialect_of(tool))  # unusable: as before
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
    if checked.late is not None:
        return _unusable(tool, checked.late)
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
    every other session (a check that took its whole budget froze them all) — the first
    call of a tool with a large schema too, which is checked itself then (:func:`_checked`:
    20 000 properties took jsonschema 20 s)."""
    if _fits_at_once(tool, arguments):
        return None
    return await off_loop(check_arguments, tool, arguments)


def _fits_at_once(tool: Tool, arguments: Any) -> bool:
    plan = _plan.known(tool)
    if plan is None and _smaller_than(tool.input_schema, AT_ONCE_SCHEMA_CHARS):
        plan = _plan(tool)  # a small schema's checks take milliseconds; a large one's, the worker
    small = plan is not None and plan.checked is not None and plan.checked.small
    fast = plan.fast if plan is not None and small else None
    if fast is None or json_depth(arguments) > MAX_ARGUMENT_DEPTH or not _plain_numbers(arguments):
        return False
    try:
        return bool(fast.is_valid(arguments))
    except Exception:  # too much work for it, or a value Rust cannot hold: jsonschema decides
        return False


def _smaller_than(schema: Any, limit: int) -> bool:
    """Whether ``schema``'s keys and strings come to fewer than ``limit`` characters (a
    bound on its JSON, give or take punctuation): it stops counting at ``limit``, so a
    schema of megabytes costs no more than a small one."""
    total, stack = 0, [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            total += sum(len(key) + 4 for key in node)
            stack.extend(node.values())
        elif isinstance(node, list):
            total += len(node)
            stack.extend(node)
        else:
            total += len(node) if isinstance(node, str) else 8
        if total >= limit:
            return False
    return True


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
