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

import copy
import json
import logging
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any
from urllib.parse import unquote

from mcp.types import CallToolResult, ContentBlock, TextContent
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from harness.browser.urls import origin_of, resolve, scheme_of
from harness.models import META_PREFIX, CallRequest, CatalogWarning, Tool
from harness.schemas import subschemas, validator_for
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


def _resolve(root: dict[str, Any], ref: str) -> Any:
    """A local ``$ref`` (``#``, ``#/json/pointer``, ``#anchor``); None when unresolvable."""
    if not ref.startswith("#"):
        return None
    fragment = unquote(ref[1:])
    if not fragment:
        return root
    if not fragment.startswith("/"):
        return _anchor(root, fragment)
    node: Any = root
    for token in fragment[1:].split("/"):
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdecimal() and int(token) < len(node):
            node = node[int(token)]
        else:
            return None
    return node


def _anchor(root: dict[str, Any], name: str) -> Any:
    stack, seen = [root], set()
    while stack:
        node = stack.pop()
        if not isinstance(node, dict) or id(node) in seen:
            continue
        seen.add(id(node))
        if name in (node.get("$anchor"), node.get("$dynamicAnchor")):
            return node
        stack.extend(subschemas(node))
    return None


@dataclass
class _Walk:
    root: dict[str, Any]
    found: dict[JsonPath, str] = field(default_factory=dict)
    # Members whose *key* is sensitive (``propertyNames`` marked x-sensitive): the path
    # ends with the key.
    keys: dict[JsonPath, str] = field(default_factory=dict)
    unresolved: set[str] = field(default_factory=set)

    def visit(self, schema: Any, instance: Any, path: JsonPath, refs: frozenset[str]) -> None:
        if not isinstance(schema, dict):
            return
        if schema.get("x-sensitive") is True:
            self.found.setdefault(path, _label(schema, path))
            return
        for keyword in ("$ref", "$dynamicRef"):
            ref = schema.get(keyword)
            if isinstance(ref, str) and ref not in refs:
                target = _resolve(self.root, ref)
                if target is None:
                    self.unresolved.add(ref)
                else:
                    self.visit(target, instance, path, refs | {ref})
        for keyword in ("allOf", "anyOf", "oneOf"):
            branches = schema.get(keyword)
            for branch in branches if isinstance(branches, list) else []:
                self.visit(branch, instance, path, refs)
        for keyword in ("if", "then", "else"):
            self.visit(schema.get(keyword), instance, path, refs)
        if isinstance(instance, dict):
            self._object(schema, instance, path, refs)
        elif isinstance(instance, list):
            self._array(schema, instance, path)

    def _object(
        self, schema: dict[str, Any], instance: dict[str, Any], path: JsonPath, refs: frozenset[str]
    ) -> None:
        properties = schema.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        patterns = schema.get("patternProperties")
        patterns = patterns if isinstance(patterns, dict) else {}
        dependent = schema.get("dependentSchemas")
        dependent = dependent if isinstance(dependent, dict) else {}
        names = schema.get("propertyNames")
        for key, value in instance.items():
            label = self._key_label(names, key, refs) if isinstance(names, dict) else None
            if label is not None:
                self.keys.setdefault((*path, key), label)
            covered = key in properties
            if covered:
                self.visit(properties[key], value, (*path, key), frozenset())
            for pattern, subschema in patterns.items():
                if _matches(pattern, key):
                    covered = True
                    self.visit(subschema, value, (*path, key), frozenset())
            if not covered:
                for keyword in ("additionalProperties", "unevaluatedProperties"):
                    self.visit(schema.get(keyword), value, (*path, key), frozenset())
            if key in dependent:
                self.visit(dependent[key], instance, path, refs)

    def _key_label(self, names: dict[str, Any], key: str, refs: frozenset[str]) -> str | None:
        """The label of ``key`` when ``propertyNames`` (through $ref, allOf, …) marks it
        x-sensitive; None when it does not."""
        probe = _Walk(self.root)
        probe.visit(names, key, (), refs)
        self.unresolved |= probe.unresolved
        label = probe.found.get(())
        return None if label is None else ("key" if label == "value" else label)

    def _array(self, schema: dict[str, Any], instance: list[Any], path: JsonPath) -> None:
        items = schema.get("items")
        prefix = schema.get("prefixItems")
        if not isinstance(prefix, list):
            # Before 2020-12, a list of `items` was the tuple form; `additionalItems` the rest.
            prefix = items if isinstance(items, list) else []
            rest = schema.get("additionalItems") if isinstance(items, list) else items
        else:
            rest = items
        for index, item in enumerate(instance):
            where = (*path, index)
            if index < len(prefix):
                self.visit(prefix[index], item, where, frozenset())
            else:
                self.visit(rest, item, where, frozenset())
                self.visit(schema.get("unevaluatedItems"), item, where, frozenset())
            # Which items `contains` meant cannot be told apart: all of them, fail safe.
            self.visit(schema.get("contains"), item, where, frozenset())


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
    walk = _Walk(schema)
    walk.visit(schema, instance, (), frozenset())
    outermost: list[tuple[JsonPath, str]] = []
    for path in sorted(walk.found, key=len):
        if not any(path[: len(kept)] == kept for kept, _ in outermost):
            outermost.append((path, walk.found[path]))
    # A key inside a withheld value goes with it; the others, deepest first, so renaming
    # one never changes the path to another.
    keys = [
        (path, label)
        for path, label in sorted(walk.keys.items(), key=lambda item: -len(item[0]))
        if not any(path[: len(kept)] == kept for kept, _ in outermost)
    ]
    return outermost, keys, walk.unresolved


@lru_cache(maxsize=256)
def _output_validator(schema_json: str) -> Any:
    return validator_for(json.loads(schema_json))


def _fits(schema: dict[str, Any], instance: Any) -> bool:
    """Whether ``instance`` fits ``schema``; a schema that cannot be used fits nothing.

    The schema is not checked against the metaschema first (that costs a tenth of a
    second per schema); a malformed one fails here instead, on the safe side.
    """
    try:
        return bool(_output_validator(json.dumps(schema, sort_keys=True)).is_valid(instance))
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


def _set(value: Any, path: JsonPath, new: Any) -> None:
    for token in path[:-1]:
        value = value[token]
    value[path[-1]] = new


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
        for form in (text, json.dumps(text)[1:-1], json.dumps(text, ensure_ascii=False)[1:-1]):
            if len(form) >= MIN_SCRUB_LENGTH:
                found.add(form)
    return found


def _mirror(value: Any) -> str:
    return json.dumps(value, separators=_MIRROR_SEPARATORS, ensure_ascii=False)


def _is_reference(value: Any) -> bool:
    return isinstance(value, dict) and value.get("type") == "secret_reference"


def _contains_reference(value: Any) -> bool:
    if _is_reference(value):
        return True
    if isinstance(value, dict):
        return any(_contains_reference(v) for v in value.values())
    if isinstance(value, list):
        return any(_contains_reference(v) for v in value)
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
        structured=copy.deepcopy(structured),
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
        if isinstance(value, str):
            if value in self.handles:
                return value
            pattern = _needle_pattern(tuple(sorted(self.needles, key=len, reverse=True)))
            # One pass, longest first: a handle just written is never searched again.
            return pattern.sub(lambda m: self.needles[m.group(0)], value)
        if isinstance(value, dict):
            # Keys are text too: a secret used as a key elsewhere is replaced there as well.
            scrubbed: dict[str, Any] = {}
            for key, member in value.items():
                new_key = self.scrub(key) if isinstance(key, str) else key
                while new_key in scrubbed:  # two keys that only differed by a secret
                    new_key += "#"
                scrubbed[new_key] = member if key == "type" else self.scrub(member)
            return scrubbed
        if isinstance(value, list):
            return [self.scrub(v) for v in value]
        return value

    def withhold_in(self, value: Any, where: str, *, inside: bool = True) -> tuple[Any, bool]:
        """``value`` (JSON the outputSchema describes) with its x-sensitive values and keys
        replaced by handles; True when the value as a whole is sensitive (then untouched).
        ``where`` is the JSON pointer of ``value`` in the result; with ``inside`` False
        (JSON inside a text), every item is listed at ``where`` itself."""
        schema = self.tool.output_schema or {}
        paths, keys, _ = _sensitive(schema, value)
        if any(path == () for path, _ in paths):
            return value, True
        redacted = copy.deepcopy(value)

        def at(path: JsonPath) -> str:
            return where + pointer(path) if inside else where

        for path, label in paths:
            _set(redacted, path, self.withhold(at(path), label, _get(value, path)))
        for path, label in keys:  # deepest first: the paths above stay valid
            parent = _get(redacted, path[:-1])
            handle = self.withhold(at(path[:-1]), label, path[-1])
            members = list(parent.items())
            parent.clear()
            parent.update((handle if k == path[-1] else k, v) for k, v in members)
        return redacted, False


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
    references = any(_is_reference(b) for b in parts.content) or _contains_reference(
        parts.structured
    )
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

    if structured is not None:
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
    _, _, unresolved = _sensitive(schema, structured)
    if unresolved:
        refs = ", ".join(sorted(unresolved))
        return f"its outputSchema has $refs the harness cannot follow ({refs})", None
    if not _fits(schema, structured):
        return "its structuredContent does not fit the tool's outputSchema", None
    redacted, whole = run.withhold_in(structured, "/structuredContent")
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
    # Labels may be page text (a reference's label): searched like any other text.
    return [{**item.model_dump(), "label": run.scrub(item.label)} for item in run.withheld]


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
