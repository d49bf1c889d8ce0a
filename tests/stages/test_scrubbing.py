"""The session's scrubber (``harness/stages/scrubbing.py``), without a browser."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.stages.redaction import WithheldItem
from harness.stages.scrubbing import HANDLE, MIN_SCRUB_LENGTH, SHAPE_KEYS, Scrubber, needles_of
from harness.stages.vault import Vault, new_handle

SECRET = "sk live/ünï 42"
HANDLE_1 = new_handle("field")


def test_a_withheld_value_is_found_in_the_forms_json_and_urls_write_it() -> None:
    scrubber = Scrubber()
    scrubber.withhold(SECRET, HANDLE_1)
    for shown in (
        SECRET,
        json.dumps(SECRET)[1:-1],  # \u00fc…
        "sk%20live%2F%C3%BCn%C3%AF%2042",
        "sk+live%2F%C3%BCn%C3%AF+42",
    ):
        assert scrubber.text(f"x {shown} y") == f"x {HANDLE_1} y", shown


def test_the_keys_of_a_withheld_object_are_withheld_with_it() -> None:
    assert {"alice-account", "bob-account", "1234"} <= needles_of(
        {"alice-account": 1234, "bob-account": [True, None]}
    )
    assert all(len(n) >= MIN_SCRUB_LENGTH for n in needles_of({"ab": "cd", "abcd": 1}))


def test_a_whole_result_is_withheld_by_what_the_page_wrote_in_it() -> None:
    scrubber = Scrubber()
    scrubber.withhold_result(
        {
            "content": [
                {"type": "text", "text": "balance 1,234.56"},
                {"type": "text", "text": json.dumps({"iban": "DE89370400440532013000"})},
            ],
            "structuredContent": {"owner": "Ada Lovelace"},
        },
        HANDLE_1,
    )
    said = "ada: balance 1,234.56, DE89370400440532013000, Ada Lovelace; text stays"
    assert scrubber.text(said) == f"ada: {HANDLE_1}, {HANDLE_1}, {HANDLE_1}; text stays"


def test_a_whole_result_gives_its_long_values_not_its_keys_or_short_words() -> None:
    scrubber = Scrubber()
    scrubber.withhold_result(
        {
            "content": [{"type": "text", "text": json.dumps({"scope": "read", "n": 4821})}],
            "structuredContent": {"token": "tok-9f8e7d6c", "type": "bearer"},
        },
        HANDLE_1,
    )
    said = "read the thread on the token scope: bearer 4821, tok-9f8e7d6c"
    assert scrubber.text(said) == f"read the thread on the token scope: bearer 4821, {HANDLE_1}"


def test_no_withheld_text_rewrites_a_key_the_shape_is_written_with() -> None:
    scrubber = Scrubber()
    for word in ("text", "label", "handle", "properties", "structuredContent"):
        scrubber.withhold(word, HANDLE_1)
    result = {
        "content": [{"type": "text", "text": "a text"}],
        "structuredContent": {"label": "handle", "properties": 1},
        "_meta": {"webmcp-harness/redacted": [{"path": "", "label": "l", "handle": "h"}]},
    }
    assert scrubber.scrub(result) == {
        "content": [{"type": "text", "text": f"a {HANDLE_1}"}],
        "structuredContent": {"label": HANDLE_1, "properties": 1},
        "_meta": {"webmcp-harness/redacted": [{"path": "", "label": "l", "handle": "h"}]},
    }
    assert set(WithheldItem.model_fields) <= SHAPE_KEYS


def test_handles_are_never_rewritten_and_nothing_changed_is_not_copied() -> None:
    scrubber = Scrubber()
    other = new_handle("result")
    scrubber.note_handle(other)  # a handle the session's vault gave
    scrubber.withhold(other[4:12], HANDLE_1)  # a withheld text that is part of a handle
    assert scrubber.text(f"{other} {other[4:12]}") == f"{other} {HANDLE_1}"
    untouched = {"a": [1, "plain"], "b": {"c": "x"}}
    assert scrubber.scrub(untouched) is untouched
    assert HANDLE.fullmatch(HANDLE_1) and repr(scrubber) == "<Scrubber: 1 texts>"


@pytest.mark.parametrize("prefix", ["wmh-secret-", "wmh-ref-000000000000000", "wmh-user-"])
def test_text_shaped_like_a_handle_does_not_hide_a_withheld_text(prefix: str) -> None:
    # Found from outside: every text of the handle's shape was left as it was, so a page that
    # wrote "wmh-secret-" before a withheld text starting with hex digits showed it whole.
    scrubber = Scrubber()
    hexadecimal = "9f3a1c77e2b04d5f8a6e0c1d2b3a4f5e"
    scrubber.withhold(hexadecimal, HANDLE_1)
    scrubber.withhold("c0ffee-Recovery-Phrase", HANDLE_1)
    for secret in (hexadecimal, "c0ffee-Recovery-Phrase"):
        assert scrubber.text(f"ref {prefix}{secret}!") == f"ref {prefix}{HANDLE_1}!"
        assert scrubber.scrub({"k": f"{prefix}{secret}"}) == {"k": f"{prefix}{HANDLE_1}"}


def test_a_type_member_is_kept_only_when_it_writes_a_shape() -> None:
    # A page may put anything under a key named "type" (found from outside: a withheld
    # value repeated as {"auth": {"type": {"value": SECRET}}} reached the agent whole).
    scrubber = Scrubber()
    scrubber.withhold("string", HANDLE_1)  # a withheld value that is also a shape word
    scrubber.withhold(SECRET, HANDLE_1)
    block = {"type": "text", "text": "string"}
    assert scrubber.scrub(block) == {"type": "text", "text": HANDLE_1}
    schema = {"type": ["string", "null"], "enum": [SECRET, "string"]}
    assert scrubber.scrub(schema) == {"type": ["string", "null"], "enum": [HANDLE_1, HANDLE_1]}
    for page_data in (
        {"type": SECRET},
        {"type": {"scheme": "bearer", "value": SECRET}},
        {"type": [SECRET, "text"]},
        {"properties": {"type": {"type": "string", "description": f"key {SECRET}"}}},
    ):
        assert SECRET not in json.dumps(scrubber.scrub(page_data), ensure_ascii=False), page_data


def test_a_key_that_was_a_secret_keeps_its_member() -> None:
    scrubber = Scrubber()
    scrubber.withhold("secret-key", HANDLE_1)
    assert scrubber.scrub({"secret-key": 1, HANDLE_1: 2}) == {HANDLE_1: 1, HANDLE_1 + "#": 2}


def test_agent_sessions_share_their_session_s_scrubber_and_it_outlives_one_of_them() -> None:
    shared = Scrubber()
    first, second = Vault(scrubber=shared), Vault(scrubber=shared)
    first.scrubber.withhold("from the first agent", HANDLE_1)
    assert second.scrubber.text("from the first agent") == HANDLE_1
    first.clear()  # one agent goes (an MCP client disconnects): the rest stay protected
    assert second.scrubber.text("from the first agent") == HANDLE_1
    alone = Vault()
    alone.scrubber.withhold("only mine", HANDLE_1)
    alone.clear()
    assert not alone.scrubber


# Texts with every character JSON writes otherwise (quote, backslash, controls), non-ASCII
# ones, what URLs encode, and the letters handles are made of.
TEXTS = st.text(alphabet='ab"\\\n\t\x01é€ %+/wmh-0f', max_size=12)
VALUES = st.recursive(
    TEXTS | st.integers() | st.booleans() | st.none(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXTS, inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(withheld=st.lists(TEXTS, min_size=1, max_size=4), value=VALUES, data=st.data())
def test_the_search_of_a_values_json_finds_whatever_the_walk_would_replace(
    withheld: list[str], value: Any, data: st.DataObject
) -> None:
    scrubber = Scrubber()
    for text in withheld:
        scrubber.withhold(text, HANDLE_1)
    # the value holds one of the withheld texts' forms, in a string or a key, or none
    if data.draw(st.booleans()) and scrubber:
        form = data.draw(st.sampled_from(sorted(scrubber._needles)))
        value = {"k": [value, f"x{form}y"]} if data.draw(st.booleans()) else {form: value}
    walked = scrubber._walk(value)
    assert scrubber.scrub(value) == walked
    if isinstance(value, dict | list) and walked is value:  # nothing to replace:
        assert scrubber.scrub(value) is value  # nothing copied


def test_a_value_with_no_withheld_text_is_searched_once_and_not_walked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    scrubber = Scrubber()
    for text in ('he said "hi"\n', "sk live/ünï 42", "plain-secret"):
        scrubber.withhold(text, HANDLE_1)
    clean = {"rows": [{"name": f"row {i}", "note": 'a "quoted" \\ é'} for i in range(1000)]}
    dirty = {"rows": [*clean["rows"], {"note": 'json: {"said": "he said \\"hi\\"\\n"}'}]}

    def walked(value: Any) -> Any:
        raise AssertionError("walked a value that holds no withheld text")

    with monkeypatch.context() as patched:
        patched.setattr(scrubber, "_walk", walked)
        assert scrubber.scrub(clean) is clean
    # the escaped form, written literally in a JSON text, is still found and replaced
    assert scrubber.scrub(dirty)["rows"][-1] == {"note": f'json: {{"said": "{HANDLE_1}"}}'}
