"""Scrubbing: what a session withheld, replaced by its handle wherever else it shows up.

The scrubbing half of redaction (:mod:`harness.stages.redaction` decides what to
withhold; :mod:`harness.stages.sensitivity` finds the marked fields). A
:class:`Scrubber` holds the texts withheld in one session — every ``x-sensitive`` value
and the keys of a withheld object, a whole ``sensitiveHint`` result's texts, content
for the user alone, a ``secret_reference``'s id and URL — each with the handle that
stands in for it, and replaces them in any JSON value or text. The session has one
(:attr:`harness.session.Session.scrubber`), shared by the vaults of all its agent
sessions, so a value withheld from one agent reaches no other, and every channel an
agent reads goes through it: results (also of tools that declare nothing), the tool
list, the harness's own messages, the page's console, traces.

A withheld text is searched for in the forms it takes in JSON (escaped) and in URLs
(percent-encoded); texts shorter than :data:`MIN_SCRUB_LENGTH` are not searched for
(they would match everywhere). Handles themselves are never rewritten. Nothing here is
logged or printed: ``repr`` shows counts only.

A JSON value is searched once as a whole before it is walked: JSON writes each character
of a string on its own (an escape or the character), so a string that holds a withheld
text holds, in the value's JSON, that text's JSON form; when no form of any withheld text
occurs in the value's JSON, no string of it holds one, and the value is returned without a
walk (one C-speed dump and one search, instead of a Python call per string).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any
from urllib.parse import quote, quote_plus

from mcp_types import CallToolResult

from harness.models import dump_result

MIN_SCRUB_LENGTH = 4
"""Withheld texts at least this long are searched for, and replaced, wherever they show up."""

MIN_WHOLE_RESULT_LENGTH = 8
"""The texts of a whole withheld result (``sensitiveHint``) searched for: at least this long."""

SHAPE_TYPES = frozenset(
    {
        *("text", "image", "audio", "resource", "resource_link"),  # MCP's content blocks
        "secret_reference",  # the harness's stand-in for a withheld value
        *("object", "array", "string", "number", "integer", "boolean", "null"),  # JSON Schema's
    }
)
"""The ``type`` words a result's or a schema's shape is written with: a ``type`` member
holding one (or a list of them) is kept as it is, whatever was withheld; any other ``type``
member is page data like the rest (a page may put anything under a key named ``type``)."""

SHAPE_KEYS = frozenset(
    {
        # MCP's results, content blocks, resources, tools and their annotations
        *("content", "structuredContent", "isError", "_meta", "resultType", "type", "text"),
        *("data", "mimeType", "resource", "uri", "blob", "name", "title", "description"),
        *("annotations", "audience", "priority", "lastModified", "size", "icons", "src"),
        *("sizes", "theme", "inputSchema", "outputSchema", "execution"),
        *("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"),
        # the harness's records of what it withheld (WithheldItem) and its stand-ins
        *("path", "label", "handle", "kind"),
        # JSON Schema's keywords
        *("$schema", "$id", "$ref", "$defs", "$anchor", "$dynamicRef", "$dynamicAnchor"),
        *("$comment", "definitions", "default", "examples", "deprecated", "readOnly"),
        *("writeOnly", "properties", "required", "items", "prefixItems", "enum", "const"),
        *("additionalProperties", "patternProperties", "propertyNames", "allOf", "anyOf"),
        *("oneOf", "not", "if", "then", "else", "contains", "minContains", "maxContains"),
        *("dependentRequired", "dependentSchemas", "unevaluatedItems"),
        *("unevaluatedProperties", "format", "pattern", "minimum", "maximum"),
        *("exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength"),
        *("minItems", "maxItems", "uniqueItems", "minProperties", "maxProperties"),
        *("contentMediaType", "contentEncoding"),
    }
)
"""The keys a result's, a tool's or a schema's shape is written with: never rewritten, so
that a withheld text that is also one of these words cannot break the structure the
harness and its agents read (a crash, or its own record of what it withheld corrupted)."""

HANDLE = re.compile(r"wmh-(?:secret|result|ref|user)-[0-9a-f]{16}")
"""A vault handle (:func:`harness.stages.vault.new_handle`): left as it is, always."""


def _leaves(
    value: Any, declared: frozenset[str] = frozenset(), *, keys: bool = True
) -> Iterator[Any]:
    stack = [value]
    while stack:  # iterative: a withheld value can nest deeper than Python's stack
        node = stack.pop()
        if isinstance(node, dict):
            # Keys are text too; the names a schema declares are public words, not data.
            if keys:
                yield from (key for key in node if isinstance(key, str) and key not in declared)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        else:
            yield node


_SAFE = re.compile(r"[A-Za-z0-9_.~-]*")


def _plain_json(text: str) -> bool:
    """Whether JSON and URLs write ``text`` as it is (ASCII letters, digits, ``_.~-``)."""
    return _SAFE.fullmatch(text) is not None


def forms_of(text: str) -> set[str]:
    """The texts ``text`` may show up as: itself, escaped in JSON, percent-encoded in a URL."""
    if _plain_json(text):
        return {text} if len(text) >= MIN_SCRUB_LENGTH else set()
    forms = {
        text,
        json.dumps(text)[1:-1],
        json.dumps(text, ensure_ascii=False)[1:-1],
        quote(text),
        quote(text, safe=""),
        quote_plus(text, safe=""),
    }
    return {form for form in forms if len(form) >= MIN_SCRUB_LENGTH}


def needles_of(value: Any, declared: frozenset[str] = frozenset()) -> set[str]:
    """The texts a withheld JSON value may show up as elsewhere: each of its leaves and
    object keys (a withheld object's keys are its own, but for the property names its
    schema ``declared``), in every form of :func:`forms_of`."""
    found: set[str] = set()
    for leaf in _leaves(value, declared):
        if isinstance(leaf, bool) or leaf is None:
            continue
        found |= forms_of(leaf if isinstance(leaf, str) else json.dumps(leaf))
    return found


def result_texts(result: Mapping[str, Any]) -> Iterator[Any]:
    """What a page wrote in a result (MCP JSON) that a whole-result withholding withholds:
    each text block's text (and the values of JSON in it), embedded resources' text, and
    the values of ``structuredContent`` — not the result's shape (types, MIME types, the
    keys of its objects: ``token``, ``scope``, ``text`` are its field names, not its data)."""
    for block in result.get("content") or []:
        if not isinstance(block, dict):
            continue
        resource = block.get("resource")
        for text in (
            block.get("text"),
            resource.get("text") if isinstance(resource, dict) else None,
        ):
            if not isinstance(text, str):
                continue
            yield text
            try:
                parsed = json.loads(text)
            except ValueError:
                continue
            if isinstance(parsed, dict | list):
                yield from _leaves(parsed, keys=False)
    structured = result.get("structuredContent")
    if structured is not None:
        yield from _leaves(structured, keys=False)


class Scrubber:
    """The texts withheld in one session, each with its handle; see the module docstring."""

    def __init__(self) -> None:
        self._needles: dict[str, str] = {}  # a withheld text → the handle that replaces it
        self._compiled: tuple[int, re.Pattern[str]] | None = None
        self._compiled_dumped: tuple[int, re.Pattern[str]] | None = None

    def __bool__(self) -> bool:
        return bool(self._needles)

    def __len__(self) -> int:
        return len(self._needles)

    def __repr__(self) -> str:
        return f"<Scrubber: {len(self._needles)} texts>"

    def withhold(self, value: Any, handle: str, declared: frozenset[str] = frozenset()) -> None:
        """Replace ``value`` (a text, or a JSON value: its leaves and keys, but for the
        property names its schema ``declared``) by ``handle`` wherever it shows up from now on."""
        if isinstance(value, str) and _plain_json(value):  # the usual case, made short
            if len(value) >= MIN_SCRUB_LENGTH:
                self._needles.setdefault(value, handle)
            return
        for needle in needles_of(value, declared):
            self._needles.setdefault(needle, handle)

    def withhold_result(self, result: Mapping[str, Any], handle: str) -> None:
        """Replace what a page wrote in a whole withheld result (:func:`result_texts`), each
        text at least :data:`MIN_WHOLE_RESULT_LENGTH` long. The page marked the whole result,
        not which of its values is the secret: its short values are its words (``read``,
        ``bearer``, ``EUR``), which searched for everywhere would take words out of every
        later result (``thread``); a short secret is found when its field is ``x-sensitive``."""
        for text in result_texts(result):
            if isinstance(text, bool) or text is None:
                continue
            text = text if isinstance(text, str) else json.dumps(text)
            if len(text) >= MIN_WHOLE_RESULT_LENGTH:
                self.withhold(text, handle)

    def merge(self, other: Scrubber) -> None:
        """Take on every text ``other`` withholds (one call's, into its session's)."""
        for needle, handle in other._needles.items():
            self._needles.setdefault(needle, handle)

    def clear(self) -> None:
        """Forget every text (the session closes)."""
        self._needles.clear()
        self._compiled = self._compiled_dumped = None

    def text(self, value: str) -> str:
        """``value`` with every withheld text replaced by its handle."""
        if not self._needles:
            return value
        pattern = self._pattern()
        if pattern.search(value) is None:
            return value
        needles = self._needles
        # One pass, longest first, handles matched as themselves: a handle is never rewritten.
        return pattern.sub(lambda m: needles.get(m.group(0), m.group(0)), value)

    def scrub(self, value: Any) -> Any:
        """``value`` (JSON) with withheld texts replaced in every string and object key but
        the keys and ``type`` members that write its shape (:data:`SHAPE_KEYS`,
        :data:`SHAPE_TYPES`); ``value`` itself (not a copy) when nothing was replaced."""
        if not self._needles or (isinstance(value, dict | list) and not self._may_hold(value)):
            return value
        return self._walk(value)

    def _may_hold(self, value: dict[str, Any] | list[Any]) -> bool:
        """Whether a string or key of ``value`` may hold a withheld text: False only when
        no withheld text's JSON form occurs in ``value``'s JSON (see the module docstring)."""
        try:
            dumped = json.dumps(value, ensure_ascii=False, check_circular=False)
        except (TypeError, ValueError, RecursionError):  # not plain JSON: walk it
            return True
        if self._compiled_dumped is None or self._compiled_dumped[0] != len(self._needles):
            forms = (json.dumps(needle, ensure_ascii=False)[1:-1] for needle in self._needles)
            self._compiled_dumped = (
                len(self._needles),
                _dumped_pattern(tuple(sorted(set(forms), key=len, reverse=True))),
            )
        return self._compiled_dumped[1].search(dumped) is not None

    def _walk(self, value: Any) -> Any:
        """:meth:`scrub`, string by string."""
        text = self.text
        keys: dict[str, str] = {}  # object keys repeat (one per item of a list): once each

        def walk(node: Any) -> Any:
            if isinstance(node, str):
                return text(node)
            if isinstance(node, dict):
                changed: dict[str, Any] | None = None
                for index, (key, member) in enumerate(node.items()):
                    new_key = key
                    if isinstance(key, str) and key not in SHAPE_KEYS:
                        new_key = keys.get(key) or keys.setdefault(key, text(key))
                    new = member if key == "type" and _shape_type(member) else walk(member)
                    if changed is None and (new_key is not key or new is not member):
                        changed = dict(list(node.items())[:index])
                    if changed is not None:
                        while new_key in changed:  # two keys that only differed by a secret
                            new_key += "#"
                        changed[new_key] = new
                return node if changed is None else changed
            if isinstance(node, list):
                items = [walk(item) for item in node]
                return node if all(a is b for a, b in zip(items, node, strict=True)) else items
            return node

        return walk(value)

    def _pattern(self) -> re.Pattern[str]:
        """Every withheld text, longest first, after the handle pattern, as one pattern;
        made again only when a text was added (texts only grow), not for every string."""
        if self._compiled is None or self._compiled[0] != len(self._needles):
            needles = tuple(sorted(self._needles, key=len, reverse=True))
            self._compiled = (len(self._needles), _needle_pattern(needles))
        return self._compiled[1]


@lru_cache(maxsize=64)
def _needle_pattern(needles: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join([HANDLE.pattern, *(re.escape(n) for n in needles)]))


@lru_cache(maxsize=64)
def _dumped_pattern(forms: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(re.escape(form) for form in forms))


def scrub_result(result: CallToolResult, scrubber: Scrubber) -> CallToolResult:
    """``result`` with every text ``scrubber`` withholds replaced by its handle (``result``
    itself when there was none)."""
    if not scrubber:
        return result
    data = dump_result(result)
    scrubbed = scrubber.scrub(data)
    return result if scrubbed is data else CallToolResult.model_validate(scrubbed)


def _shape_type(member: Any) -> bool:
    """Whether a ``type`` member writes a shape (:data:`SHAPE_TYPES`), not page data."""
    if isinstance(member, list):
        return all(isinstance(item, str) and item in SHAPE_TYPES for item in member)
    return isinstance(member, str) and member in SHAPE_TYPES
