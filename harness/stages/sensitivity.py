"""Sensitivity in an ``outputSchema``: where a result's ``x-sensitive`` values are (seed 000).

The walking half of redaction (:mod:`harness.stages.redaction` does the withholding):
:func:`sensitive_paths` follows the schema through ``properties``,
``patternProperties``, ``additionalProperties``, array items (``items``,
``prefixItems``), ``$ref`` / ``$defs`` and ``allOf`` / ``anyOf`` / ``oneOf`` (every
branch counts: fail safe) alongside the value, and names each marked value's path and
label. A reference leads where validation takes it
(:func:`~harness.schemas.resolve_references`: ``$id`` scopes, anchors of their own
resource), so the walk reads the very subschema the ``fits`` check applied; one that
leads nowhere certain is reported as unresolved, and redaction withholds the whole
result. The schema is planned once (:class:`_Plan`), not per call: the walk descends
only into subschemas from which a mark can be reached, so a result's bulk is never
visited. :func:`sensitivity_warnings` flags tools whose declarations disagree.

Patterns are read as validation reads them (ECMAScript, in the matcher child that stops a
pattern that backtracks: Python's ``re`` cannot be stopped, and ``^(a+)+$`` on a key of 40
``a``s and a ``!`` held the whole harness for days), and the walk and ``fits`` keep the
schema budget (:func:`harness.schemas.within_budget`): a schema whose branches multiply
(``anyOf`` of two ``$ref``s, level after level) raises :class:`~harness.schemas.SchemaTimeout`.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, NamedTuple

from harness.models import CatalogWarning, Tool
from harness.schemas import (
    References,
    SchemaTimeout,
    compiled_validator_for,
    on_time,
    resolve_references,
    subschemas,
    within_budget,
)
from harness.schemas.patterns import PatternTimeout, search_in_budget
from harness.stages.validation import result_validator

JsonPath = tuple[str | int, ...]
"""A location in a JSON value: object keys and array indexes."""


def marks_sensitive(schema: Any) -> bool:
    """Whether any schema object in ``schema`` says ``"x-sensitive": true``."""
    stack, seen = [schema], set()
    while stack:
        node = stack.pop()
        if not isinstance(node, dict) or id(node) in seen:
            continue
        seen.add(id(node))
        if node.get("x-sensitive") is True:
            return True
        stack.extend(subschemas(node))
    return False


def _matches(pattern: str, key: str) -> bool:
    # A pattern that is no ECMAScript regex, or that runs past its time, might match:
    # fail safe. (The budget of the whole check running out raises SchemaTimeout.)
    try:
        return search_in_budget(pattern, key) is not False
    except PatternTimeout:
        return True


_BRANCHES = ("allOf", "anyOf", "oneOf")
_CONDITIONS = ("if", "then", "else")
_NO_REFS: frozenset[int] = frozenset()  # ids of the reference targets followed in place


class _Plan:
    """What one ``outputSchema`` says about where sensitive values can be, worked out once
    per schema (not per call): the schema the walk follows (its own copy), where each of
    its references leads, which of its subschemas can lead to a mark, and its compiled
    validator.

    A subschema is *live* when an ``x-sensitive`` mark, or a ``$ref`` the harness cannot
    follow, is reachable from it through any keyword or reference. The walk descends
    into live subschemas only: below the others it could find nothing, so a result's
    bulk (the members no mark can reach) is never visited.
    """

    def __init__(self, root: Any) -> None:
        self.root = root
        self.references = resolve_references(root)
        self.live = _live_subschemas(root, self.references)
        self._validator: Any = None
        self._compiled: Any = False  # not yet asked for
        self._shapes: dict[int, _ObjectShape] = {}  # by id of a schema object in root
        self._declared: frozenset[str] | None = None

    @property
    def declared(self) -> frozenset[str]:
        """Every property name the schema declares (in any ``properties``): public words,
        not data — the keys of a withheld object that are declared are not secret."""
        if self._declared is None:
            names: set[str] = set()
            stack, seen = [self.root], set()
            while stack:
                node = stack.pop()
                if not isinstance(node, dict) or id(node) in seen:
                    continue
                seen.add(id(node))
                properties = node.get("properties")
                if isinstance(properties, dict):
                    names.update(k for k in properties if isinstance(k, str))
                stack.extend(subschemas(node))
            self._declared = frozenset(names)
        return self._declared

    def object_shape(self, schema: dict[str, Any]) -> _ObjectShape:
        """What the walk reads from one schema object for the objects it describes."""
        shape = self._shapes.get(id(schema))
        if shape is None:
            shape = self._shapes[id(schema)] = _ObjectShape.of(schema, self.live)
        return shape

    def fits(self, instance: Any) -> bool:
        """Whether ``instance`` fits the schema: the compiled validator's *yes* when the
        schema allows it (see :func:`~harness.schemas.compiled_validator_for`), otherwise
        (and for its every *no*) jsonschema's answer. Both are made once per schema."""
        if self._compiled is False:
            self._compiled = compiled_validator_for(self.root)
        if self._compiled is not None:
            with contextlib.suppress(Exception):  # a value Rust cannot hold: ask jsonschema
                if self._compiled.is_valid(instance):
                    return True
        if self._validator is None:
            # As validation reads a result: ECMAScript patterns, stopped when they run long.
            self._validator = result_validator(self.root)
        return bool(self._validator.is_valid(instance))


class _ObjectShape(NamedTuple):
    """The object keywords of one schema object, read once per schema."""

    properties: dict[str, Any]
    patterns: dict[str, Any]
    dependent: dict[str, Any]
    names: Any
    rest: list[Any]  # the live ones of additionalProperties, unevaluatedProperties
    only_properties: bool  # nothing but `properties` can lead to a mark

    @classmethod
    def of(cls, schema: dict[str, Any], live: frozenset[int]) -> _ObjectShape:
        def members(keyword: str) -> dict[str, Any]:
            value = schema.get(keyword)
            return value if isinstance(value, dict) else {}

        properties, patterns = members("properties"), members("patternProperties")
        dependent, names = members("dependentSchemas"), schema.get("propertyNames")
        rest = [
            schema.get(keyword)
            for keyword in ("additionalProperties", "unevaluatedProperties")
            if id(schema.get(keyword)) in live
        ]
        only = not rest and id(names) not in live
        only = only and not any(id(s) in live for s in (*patterns.values(), *dependent.values()))
        return cls(properties, patterns, dependent, names, rest, only)


def _live_subschemas(root: Any, references: References) -> frozenset[int]:
    """The ids of the schema objects in ``root`` from which a mark or an unresolvable
    reference can be reached (references followed the way the walk follows them)."""
    parents: dict[int, list[int]] = {}
    seen: set[int] = set()
    marks: list[int] = []
    stack = [root]
    while stack:  # iterative: a page can nest a schema deeper than Python's stack
        node = stack.pop()
        if not isinstance(node, dict) or id(node) in seen:
            continue
        seen.add(id(node))
        children = list(subschemas(node))
        if node.get("x-sensitive") is True:
            marks.append(id(node))
        followed = references.of(node)
        if followed.unresolved:
            marks.append(id(node))  # the walk must reach it to report the $ref
        children += followed.targets
        for child in children:
            if isinstance(child, dict):
                parents.setdefault(id(child), []).append(id(node))
                stack.append(child)
    live: set[int] = set()
    while marks:
        node_id = marks.pop()
        if node_id not in live:
            live.add(node_id)
            marks.extend(parents.get(node_id, ()))
    return frozenset(live)


@lru_cache(maxsize=256)
def _cached_plan(schema_json: str) -> _Plan:
    return _Plan(json.loads(schema_json))


def _plan(schema: Any) -> _Plan:
    """The plan of ``schema``, by its JSON text (member order kept: it orders the labels)."""
    try:
        text = json.dumps(schema)
    except (TypeError, ValueError, RecursionError):  # not JSON: planned afresh, not cached
        return _Plan(schema)
    return _cached_plan(text)


@dataclass
class _Walk:
    plan: _Plan
    found: dict[JsonPath, str] = field(default_factory=dict)
    # Members whose *key* is sensitive (``propertyNames`` marked x-sensitive): the path
    # ends with the key.
    keys: dict[JsonPath, str] = field(default_factory=dict)
    unresolved: set[str] = field(default_factory=set)

    def visit(self, schema: Any, instance: Any, path: JsonPath, refs: frozenset[int]) -> None:
        if id(schema) not in self.plan.live:  # nothing below it: no mark, no lost $ref
            return
        on_time()  # branches in branches multiply: the walk keeps the check's budget
        if schema.get("x-sensitive") is True:
            self.found.setdefault(path, _label(schema, path))
            return
        targets, unresolved = self.plan.references.of(schema)
        if unresolved:
            self.unresolved.update(unresolved)
        for target in targets:
            # A reference's target, not its text, says whether it loops: "#/$defs/s" is
            # another subschema under another $id.
            if id(target) not in refs:
                self.visit(target, instance, path, refs | {id(target)})
        for keyword in _BRANCHES:
            branches = schema.get(keyword)
            for branch in branches if isinstance(branches, list) else []:
                self.visit(branch, instance, path, refs)
        for keyword in _CONDITIONS:
            condition = schema.get(keyword)
            if condition is not None:
                self.visit(condition, instance, path, refs)
        if isinstance(instance, dict):
            self._object(schema, instance, path, refs)
        elif isinstance(instance, list):
            self._array(schema, instance, path)

    def _object(
        self, schema: dict[str, Any], instance: dict[str, Any], path: JsonPath, refs: frozenset[int]
    ) -> None:
        live = self.plan.live
        shape = self.plan.object_shape(schema)
        properties, patterns, dependent, names, rest, _ = shape
        if shape.only_properties:
            # Only `properties` can lead to a mark: its live members, in the value's order.
            for key, value in instance.items():
                subschema = properties.get(key)
                if id(subschema) in live:
                    self.visit(subschema, value, (*path, key), _NO_REFS)
            return
        for key, value in instance.items():
            label = self._key_label(names, key, refs) if id(names) in live else None
            if label is not None:
                self.keys.setdefault((*path, key), label)
            covered = key in properties
            if covered:
                self.visit(properties[key], value, (*path, key), _NO_REFS)
            for pattern, subschema in patterns.items():
                if _matches(pattern, key):
                    covered = True
                    self.visit(subschema, value, (*path, key), _NO_REFS)
            if not covered:
                for subschema in rest:
                    self.visit(subschema, value, (*path, key), _NO_REFS)
            if key in dependent:
                self.visit(dependent[key], instance, path, refs)

    def _key_label(self, names: dict[str, Any], key: str, refs: frozenset[int]) -> str | None:
        """The label of ``key`` when ``propertyNames`` (through $ref, allOf, …) marks it
        x-sensitive; None when it does not."""
        probe = _Walk(self.plan)
        probe.visit(names, key, (), refs)
        self.unresolved |= probe.unresolved
        label = probe.found.get(())
        return None if label is None else ("key" if label == "value" else label)

    def _array(self, schema: dict[str, Any], instance: list[Any], path: JsonPath) -> None:
        live = self.plan.live
        items = schema.get("items")
        prefix = schema.get("prefixItems")
        if not isinstance(prefix, list):
            # Before 2020-12, a list of `items` was the tuple form; `additionalItems` the rest.
            prefix = items if isinstance(items, list) else []
            rest = schema.get("additionalItems") if isinstance(items, list) else items
        else:
            rest = items
        # Which items `contains` meant cannot be told apart: all of them, fail safe.
        every = [s for s in (schema.get("contains"),) if id(s) in live]
        after = [s for s in (rest, schema.get("unevaluatedItems")) if id(s) in live]
        live_prefix = [id(s) in live for s in prefix]
        if not (every or after or any(live_prefix)):
            return
        for index, item in enumerate(instance):
            where = (*path, index)
            if index < len(prefix):
                if live_prefix[index]:
                    self.visit(prefix[index], item, where, _NO_REFS)
            else:
                for subschema in after:
                    self.visit(subschema, item, where, _NO_REFS)
            for subschema in every:
                self.visit(subschema, item, where, _NO_REFS)


def _label(schema: dict[str, Any], path: JsonPath) -> str:
    title = schema.get("title")
    if isinstance(title, str) and title.strip():
        return title.strip()
    return str(path[-1]) if path else "value"


def sensitive_paths(
    schema: dict[str, Any], instance: Any
) -> tuple[list[tuple[JsonPath, str]], set[str]]:
    """Where in ``instance`` the schema marks values ``x-sensitive``, with a label for each.

    Returns the outermost paths only (a marked object covers its members), and the
    ``$ref`` values that could not be resolved (their targets could not be checked).
    """
    paths, _, unresolved = sensitive_and_keys(schema, instance)
    return paths, unresolved


def sensitive_and_keys(
    schema: dict[str, Any], instance: Any
) -> tuple[list[tuple[JsonPath, str]], list[tuple[JsonPath, str]], set[str]]:
    """The outermost sensitive values, the sensitive keys outside them (deepest first),
    and the ``$ref``s that could not be followed."""
    plan = _plan(schema)
    walk = _Walk(plan)
    walk.visit(plan.root, instance, (), _NO_REFS)
    outermost: list[tuple[JsonPath, str]] = []
    kept: set[JsonPath] = set()

    def covered(path: JsonPath) -> bool:  # the path, or one of its ancestors, is withheld
        return any(path[:length] in kept for length in range(len(path) + 1))

    # Each path looks up its own prefixes (linear in its depth), never every kept path:
    # a result with 10 000 sensitive fields stays linear, not quadratic.
    for path in sorted(walk.found, key=len):
        if not covered(path):
            outermost.append((path, walk.found[path]))
            kept.add(path)
    # A key inside a withheld value goes with it; the others, deepest first, so renaming
    # one never changes the path to another.
    keys = [
        (path, label)
        for path, label in sorted(walk.keys.items(), key=lambda item: -len(item[0]))
        if not covered(path)
    ]
    return outermost, keys, walk.unresolved


Found = tuple[list[tuple[JsonPath, str]], list[tuple[JsonPath, str]], set[str]]
"""What :func:`sensitive_and_keys` finds in a value."""


class Reading:
    """What one tool's ``outputSchema`` says of the JSON values of one result: where their
    ``x-sensitive`` values and keys are (:func:`sensitive_and_keys`), whether they fit
    (:func:`fits`), each by the JSON pointer of the value in the result.

    The walk is what takes a schema's budget (branches that multiply): worked out ahead in
    a worker thread, it leaves redaction only the vault's and the scrubber's writes for the
    event loop. A value not read ahead is read when first asked."""

    def __init__(self, schema: Any) -> None:
        self.schema: dict[str, Any] = schema if isinstance(schema, dict) else {}
        self.marked = isinstance(schema, dict) and marks_sensitive(schema)
        """Whether the schema marks anything ``x-sensitive`` (else nothing is found)."""
        self._found: dict[str, Found] = {}
        self._fits: dict[str, bool] = {}

    def sensitive_and_keys(self, where: str, value: Any) -> Found:
        """:func:`sensitive_and_keys` of the value at ``where`` (``value``)."""
        if not self.marked:  # nothing to find (what could not be followed matters not)
            return [], [], set()
        found = self._found.get(where)
        if found is None:
            found = self._found[where] = sensitive_and_keys(self.schema, value)
        return found

    def fits(self, where: str, value: Any) -> bool:
        """:func:`fits` of the value at ``where`` (``value``)."""
        fitting = self._fits.get(where)
        if fitting is None:
            fitting = self._fits[where] = fits(self.schema, value)
        return fitting


def fits(schema: dict[str, Any], instance: Any) -> bool:
    """Whether ``instance`` fits ``schema``; a schema that cannot be used fits nothing.

    The schema is not checked against the metaschema first (that costs a tenth of a
    second per schema); a malformed one fails here instead, on the safe side. The
    validator is compiled once per schema (it is kept with the schema's plan). Raises
    :class:`~harness.schemas.SchemaTimeout` when the check cannot finish in its budget.
    """
    try:
        with within_budget():
            return _plan(schema).fits(instance)
    except SchemaTimeout:
        raise
    except Exception:  # a malformed schema can fail in any way: the safe side is "no fit"
        return False


def sensitivity_warnings(tools: list[Tool]) -> list[CatalogWarning]:
    """Catalog warnings for tools whose sensitivity declarations do not agree."""
    warnings: list[CatalogWarning] = []
    for tool in tools:
        hinted = tool.annotations.get("sensitiveHint") is True
        marked = marks_sensitive(tool.output_schema)
        if marked and not hinted:
            warnings.append(
                CatalogWarning(
                    code="undeclared-sensitive",
                    tool=tool.name,
                    message=(
                        f"Tool {tool.name!r} marks outputSchema fields x-sensitive but does not "
                        "declare annotations.sensitiveHint; the harness redacts them anyway. "
                        "The site should add sensitiveHint: true."
                    ),
                )
            )
        elif hinted and tool.output_schema is not None and not marked:
            warnings.append(
                CatalogWarning(
                    code="sensitive-without-fields",
                    tool=tool.name,
                    message=(
                        f"Tool {tool.name!r} declares sensitiveHint and an outputSchema that "
                        "marks no field x-sensitive, so the harness withholds its whole result. "
                        'Mark the sensitive fields with "x-sensitive": true.'
                    ),
                )
            )
    return warnings


def declared_names(schema: Any) -> frozenset[str]:
    """The property names ``schema`` declares anywhere (see :attr:`_Plan.declared`)."""
    return _plan(schema).declared
