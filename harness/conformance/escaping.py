"""What each report format can hold, and page text made to fit it.

Every report quotes page text (tool names, messages, evidence, URLs the user gave). Each
format has characters that break it or change its meaning:

- XML 1.0 cannot hold C0 controls other than tab, newline and carriage return, lone
  surrogates, nor U+FFFE/U+FFFF: one of them makes the whole ``junit.xml`` ill-formed, and
  every CI reader rejects the file. :func:`xml_text` shows them as escapes (``\\x01``).
- A Markdown line (a GitHub step summary) ends at ``\\r`` too, so a ``\\r`` in a form name
  starts a new line — a heading, a link — in the harness's summary. :func:`md_text` keeps page
  text on one line, shows control characters, and writes it as every Markdown file of the
  harness does (:func:`harness.elicitation.wording.markdown_text`): syntax escaped, and what
  GFM would autolink (``www.…``, ``https://…``, ``a@b.c``) as a code span.
- HTML shows C0 controls as nothing at all (and a parser may refuse them): the HTML report
  prints every text through :func:`xml_text`, so it shows the escapes JUnit shows.
- Long page-provided names (a 300-character tool name) make tables unreadable:
  :func:`clip` shortens them for tables, keeping the start and the end.

Control and format characters are shown the way the terminal shows them
(:func:`harness.elicitation.terminal.plain`), so a reader sees the same escape everywhere.
"""

from __future__ import annotations

import re

from harness.elicitation.wording import markdown_text, plain

TABLE_WIDTH = 80
"""How many characters of a page-provided name a table cell shows."""

_XML_FORBIDDEN = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def xml_text(text: str) -> str:
    """``text`` with every character XML 1.0 cannot hold (and every control or format
    character a reader would not see) shown as an escape; newlines and tabs stay."""
    return _XML_FORBIDDEN.sub(_escape, plain(text))


def one_line(text: str) -> str:
    """``text`` on one line: line breaks become spaces, other controls and lone surrogates
    (which no UTF-8 terminal can print) visible escapes."""
    line = plain(" ".join(text.splitlines())).replace("\n", " ").replace("\t", " ")
    return _SURROGATE.sub(_escape, line)


def md_text(text: str, limit: int | None = None, *, cell: bool = False) -> str:
    """Page text for a Markdown line (or, with ``cell``, a table cell): one line, control
    characters shown, never read as markup (no heading, link, autolink, image, HTML or table
    cell can start in it: :func:`~harness.elicitation.wording.markdown_text`); clipped to
    ``limit`` characters when given."""
    line = one_line(text)
    if limit is not None:
        line = clip(line, limit)
    return markdown_text(line, cell=cell)


def clip(text: str, limit: int = TABLE_WIDTH) -> str:
    """``text`` shortened to ``limit`` characters: its start and end around an ellipsis."""
    if len(text) <= limit:
        return text
    head = (limit - 1) * 2 // 3
    tail = limit - 1 - head
    return text[:head] + "…" + (text[-tail:] if tail else "")
