"""ECMA-262 regular expressions for JSON Schema's ``pattern`` and ``patternProperties``.

JSON Schema's patterns are ECMAScript regular expressions, and pages write them for
JavaScript: ``\\p{L}+`` (a name in any script) is valid there and means nothing to
Python's ``re``, which jsonschema uses by default. The harness checks them with ECMAScript
semantics instead (the ``regress`` library, Rust's ECMA-262 engine), in one of two dialects
(:class:`PatternDialect`), chosen by where the schema comes from (:func:`dialect_of`):

- :data:`JSON_SCHEMA`, a script tool's schema: the ``u`` flag JSON Schema recommends (else
  none), matching anywhere in the value;
- :data:`HTML`, a ``<form toolname>``'s schema, whose ``pattern`` is a control's attribute
  copied as written: read as HTML reads it, ``^(?:pattern)$`` with the ``v`` flag (set
  operations ``[[a-z]--[aeiou]]``, ``\\p{RGI_Emoji}``, ``\\q{…}``; ``[a-z-]`` is no pattern).

A pattern its dialect cannot compile is skipped — that keyword only, never the whole tool —
as HTML ignores such an attribute, and the catalog warns about it (:func:`pattern_warnings`).
Also here: :func:`checkable_schema`, the schema as the harness checks it, where HTML's
empty choice lists (a ``<select>`` without options is ``anyOf: []``) mean "no value".

``regress`` backtracks, as every ECMAScript engine does, so a page's pattern can take for ever
on the agent's string (``^(a+)+$`` on ``"aaaa…!"``) and cannot be interrupted from Python. The
matches therefore run in a small child process of their own (:class:`_Matcher`), which is
killed and replaced when one match overruns :data:`PATTERN_BUDGET_S`; the argument is then
refused with a message saying so (:class:`PatternTimeout`), and validation never hangs.
A match also ends with the budget of the whole check it is part of
(:func:`harness.schemas.within_budget`): fifteen such strings took fifteen seconds.
Each check that runs at once (in its own worker thread) has a child of its own
(:class:`_Matchers`), so no check waits for another's runaway pattern.

Every keyword that reads a page's pattern is here (:data:`KEYWORDS`): ``pattern``,
``patternProperties``, and the two that look at ``patternProperties`` keys to know what is
left over, ``additionalProperties`` and ``unevaluatedProperties`` (jsonschema's own read them
with ``re``). It sits with the schemas at the bottom of the harness, so that every layer that
meets a page's pattern matches it here: a tool's schemas (validation, redaction) and a
question's fields (:mod:`harness.elicitation.form`).
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from multiprocessing.connection import Connection
from typing import Any

import regress
from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import ValidationError

from harness import schemas
from harness.models import CatalogWarning, Tool

# Keywords whose value is a schema or a list of them: walked into whatever the value's shape.
_SCHEMAS_OR_LISTS = frozenset({*schemas.SUBSCHEMA_KEYWORDS, *schemas.SUBSCHEMA_LISTS})


PATTERN_BUDGET_S = 1.0
"""How long one ``pattern`` may take on one string before the value is refused."""
MAX_PATTERN_LENGTH = 10_000
"""The longest pattern compiled (compiling is not covered by the budget)."""


class PatternTimeout(Exception):
    """A pattern took longer than :data:`PATTERN_BUDGET_S` on a string."""


@dataclass(frozen=True)
class PatternDialect:
    """How a schema's ``pattern`` is read: the flags it may compile with, tried in order, and
    whether it must match the whole value (HTML's reading) or anywhere in it (JSON Schema's)."""

    name: str
    flags: tuple[str, ...]
    anchored: bool
    reading: str = ""
    """How a refusal says the pattern was read, when that is not JSON Schema's way."""

    def source(self, pattern: str) -> str:
        """The regular expression that is compiled and matched for ``pattern``."""
        return f"^(?:{pattern})$" if self.anchored else pattern


JSON_SCHEMA = PatternDialect("JSON Schema", ("u", ""), anchored=False)
"""A script tool's schema: ECMA-262 with the ``u`` flag JSON Schema recommends (else none),
matching anywhere in the value."""

HTML = PatternDialect(
    "HTML",
    ("v",),
    anchored=True,
    reading="the form's pattern, as HTML reads it: v flag, whole value",
)
"""A ``<form toolname>`` control's ``pattern``, as HTML compiles it: ``^(?:pattern)$`` with
the ``v`` flag; a pattern that does not compile so is ignored (HTML Standard, "compiling a
pattern attribute regular expression")."""


def dialect_of(tool: Tool) -> PatternDialect:
    """The dialect of ``tool``'s schema patterns: a form's (declarative tools: Chromium's
    schema, and the seed dialect's, copy the controls' ``pattern``) or JSON Schema's."""
    return HTML if tool.source == "declarative" else JSON_SCHEMA


@lru_cache(maxsize=1024)
def pattern_flags(pattern: str, dialect: PatternDialect = JSON_SCHEMA) -> str | None:
    """The flags ``pattern`` compiles with in ``dialect`` (JSON Schema: ``u``, else none;
    HTML: ``v``), or None when it is not a regex there (or is longer than
    :data:`MAX_PATTERN_LENGTH`)."""
    if len(pattern) > MAX_PATTERN_LENGTH:
        return None
    for flags in dialect.flags:
        try:
            # HTML compiles the attribute as written first: `a)|(b` is no pattern, though
            # `^(?:a)|(b)$` would compile.
            if dialect.anchored:
                regress.Regex(pattern, flags)
            regress.Regex(dialect.source(pattern), flags)
        except regress.RegressError:
            continue
        return flags
    return None


def compile_pattern(pattern: str, dialect: PatternDialect = JSON_SCHEMA) -> Any:
    """The compiled ECMAScript regex ``pattern`` is in ``dialect`` (anchored for HTML), or
    None when it is not one there."""
    flags = pattern_flags(pattern, dialect)
    return None if flags is None else regress.Regex(dialect.source(pattern), flags)


def _serve_matches(conn: Connection) -> None:  # pragma: no cover - runs in the child
    """The child's loop: ``(pattern, flags, text)`` in, whether it matched out."""
    # A forked child holds a copy of every descriptor the harness had open, among them the
    # write end of Playwright's pipe to its driver: while the child lives, the driver never
    # reads end-of-file, and closing the harness hangs. Keep only stdio and this pipe.
    own = conn.fileno()
    os.closerange(3, own)
    os.closerange(own + 1, os.sysconf("SC_OPEN_MAX"))
    compiled: dict[tuple[str, str], Any] = {}
    while True:
        try:
            pattern, flags, text = conn.recv()
        except (EOFError, OSError):
            return
        regex = compiled.get((pattern, flags))
        if regex is None:
            if len(compiled) > 256:
                compiled.clear()
            regex = compiled[(pattern, flags)] = regress.Regex(pattern, flags)
        conn.send(regex.find(text) is not None)


class _Matcher:
    """The child process that runs matches, one at a time, each within a budget."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: Any = None
        self._conn: Connection | None = None

    def _start(self) -> Connection:
        # fork: the child needs nothing but regress and its end of the pipe, and starts in
        # milliseconds (spawn would import the harness again).
        context = multiprocessing.get_context("fork")
        parent, child = context.Pipe()
        process = context.Process(target=_serve_matches, args=(child,), daemon=True)
        process.start()
        child.close()
        self._process, self._conn = process, parent
        return parent

    def _stop(self) -> None:
        if self._conn is not None:
            self._conn.close()
        if self._process is not None:
            self._process.kill()
            self._process.join()
        self._process = self._conn = None

    def search(self, pattern: str, flags: str, text: str, budget: float) -> bool:
        with self._lock:
            conn = self._conn
            if conn is None or not self._process.is_alive():
                self._stop()
                conn = self._start()
            try:
                conn.send((pattern, flags, text))
                if conn.poll(budget):
                    return bool(conn.recv())
            except (EOFError, OSError):
                pass  # the child died mid-match: replaced below, and the match refused
            self._stop()
            raise PatternTimeout(pattern)


class _Matchers:
    """Idle matcher children, one lent to each match: checks that run at once (each in a
    worker thread, :func:`harness.schemas.off_loop`) never queue behind another's runaway
    pattern. At most :attr:`KEEP` wait idle; the others are stopped when given back."""

    KEEP = 4

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[_Matcher] = []

    def search(self, pattern: str, flags: str, text: str, budget: float) -> bool:
        with self._lock:
            matcher = self._idle.pop() if self._idle else _Matcher()
        try:
            return matcher.search(pattern, flags, text, budget)
        finally:
            with self._lock:
                kept = len(self._idle) < self.KEEP
                if kept:
                    self._idle.append(matcher)
            if not kept:
                matcher._stop()


_MATCHERS = _Matchers()


def search(
    pattern: str,
    text: str,
    budget: float = PATTERN_BUDGET_S,
    dialect: PatternDialect = JSON_SCHEMA,
) -> bool | None:
    """Whether the ECMAScript ``pattern`` matches ``text`` as ``dialect`` reads it (JSON
    Schema: somewhere in it; HTML: all of it); None: not a regex there. Raises
    :class:`PatternTimeout` when the match takes longer than ``budget`` seconds."""
    flags = pattern_flags(pattern, dialect)
    if flags is None:
        return None
    return _MATCHERS.search(dialect.source(pattern), flags, text, budget)


def search_in_budget(pattern: str, text: str, dialect: PatternDialect = JSON_SCHEMA) -> bool | None:
    """:func:`search` within :data:`PATTERN_BUDGET_S` and what is left of the check's budget
    (:func:`harness.schemas.within_budget`): :class:`PatternTimeout` when the match alone
    overran, :class:`~harness.schemas.SchemaTimeout` when the check's budget ran out."""
    left = schemas.time_left()
    if left is None or left > PATTERN_BUDGET_S:
        return search(pattern, text, dialect=dialect)
    schemas.on_time()
    try:
        return search(pattern, text, budget=max(left, 0.0), dialect=dialect)
    except PatternTimeout:
        raise schemas.spent() from None  # the match ran to the check's deadline


def _clip(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:57] + "...")


def _timeout_error(pattern: str) -> ValidationError:
    # The pattern is the page's text: the refusal names its place (its schema path), never
    # quotes it (harness/stages/reasons.py).
    return ValidationError(
        f"the schema's pattern took over {PATTERN_BUDGET_S:g} s on this "
        "string (a pattern that backtracks without end), so the value cannot be checked; "
        "send a shorter or simpler value, or ask the site to fix its pattern",
        cause=PatternTimeout(pattern),
    )


def _pattern_keyword(dialect: PatternDialect) -> Any:
    def pattern_keyword(
        validator: Any, pattern: Any, instance: Any, schema: dict[str, Any]
    ) -> Iterator[ValidationError]:
        """``pattern`` with ECMAScript semantics, read in the dialect of its schema (skipped
        when it is not a regex there)."""
        if not isinstance(pattern, str) or not validator.is_type(instance, "string"):
            return
        try:
            found = search_in_budget(pattern, instance, dialect)
        except PatternTimeout:
            yield _timeout_error(dialect.source(pattern))
            return
        if found is False:
            reading = f" ({dialect.reading})" if dialect.reading else ""
            yield ValidationError(f"{_clip(instance)} does not match the schema's pattern{reading}")

    return pattern_keyword


pattern_keyword = _pattern_keyword(JSON_SCHEMA)
"""JSON Schema's ``pattern`` with ECMAScript semantics (skipped when not a regex)."""


def pattern_properties_keyword(
    validator: Any, patterns: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[ValidationError]:
    """JSON Schema's ``patternProperties`` with ECMAScript semantics."""
    if not isinstance(patterns, dict) or not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            try:
                found = isinstance(pattern, str) and search_in_budget(pattern, key)
            except PatternTimeout:
                yield _timeout_error(pattern)
                return
            if found:
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def additional_properties_keyword(
    validator: Any, additional: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[ValidationError]:
    """JSON Schema's ``additionalProperties``, the ``patternProperties`` beside it read with
    ECMAScript semantics within the budget (jsonschema's own reads them with Python's ``re``:
    a page's pattern it cannot compile raised, and one that backtracks held the process,
    since nothing stops ``re``)."""
    if not validator.is_type(instance, "object"):
        return
    declared = schema.get("properties", {})
    declared = declared if isinstance(declared, dict) else {}
    patterns = schema.get("patternProperties", {})
    patterns = [p for p in patterns if isinstance(p, str)] if isinstance(patterns, dict) else []
    extras = []
    for key in instance:
        if key in declared:
            continue
        try:
            if any(search_in_budget(pattern, key) for pattern in patterns):
                continue
        except PatternTimeout:
            yield _timeout_error("")
            return
        extras.append(key)
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif additional is False and extras:
        listed = ", ".join(repr(each) for each in sorted(extras))
        if patterns:
            verb = "does" if len(extras) == 1 else "do"
            yield ValidationError(f"{listed} {verb} not match the schema's patternProperties")
        else:
            were = "was" if len(extras) == 1 else "were"
            yield ValidationError(
                f"Additional properties are not allowed ({listed} {were} unexpected)"
            )


def unevaluated_properties_keyword(
    validator: Any, unevaluated: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[ValidationError]:
    """JSON Schema's ``unevaluatedProperties``, every ``patternProperties`` it looks at (beside
    it, and through ``$ref``, ``allOf``, ``if``… ) read with ECMAScript semantics within the
    budget (jsonschema's own reads them with Python's ``re``, as its ``additionalProperties``
    did: a page's pattern it cannot compile raised, one that backtracks held the process)."""
    if not validator.is_type(instance, "object"):
        return
    try:
        evaluated = _evaluated_keys(validator, instance, schema)
    except PatternTimeout:
        yield _timeout_error("")
        return
    failing = [
        key
        for key in instance
        if key not in evaluated
        and next(validator.descend(instance[key], unevaluated, path=key, schema_path=key), None)
    ]
    if not failing:
        return
    listed = ", ".join(repr(key) for key in (sorted(failing) if unevaluated is False else failing))
    were = "was" if len(failing) == 1 else "were"
    if unevaluated is False:
        yield ValidationError(
            f"Unevaluated properties are not allowed ({listed} {were} unexpected)"
        )
    else:
        yield ValidationError(
            "Unevaluated properties are not valid under the given schema "
            f"({listed} {were} unevaluated and invalid)"
        )


def _evaluated_keys(validator: Any, instance: dict[str, Any], schema: Any) -> set[str]:
    """The members of ``instance`` that ``schema`` evaluates, for ``unevaluatedProperties``:
    jsonschema's reading (``find_evaluated_property_keys_by_schema``), each
    ``patternProperties`` key matched as ECMAScript within the budget (:func:`search_in_budget`:
    :class:`PatternTimeout` when one match overran)."""
    if not isinstance(schema, dict):
        return set()
    evaluated: set[str] = set()
    for keyword in ("$ref", "$dynamicRef"):
        ref = schema.get(keyword)
        if ref is not None:
            # The validator's own resolver (jsonschema's, private): the reference leads where
            # validation takes it, and never outside the schema (harness.schemas.validator_for).
            resolved = validator._resolver.lookup(ref)
            inner = validator.evolve(schema=resolved.contents, _resolver=resolved.resolver)
            evaluated |= _evaluated_keys(inner, instance, resolved.contents)
    properties = schema.get("properties")
    if isinstance(properties, dict):
        evaluated |= properties.keys() & instance.keys()
    for keyword in ("additionalProperties", "unevaluatedProperties"):
        subschema = schema.get(keyword)
        if subschema is not None:
            evaluated |= {
                key
                for key, value in instance.items()
                if next(validator.descend(value, subschema), None) is None
            }
    patterns = schema.get("patternProperties")
    if isinstance(patterns, dict):
        for key in instance:
            if key not in evaluated and any(
                isinstance(pattern, str) and search_in_budget(pattern, key) for pattern in patterns
            ):
                evaluated.add(key)
    dependent = schema.get("dependentSchemas")
    if isinstance(dependent, dict):
        for name, subschema in dependent.items():
            if name in instance:
                evaluated |= _evaluated_keys(validator, instance, subschema)
    for keyword in ("allOf", "oneOf", "anyOf"):
        for subschema in schema.get(keyword, []):
            if next(validator.descend(instance, subschema), None) is None:
                evaluated |= _evaluated_keys(validator, instance, subschema)
    if "if" in schema:
        if validator.evolve(schema=schema["if"]).is_valid(instance):
            evaluated |= _evaluated_keys(validator, instance, schema["if"])
            evaluated |= _evaluated_keys(validator, instance, schema.get("then"))
        else:
            evaluated |= _evaluated_keys(validator, instance, schema.get("else"))
    return evaluated


KEYWORDS = {
    "pattern": pattern_keyword,
    "patternProperties": pattern_properties_keyword,
    "additionalProperties": additional_properties_keyword,
    "unevaluatedProperties": unevaluated_properties_keyword,
}
"""The keyword implementations a validator of a script tool's schema is extended with."""

FORM_KEYWORDS = {**KEYWORDS, "pattern": _pattern_keyword(HTML)}
"""The same for a form's schema (:func:`dialect_of`): ``pattern`` as HTML reads it
(``patternProperties`` matches property names, never a control's value: JSON Schema's)."""


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
        elif key in _SCHEMAS_OR_LISTS:
            copy[key] = checkable_schema(value)
        elif key in schemas.SUBSCHEMA_MAPS and isinstance(value, dict):
            copy[key] = {k: checkable_schema(v) for k, v in value.items()}
        else:
            copy[key] = value
    return copy


def invalid_patterns(
    schema: Any, where: str = "", dialect: PatternDialect = JSON_SCHEMA
) -> Iterator[tuple[str, str]]:
    """(schema path, pattern) of every ``pattern`` that does not compile in ``dialect``, and
    every ``patternProperties`` key no ECMAScript engine accepts."""
    if isinstance(schema, list):
        for i, item in enumerate(schema):
            yield from invalid_patterns(item, f"{where}/{i}", dialect)
        return
    if not isinstance(schema, dict):
        return
    for key, value in schema.items():
        if key == "pattern" and isinstance(value, str) and compile_pattern(value, dialect) is None:
            yield f"{where}/pattern", value
        elif key in _SCHEMAS_OR_LISTS:
            yield from invalid_patterns(value, f"{where}/{key}", dialect)
        elif key in schemas.SUBSCHEMA_MAPS and isinstance(value, dict):
            for name, sub in value.items():
                if key == "patternProperties" and compile_pattern(name) is None:
                    yield f"{where}/{key}", name
                yield from invalid_patterns(sub, f"{where}/{key}/{name}", dialect)


def pattern_warnings(tools: list[Tool]) -> list[CatalogWarning]:
    """A catalog warning per pattern that is not an ECMAScript regex in its tool's dialect
    (:func:`dialect_of`; its keyword is skipped)."""
    warnings = []
    for tool in tools:
        dialect = dialect_of(tool)
        what = (
            "a regular expression under the v flag HTML compiles a form's pattern with "
            "(HTML ignores it)"
            if dialect == HTML
            else "an ECMAScript regular expression"
        )
        try:
            found = list(invalid_patterns(tool.input_schema, dialect=dialect))
        except RecursionError:
            continue  # too deep to read: its calls are refused as such (validation.py)
        for path, pattern in found:
            warnings.append(
                CatalogWarning(
                    code="invalid-pattern",
                    tool=tool.name,
                    message=(
                        f"Tool {tool.name!r}: the pattern {pattern[:80]!r} at {path or '/'} of its "
                        f"inputSchema is not {what}; the harness does not check that keyword "
                        "(the rest of the schema still applies)."
                    ),
                )
            )
    return warnings
