"""GitHub's Markdown reader for the tests: cmark-gfm (the ``cmarkgfm`` package, GitHub's own
renderer with its extensions: tables, autolinks, strikethrough, tag filter), and what a
person sees of what it renders.

Every Markdown file the harness writes (``summary.md``, the GitHub step summary; the
experiments' ``results.md``, ``headline.md``, ``breakdown.md``, ``paired.md``) quotes text
someone else wrote. :func:`inert` checks that a file holding :data:`HOSTILE` texts renders
to the same elements as one holding harmless names (code spans aside: the harness writes
text GFM would autolink as code), that no text outside a code span is one github.com links
after rendering (it autolinks ``www.``, ``https://`` and e-mail addresses again in the HTML's
text, escapes undone, and links @mentions, issue references and commit SHAs in issues and
comments), and that each hostile text is shown as written.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from html.parser import HTMLParser

import cmarkgfm
from cmarkgfm.cmark import Options

HOSTILE = (
    "# a heading",
    "## two",
    "[click](https://evil.test/)",
    "![pic](https://evil.test/x.png)",
    "www.attacker.example",
    "see https://attacker.example/login",
    "http://a.example",
    "ftp://files.example/x",
    "mail victim@attacker.example",
    "xmpp:foo@bar.example",
    "<https://auto.example>",
    "<img src=x onerror=alert(1)>",
    "<b>bold</b> &amp; &lt;",
    "`code` and ``two``",
    "ends with a tick `",
    "` starts with one",
    "a | b | c",
    "a \\| b \\",
    "*em* _em_ **strong** ~~strike~~",
    "1. an item",
    "3) third",
    "+ plus",
    "===",
    "- a list item",
    "> a quote",
    "---",
    "[ref]: https://x.example",
    "user_name and _x_",
    "www.x.example|pipe`tick`",
    "@octocat please look",
    "fixes #1",
    "GH-12 again",
    "octo-org/repo#3",
    "see deadbee1 and 0123456789abcdef0123456789abcdef01234567",
)
"""Texts that Markdown would read as markup, each short enough to go unclipped in a table."""

HARMLESS = tuple(f"name{index}" for index in range(len(HOSTILE)))
"""As many harmless names, to build the same file with."""

# What github.com links in a rendered text node (its second, transform-time autolinking),
# and, in issues, pull requests and comments (where a CI job may post a summary), its
# references: an @mention (which notifies), an issue or pull request (#1, GH-1, owner/repo#1:
# a cross-reference in its timeline), a commit's SHA (7 hex digits or more).
_LINKED_TEXT = re.compile(
    r"www\.|[a-z][a-z0-9+.-]*://|[\w.+-]+@[\w-]+\.\w|(?<!\w)@[a-z0-9]|#\d|\bGH-\d|\b[0-9a-f]{7,40}\b",
    re.IGNORECASE,
)
_BLOCKS = {"p", "li", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre"}


def render(markdown: str) -> str:
    """``markdown`` as GitHub renders it (raw HTML kept, so that a test can see it)."""
    html: str = cmarkgfm.github_flavored_markdown_to_html(
        markdown, options=Options.CMARK_OPT_UNSAFE
    )
    return html


class Rendered(HTMLParser):
    """Rendered HTML as a person sees it: its elements, each block's text, and the text
    outside code spans."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.blocks: list[str] = []
        self.loose: list[str] = []
        self._open: list[int] = []
        self._code = 0
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag == "code":
            self._code += 1
        if tag in _BLOCKS:
            self._open.append(len(self.blocks))
            self.blocks.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "code":
            self._code -= 1
        if tag in _BLOCKS and self._open:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        if self._open:
            self.blocks[self._open[-1]] += data
        if not self._code:
            self.loose.append(data)


def inert(hostile: str, harmless: str, texts: Iterable[str] = HOSTILE) -> None:
    """Assert that the Markdown ``hostile`` (written with ``texts``) renders to the elements
    ``harmless`` (the same file with harmless names) renders to, code spans aside; that no
    text outside a code span is one github.com would link; and that each text is shown."""
    shown, plain = Rendered(render(hostile)), Rendered(render(harmless))
    assert [t for t in shown.tags if t != "code"] == [t for t in plain.tags if t != "code"], hostile
    linked = [text for text in shown.loose if _LINKED_TEXT.search(text)]
    assert not linked, linked
    missing = [text for text in texts if not any(text in block for block in shown.blocks)]
    assert not missing, (missing, shown.blocks)
