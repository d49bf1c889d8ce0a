"""The README's table of contents leads somewhere: every link is a heading's anchor, and
every section is in it."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces → hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def test_every_contents_link_is_a_heading_and_every_section_is_listed() -> None:
    text = README.read_text(encoding="utf-8")
    contents = text[text.index("## Contents") : text.index("## Quick start")]
    headings = re.findall(r"^#{2,3} (.+)$", text, flags=re.MULTILINE)
    anchors = {anchor(h) for h in headings}
    links = re.findall(r"\]\(#([^)]+)\)", contents)
    assert links and [link for link in links if link not in anchors] == []
    sections = {anchor(h) for h in re.findall(r"^## (.+)$", text, flags=re.MULTILINE)}
    assert sorted(sections - set(links) - {"contents"}) == []
