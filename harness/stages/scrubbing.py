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
(percent-encoded), each form a page or the browser writes (:func:`forms_of`); texts
shorter than :data:`MIN_SCRUB_LENGTH` are not searched for in any form (they would match
everywhere). Handles themselves are never rewritten. Nothing here is logged or printed:
``repr`` shows counts only.

A JSON value is searched once as a whole before it is walked: JSON writes each character
of a string on its own (an escape or the character), so a string that holds a withheld
text holds, in the value's JSON, that text's JSON form; when no form of any withheld text
occurs in the value's JSON, no string of it holds one, and the value is returned without a
walk (one C-speed dump and one search, instead of a Python call per string). Both searches
use one pattern of all the texts, written as a trie (:func:`alternation`): a text has a
dozen forms that start alike, and a session may withhold thousands of texts.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

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


# -- the forms a text takes in URLs ------------------------------------------------------
# Percent-encode sets as the URL Standard defines them (url.spec.whatwg.org, "Percent-encoded
# bytes"), over the bytes of a text's UTF-8: a byte is written as itself when the code point of
# its value is not in the set, else as "%" and two hex digits ("UTF-8 percent-encode").


def _ascii(chars: str) -> frozenset[int]:
    return frozenset(chars.encode("ascii"))


ALL_BYTES = frozenset(range(0x100))
ASCII_ALPHANUMERIC = _ascii(string.ascii_letters + string.digits)

C0_CONTROL_PERCENT_ENCODE_SET = frozenset(range(0x20)) | frozenset(range(0x7F, 0x100))
"""The URL Standard's *C0 control percent-encode set*: the C0 controls and every code point
above U+007E (in UTF-8: 0x7F and every byte of a non-ASCII character); opaque paths."""
FRAGMENT_PERCENT_ENCODE_SET = C0_CONTROL_PERCENT_ENCODE_SET | _ascii(' "<>`')
"""The *fragment percent-encode set*: a URL's fragment (``#…``, ``location.hash``)."""
QUERY_PERCENT_ENCODE_SET = C0_CONTROL_PERCENT_ENCODE_SET | _ascii(' "#<>')
"""The *query percent-encode set*: the query of a URL whose scheme is not special."""
SPECIAL_QUERY_PERCENT_ENCODE_SET = QUERY_PERCENT_ENCODE_SET | _ascii("'")
"""The *special-query percent-encode set*: the query of an ``http(s):`` (special) URL."""
PATH_PERCENT_ENCODE_SET = QUERY_PERCENT_ENCODE_SET | _ascii("?^`{}")
"""The *path percent-encode set*: a URL's path segments."""
USERINFO_PERCENT_ENCODE_SET = PATH_PERCENT_ENCODE_SET | _ascii("/:;=@[\\]|")
"""The *userinfo percent-encode set*: a URL's username and password."""
COMPONENT_PERCENT_ENCODE_SET = USERINFO_PERCENT_ENCODE_SET | _ascii("$%&+,")
"""The *component percent-encode set* (the Standard: identical to ``encodeURIComponent``)."""
FORM_URLENCODED_PERCENT_ENCODE_SET = COMPONENT_PERCENT_ENCODE_SET | _ascii("!'()~")
"""The *application/x-www-form-urlencoded percent-encode set* (``URLSearchParams``, form
bodies; a space is written ``+``)."""

# ECMA-262's encodeURIComponent and encodeURI (sec-encodeuricomponent-uricomponent,
# sec-encodeuri-uri): every code point is escaped but uriUnescaped (ASCII alphanumerics and
# -_.!~*'()), and for encodeURI also uriReserved (;/?:@&=+$,) and "#".
ENCODE_URI_COMPONENT_SET = ALL_BYTES - ASCII_ALPHANUMERIC - _ascii("-_.!~*'()")
"""What ``encodeURIComponent`` escapes (the same as :data:`COMPONENT_PERCENT_ENCODE_SET`)."""
ENCODE_URI_SET = ENCODE_URI_COMPONENT_SET - _ascii(";/?:@&=+$,#")
"""What ``encodeURI`` escapes."""

# Where Chromium's URL serializer escapes more than the Standard (measured on the Chromium the
# harness runs: new URL(...).pathname, URL.username).
CHROMIUM_PATH_PERCENT_ENCODE_SET = PATH_PERCENT_ENCODE_SET | _ascii("|")
"""Chromium's set for a path: the Standard's and ``|``."""
CHROMIUM_USERINFO_PERCENT_ENCODE_SET = USERINFO_PERCENT_ENCODE_SET | _ascii("'")
"""Chromium's set for a username or password: the Standard's and ``'``."""

# RFC 3986: everything but its unreserved characters, which servers write (Python's quote(),
# quote_plus(), Go's url.QueryEscape); a page's tool may hand on a URL its server made.
RFC3986_PERCENT_ENCODE_SET = ALL_BYTES - ASCII_ALPHANUMERIC - _ascii("-._~")
"""RFC 3986's percent-encoding: all but ASCII alphanumerics and ``-._~``."""


@dataclass(frozen=True)
class PercentEncoding:
    """One way a text is percent-encoded: the bytes it ``escapes``, a space written ``+``
    (forms), and whether the URL parser may read the text first (``parsed``: it removes
    tabs and newlines, and in an ``http(s):`` ``path`` reads a backslash as a slash), so
    that the text is encoded as read too."""

    escapes: frozenset[int]
    space_as_plus: bool = False
    parsed: bool = False
    path: bool = False
    upper: tuple[str, ...] = field(init=False, repr=False, compare=False)
    """What each byte is written as, hex digits in upper case (for :meth:`str.translate`)."""
    lower: tuple[str, ...] = field(init=False, repr=False, compare=False)
    """The same, hex digits in lower case."""

    def __post_init__(self) -> None:
        for name, digits in (("upper", "%{:02X}"), ("lower", "%{:02x}")):
            table = tuple(
                ("+" if self.space_as_plus and byte == 0x20 else digits.format(byte))
                if byte in self.escapes
                else chr(byte)
                for byte in range(0x100)
            )
            object.__setattr__(self, name, table)


PERCENT_ENCODINGS: tuple[PercentEncoding, ...] = (
    PercentEncoding(C0_CONTROL_PERCENT_ENCODE_SET, parsed=True),
    PercentEncoding(FRAGMENT_PERCENT_ENCODE_SET, parsed=True),
    PercentEncoding(QUERY_PERCENT_ENCODE_SET, parsed=True),
    PercentEncoding(SPECIAL_QUERY_PERCENT_ENCODE_SET, parsed=True),
    PercentEncoding(PATH_PERCENT_ENCODE_SET, parsed=True, path=True),
    PercentEncoding(CHROMIUM_PATH_PERCENT_ENCODE_SET, parsed=True, path=True),
    PercentEncoding(USERINFO_PERCENT_ENCODE_SET, parsed=True),
    PercentEncoding(CHROMIUM_USERINFO_PERCENT_ENCODE_SET, parsed=True),
    PercentEncoding(COMPONENT_PERCENT_ENCODE_SET),
    PercentEncoding(ENCODE_URI_SET),
    PercentEncoding(FORM_URLENCODED_PERCENT_ENCODE_SET, space_as_plus=True),
    PercentEncoding(RFC3986_PERCENT_ENCODE_SET),
    PercentEncoding(RFC3986_PERCENT_ENCODE_SET - _ascii("/")),  # Python's quote()
    PercentEncoding(RFC3986_PERCENT_ENCODE_SET, space_as_plus=True),
)
"""Every percent-encoding a withheld text is searched for in: the browser's and
JavaScript's (above), and servers' (RFC 3986)."""

# Browsers write a percent-encoded byte's hex digits in upper case (the Standard's
# "percent-encode"); some servers write lower case (.NET's UrlEncode). Both are searched for
# (a lower-case form only when an escape has a letter, A-F).
_LETTERED = frozenset(byte for byte in range(0x100) if f"{byte:02X}" != f"{byte:02x}")
_UNESCAPED = ASCII_ALPHANUMERIC | _ascii("_.-")  # by every one of PERCENT_ENCODINGS

_SAFE = re.compile(r"[A-Za-z0-9_.-]*")


def _plain_json(text: str) -> bool:
    """Whether JSON and every percent-encoding write ``text`` as it is (ASCII letters,
    digits, ``_.-``: ``~`` is escaped in forms)."""
    return _SAFE.fullmatch(text) is not None


def _utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: the URL API writes U+FFFD for it
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode()


_PARSED = tuple(encoding for encoding in PERCENT_ENCODINGS if encoding.parsed)
_PATHS = tuple(encoding for encoding in PERCENT_ENCODINGS if encoding.path)
_TABS_AND_NEWLINES = str.maketrans("", "", "\t\n\r")


def percent_encoded_forms(text: str) -> set[str]:
    """``text`` as each of :data:`PERCENT_ENCODINGS` writes it, hex digits in upper and in
    lower case. Encodings that escape the same of ``text``'s bytes write it the same: each
    such form is made once."""
    inputs = [(text, PERCENT_ENCODINGS)]
    read = text.translate(_TABS_AND_NEWLINES)  # as the URL parser reads it
    if read != text:
        inputs.append((read, _PARSED))
    if "\\" in read:
        inputs.append((read.replace("\\", "/"), _PATHS))
    forms: set[str] = set()
    for written, encodings in inputs:
        data = _utf8(written)
        present = frozenset(data) - _UNESCAPED
        latin = data.decode("latin-1")  # one character per byte, for str.translate
        made: set[tuple[frozenset[int], bool]] = set()
        for encoding in encodings:
            escaped = present & encoding.escapes
            plus = encoding.space_as_plus and 0x20 in escaped
            if (escaped, plus) not in made:
                made.add((escaped, plus))
                forms.add(latin.translate(encoding.upper))
                if escaped & _LETTERED:
                    forms.add(latin.translate(encoding.lower))
    return forms


def forms_of(text: str, shortest: int = MIN_SCRUB_LENGTH) -> set[str]:
    """The texts ``text`` may show up as: itself, escaped in JSON, and percent-encoded
    (:func:`percent_encoded_forms`), each of those also JSON-escaped (a URL in JSON text).
    None for a text shorter than ``shortest``, and no form shorter than that either: the
    URL parser's reading drops tabs and newlines, and a whole result's ``"\\n\\nread\\n\\n"``
    must not make ``read`` a secret."""
    if len(text) < shortest:
        return set()
    if _plain_json(text):
        return {text}
    forms = {text, json.dumps(text)[1:-1], json.dumps(text, ensure_ascii=False)[1:-1]}
    for form in percent_encoded_forms(text):
        forms.add(form)
        if '"' in form or "\\" in form:  # a percent-encoded form is ASCII: only these escape
            forms.add(json.dumps(form)[1:-1])
    return {form for form in forms if len(form) >= shortest}


def needles_of(
    value: Any, declared: frozenset[str] = frozenset(), shortest: int = MIN_SCRUB_LENGTH
) -> set[str]:
    """The texts a withheld JSON value may show up as elsewhere: each of its leaves and
    object keys (a withheld object's keys are its own, but for the property names its
    schema ``declared``), in every form of :func:`forms_of` at least ``shortest`` long."""
    found: set[str] = set()
    for leaf in _leaves(value, declared):
        if isinstance(leaf, bool) or leaf is None:
            continue
        found |= forms_of(leaf if isinstance(leaf, str) else json.dumps(leaf), shortest)
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

    def withhold(
        self,
        value: Any,
        handle: str,
        declared: frozenset[str] = frozenset(),
        *,
        shortest: int = MIN_SCRUB_LENGTH,
    ) -> None:
        """Replace ``value`` (a text, or a JSON value: its leaves and keys, but for the
        property names its schema ``declared``) by ``handle`` wherever it shows up from now
        on; texts, and their forms, shorter than ``shortest`` are not searched for."""
        if isinstance(value, str) and _plain_json(value):  # the usual case, made short
            if len(value) >= shortest:
                self._needles.setdefault(value, handle)
            return
        for needle in needles_of(value, declared, shortest):
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
            self.withhold(text, handle, shortest=MIN_WHOLE_RESULT_LENGTH)

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
                _dumped_pattern(tuple(sorted(set(forms)))),
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
        """The handle pattern, then every withheld text (:func:`alternation`: the longest
        where several match), as one pattern; made again only when a text was added (texts
        only grow), not for every string."""
        if self._compiled is None or self._compiled[0] != len(self._needles):
            self._compiled = (len(self._needles), _needle_pattern(tuple(sorted(self._needles))))
        return self._compiled[1]


@lru_cache(maxsize=64)
def _needle_pattern(needles: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(f"{HANDLE.pattern}|{alternation(needles)}")


@lru_cache(maxsize=64)
def _dumped_pattern(forms: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(alternation(forms))


TRIE_DEPTH = 64
"""How deep :func:`alternation` nests its groups at most (past that, the rest of each text is
an alternative of its own): ``re`` compiles nested groups recursively, and pages choose the
texts."""


def alternation(texts: Iterable[str]) -> str:
    """A regular expression that matches any of ``texts`` and, where several match at one
    place, the longest — as ``a|b|…`` sorted longest first does, but written as a trie (texts
    that start alike share one branch), so that a place no text starts at is rejected after a
    character or two, not after trying each text (the forms of one text start alike)."""

    def branch(tails: list[str], depth: int) -> str:
        rest = [tail for tail in tails if tail]
        if not rest:
            return ""
        if depth >= TRIE_DEPTH:
            choices = [re.escape(tail) for tail in sorted(rest, key=len, reverse=True)]
        else:
            by_first: dict[str, list[str]] = {}
            for tail in rest:
                by_first.setdefault(tail[0], []).append(tail[1:])
            choices = []
            for first, after in by_first.items():
                shared = _shared_start(after)  # one literal up to where they part
                below = branch([tail[len(shared) :] for tail in after], depth + 1)
                choices.append(re.escape(first + shared) + below)
        body = choices[0] if len(choices) == 1 else f"(?:{'|'.join(choices)})"
        # A text ending here matches only when no longer one does: the group is greedy.
        return f"(?:{body})?" if len(rest) < len(tails) else body

    return branch(sorted(set(texts) - {""}), 0) or "(?!)"  # no text: matches nothing


def _shared_start(texts: list[str]) -> str:
    """The longest start all of ``texts`` share (that of the first and last in order)."""
    low, high = min(texts), max(texts)
    for index, (a, b) in enumerate(zip(low, high, strict=False)):
        if a != b:
            return low[:index]
    return low


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
