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

A withheld text is searched for as written, in the few forms no reading undoes
(:func:`forms_of`: as the URL parser reads it, a space as form encoding's ``+``), and in
every reading of a string that writes escapes: as JSON text reads it (``\\/``, ``\\u0026``,
``\\u00E9``: any escape, in either case) and as a URL reads it (any byte percent-encoded,
either hex case), one reading after another up to :data:`READ_DEPTH` (JSON inside JSON, a
URL in JSON text, a URL encoded twice); what a reading finds is replaced where the string
writes it, escapes and all. Texts shorter than :data:`MIN_SCRUB_LENGTH` are not searched
for (they would match everywhere). The handles the session gave are never rewritten.
Nothing here is logged or printed: ``repr`` shows counts only.

A JSON value is searched once as a whole before it is walked: JSON writes each character
of a string on its own (an escape or the character), so a string that holds a withheld
text holds, in the value's JSON, that text's JSON form; when no withheld text's JSON form
occurs in the value's JSON, and no string of it writes an escape, no string of it holds
one, and the value is returned without a walk (one C-speed dump and one search, instead of
a Python call per string). The searches are Aho-Corasick automata (``ahocorasick_rs``):
built and run in time linear in the texts and the string searched, whatever texts a page
chose; a session searches for at most :data:`MAX_SEARCHED_TEXTS` texts.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import ahocorasick_rs
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
"""The shape of a vault handle (:func:`harness.stages.vault.new_handle`). A scrubber leaves
the handles it gave as they are, and only those: a page that writes ``wmh-secret-`` before a
withheld text starting with hex digits does not make the text look like a handle."""


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


# -- the forms a text takes ------------------------------------------------------------------
# A withheld text is searched for as written and in the few forms that no reading of the
# string undoes: as the URL parser reads it (tabs and newlines dropped, a path's backslash as a
# slash), a lone surrogate as the U+FFFD the browser writes for it, and a space as the "+" of
# form encoding. JSON escapes and percent-encodings, which a reading undoes, are not forms:
# the string is read (see "reading a string" below), whatever the encoder chose to escape.

_SAFE = re.compile(r"[A-Za-z0-9_.-]*")
_TABS_AND_NEWLINES = str.maketrans("", "", "\t\n\r")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _plain_json(text: str) -> bool:
    """Whether ``text`` has no form but itself (ASCII letters, digits, ``_.-``)."""
    return _SAFE.fullmatch(text) is not None


def forms_of(text: str, shortest: int = MIN_SCRUB_LENGTH) -> set[str]:
    """The texts ``text`` is searched for as: itself; as the URL parser reads it (tabs and
    newlines dropped; in a path, a backslash as a slash); its own percent-escapes read; a
    lone surrogate as U+FFFD (what the URL API writes for it); each with a space written
    ``+`` (form encoding). None for a
    text shorter than ``shortest``, and no form shorter than that either: the URL parser's
    reading drops tabs and newlines, and a whole result's ``"\\n\\nread\\n\\n"`` must not
    make ``read`` a secret."""
    if len(text) < shortest:
        return set()
    if _plain_json(text):
        return {text}
    forms = {text}
    read = text.translate(_TABS_AND_NEWLINES)
    forms |= {read, read.replace("\\", "/")}
    # A text that writes percent-escapes itself ("%41") keeps them as they are in a URL whose
    # encoder leaves "%" alone (the URL Standard's path and query sets), and a reading of the
    # URL decodes them with the rest: that text is searched for as read too.
    forms |= {reading.text for form in forms if (reading := _percent_read(form)) is not None}
    forms |= {_LONE_SURROGATE.sub("\ufffd", form) for form in forms}
    forms |= {form.replace(" ", "+") for form in forms}
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


MAX_SEARCHED_TEXTS = 100_000
"""How many texts (forms included) a session searches for at most. Past it, what more it
withholds cannot be searched for quickly enough (the search is built again as texts come,
on the event loop every session of the process shares), so every later result of the
session is withheld whole instead (:attr:`Scrubber.full`)."""


class Scrubber:
    """The texts withheld in one session, each with its handle; see the module docstring."""

    def __init__(self) -> None:
        self._needles: dict[str, str] = {}  # a withheld text → the handle that replaces it
        self._handles: set[str] = set()  # every handle given: never rewritten
        self._search: _Search | None = None
        self._search_dumped: _Search | None = None
        self.full = False
        """Whether a text could not be taken (:data:`MAX_SEARCHED_TEXTS`)."""

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
        self._handles.add(handle)
        if self.full:  # nothing more can be searched for (the session withholds every result)
            return
        if isinstance(value, str) and _plain_json(value):  # the usual case, made short
            if len(value) >= shortest:
                self._take(value, handle)
            return
        for needle in needles_of(value, declared, shortest):
            self._take(needle, handle)

    def note_handle(self, handle: str) -> None:
        """Never rewrite ``handle`` (one the session's vault gave, for a value that may be
        too short to search for)."""
        self._handles.add(handle)

    def _take(self, needle: str, handle: str) -> None:
        if needle in self._needles:
            return
        if len(self._needles) >= MAX_SEARCHED_TEXTS:
            self.full = True
            return
        self._needles[needle] = handle

    def withhold_result(self, result: Mapping[str, Any], handle: str) -> None:
        """Replace what a page wrote in a whole withheld result (:func:`result_texts`), each
        text at least :data:`MIN_WHOLE_RESULT_LENGTH` long. The page marked the whole result,
        not which of its values is the secret: its short values are its words (``read``,
        ``bearer``, ``EUR``), which searched for everywhere would take words out of every
        later result (``thread``); a short secret is found when its field is ``x-sensitive``."""
        self._handles.add(handle)
        for text in result_texts(result):
            if self.full:
                return
            if isinstance(text, bool) or text is None:
                continue
            text = text if isinstance(text, str) else json.dumps(text)
            self.withhold(text, handle, shortest=MIN_WHOLE_RESULT_LENGTH)

    def merge(self, other: Scrubber) -> None:
        """Take on every text ``other`` withholds (one call's, into its session's)."""
        empty = not self._needles and not self._handles
        self._handles |= other._handles
        self.full = self.full or other.full
        for needle, handle in other._needles.items():
            self._take(needle, handle)
        if empty:  # the same texts and handles now: the same searches, not built again
            self._search, self._search_dumped = other._search, other._search_dumped

    def clear(self) -> None:
        """Forget every text (the session closes)."""
        self._needles.clear()
        self._handles.clear()
        self._search = self._search_dumped = None
        self.full = False

    def text(self, value: str) -> str:
        """``value`` with every withheld text replaced by its handle, as written and in
        every reading of it (see the module docstring)."""
        if not self._needles:
            return value
        search = self._searcher()
        found = search.spans(value)
        if "\\" in value or "%" in value:
            found = _leftmost_longest(found + _spans_read(search, value))
        if not found:
            return value
        parts, last = [], 0
        for start, end, needle in found:
            parts.append(value[last:start])
            # A handle is never rewritten; a withheld text read through escapes is replaced
            # where it is written, escapes and all.
            parts.append(value[start:end] if needle in self._handles else self._needles[needle])
            last = end
        parts.append(value[last:])
        return "".join(parts)

    def scrub(self, value: Any) -> Any:
        """``value`` (JSON) with withheld texts replaced in every string and object key but
        the keys and ``type`` members that write its shape (:data:`SHAPE_KEYS`,
        :data:`SHAPE_TYPES`); ``value`` itself (not a copy) when nothing was replaced."""
        if not self._needles or (isinstance(value, dict | list) and not self._may_hold(value)):
            return value
        return self._walk(value)

    def _may_hold(self, value: dict[str, Any] | list[Any]) -> bool:
        """Whether a string or key of ``value`` may hold a withheld text: False only when
        no withheld text's JSON form occurs in ``value``'s JSON (see the module docstring),
        and no string of it writes an escape (a JSON escape, a percent-encoded byte: read,
        it may hold one)."""
        try:
            dumped = json.dumps(value, ensure_ascii=False, check_circular=False)
        except (TypeError, ValueError, RecursionError):  # not plain JSON: walk it
            return True
        if ("\\\\" in dumped or "%" in dumped) and _WRITES_ESCAPES.search(dumped):
            # a string of it is read (as JSON, as a URL): the search below cannot tell
            return True
        size = (len(self._needles), 0)
        if self._search_dumped is None or self._search_dumped.size != size:
            forms = {json.dumps(needle, ensure_ascii=False)[1:-1] for needle in self._needles}
            self._search_dumped = _Search(size, sorted(forms))
        return self._search_dumped.found_in(dumped)

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

    def _searcher(self) -> _Search:
        """Every withheld text and every handle, as one search; made again only when a text
        was added (texts only grow), not for every string."""
        size = (len(self._needles), len(self._handles))
        if self._search is None or self._search.size != size:
            self._search = _Search(size, sorted(self._needles.keys() | self._handles))
        return self._search


class _Search:
    """Where any of ``texts`` occurs in a string: leftmost first, and where several start at
    one place the longest, none overlapping (Aho-Corasick, in Rust: built and run in time
    linear in the texts and the string, whatever the page chose them to be).

    The automaton reads bytes: texts and strings are searched in UTF-8 (lone surrogates, which
    JavaScript strings may hold, written as their three bytes), where a text can only start
    and end where a character does; the places found are then counted in characters. (Its
    own ``str`` search read 10 MB in 47 ms, the bytes in under 1 ms.)"""

    def __init__(self, size: tuple[int, int], texts: list[str]) -> None:
        self.size = size  # how many withheld texts and handles it was made for
        self.texts = texts
        self._automaton = (
            ahocorasick_rs.BytesAhoCorasick(
                [_utf8(text) for text in texts],
                matchkind=ahocorasick_rs.MatchKind.LeftmostLongest,
            )
            if texts
            else None
        )

    def spans(self, value: str) -> list[tuple[int, int, str]]:
        """(start, end, text) of each occurrence in ``value``, in characters."""
        if self._automaton is None:
            return []
        data = _utf8(value)
        found = self._automaton.find_matches_as_indexes(data)
        texts = self.texts
        if len(data) == len(value):  # ASCII: a byte is a character
            return [(start, end, texts[index]) for index, start, end in found]
        spans = []
        read = chars = 0  # bytes and characters counted so far
        for index, start, end in found:
            chars += len(data[read:start].decode("utf-8", "surrogatepass"))
            text = texts[index]
            spans.append((chars, chars + len(text), text))
            chars += len(text)
            read = end
        return spans

    def found_in(self, value: str) -> bool:
        return self._automaton is not None and bool(
            self._automaton.find_matches_as_indexes(_utf8(value))
        )


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _leftmost_longest(spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Of spans found in several readings of one string, those a single search would keep:
    leftmost first, the longest of those that start together, none overlapping."""
    kept: list[tuple[int, int, str]] = []
    for span in sorted(spans, key=lambda s: (s[0], -s[1])):
        if not kept or span[0] >= kept[-1][1]:
            kept.append(span)
    return kept


# -- reading a string ------------------------------------------------------------------------
# JSON text may write any character as an escape: "\/" (PHP), "\u0026" for "&" (Go),
# "\u00E9" (.NET and Java write upper case), "\u0061" for a plain letter. A URL may
# percent-encode any byte, in either hex case, and a URL may sit in a URL's query (encoded
# twice) or in JSON text. A string that writes escapes is also read as JSON and as a URL
# reads it (and what that reading gives, again, up to READ_DEPTH readings), and a withheld
# text found in a reading is replaced where the string writes it, escapes and all.

READ_DEPTH = 3
"""How many readings, one after another, a string is read through at most (JSON inside
JSON, a URL inside JSON inside JSON, a URL encoded twice, …)."""

_JSON_ESCAPE = re.compile(
    r"\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})"  # a surrogate pair
    r"|\\u([0-9a-fA-F]{4})"
    r"|\\([\"\\/bfnrt])"
)
_SHORT_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_PERCENT_RUN = re.compile(r"(?:%[0-9A-Fa-f]{2})+")
_WRITES_ESCAPES = re.compile(r'\\\\(?:[u/bfnrt]|\\["\\])|%[0-9A-Fa-f]{2}')
"""In a value's JSON (``json.dumps``): a string of it writes a JSON escape (a backslash
before ``u``, ``/``, ``b``, ``f``, ``n``, ``r``, ``t``, a quote or another backslash) or a
percent-encoded byte."""


@dataclass(frozen=True)
class _Reading:
    """A string as a reading reads it: ``text``, and for each character an escape wrote, its
    place in ``text`` and the span of the escape in the string read (``marks``, in order);
    the characters between escapes are the string's own, in the same order."""

    text: str
    marks: list[tuple[int, int, int]]  # (place in text, start, end in the string read)
    places: list[int]  # the places alone, for bisect

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Where ``text[start:end]`` is written in the string read."""
        return self._at(start)[0], self._at(end - 1)[1]

    def _at(self, place: int) -> tuple[int, int]:
        index = bisect_right(self.places, place) - 1
        if index < 0:
            return place, place + 1
        mark, start, end = self.marks[index]
        if mark == place:
            return start, end
        at = end + (place - mark - 1)
        return at, at + 1


class _Reader:
    """Builds one :class:`_Reading`: the string's own text, and characters escapes wrote."""

    def __init__(self, value: str) -> None:
        self.value = value
        self.parts: list[str] = []
        self.marks: list[tuple[int, int, int]] = []
        self.written = self.last = 0

    def escape(self, start: int, end: int, char: str) -> None:
        """``value[start:end]`` (after what was read so far) writes ``char``."""
        literal = self.value[self.last : start]
        self.parts.append(literal)
        self.written += len(literal)
        self.marks.append((self.written, start, end))
        self.parts.append(char)
        self.written += 1
        self.last = end

    def reading(self) -> _Reading | None:
        if not self.marks:
            return None
        self.parts.append(self.value[self.last :])
        return _Reading("".join(self.parts), self.marks, [mark for mark, _, _ in self.marks])


def _json_read(value: str) -> _Reading | None:
    """``value`` read as the inside of a JSON string; None when it writes no escape."""
    if "\\" not in value:
        return None
    reader = _Reader(value)
    for match in _JSON_ESCAPE.finditer(value):
        high, low, code, short = match.groups()
        if high is not None:
            char = chr(0x10000 + ((int(high, 16) - 0xD800) << 10) + (int(low, 16) - 0xDC00))
        elif code is not None:
            char = chr(int(code, 16))
        else:
            char = _SHORT_ESCAPES.get(short, short)
        reader.escape(match.start(), match.end(), char)
    return reader.reading()


def _percent_read(value: str) -> _Reading | None:
    """``value`` with its percent-encoded bytes read as UTF-8 (either hex case; a byte that
    starts no character is left as written); None when it encodes none."""
    if "%" not in value:
        return None
    reader = _Reader(value)
    for match in _PERCENT_RUN.finditer(value):
        at = match.start()
        data = bytes.fromhex(match.group(0).replace("%", ""))
        index = 0
        while index < len(data):
            size = _utf8_size(data[index])
            try:
                char = data[index : index + size].decode("utf-8")
            except UnicodeDecodeError:
                index += 1  # left as written
                continue
            start = at + 3 * index
            reader.escape(start, start + 3 * size, char)
            index += size
    return reader.reading()


def _utf8_size(lead: int) -> int:
    """How many bytes the UTF-8 character that ``lead`` starts has (1 for a byte that starts
    none: decoding it fails)."""
    if lead < 0xC0:
        return 1
    return 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4


_READINGS = (_json_read, _percent_read)


def _spans_read(search: _Search, value: str) -> list[tuple[int, int, str]]:
    """The withheld texts (and handles) found in every reading of ``value``, each placed
    where ``value`` writes it."""
    found: list[tuple[int, int, str]] = []
    pending: list[tuple[str, tuple[_Reading, ...]]] = [(value, ())]
    for _ in range(READ_DEPTH):
        deeper: list[tuple[str, tuple[_Reading, ...]]] = []
        for text, through in pending:
            for read in _READINGS:
                reading = read(text)
                if reading is None:
                    continue
                chain = (*through, reading)
                for start, end, needle in search.spans(reading.text):
                    for outer in reversed(chain):
                        start, end = outer.span(start, end)
                    found.append((start, end, needle))
                deeper.append((reading.text, chain))
        pending = deeper
    return found


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
