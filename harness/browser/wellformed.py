"""Page text as well-formed Unicode, where it enters the harness.

A JavaScript string may hold a lone UTF-16 surrogate (``"\\ud800"``); JSON carries it as an
escape and Python keeps it as a lone code point — which no UTF-8 output can hold: a
terminal, a report, a trace, MCP's JSON. One such character in a description or a result
would make every one of them fail. So every value the harness reads from a page (the
channel's messages and answers, Chromium's CDP records and results) is made well-formed
as it arrives, the way Web IDL's ``USVString`` conversion does (and Chromium does for a
tool's ``title``): each lone surrogate becomes U+FFFD; a high surrogate followed by a low
one is the character the pair encodes.
"""

from __future__ import annotations

import json
from typing import Any


def is_well_formed(text: str) -> bool:
    """Whether ``text`` holds no lone surrogate (an ASCII text is checked in O(1))."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def well_formed_text(text: str) -> str:
    """``text`` with each lone surrogate as U+FFFD (the same object when it has none)."""
    if is_well_formed(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def well_formed(value: Any) -> Any:
    """``value`` (JSON-like: dicts, lists, strings, …) with every string, keys included,
    well-formed; the same object when nothing needed it."""
    if isinstance(value, str):
        return well_formed_text(value)
    if isinstance(value, dict):
        items = [(well_formed(k), well_formed(v)) for k, v in value.items()]
        if all(k is k0 and v is v0 for (k, v), (k0, v0) in zip(items, value.items(), strict=True)):
            return value
        return dict(items)
    if isinstance(value, list):
        fixed = [well_formed(v) for v in value]
        return value if all(a is b for a, b in zip(fixed, value, strict=True)) else fixed
    return value


class TooDeep(ValueError):
    """Page JSON nested deeper than Python's JSON reader follows (its recursion limit:
    some hundreds of levels, a few kilobytes of brackets)."""


def loads(text: str) -> Any:
    """``json.loads`` of page-provided JSON text, every string of it well-formed. A text
    without a ``\\u`` escape of a surrogate and with only well-formed characters yields
    only well-formed strings: it is not walked.

    Raises :class:`ValueError` for text that is not JSON, and its subclass
    :class:`TooDeep` for JSON nested too deeply to read — never a ``RecursionError``,
    which a page could otherwise raise in whatever reads its words.
    """
    try:
        value = json.loads(text)
        if is_well_formed(text) and "\\ud" not in text and "\\uD" not in text:
            return value
        return well_formed(value)
    except RecursionError:
        raise TooDeep("the JSON is nested too deeply to be read") from None
