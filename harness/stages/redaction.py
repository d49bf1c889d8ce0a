"""Redaction: the after-call stage that keeps secrets out of the agent view (seed 000).

It runs last among the after-call stages, so what it returns is what any agent, MCP
client, trace, log or report sees. What it takes out goes to the session's
:class:`~harness.stages.vault.Vault`, under an opaque handle that stands in its place.

- ``outputSchema`` fields marked ``"x-sensitive": true`` are withheld from
  ``structuredContent``. The schema is followed through ``properties``,
  ``patternProperties``, ``additionalProperties``, array items (``items``,
  ``prefixItems``), ``$ref`` / ``$defs`` and ``allOf`` / ``anyOf`` / ``oneOf`` (every
  branch counts: fail safe). The text block that mirrors ``structuredContent`` is
  rewritten from the redacted value; any other text that contains a withheld value
  verbatim has it replaced by its handle, and so has the page's ``_meta``. When the
  fields cannot be found (no ``structuredContent``, a value that does not fit the
  ``outputSchema``, a ``$ref`` to another document) the whole result is withheld.
  An error result without ``structuredContent`` keeps its message.
- ``sensitiveHint: true`` without marked fields: the whole result is withheld, and
  the agent gets a placeholder; nothing the page wrote reaches it.
- ``x-sensitive`` without ``sensitiveHint``: redacted all the same; the catalog warns.
- ``secret_reference`` content items keep their ``label`` and get a handle; ``id`` and
  ``redeemUrl`` never reach the agent. Content annotated ``audience: ["user"]`` is
  withheld.

The agent view lists what was withheld under ``_meta["webmcp-harness/redacted"]``: one
``{path, label, handle, kind}`` per item, ``path`` being a JSON pointer into the tool's
own result. Values shorter than :data:`MIN_SCRUB_LENGTH` characters are withheld where
the schema puts them, but not searched for in free text. A call stopped before its tool
ran (bad arguments, a policy) has no tool output and passes unchanged.
"""

from __future__ import annotations

import contextlib
import copy
import json
import logging
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, NamedTuple

from mcp_types import CallToolResult, ContentBlock, TextContent
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from harness.browser.urls import origin_of, resolve, scheme_of
from harness.models import META_PREFIX, CallRequest, CatalogWarning, Tool
from harness.schemas import compiled_validator_for, local_target, subschemas, validator_for
from harness.stages.framing import PAGE_RESULT_KINDS, user_agent_text
from harness.stages.vault import SecretReference, SiteDefect, Vault, WithheldKind

log = logging.getLogger("harness.stages.redaction")

REDACTED_META_KEY = META_PREFIX + "redacted"
"""The agent view's ``_meta`` key listing what was withheld: ``[{path, label, handle, kind}]``."""
REFERENCE_META_KEY = META_PREFIX + "secret_reference"
"""The ``_meta`` key on the text block that stands in for a ``secret_reference``."""

ERROR_REASON = "it is an error result of a tool whose output is sensitive"
"""Why an error of a ``sensitiveHint`` / ``x-sensitive`` tool is withheld whole."""

MIN_SCRUB_LENGTH = 4
"""Withheld values at least this long are also searched for, and replaced, in free text."""
DEFAULT_TTL_CAP_S = 3600.0
"""A ``secret_reference`` ttl above this is a site defect; the harness expires it here."""

JsonPath = tuple[str | int, ...]
"""A location in a JSON value: object keys and array indexes."""

_CONTENT = TypeAdapter(ContentBlock)
_MIRROR_SEPARATORS = (",", ":")


class WithheldItem(BaseModel):
    """One entry of ``_meta["webmcp-harness/redacted"]``: where, what, and its handle."""

    model_config = ConfigDict(frozen=True)

    path: str
    label: str
    handle: str
    kind: WithheldKind


@dataclass
class Redaction:
    """What :func:`redact` made of one result."""

    result: CallToolResult
    """The agent view."""
    withheld: list[WithheldItem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """For :attr:`CallOutcome.notes`: what was done, never a value."""


# -- the schema ----------------------------------------------------------------------------


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


@lru_cache(maxsize=256)
def _pattern(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(pattern)
    except re.error:
        return None


def _matches(pattern: str, key: str) -> bool:
    compiled = _pattern(pattern)
    # A pattern Python cannot read might match: fail safe.
    return compiled is None or compiled.search(key) is not None


_REFERENCES = ("$ref", "$dynamicRef")
_BRANCHES = ("allOf", "anyOf", "oneOf")
_CONDITIONS = ("if", "then", "else")
_NO_REFS: frozenset[str] = frozenset()


class _Plan:
    """What one ``outputSchema`` says about where sensitive values can be, worked out once
    per schema (not per call): the schema the walk follows (its own copy), which of its
    subschemas can lead to a mark, and its compiled validator.

    A subschema is *live* when an ``x-sensitive`` mark, or a ``$ref`` the harness cannot
    follow, is reachable from it through any keyword or reference. The walk descends
    into live subschemas only: below the others it could find nothing, so a result's
    bulk (the members no mark can reach) is never visited.
    """

    def __init__(self, root: Any) -> None:
        self.root = root
        self.live = _live_subschemas(root)
        self._validator: Any = None
        self._compiled: Any = False  # not yet asked for
        self._shapes: dict[int, _ObjectShape] = {}  # by id of a schema object in root

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
            self._validator = validator_for(self.root)
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


def _live_subschemas(root: Any) -> frozenset[int]:
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
        for keyword in _REFERENCES:
            ref = node.get(keyword)
            if isinstance(ref, str):
                target = local_target(root, ref)
                if target is None:
                    marks.append(id(node))  # the walk must reach it to report the $ref
                else:
                    children.append(target)
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

    def visit(self, schema: Any, instance: Any, path: JsonPath, refs: frozenset[str]) -> None:
        if id(schema) not in self.plan.live:  # nothing below it: no mark, no lost $ref
            return
        if schema.get("x-sensitive") is True:
            self.found.setdefault(path, _label(schema, path))
            return
        for keyword in _REFERENCES:
            ref = schema.get(keyword)
            if isinstance(ref, str) and ref not in refs:
                target = local_target(self.plan.root, ref)
                if target is None:
                    self.unresolved.add(ref)
                else:
                    self.visit(target, instance, path, refs | {ref})
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
        self, schema: dict[str, Any], instance: dict[str, Any], path: JsonPath, refs: frozenset[str]
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

    def _key_label(self, names: dict[str, Any], key: str, refs: frozenset[str]) -> str | None:
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
    paths, _, unresolved = _sensitive(schema, instance)
    return paths, unresolved


def _sensitive(
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


def _fits(schema: dict[str, Any], instance: Any) -> bool:
    """Whether ``instance`` fits ``schema``; a schema that cannot be used fits nothing.

    The schema is not checked against the metaschema first (that costs a tenth of a
    second per schema); a malformed one fails here instead, on the safe side. The
    validator is compiled once per schema (it is kept with the schema's plan).
    """
    try:
        return _plan(schema).fits(instance)
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


# -- JSON helpers --------------------------------------------------------------------------


def pointer(path: JsonPath) -> str:
    """The JSON pointer (RFC 6901) of a path."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _get(value: Any, path: JsonPath) -> Any:
    for token in path:
        value = value[token]
    return value


class _Edited:
    """A JSON value being edited without changing the original: each container on an
    edited path is copied (shallowly) once, and everything else is shared."""

    def __init__(self, value: Any) -> None:
        self.value = value
        self._own: set[int] = set()  # ids of the copies made here (they stay alive in value)

    def _copy(self, node: Any) -> Any:
        if id(node) in self._own:
            return node
        node = dict(node) if isinstance(node, dict) else list(node)
        self._own.add(id(node))
        return node

    def own(self, path: JsonPath) -> Any:
        """The container at ``path``, a copy of this edit's own (so are its ancestors)."""
        node = self.value = self._copy(self.value)
        for token in path:
            child = self._copy(node[token])
            node[token] = child
            node = child
        return node


def _leaves(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for member in value.values():
            yield from _leaves(member)
    elif isinstance(value, list):
        for member in value:
            yield from _leaves(member)
    else:
        yield value


def _needles(value: Any) -> set[str]:
    """The texts a withheld value may show up as in free text."""
    found: set[str] = set()
    for leaf in _leaves(value):
        if isinstance(leaf, bool) or leaf is None:
            continue
        text = leaf if isinstance(leaf, str) else json.dumps(leaf)
        if _plain_json(text):  # JSON writes it as it is: its escaped forms are itself
            if len(text) >= MIN_SCRUB_LENGTH:
                found.add(text)
            continue
        for form in (text, json.dumps(text)[1:-1], json.dumps(text, ensure_ascii=False)[1:-1]):
            if len(form) >= MIN_SCRUB_LENGTH:
                found.add(form)
    return found


def _plain_json(text: str) -> bool:
    """Whether JSON writes ``text`` unescaped (printable ASCII without ``"`` or ``\\``)."""
    return text.isascii() and text.isprintable() and '"' not in text and "\\" not in text


def _mirror(value: Any) -> str:
    return json.dumps(value, separators=_MIRROR_SEPARATORS, ensure_ascii=False)


def _is_reference(value: Any) -> bool:
    return isinstance(value, dict) and value.get("type") == "secret_reference"


def _contains_reference(value: Any) -> bool:
    stack = [value]
    while stack:  # iterative: this looks at every value of a result, however large
        node = stack.pop()
        if isinstance(node, dict):
            if node.get("type") == "secret_reference":
                return True
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


def _for_user_only(block: Any) -> bool:
    """Whether a content block is annotated for the user alone (MCP ``audience``)."""
    if not isinstance(block, dict):
        return False
    annotations = block.get("annotations")
    audience = annotations.get("audience") if isinstance(annotations, dict) else None
    return isinstance(audience, list) and "user" in audience and "assistant" not in audience


# -- one redaction ---------------------------------------------------------------------------


@dataclass
class _Parts:
    """A result as plain MCP JSON, the way the page meant it."""

    content: list[Any]
    structured: Any
    is_error: bool
    meta: dict[str, Any]


def _parts(result: CallToolResult) -> _Parts:
    structured = result.structured_content
    if (
        isinstance(structured, dict)
        and isinstance(structured.get("content"), list)
        and any(_is_reference(item) for item in structured["content"])
    ):
        # Normalization could not read this MCP result (`secret_reference` is no MCP
        # content type), so it arrived as plain data: read it as the result it is.
        inner = structured.get("structuredContent")
        meta = structured.get("_meta")
        return _Parts(
            content=copy.deepcopy(structured["content"]),
            structured=copy.deepcopy(inner) if isinstance(inner, dict) else None,
            is_error=structured.get("isError") is True or bool(result.is_error),
            meta={**copy.deepcopy(meta if isinstance(meta, dict) else {}), **(result.meta or {})},
        )
    return _Parts(
        content=[
            b.model_dump(by_alias=True, exclude_none=True, mode="json") for b in result.content
        ],
        # Not copied: every step after this makes new containers where it changes one.
        structured=structured,
        is_error=bool(result.is_error),
        meta=copy.deepcopy(dict(result.meta or {})),
    )


class _Run:
    """The redaction of one result: what is withheld, and the texts to search for."""

    def __init__(self, tool: Tool, vault: Vault, call_id: str, ttl_cap: float) -> None:
        self.tool = tool
        self.vault = vault
        self.call_id = call_id
        self.ttl_cap = ttl_cap
        self.withheld: list[WithheldItem] = []
        self.notes: list[str] = []
        self.needles: dict[str, str] = {}  # a withheld text → the handle that replaces it
        self._compiled: tuple[int, re.Pattern[str]] | None = None  # see _pattern()
        self.handles: set[str] = set()

    def keep(
        self,
        kind: WithheldKind,
        path: str,
        label: str,
        value: Any,
        *,
        reference: SecretReference | None = None,
        defects: tuple[SiteDefect, ...] = (),
    ) -> str:
        """Put one thing in the vault and list it; its handle."""
        entry = self.vault.put(
            kind,
            label=label,
            tool=self.tool.name,
            call_id=self.call_id,
            path=path,
            value=value,
            reference=reference,
            defects=defects,
        )
        self.withheld.append(WithheldItem(path=path, label=label, handle=entry.handle, kind=kind))
        self.handles.add(entry.handle)
        for defect in entry.defects:
            self.notes.append(f"site defect: {defect.message}")
            log.info("site defect (%s): %s", defect.code, defect.message)
        return entry.handle

    def search_for(self, value: Any, handle: str) -> None:
        """Replace ``value``'s texts with ``handle`` wherever they appear in free text."""
        if isinstance(value, str) and _plain_json(value):  # the usual case, made short
            if len(value) >= MIN_SCRUB_LENGTH:
                self.needles.setdefault(value, handle)
            return
        for needle in _needles(value):
            self.needles.setdefault(needle, handle)

    def withhold(self, path: str, label: str, value: Any) -> str:
        """Withhold an ``x-sensitive`` value; its handle."""
        handle = self.keep("field", path, label, value)
        self.search_for(value, handle)
        return handle

    # -- references --------------------------------------------------------------------

    def reference(self, item: dict[str, Any], path: str) -> dict[str, Any]:
        """Withhold a ``secret_reference``; the text block the agent gets instead."""
        label = item.get("label") if isinstance(item.get("label"), str) else None
        label = label or "secret"
        raw_url, raw_id = item.get("redeemUrl"), item.get("id")
        defects: list[SiteDefect] = []
        reference = None
        if isinstance(raw_url, str) and raw_url:
            # Resolved as the browser resolves it: the origin checked is the one requested.
            url = resolve(self.tool.frame_url or self.tool.origin + "/", raw_url) or raw_url
            if origin_of(url) != self.tool.origin:
                defects.append(
                    self._defect(
                        "redeem-url-cross-origin",
                        f"{self.tool.name}: the secret_reference {label!r} has a redeemUrl on "
                        f"{_where(url)}, not on {self.tool.origin} (the page that registered "
                        "the tool); the harness will not redeem it.",
                    )
                )
            ttl, expires_at = self._ttl(item.get("ttl"), label, defects)
            reference = SecretReference(
                label=label,
                origin=self.tool.origin,
                redeem_url=url,
                reference_id="" if raw_id is None else str(raw_id),
                ttl=ttl,
                expires_at=expires_at,
            )
        else:
            defects.append(
                self._defect(
                    "reference-without-url",
                    f"{self.tool.name}: the secret_reference {label!r} has no redeemUrl, so "
                    "it cannot be redeemed.",
                )
            )
        handle = self.keep(
            "secret_reference", path, label, item, reference=reference, defects=tuple(defects)
        )
        for text in (raw_url, raw_id, reference.redeem_url if reference else None):
            if isinstance(text, str | int) and not isinstance(text, bool):
                self.search_for(str(text), handle)
        info: dict[str, Any] = {"label": label, "handle": handle}
        ttl = item.get("ttl")
        if isinstance(ttl, int | float) and not isinstance(ttl, bool):
            info["ttl"] = ttl
        return {
            "type": "text",
            "text": f"[secret reference {label!r}, withheld as {handle}: only the user can "
            "reveal it]",
            "_meta": {REFERENCE_META_KEY: info},
        }

    def _ttl(
        self, raw: Any, label: str, defects: list[SiteDefect]
    ) -> tuple[float | None, float | None]:
        if raw is None:
            return None, None
        if isinstance(raw, bool) or not isinstance(raw, int | float) or raw < 0:
            defects.append(
                self._defect(
                    "ttl-invalid",
                    f"{self.tool.name}: the secret_reference {label!r} has a ttl that is not "
                    "a number of seconds ≥ 0; it is ignored.",
                )
            )
            return None, None
        ttl = float(raw)
        if ttl > self.ttl_cap:
            defects.append(
                self._defect(
                    "ttl-above-cap",
                    f"{self.tool.name}: the secret_reference {label!r} lives {ttl:g} s, above "
                    f"the cap of {self.ttl_cap:g} s; the harness expires it after "
                    f"{self.ttl_cap:g} s.",
                )
            )
        return ttl, self.vault.clock() + min(ttl, self.ttl_cap)

    def _defect(self, code: str, message: str) -> SiteDefect:
        return SiteDefect(code=code, message=message, tool=self.tool.name)

    def nested_references(self, value: Any, path: JsonPath) -> Any:
        """``value`` (``structuredContent``) with every ``secret_reference`` in it withheld."""
        if _is_reference(value):
            stand_in = self.reference(value, "/structuredContent" + pointer(path))
            info = stand_in["_meta"][REFERENCE_META_KEY]
            return {"type": "secret_reference", "label": info["label"], "handle": info["handle"]}
        if isinstance(value, dict):
            return {k: self.nested_references(v, (*path, k)) for k, v in value.items()}
        if isinstance(value, list):
            return [self.nested_references(v, (*path, i)) for i, v in enumerate(value)]
        return value

    # -- searching free text -----------------------------------------------------------

    def scrub(self, value: Any) -> Any:
        """``value`` with withheld texts replaced by their handles in every string but
        ``type`` members and the handles themselves."""
        if not self.needles:
            return value
        needles, handles = self.needles, self.handles
        pattern = self._pattern()

        def replace(match: re.Match[str]) -> str:
            return needles[match.group(0)]

        def text(value: str) -> str:
            # One pass, longest first: a handle just written is never searched again.
            return value if value in handles else pattern.sub(replace, value)

        keys: dict[str, str] = {}  # object keys repeat (one per item of a list): once each

        def walk(value: Any) -> Any:
            if isinstance(value, str):
                return text(value)
            if isinstance(value, dict):
                # Keys are text too: a secret used as a key elsewhere is replaced there as well.
                scrubbed: dict[str, Any] = {}
                for key, member in value.items():
                    new_key = key
                    if isinstance(key, str):
                        new_key = keys.get(key) or keys.setdefault(key, text(key))
                    while new_key in scrubbed:  # two keys that only differed by a secret
                        new_key += "#"
                    scrubbed[new_key] = member if key == "type" else walk(member)
                return scrubbed
            if isinstance(value, list):
                return [walk(v) for v in value]
            return value

        return walk(value)

    def _pattern(self) -> re.Pattern[str]:
        """Every withheld text, longest first, as one pattern; made again only when a
        text was added (needles only grow), not for every string scrubbed."""
        if self._compiled is None or self._compiled[0] != len(self.needles):
            needles = tuple(sorted(self.needles, key=len, reverse=True))
            self._compiled = (len(self.needles), _needle_pattern(needles))
        return self._compiled[1]

    def withhold_in(
        self,
        value: Any,
        where: str,
        *,
        inside: bool = True,
        found: tuple[list[tuple[JsonPath, str]], list[tuple[JsonPath, str]], set[str]]
        | None = None,
    ) -> tuple[Any, bool]:
        """``value`` (JSON the outputSchema describes) with its x-sensitive values and keys
        replaced by handles; True when the value as a whole is sensitive (then untouched).
        ``where`` is the JSON pointer of ``value`` in the result; with ``inside`` False
        (JSON inside a text), every item is listed at ``where`` itself. ``found``: what
        :func:`_sensitive` found in ``value`` already (it is not walked twice)."""
        schema = self.tool.output_schema or {}
        paths, keys, _ = found if found is not None else _sensitive(schema, value)
        if any(path == () for path, _ in paths):
            return value, True
        # Copy-on-write: only the containers on a path to a withheld value are copied;
        # ``value`` (the user's view) is never changed, and the rest is not copied.
        redacted = _Edited(value)

        def at(path: JsonPath) -> str:
            return where + pointer(path) if inside else where

        for path, label in paths:
            redacted.own(path[:-1])[path[-1]] = self.withhold(at(path), label, _get(value, path))
        for path, label in keys:  # deepest first: the paths above stay valid
            parent = redacted.own(path[:-1])
            handle = self.withhold(at(path[:-1]), label, path[-1])
            members = list(parent.items())
            parent.clear()
            parent.update((handle if k == path[-1] else k, v) for k, v in members)
        return redacted.value, False


@lru_cache(maxsize=64)
def _needle_pattern(needles: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(re.escape(n) for n in needles))


def _where(url: str) -> str:
    scheme = scheme_of(url)
    return origin_of(url) if scheme in ("http", "https") else f"a {scheme or 'relative'} URL"


def redact(
    tool: Tool,
    result: CallToolResult,
    vault: Vault,
    *,
    call_id: str = "",
    ttl_cap: float = DEFAULT_TTL_CAP_S,
) -> Redaction:
    """The agent view of ``result`` (a result of ``tool``); what it withholds goes to ``vault``."""
    hinted = tool.annotations.get("sensitiveHint") is True
    schema = tool.output_schema
    marked = schema is not None and marks_sensitive(schema)
    parts = _parts(result)
    nested = _contains_reference(parts.structured)
    references = nested or any(_is_reference(b) for b in parts.content)
    for_user = any(_for_user_only(b) for b in parts.content)
    if not (hinted or marked or references or for_user or REDACTED_META_KEY in parts.meta):
        return Redaction(result=result)

    run = _Run(tool, vault, call_id, ttl_cap)
    parts.meta.pop(REDACTED_META_KEY, None)  # only the harness writes it
    structured = parts.structured
    reason: str | None = None
    if (hinted or marked) and parts.is_error:
        # Seed 000's MUST NOT has no exception for errors: a thrown or returned error of a
        # sensitive tool may quote the very secret ("key sk-… is invalid"), and its text
        # has no fields the schema could point at.
        reason = ERROR_REASON
    elif marked and schema is not None:
        reason, structured = _fields(run, schema, parts)
    elif hinted:
        reason = (
            "it declares sensitiveHint and its outputSchema marks no field x-sensitive"
            if schema is not None
            else "it declares sensitiveHint without an outputSchema"
        )
    if reason is not None:
        return _placeholder(run, result, parts, reason)

    if structured is not None and nested:
        structured = run.nested_references(structured, ())
    blocks = _content(run, parts)
    if for_user and structured is not None and not any(mirror for _, mirror in blocks):
        # A block for the user alone: structuredContent must not carry it to the agent by
        # the back door. It stays only when a block the agent may read mirrors it.
        run.keep(
            "user-content",
            "/structuredContent",
            "structured content beside content for the user only",
            structured,
        )
        structured = None
    agent_structured = run.scrub(structured)
    content = [
        _block(
            {**run.scrub(block), "text": _mirror(agent_structured)} if mirror else run.scrub(block)
        )
        for block, mirror in blocks
    ]
    meta = run.scrub(parts.meta)
    if run.withheld:
        meta[REDACTED_META_KEY] = _listing(run)
        run.notes.insert(0, _note(run))
    agent = CallToolResult(
        content=content,
        structured_content=agent_structured,
        is_error=parts.is_error,
        meta=meta or None,
    )
    return Redaction(result=agent, withheld=run.withheld, notes=run.notes)


def _fields(run: _Run, schema: dict[str, Any], parts: _Parts) -> tuple[str | None, Any]:
    """Withhold the marked fields of ``structuredContent``: (None, the redacted value), or
    (why the whole result must be withheld, None)."""
    structured = parts.structured
    if structured is None:
        # A success without structuredContent hides the fields somewhere the schema does
        # not say (errors never get here: they are withheld whole).
        if not parts.content:
            return None, None
        return "it has no structuredContent, so its x-sensitive fields cannot be found", None
    found = _sensitive(schema, structured)
    unresolved = found[2]
    if unresolved:
        refs = ", ".join(sorted(unresolved))
        return f"its outputSchema has $refs the harness cannot follow ({refs})", None
    if not _fits(schema, structured):
        return "its structuredContent does not fit the tool's outputSchema", None
    redacted, whole = run.withhold_in(structured, "/structuredContent", found=found)
    if whole:
        return "its whole outputSchema is x-sensitive", None
    return None, redacted


def _content(run: _Run, parts: _Parts) -> list[tuple[dict[str, Any], bool]]:
    """The agent's content blocks, each with whether it is the ``structuredContent`` mirror
    (rewritten from the redacted value). Scrubbing comes later, once every withheld
    value is known."""
    stand_ins: dict[int, dict[str, Any] | None] = {}
    for index, block in enumerate(parts.content):
        if _is_reference(block):
            stand_ins[index] = run.reference(block, f"/content/{index}")
        elif _for_user_only(block):
            handle = run.keep(
                "user-content", f"/content/{index}", "content for the user only", block
            )
            # The same words elsewhere in the result are the user's too.
            resource = block.get("resource")
            for text in (
                block.get("text"),
                resource.get("text") if isinstance(resource, dict) else None,
            ):
                if isinstance(text, str):
                    run.search_for(text, handle)
            stand_ins[index] = None
    blocks: list[tuple[dict[str, Any], bool]] = []
    for index, block in enumerate(parts.content):
        if index in stand_ins:
            stand_in = stand_ins[index]
            if stand_in is not None:
                blocks.append((stand_in, False))
        elif not isinstance(block, dict):
            blocks.append(({"type": "text", "text": _mirror(block)}, False))
        elif block.get("type") == "text" and isinstance(block.get("text"), str):
            text = _text(run, block["text"], parts.structured, f"/content/{index}/text")
            blocks.append(({**block, "text": text or ""}, text is None))
        else:
            blocks.append((block, False))
    return blocks


def _text(run: _Run, text: str, structured: Any, where: str) -> str | None:
    """A text block's text for the agent (before scrubbing); None when it mirrors
    ``structuredContent``. JSON text that the outputSchema describes is redacted like
    ``structuredContent``."""
    try:
        parsed = json.loads(text)
    except ValueError:
        return text
    if structured is not None and parsed == structured:
        return None
    schema = run.tool.output_schema
    if schema is None or not isinstance(parsed, dict | list):
        return text
    paths, keys, _ = _sensitive(schema, parsed)
    if not paths and not keys:
        return text
    redacted, whole = run.withhold_in(parsed, where, inside=False)
    if whole:
        return run.withhold(where, "text", parsed)
    return _mirror(redacted)


def _block(data: dict[str, Any]) -> ContentBlock:
    try:
        return _CONTENT.validate_python(data)
    except ValidationError:
        # Not an MCP content block: the agent gets its (scrubbed) JSON as text.
        return TextContent(type="text", text=_mirror(data))


def _placeholder(run: _Run, result: CallToolResult, parts: _Parts, reason: str) -> Redaction:
    """The whole result withheld. Nothing the page wrote reaches the agent (not even its
    ``_meta``), except ``secret_reference`` stand-ins, which carry no secret."""
    handle = run.keep("result", "", f"result of {run.tool.name}", _dump(result))
    if reason == ERROR_REASON:
        told = (
            f"The tool {run.tool.name!r} failed. Its output is sensitive, and an error message "
            f"can quote a secret, so the user agent withheld the error from the agent as "
            f"{handle}. Only the user can reveal it."
        )
    else:
        told = (
            f"The result of {run.tool.name!r} is sensitive ({reason}), so the user agent "
            f"withheld it from the agent as {handle}. Only the user can reveal it."
        )
    content: list[ContentBlock] = [user_agent_text(told)]
    for index, block in enumerate(parts.content):
        if _is_reference(block):
            content.append(_block(run.scrub(run.reference(block, f"/content/{index}"))))
    meta = {REDACTED_META_KEY: _listing(run)}
    run.notes.insert(0, f"redaction: withheld the whole result of {run.tool.name}: {reason}")
    agent = CallToolResult(content=content, is_error=parts.is_error, meta=meta)
    return Redaction(result=agent, withheld=run.withheld, notes=run.notes)


def _listing(run: _Run) -> list[dict[str, Any]]:
    # Labels may be page text (a reference's label): searched like any other text. Many
    # items share a label (one schema field, many values): each label is searched once.
    labels: dict[str, str] = {}
    return [
        {
            **item.model_dump(),
            "label": labels.get(item.label) or labels.setdefault(item.label, run.scrub(item.label)),
        }
        for item in run.withheld
    ]


def _note(run: _Run) -> str:
    listed = ", ".join(f"{item.path} ({item.kind})" for item in run.withheld)
    return f"redaction: withheld {len(run.withheld)} item(s) from the agent: {listed}"


def _dump(result: CallToolResult) -> dict[str, Any]:
    data = result.model_dump(by_alias=True, exclude_none=True, mode="json")
    data.pop("resultType", None)
    return data


def withheld_items(result: CallToolResult) -> list[WithheldItem]:
    """What an agent view lists as withheld (empty when nothing was)."""
    listed = (result.meta or {}).get(REDACTED_META_KEY)
    items: list[WithheldItem] = []
    for entry in listed if isinstance(listed, list) else []:
        try:
            items.append(WithheldItem.model_validate(entry))
        except ValidationError:
            continue
    return items


# -- the stage -------------------------------------------------------------------------------


class Redactor:
    """The redaction stage of one session; what it withholds goes to the session's vault.

    Add :meth:`before_execute` as the *last* before-call stage and the redactor itself
    as the *last* after-call stage. A call stopped before its tool ran (bad arguments,
    a policy refusal) carries no tool output and passes unchanged.
    """

    def __init__(
        self, vault: Vault | Callable[[], Vault], *, ttl_cap: float = DEFAULT_TTL_CAP_S
    ) -> None:
        """``vault``: the agent session's, or a function that gives the current agent's."""
        self._vault = vault if callable(vault) else (lambda: vault)
        self.ttl_cap = ttl_cap
        """A ``secret_reference`` ttl above this many seconds is flagged and cut to it."""
        self._ran: set[str] = set()

    @property
    def vault(self) -> Vault:
        """The vault of the agent whose call this is."""
        return self._vault()

    async def before_execute(self, request: CallRequest) -> None:
        """Before-call stage: note that this call's tool is about to run."""
        self._ran.add(request.call_id)

    async def __call__(self, request: CallRequest, result: CallToolResult) -> CallToolResult:
        """After-call stage: keep the user view in the vault, return the agent view."""
        if request.call_id not in self._ran:
            return result
        self._ran.discard(request.call_id)
        self.vault.keep_user_view(request.call_id, result)
        if request.error_kind not in PAGE_RESULT_KINDS:
            return result  # a timeout, cancellation or navigation: the harness's own words
        redaction = redact(
            request.tool, result, self.vault, call_id=request.call_id, ttl_cap=self.ttl_cap
        )
        request.notes.extend(redaction.notes)
        if redaction.withheld:
            log.info("%s: withheld %d item(s)", request.tool.name, len(redaction.withheld))
        return self._scrub_earlier(request, redaction.result)

    def _scrub_earlier(self, request: CallRequest, result: CallToolResult) -> CallToolResult:
        """``result`` with the values earlier calls of this session withheld replaced by their
        handles: a tool that declares nothing sensitive may still repeat a marked value."""
        run = _Run(request.tool, self.vault, request.call_id, self.ttl_cap)
        for entry in self.vault.entries():
            if entry.kind == "field" and entry.call_id != request.call_id:
                run.search_for(entry.value, entry.handle)
                run.handles.add(entry.handle)
        if not run.needles:
            return result
        data = _dump(result)
        scrubbed = run.scrub(data)
        if scrubbed == data:
            return result
        request.notes.append(
            "values withheld from earlier calls of this session were replaced by their handles"
        )
        return CallToolResult.model_validate(scrubbed)
