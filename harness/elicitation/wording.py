"""A question's words: the harness's own, and the page's, quoted as the page's.

A question a person answers must not let a page speak in the harness's voice. So an
:class:`~harness.elicitation.base.ElicitationRequest` keeps the two apart: ``message``
is one of the harness's own sentences (:data:`WORDING`, fixed per source: nothing a
page wrote is ever in it), and whatever a page (or the agent) wrote that the question
shows — a tool's name, a form's title, the page's own question, the agent's arguments,
the URLs of the data involved — is a :class:`~harness.elicitation.base.Quoted` beside
it. Every display (terminal, browser tab, MCP ``elicitation/create``) builds its lines
with :func:`question_lines`, which shows quoted text by :func:`quote`: on one line,
cut at :data:`QUOTE_LIMIT` characters, control characters as visible escapes, inside
quotation marks and labelled as the page's. Answers files match ``message`` against the
harness's wording only (:mod:`harness.elicitation.answers`).

:func:`plain` is what every terminal output of page text goes through, and
:func:`markdown_text` (:func:`markdown_cell` in a table) what every Markdown file the harness
writes quotes it with: ``summary.md``, the experiments' tables, ``reliability.md``.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from harness.elicitation.base import ElicitationRequest, Source

QUOTE_LIMIT = 200
"""The most characters of one quoted text a question shows."""
LABEL_LIMIT = 80
"""The most characters of a label (a field's title, a choice) a form shows."""

# The harness's own sentences, by source: the only text a question's `message` holds.
POLICY_CALL = "A policy asks you to confirm: let the agent call this tool?"
POLICY_RESULT = "A policy asks you to confirm: pass this tool's result to the agent?"
NAVIGATION_LEAVE = "The agent wants to open a page on another origin. Allow it?"
NAVIGATION_REDIRECTED = (
    "The agent opened a page, and the site redirected it to another origin. Stay there?"
)
NAVIGATION_BY_ITSELF = (
    "The page went to another origin by itself (a script, a refresh, a redirect); its tools "
    "are paused. Allow that origin?"
)
FORM_REVIEW = (
    "The agent filled this page's form, and it waits to be submitted. Submit it with these values?"
)
TOOL_ELICIT = "This page's form asks you to confirm or fill in these fields before it is sent."
TOOL_QUESTION = "A tool of this page asks you a question."
TOOL_OPEN_URL = "A tool of this page asks you to open a web address."
TOOL_INTERACT = "A tool of this page asks to interact with you."

WORDING: dict[Source, tuple[str, ...]] = {
    "policy": (POLICY_CALL, POLICY_RESULT),
    "navigation": (NAVIGATION_LEAVE, NAVIGATION_REDIRECTED, NAVIGATION_BY_ITSELF),
    "form-review": (FORM_REVIEW,),
    "tool-elicit": (TOOL_ELICIT,),
    "tool-question": (TOOL_QUESTION, TOOL_OPEN_URL, TOOL_INTERACT),
}
"""Every sentence the harness asks with, by source (an answers file's ``message`` must be
part of one of them)."""

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
    (the CLI, ``trace show``, the agent's live lines, the demo, these prompts, pytest's
    assertion messages) shows of it.

    Control and format characters become visible escapes (``\\x1b``, ``\\u202e``), so a
    page cannot move the cursor, clear the screen, write the clipboard or reorder a line.
    Print the result as plain text — ``rich.text.Text``, or ``markup=False`` — never as
    rich markup, so a ``[/x]`` in a description is just text.
    """
    value = text if isinstance(text, str) else json.dumps(text, ensure_ascii=False)
    if value.isascii() and value.isprintable():  # the usual case: nothing to show
        return value
    return "".join(
        _visible(ch) if ch not in "\n\t" and unicodedata.category(ch) in _HIDDEN else ch
        for ch in value
    )


def plain_json(text: str) -> str:
    """JSON text (``json.dumps(..., ensure_ascii=False)``) with every character
    :func:`plain` would show as an escape written as a JSON ``\\u`` escape instead: the
    same JSON value, safe to print (``snapshot`` writes its file to the terminal), still
    readable where it is plain text. JSON escapes C0 controls itself, not C1 controls
    (an 8-bit CSI) nor format characters (a right-to-left override)."""
    if text.isascii():
        return text
    return "".join(
        # A newline outside a string is the layout (json.dumps escapes those inside).
        f"\\u{ord(ch):04x}" if ch != "\n" and unicodedata.category(ch) in _HIDDEN else ch
        for ch in text
    )


def quote(text: Any, limit: int = QUOTE_LIMIT) -> str:
    """Text someone else wrote, as a question shows it: one line in quotation marks, at
    most ``limit`` characters of it (the rest counted), newlines, quotation marks and
    control characters escaped — so it can neither end its own quotation nor start a line
    that reads as the harness's."""
    value = text if isinstance(text, str) else json.dumps(text, ensure_ascii=False)
    rest = len(value) - limit
    shown = json.dumps(value[:limit] if rest > 0 else value, ensure_ascii=False)
    shown = plain(shown)  # json.dumps leaves C1 controls, bidi and format characters raw
    return shown + (f" … ({rest:,} more characters)" if rest > 0 else "")


def one_line(text: Any, limit: int = LABEL_LIMIT) -> str:
    """A label someone else wrote (a field's title, a choice), as a form shows it: on one
    line (newlines and tabs written ``\\n``, ``\\t``; control characters as escapes), at
    most ``limit`` characters as shown — the escapes and the count of what was cut (``…
    (139 more characters)``) included, an escape never cut — so it cannot write lines of
    its own under the harness's, in its voice. Longer page text is shown by :func:`quote`."""
    value = text if isinstance(text, str) else json.dumps(text, ensure_ascii=False)
    pieces = [_label_piece(ch) for ch in value[: limit + 1]]  # each shows as 1 or more
    if len(value) <= limit and sum(map(len, pieces)) <= limit:
        return "".join(pieces)
    shown = _cut_note(len(value))
    width = 0
    for kept in range(1, min(len(value), limit + 1)):
        width += len(pieces[kept - 1])
        note = _cut_note(len(value) - kept)
        if width + len(note) > limit:
            break
        shown = "".join(pieces[:kept]) + note
    return shown


def _label_piece(char: str) -> str:
    """One character of a label as :func:`one_line` shows it."""
    if char == "\n":
        return "\\n"
    if char == "\t":
        return "\\t"
    return _visible(char) if unicodedata.category(char) in _HIDDEN else char


def _cut_note(rest: int) -> str:
    return f" … ({rest:,} more characters)"


# What Markdown (GitHub's, cmark-gfm) reads as syntax in a line's text: escapes, code spans,
# emphasis, strikethrough, links and images, HTML and entities, table cells.
_MARKDOWN_SYNTAX = re.compile(r"([\\`*\[\]|~<>&])")
# An underscore opens or closes emphasis unless it sits between two letters or digits.
_LOOSE_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
# A block a line's first characters would start: a heading, a list item, a setext underline
# or a thematic break (``*`` and ``_`` are escaped wherever they are).
_BLOCK_START = re.compile(
    r"^( *)(#{1,6}(?=[ \t]|$)|[-+](?=[ \t]|$)|\d{1,9}[.)](?=[ \t]|$)|[-=]+ *$)"
)
# What GFM makes a link with no syntax at all: www. and scheme:// autolinks, e-mail addresses
# (and xmpp:/mailto: with them). github.com links these again in the rendered text, after
# escapes and character references are undone, so no escape stops them: only a code span
# (whose text no autolinking reads) does. The same goes for its references in issues, pull
# requests and comments, where CI posts summaries: an @mention (it notifies the user), an
# issue (#1, GH-1, owner/repo#1: a cross-reference in that timeline), a commit's
# SHA. Matched loosely: a false match (a number of seven digits) costs a code span.
_AUTOLINKABLE = re.compile(r"www\.|://|@|#\d|\bGH-\d|\b[0-9a-f]{7,40}\b", re.IGNORECASE)


def markdown_text(text: str, *, cell: bool = False) -> str:
    """Text someone else wrote (a page's, a grid's, a message quoting either) as Markdown
    shows it: on one line, control characters shown, read as the same visible text by GitHub's
    renderer and never as markup — no heading, list, link, image, autolink, e-mail link,
    HTML, emphasis or table cell can start in it. ``cell``: it goes in a table cell.

    Text GFM would autolink (``www.``, ``https://``, ``a@b.c``) or github.com would read as
    a reference (``@user``, ``#1``, ``GH-1``, a commit SHA) becomes a code span; any other
    text has its Markdown syntax backslash-escaped. Cut a text before, never after."""
    line = plain(" ".join(text.splitlines())).replace("\n", " ")
    if _AUTOLINKABLE.search(line):
        return _code_span(line, cell=cell)
    escaped = _LOOSE_UNDERSCORE.sub(r"\\_", _MARKDOWN_SYNTAX.sub(r"\\\1", line))
    return _BLOCK_START.sub(_escaped_block, escaped)


def _escaped_block(match: re.Match[str]) -> str:
    """The start of a line with its block marker escaped (an ordered item's ``.`` or ``)``)."""
    indent, marker = match.groups()
    if marker[0].isdigit():
        return f"{indent}{marker[:-1]}\\{marker[-1]}"
    return f"{indent}\\{marker}"


def markdown_cell(text: str) -> str:
    """``text`` as a cell of a Markdown table: :func:`markdown_text` for a cell."""
    return markdown_text(text, cell=True)


def _code_span(text: str, *, cell: bool) -> str:
    """``text`` as a code span: fenced by more backticks than any run in it, padded with a
    space where it starts or ends with a backtick or a space (a reader removes one of each);
    in a table cell each ``|`` escaped (the table's own escape, undone inside code spans)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text[0] in "` " or text[-1] in "` " else ""
    if cell:
        text = text.replace("|", "\\|")
    return f"{fence}{pad}{text}{pad}{fence}"


class QuestionLine(NamedTuple):
    """One line of a question as a person sees it: a label (the harness's words) and a
    value; ``by`` is who wrote the value ("" for the harness; "page", "agent")."""

    label: str
    value: str
    by: str = ""

    def as_text(self) -> str:
        """The line as plain text: ``label: value``, with whose words it quotes."""
        marked = f" (the {self.by}'s words)" if self.by else ""
        return f"{self.label}: {self.value}{marked}"


def question_lines(request: ElicitationRequest) -> list[QuestionLine]:
    """The lines every display shows under the harness's ``message``: who asks, about
    what, and every quoted text (already made safe by :func:`quote`)."""
    lines: list[QuestionLine] = []
    if request.origin:
        lines.append(QuestionLine("asked by", plain(request.origin)))
    if request.destination:
        lines.append(QuestionLine("destination origin", plain(request.destination)))
    if request.tool:
        lines.append(QuestionLine("tool", quote(request.tool), "page"))
    if request.rule:
        lines.append(QuestionLine("rule", plain(request.rule)))
    lines += [QuestionLine("why", plain(note)) for note in request.notes]
    for quoted in request.quoted:
        lines.append(QuestionLine(quoted.label, quote(quoted.text), quoted.by))
    for url in request.attribution:
        lines.append(QuestionLine("data from", quote(url), "page"))
    for key, value in request.facts.items():
        lines.append(QuestionLine(plain(key), quote(value), "page"))
    if request.url:
        lines.append(QuestionLine("open", quote(request.url), "page"))
    return lines


def question_text(request: ElicitationRequest) -> str:
    """The whole question as plain text (an MCP ``elicitation/create`` message): the
    harness's sentence, then one line per :func:`question_lines` entry."""
    return "\n".join([request.message, *(line.as_text() for line in question_lines(request))])
