"""The search the scrubber finds withheld texts (and its handles) with
(``harness.stages.scrubbing._Search``, Aho-Corasick): what ``a|b|…``, sorted longest first,
finds — the leftmost place, the longest text of those that start there, none overlapping —
in time linear in the texts and the string, however a page chose the texts.

It replaced a regular expression written as a trie of every text: building it for 10 000
texts in a dozen forms each took 17 s on the event loop every session shares, and 80 000
strings of one sensitive result (1.5 MB) held the loop for 26 s and took 1.9 GB.
"""

from __future__ import annotations

import json
import re
from urllib.parse import quote

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.stages.scrubbing import MAX_SEARCHED_TEXTS, Scrubber, _Search

# Few characters, so that texts start alike, end inside one another and repeat; what
# ``re`` escapes; a character outside the BMP.
TEXTS = st.text(alphabet="ab%\\.(é😀", min_size=1, max_size=8)


def longest_first(texts: set[str]) -> re.Pattern[str]:
    return re.compile("|".join(re.escape(t) for t in sorted(texts, key=len, reverse=True)))


@settings(max_examples=400, deadline=None)
@given(texts=st.sets(TEXTS, min_size=1, max_size=30), haystack=st.text("ab%\\.(é😀x", max_size=60))
def test_the_search_finds_what_the_longest_first_alternation_finds(
    texts: set[str], haystack: str
) -> None:
    search = _Search((len(texts), 0), sorted(texts))
    expected = [(*m.span(), m.group(0)) for m in longest_first(texts).finditer(haystack)]
    assert search.spans(haystack) == expected
    assert search.found_in(haystack) is bool(expected)
    for text in texts:  # each text, on its own, is found whole
        assert search.spans(text)[0] == (0, len(text), text)


def test_texts_a_page_nests_in_one_another_are_found_longest_first() -> None:
    nested = sorted("a" * n for n in range(4, 4000))  # each ends where the next goes on
    search = _Search((len(nested), 0), nested)
    found = search.spans("a" * 10_000)
    assert [end - start for start, end, _ in found] == [3999, 3999, 2002]
    assert _Search((0, 0), []).spans("anything") == []


def test_a_text_is_searched_for_in_a_few_forms_not_one_per_encoding() -> None:
    # 20 000 strings with a space, "&" and "é" (a dozen percent- and JSON-encoded forms each,
    # 280 000 texts for one result, before): each is searched for as written and with form
    # encoding's "+"; its encodings are read, not listed.
    rows = [f"row {n:05d} note & café" for n in range(20_000)]
    scrubber = Scrubber()
    scrubber.withhold_result({"content": [], "structuredContent": {"rows": rows}}, "wmh-result-0")
    assert len(scrubber) == 2 * len(rows) <= MAX_SEARCHED_TEXTS and not scrubber.full
    for written in (rows[12_345], quote(rows[12_345]), json.dumps(rows[12_345])[1:-1]):
        assert scrubber.text(f"see {written}.") == "see wmh-result-0.", written
    assert scrubber.scrub({"other": "nothing withheld here"}) == {"other": "nothing withheld here"}


def test_lone_surrogates_are_searched_for_and_in() -> None:
    # JavaScript strings may hold them, UTF-8 cannot: the search of a result holding one
    # raised UnicodeEncodeError (found by tests/test_schemas.py's lone-surrogate value).
    scrubber = Scrubber()
    scrubber.withhold("HX\ud800-secret", "wmh-secret-0")
    scrubber.withhold("plain-secret", "wmh-secret-1")
    shown = scrubber.text("a \udfff b HX\ud800-secret c plain-secret \ud800")
    assert shown == "a \udfff b wmh-secret-0 c wmh-secret-1 \ud800"
    assert scrubber.scrub({"k": ["\udc00", "HX\ud800-secret"]}) == {"k": ["\udc00", "wmh-secret-0"]}
