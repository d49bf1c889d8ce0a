"""harness.browser.wellformed: lone surrogates become U+FFFD, pairs the character they encode, and
a value with nothing to mend comes back as the very same object (no copy per call)."""

from __future__ import annotations

import json

from harness.browser.wellformed import is_well_formed, loads, well_formed, well_formed_text


def test_lone_surrogates_become_the_replacement_character() -> None:
    assert well_formed_text("a\ud800b\udc00") == "a\ufffdb\ufffd"
    assert well_formed_text("\ud83d\ude00") == "\U0001f600"  # a pair kept as one character
    assert is_well_formed("é😀") and not is_well_formed("\udfff")


def test_keys_and_nested_values_are_mended_and_clean_values_are_not_copied() -> None:
    value = {"k\udc00": ["x\ud800", {"n": 1}], "ok": "é"}
    assert well_formed(value) == {"k\ufffd": ["x\ufffd", {"n": 1}], "ok": "é"}
    clean = {"a": ["b", {"c": 1}]}
    assert well_formed(clean) is clean


def test_loads_mends_escaped_and_raw_surrogates() -> None:
    assert loads(json.dumps({"t": "abc\ud800def"})) == {"t": "abc\ufffddef"}  # "\ud800" escape
    assert loads('{"t": "\\uD800"}') == {"t": "\ufffd"}
    assert loads('"raw \udc00"') == "raw \ufffd"
    assert loads('"\\ud83d\\ude00"') == "\U0001f600"
