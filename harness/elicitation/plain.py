"""Page-provided text made safe to print on a terminal (:func:`plain`).

A module of its own, with no imports beyond the standard library: every terminal output
uses it — the prompts of :mod:`harness.elicitation.terminal`, the CLI (its error line too,
which must not load the harness's stack), ``trace show``, the agent's live lines, the demo.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any

# Shown as escapes, never sent raw: C0 and C1 controls (ESC and CSI start every terminal
# escape sequence: clipboard writes, screen clears, hidden text), DEL, the invisible
# format characters (bidi overrides, zero-width joiners) that reorder or hide what a
# person reads, and the Unicode line/paragraph separators. Newlines and tabs stay.
_HIDDEN = ("Cc", "Cf", "Zl", "Zp")


def _visible(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def plain(text: Any) -> str:
    """Page-provided text made safe to print: what every terminal output of the harness
    (the CLI, ``trace show``, the agent's live lines, the demo, these prompts) shows of it.

    Control and format characters become visible escapes (``\\x1b``, ``\\u202e``), so a
    page cannot move the cursor, clear the screen, write the clipboard or reorder a line.
    Print the result as plain text — ``rich.text.Text``, or ``markup=False`` — never as
    rich markup, so a ``[/x]`` in a description is just text.
    """
    value = text if isinstance(text, str) else json.dumps(text, ensure_ascii=False)
    return "".join(
        _visible(ch) if ch not in "\n\t" and unicodedata.category(ch) in _HIDDEN else ch
        for ch in value
    )
