"""The one pattern the scrubber searches every withheld text's forms with
(``harness.stages.scrubbing.alternation``): a trie of the texts that matches what
``a|b|…``, sorted longest first, matches — the longest text where several start at one
place — without trying each text at each place."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.stages import scrubbing
from harness.stages.scrubbing import alternation

# Few characters, so that texts start alike, end inside one another and repeat; what
# ``re`` escapes; a character outside the BMP.
TEXTS = st.text(alphabet="ab%\\.(é😀", min_size=1, max_size=8)


def longest_first(texts: set[str]) -> re.Pattern[str]:
    return re.compile("|".join(re.escape(t) for t in sorted(texts, key=len, reverse=True)))


@settings(max_examples=400, deadline=None)
@given(texts=st.sets(TEXTS, min_size=1, max_size=30), haystack=st.text("ab%\\.(é😀x", max_size=60))
def test_the_trie_matches_what_the_longest_first_alternation_matches(
    texts: set[str], haystack: str
) -> None:
    trie = re.compile(alternation(texts))
    expected = [m.span() for m in longest_first(texts).finditer(haystack)]
    assert [m.span() for m in trie.finditer(haystack)] == expected
    for text in texts:  # each text, on its own, matches whole
        assert trie.fullmatch(text) is not None, text


@settings(max_examples=100, deadline=None)
@given(texts=st.sets(TEXTS, min_size=1, max_size=30), haystack=st.text("ab%\\.(é😀x", max_size=60))
def test_past_its_depth_the_trie_lists_the_rest_of_each_text(
    texts: set[str], haystack: str
) -> None:
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(scrubbing, "TRIE_DEPTH", 2)
        trie = re.compile(alternation(texts))
    expected = [m.span() for m in longest_first(texts).finditer(haystack)]
    assert [m.span() for m in trie.finditer(haystack)] == expected


def test_texts_a_page_nests_in_one_another_compile_and_the_longest_matches() -> None:
    nested = ["a" * n for n in range(4, 400)]  # each ends where the next goes on, past TRIE_DEPTH
    match = re.compile(alternation(nested)).match("a" * 500)
    assert match is not None and match.end() == 399
    assert re.compile(alternation([])).search("anything") is None
