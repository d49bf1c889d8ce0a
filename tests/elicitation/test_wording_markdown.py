"""Text someone else wrote, in Markdown: GitHub's renderer shows it as written and never as
markup — in a paragraph, at a line's start, in a list item and in a table cell."""

from __future__ import annotations

from harness.elicitation.wording import markdown_cell, markdown_text
from tests.gfm import HARMLESS, HOSTILE, Rendered, inert, render


def document(texts: tuple[str, ...]) -> str:
    """A Markdown file quoting each of ``texts`` in every place the harness writes text."""
    lines = ["## the harness's own heading", ""]
    for text in texts:
        lines += [f"{markdown_text(text)}: at a line's start", "", f"said {markdown_text(text)}"]
        lines += ["", f"- item {markdown_text(text)}", ""]
    lines += ["| name | n |", "|---|---|"]
    lines += [f"| {markdown_cell(text)} | 1 |" for text in texts]
    return "\n".join(lines) + "\n"


def test_page_text_in_markdown_is_shown_as_written_and_never_read_as_markup() -> None:
    """A tool named ``www.attacker.example`` (a valid WebMCP name) or a message quoting a URL
    became a link in the GitHub step summary: the escaping stopped headings and links but
    not GFM's autolinks, which no backslash stops on github.com."""
    inert(document(HOSTILE), document(HARMLESS))


def test_a_line_and_a_cell_read_back_exactly_as_written() -> None:
    for text in HOSTILE:
        [line] = Rendered(render(markdown_text(text))).blocks
        assert line == text, (text, markdown_text(text))
        *_, cell = Rendered(render(f"| name |\n|---|\n| {markdown_cell(text)} |\n")).blocks
        assert cell == text, (text, markdown_cell(text))
