"""Untrusted framing: page-provided text reaches the agent marked as data, not instructions.

Tool descriptions, titles, parameter descriptions and the text of results (text blocks,
embedded resources' text, resource links' names and descriptions) come from the page. The agent view wraps them in ``<untrusted-data origin="…">…</untrusted-data>``, and
drops the page's own ``_meta``; keys in the harness's ``_meta`` namespace are the harness's
alone (a page's are dropped as its result arrives: :func:`without_harness_marks`); text the
harness writes itself (:func:`user_agent_text`) is marked so that it is never framed.

``structuredContent`` is the schema's half of a result: data that programs read (plans,
assertions, an MCP client validating it against the ``outputSchema``), so its values are
never rewritten. Its data reaches readers of text as a text block — the page's own, or one
the harness adds (:func:`mirror_structured`) — framed like any other; a model's prompt gets
only that (:func:`prompt_json`), and MCP clients get ``structuredContent`` only for a tool
that lists an ``outputSchema`` (:func:`harness.mcp.tools.conform`). (The user's terminal
gets page text through :func:`harness.elicitation.wording.plain`.)
"""

from __future__ import annotations

import copy
import functools
import itertools
import json
import re
import unicodedata
from typing import Any

from mcp_types import (
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

from harness.models import META_PREFIX, ErrorKind
from harness.schemas import subschemas

# Any spelling of a frame marker a reader (a model) could take for the real one: any case,
# spaces or a slash inside, ``-``, ``_`` or a space between the words — read in text folded
# as a reader sees it (:func:`_folding`: NUL stands for a character that shows nothing).
_MARKER = re.compile(
    r"<[\s\x00]*(?:/[\s\x00]*)?"
    + r"\x00*".join("untrusted")
    + r"[\s_\-\x00]*"
    + r"\x00*".join("data"),
    re.IGNORECASE,
)


def frame_untrusted(text: str, origin: str) -> str:
    """Mark page-provided text as data from ``origin``, not instructions.

    The markers cannot be forged from inside: every occurrence of an opening or closing
    marker in the text is defused first — in any case or spacing, and as a reader sees it:
    characters that show nothing (zero-width spaces, soft hyphens, joiners, bidi controls,
    combining marks) ignored, and compatibility forms (fullwidth ``＜／ｕｎｔｒｕｓｔｅｄ``,
    mathematical letters) and every dash and space read as what they look like.
    """
    return f'<untrusted-data origin="{origin}">\n{_defused(text)}\n</untrusted-data>'


def inline(text: str) -> str:
    """A page's name as the harness's own words show it, outside any frame (a property
    name inside a JSON pointer of a refusal): every character that is not printable — a
    line break, an escape, a character that shows nothing — written as its escape, and
    every frame marker defused, so the name can neither start a line of its own nor open
    or close a frame."""
    if not text.isprintable():
        text = "".join(
            char if char.isprintable() else char.encode("unicode_escape").decode("ascii")
            for char in text
        )
    return _defused(text)


def _defused(text: str) -> str:
    """``text`` with a backslash after the ``<`` of each marker in it."""
    folded = text
    if not text.isascii():
        table, specials, openers = _folding()
        if "<" not in text and not any(opener in text for opener in openers):
            return text  # no marker can start without something read as "<"
        if specials.search(text):
            folded = text.translate(table)  # one character for one: positions hold
    parts: list[str] = []
    done = 0
    for marker in _MARKER.finditer(folded):
        after = marker.start() + 1
        parts += [text[done:after], "\\"]
        done = after
    return "".join([*parts, text[done:]]) if parts else text


@functools.cache
def _folding() -> tuple[dict[int, str], re.Pattern[str], tuple[str, ...]]:
    """How a reader sees characters, one for one (made once, when first needed: ~50 ms):
    what shows nothing (format characters, combining marks, Hangul fillers) becomes NUL,
    every dash ``-`` and every space `` ``, and a character whose compatibility form (NFKC)
    is one ASCII character becomes it; with a pattern that finds any of them, and the
    characters read as ``<`` (without one of them or ``<`` itself, no marker can begin)."""
    table: dict[int, str] = {}
    planes = itertools.chain(
        range(0x80, 0x10000), range(0x1D400, 0x1D800), range(0x1F100, 0x1F200),
        range(0xE0000, 0xE1000),
    )  # fmt: skip
    for code in planes:
        char = chr(code)
        kind = unicodedata.category(char)
        if kind in ("Cf", "Mn", "Me") or char in "\u115f\u1160\u3164\uffa0":
            table[code] = "\x00"
        elif kind == "Pd":
            table[code] = "-"
        elif kind.startswith("Z"):
            table[code] = " "
        else:
            plain = unicodedata.normalize("NFKC", char)
            if len(plain) == 1 and plain.isascii():
                table[code] = plain
    ranges: list[list[int]] = []
    for code in table:  # (in order) as ranges: a class of single characters is slow to search
        if ranges and ranges[-1][1] == code - 1:
            ranges[-1][1] = code
        else:
            ranges.append([code, code])
    specials = re.compile("[" + "".join(f"{chr(a)}-{chr(b)}" for a, b in ranges) + "]")
    openers = tuple(chr(code) for code, plain in table.items() if plain == "<")
    return table, specials, openers


_FRAME = re.compile(r'<untrusted-data origin="[^"\n]*">\n(.*?)\n</untrusted-data>', re.DOTALL)


def unframed(text: str) -> str:
    """Page text as a person reads it: the ``<untrusted-data>`` frames around it taken
    away (assertion messages, ``trace show``, an MCP client's tool titles). The agent
    still gets them; what a person reads still shows control characters
    (:func:`harness.elicitation.wording.plain`)."""
    if "<untrusted-data" not in text:
        return text
    return _FRAME.sub(lambda m: m.group(1), text)


def unframed_json(value: Any) -> Any:
    """A JSON value (an agent view) with every string :func:`unframed`, for a person."""
    if isinstance(value, str):
        return unframed(value)
    if isinstance(value, dict):
        return {key: unframed_json(member) for key, member in value.items()}
    if isinstance(value, list):
        return [unframed_json(member) for member in value]
    return value


def frame_schema(schema: dict[str, Any], origin: str) -> dict[str, Any]:
    """A copy of a page's JSON Schema whose ``title`` and ``description`` texts are framed.

    Only schema keywords are touched (a property *named* ``description`` keeps its name);
    everything else — types, constraints, enum values — is data a validator reads.
    """
    framed = copy.deepcopy(schema)
    stack: list[Any] = [framed]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict):
            continue
        for keyword in ("title", "description"):
            if isinstance(node.get(keyword), str):
                node[keyword] = frame_untrusted(node[keyword], origin)
        stack.extend(subschemas(node))
    return framed


USER_AGENT_BLOCK = META_PREFIX + "user-agent"
"""Content-block ``_meta`` key marking text the harness itself wrote into a result."""

# Results whose content the page produced (a value, or a thrown error's message); every
# other kind (validation, refusal, timeout, cancel, navigation) is the harness's own text.
PAGE_RESULT_KINDS: tuple[ErrorKind | None, ...] = (None, "thrown")


def user_agent_text(text: str) -> TextContent:
    """A text block the harness writes into a result: never framed as page data."""
    return TextContent(type="text", text=text, meta={USER_AGENT_BLOCK: True})


def is_user_agent_block(block: ContentBlock) -> bool:
    """Whether a content block was written by the harness (see :func:`user_agent_text`)."""
    meta = getattr(block, "meta", None)
    return isinstance(meta, dict) and meta.get(USER_AGENT_BLOCK) is True


def frame_result(result: CallToolResult, origin: str) -> CallToolResult:
    """The result with every text block the page wrote marked as untrusted data from
    ``origin``, and without the page's own ``_meta`` (of the result and of its blocks):
    what the harness read in it, it read before (annotations, ``uiRedirect``), so only the
    harness's keys reach the agent. Blocks the harness wrote stay unframed.

    ``structuredContent`` keeps its values: it is the schema's half of the result (MCP
    clients validate it against the ``outputSchema``; plans, assertions and suites compare
    its values), and a frame inside a value would break both. The same data reaches the
    agent framed, as the text block that mirrors it (:func:`mirror_structured`).
    """
    content: list[ContentBlock] = [
        block if is_user_agent_block(block) else _framed_block(block, origin)
        for block in result.content
    ]
    return result.model_copy(update={"content": content, "meta": _harness_keys(result.meta)})


def _framed_block(block: ContentBlock, origin: str) -> ContentBlock:
    """A page's content block with every text in it a reader reads as words framed: a text
    block's text, an embedded resource's text, a resource link's name, title and
    description. URIs and MIME types, identifiers a client opens or renders by, and base64
    data stay as they are."""
    update: dict[str, Any] = {}
    if isinstance(block, TextContent):
        update["text"] = frame_untrusted(block.text, origin)
    elif isinstance(block, EmbeddedResource) and isinstance(block.resource, TextResourceContents):
        text = frame_untrusted(block.resource.text, origin)
        update["resource"] = block.resource.model_copy(update={"text": text})
    elif isinstance(block, ResourceLink):
        for field in ("name", "title", "description"):
            words = getattr(block, field)
            if isinstance(words, str):
                update[field] = frame_untrusted(words, origin)
    meta = getattr(block, "meta", None)
    if meta:
        update["meta"] = _harness_keys(meta)
    return block.model_copy(update=update) if update else block


def _harness_keys(meta: dict[str, Any] | None) -> dict[str, Any] | None:
    kept = {k: v for k, v in (meta or {}).items() if k.startswith(META_PREFIX)}
    return kept or None


def without_harness_marks(result: CallToolResult) -> CallToolResult:
    """A page's result without keys in the harness's ``_meta`` namespace (of the result
    and of its blocks): only the harness writes those, after the page has answered."""
    meta = result.meta or {}
    blocks = [getattr(b, "meta", None) or {} for b in result.content]
    if not any(k.startswith(META_PREFIX) for m in (meta, *blocks) for k in m):
        return result
    content = [
        b.model_copy(
            update={"meta": {k: v for k, v in m.items() if not k.startswith(META_PREFIX)} or None}
        )
        if m
        else b
        for b, m in zip(result.content, blocks, strict=True)
    ]
    kept = {k: v for k, v in meta.items() if not k.startswith(META_PREFIX)}
    return result.model_copy(update={"meta": kept or None, "content": content})


def mirror_structured(result: CallToolResult) -> CallToolResult:
    """The result with a text block holding ``structuredContent``'s JSON, unless one of
    its text blocks already holds it (as MCP asks a server to send it: the result's data
    for any reader of text). Applied after redaction, so it mirrors what the agent may see;
    the block is the page's text, framed with the rest (:func:`frame_result`)."""
    structured = result.structured_content
    if structured is None or any(_holds(block, structured) for block in result.content):
        return result
    text = json.dumps(structured, ensure_ascii=False, separators=(",", ":"))
    mirror = TextContent(type="text", text=text)
    return result.model_copy(update={"content": [*result.content, mirror]})


def _holds(block: ContentBlock, structured: dict[str, Any]) -> bool:
    if not isinstance(block, TextContent):
        return False
    try:
        return bool(json.loads(unframed(block.text)) == structured)
    except ValueError:
        return False


def prompt_json(result: dict[str, Any]) -> dict[str, Any]:
    """What a model's prompt gets of a result (agent-view JSON): its content blocks, without
    their ``_meta``, and ``isError``. ``structuredContent`` is left out — its data is in a
    text block, framed in a framed view (:func:`mirror_structured`) — and so is the result's
    ``_meta``: the page wrote neither for a model to read unframed."""
    content = [
        {key: value for key, value in block.items() if key != "_meta"}
        if isinstance(block, dict)
        else block
        for block in result.get("content") or []
    ]
    return {"content": content, "isError": bool(result.get("isError"))}
