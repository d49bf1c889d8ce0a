"""A pattern's two readings: a form control's as HTML compiles it (``^(?:…)$``, the ``v``
flag, ignored when it does not compile so), a script tool's as JSON Schema reads it (the ``u``
flag, else none, anywhere in the value) — chosen by the tool's source, never by the text."""

from __future__ import annotations

from typing import Any

import pytest

from harness.models import Tool, ToolSource
from harness.schemas import patterns
from harness.schemas.patterns import PatternTimeout, pattern_flags, pattern_warnings, search
from harness.stages.validation import check_arguments, validate_arguments

# (pattern, value, whether a <form toolname> control with that pattern takes the value):
# Chromium's own verdicts (tests/declarative/test_form_patterns_vflag.py holds Chromium to
# them), where the u flag (or none) reads the pattern otherwise.
HTML_VERDICTS: list[tuple[str, str, bool]] = [
    (r"[[a-z]--[aeiou]]+", "xyz", True),  # set subtraction: no pattern under u
    (r"[[a-z]--[aeiou]]+", "abc", False),
    (r"[\d--3]+", "3", False),
    (r"[\p{L}--[a-z]]+", "ÉA", True),  # no pattern under u, nor without flags
    (r"[\p{L}--[a-z]]+", "a", False),
    (r"[\w&&\d]+", "abc", False),  # intersection: under u, `&&` is two ampersands
    (r"[\w&&\d]+", "123", True),
    (r"[\w&&\d]+", "&", False),
    (r"[[a-z][0-9]]+", "a1", True),  # a nested class
    (r"[[a-z][0-9]]+", "a1]", False),
    ("\\p{RGI_Emoji}", "\U0001f600", True),  # a property of strings
    ("\\p{RGI_Emoji}", "\U0001f44d\U0001f3fd", True),  # two code points, one emoji
    ("\\p{RGI_Emoji}", "p{RGI_Emoji}", False),
    (r"[\q{abc|d}]", "abc", True),  # a string in a class
    (r"[\q{abc|d}]", "a", False),
    ("[0-9]{3}", "x123x", False),  # HTML anchors
]

# Valid under u, no pattern under v: HTML ignores the attribute, so any value goes.
NOT_UNDER_V = [r"[(]", r"[a-z-]", r"[\w-]+", r"[a&&&b]", r"[|]", r"a)|(b"]


def tool(pattern: str, source: ToolSource) -> Tool:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"v": {"type": "string", "pattern": pattern}},
    }
    return Tool(
        name="t", description="d", inputSchema=schema, origin="o", frame="main", source=source
    )


def form_takes(pattern: str, value: str) -> bool:
    return validate_arguments(tool(pattern, "declarative"), {"v": value}) == []


def test_the_dialect_comes_from_the_tool_not_the_pattern() -> None:
    assert patterns.dialect_of(tool("x", "declarative")) is patterns.HTML
    assert patterns.dialect_of(tool("x", "script")) is patterns.JSON_SCHEMA
    assert patterns.HTML.source("[0-9]{3}") == "^(?:[0-9]{3})$"
    assert patterns.JSON_SCHEMA.source("[0-9]{3}") == "[0-9]{3}"


@pytest.mark.parametrize(("pattern", "value", "takes"), HTML_VERDICTS)
def test_a_forms_pattern_is_read_as_html_reads_it(pattern: str, value: str, takes: bool) -> None:
    assert form_takes(pattern, value) is takes
    assert pattern_flags(pattern, patterns.HTML) == "v"
    assert search(pattern, value, dialect=patterns.HTML) is takes


@pytest.mark.parametrize("pattern", NOT_UNDER_V)
def test_a_forms_pattern_that_is_none_under_v_is_ignored_as_html_ignores_it(pattern: str) -> None:
    assert form_takes(pattern, "1")
    (warning,) = pattern_warnings([tool(pattern, "declarative")])
    assert warning.code == "invalid-pattern" and "v flag" in warning.message
    assert pattern_flags(pattern, patterns.HTML) is None
    assert patterns.compile_pattern(pattern, patterns.HTML) is None
    assert search(pattern, "1", dialect=patterns.HTML) is None


def test_html_compiles_the_attribute_as_written_not_only_anchored() -> None:
    # `^(?:a)|(b)$` compiles; `a)|(b` does not, and HTML ignores it.
    assert pattern_flags("^(?:a)|(b)$", patterns.JSON_SCHEMA) == "u"
    assert pattern_flags("a)|(b", patterns.HTML) is None


def test_a_script_tools_pattern_keeps_json_schemas_reading() -> None:
    script = tool(r"[\w&&\d]+", "script")
    assert validate_arguments(script, {"v": "abc"}) == []  # u: `&&` are ampersands
    assert validate_arguments(script, {"v": "x123x"}) == []  # anywhere in the value
    assert pattern_flags(r"[\w&&\d]+") == "u"
    assert pattern_flags(r"[[a-z]--[aeiou]]+") == ""  # no pattern under u: none
    assert validate_arguments(tool(r"[a-z-]", "script"), {"v": "1"}) != []  # checked under u
    # The same schema, two tools: each read in its own dialect (the checks are cached).
    assert validate_arguments(tool(r"[\w&&\d]+", "declarative"), {"v": "abc"}) != []
    assert validate_arguments(script, {"v": "abc"}) == []


def test_warnings_follow_each_tools_dialect() -> None:
    subtraction = r"[\p{L}--[a-z]]+"  # a pattern under v only
    assert pattern_warnings([tool(subtraction, "declarative")]) == []
    (warning,) = pattern_warnings([tool(subtraction, "script")])
    assert "not an ECMAScript regular expression" in warning.message
    assert pattern_warnings([tool("\\p{RGI_Emoji}", "declarative")]) == []


def test_a_forms_refusal_says_its_pattern_is_read_as_html_reads_it() -> None:
    [problem] = validate_arguments(tool(r"[\w&&\d]+", "declarative"), {"v": "abc"})
    assert problem.path == "/v" and problem.schema_path == "/properties/v/pattern"
    # How it was read is said; the pattern itself, the page's text, is never quoted.
    assert "v flag, whole value" in problem.message and "&&" not in problem.message


def test_the_time_budget_holds_in_both_dialects() -> None:
    # A v-only pattern that backtracks for ever: stopped at the budget, and the next works.
    runaway = r"([[a-z]--[aeiou]]+)+"
    value = "bcd" * 14 + "!"
    with pytest.raises(PatternTimeout):
        search(runaway, value, dialect=patterns.HTML)
    refused = check_arguments(tool(runaway, "declarative"), {"v": value})
    assert refused is not None and "took over 1 s" in refused.content[0].text  # type: ignore[union-attr]
    text = refused.content[0].text  # type: ignore[union-attr]
    assert "[schema /properties/v/pattern]" in text and "--[aeiou]" not in text
    assert check_arguments(tool(runaway, "declarative"), {"v": "xyz"}) is None
    with pytest.raises(PatternTimeout):
        search(r"^(\w+)+$", "a" * 40 + "!")
    assert search(r"^\w+$", "abc") is True
