"""JSON Schema patterns with ECMAScript semantics; empty choice lists; never a whole tool lost."""

from __future__ import annotations

import time
from typing import Any

import pytest

from harness.models import Tool
from harness.schemas import SCHEMA_BUDGET_S
from harness.schemas.patterns import checkable_schema, pattern_warnings, search
from harness.stages.validation import check_arguments, schema_problem, validate_arguments


def tool(properties: dict[str, Any], name: str = "t") -> Tool:
    schema = {"type": "object", "properties": properties, "additionalProperties": False}
    return Tool(
        name=name, description="d", inputSchema=schema, origin="http://a.test", frame="main"
    )


def test_an_ecmascript_only_pattern_is_checked_with_ecmascript_semantics() -> None:
    # `\p{L}` (a letter in any script) is JavaScript's; Python's `re` cannot compile it.
    names = tool({"name": {"type": "string", "pattern": r"^\p{L}+$"}})
    assert schema_problem(names.input_schema) is None
    assert check_arguments(names, {"name": "Zoë"}) is None
    assert check_arguments(names, {"name": "Łukasz"}) is None
    problems = validate_arguments(names, {"name": "R2D2"})
    assert [(p.path, p.schema_path) for p in problems] == [("/name", "/properties/name/pattern")]
    assert pattern_warnings([names]) == []


def test_ecmascript_and_python_disagree_where_it_matters() -> None:
    # `\d` is ASCII in ECMAScript, any digit in Python; `$` matches before a final newline
    # in Python only.
    assert search(r"^\d+$", "١٢٣") is False
    assert search(r"^a$", "a\n") is False
    assert search(r"^[\w-]+$", "a-b") is True


def test_a_pattern_no_engine_accepts_costs_only_its_keyword() -> None:
    broken = tool({"code": {"type": "string", "pattern": "(", "maxLength": 3}})
    assert schema_problem(broken.input_schema) is None
    assert check_arguments(broken, {"code": "abc"}) is None  # the pattern is not checked …
    assert check_arguments(broken, {"code": "abcd"}) is not None  # … the rest of it is
    (warning,) = pattern_warnings([broken])
    assert warning.code == "invalid-pattern" and warning.tool == "t"
    assert "/properties/code/pattern" in warning.message


def test_pattern_properties_use_ecmascript_too() -> None:
    schema = tool({})
    map_tool = Tool(
        name="m",
        description="d",
        inputSchema={"type": "object", "patternProperties": {r"^\p{Lu}": {"type": "integer"}}},
        origin="http://a.test",
        frame="main",
    )
    assert schema_problem(map_tool.input_schema) is None
    assert check_arguments(map_tool, {"Été": 1, "lower": "x"}) is None
    assert check_arguments(map_tool, {"Été": "x"}) is not None
    assert pattern_warnings([schema, map_tool]) == []


def test_an_empty_choice_list_means_no_value_not_a_broken_tool() -> None:
    # <select name=city></select>, filled by script later: Chromium writes anyOf: [].
    cities = tool(
        {
            "city": {"type": "string", "anyOf": [], "enum": []},
            "tags": {"type": "array", "items": {"type": "string", "anyOf": [], "enum": []}},
            "q": {"type": "string"},
        }
    )
    assert schema_problem(cities.input_schema) is None
    assert check_arguments(cities, {"q": "x"}) is None
    assert check_arguments(cities, {"tags": []}) is None
    refused = validate_arguments(cities, {"city": "Paris"})
    assert {p.path for p in refused} == {"/city"}
    assert checkable_schema({"anyOf": [], "x": 1}) == {"not": {}, "x": 1}


def test_an_ecmascript_pattern_that_backtracks_for_ever_is_stopped_and_the_next_match_works() -> (
    None
):
    # ECMAScript engines backtrack: `^(\p{L}+)+$` on 40 letters and a "!" would run for
    # hours. The match is stopped at the budget, the value refused, and the next check runs.
    runaway = tool({"name": {"type": "string", "pattern": r"^(\p{L}+)+$"}})
    refused = check_arguments(runaway, {"name": "é" * 40 + "!"})
    assert refused is not None and refused.is_error
    assert "took over 1 s" in refused.content[0].text  # type: ignore[union-attr]
    assert check_arguments(runaway, {"name": "Zoë"}) is None
    assert search(r"^\p{Lu}", "Émile") is True and search(r"^\p{Lu}", "émile") is False
    keys = {
        "type": "object",
        "patternProperties": {r"^(\w+)+$": {"type": "integer"}},
    }
    by_key = Tool(name="k", description="d", inputSchema=keys, origin="http://a.test", frame="main")
    refused = check_arguments(by_key, {"a" * 40 + "!": 1})
    assert refused is not None and "took over 1 s" in refused.content[0].text  # type: ignore[union-attr]


def test_the_matcher_child_keeps_no_pipe_of_the_harness_open() -> None:
    """The forked matcher must not hold the harness's pipes (Playwright's to its driver,
    say): the driver would never read end-of-file, and closing the harness would hang."""
    import os
    import select

    from harness.schemas.patterns import _Matcher

    read_end, write_end = os.pipe()  # stands for Playwright's pipe to its driver
    matcher = _Matcher()
    try:
        assert matcher.search("[a-z]+", "u", "abc", 30.0)  # forks the child, pipe open
        os.close(write_end)  # what Playwright does to stop its driver
        ready, _, _ = select.select([read_end], [], [], 30.0)
        assert ready and os.read(read_end, 1) == b"", "the child still holds the write end"
    finally:
        matcher._stop()
        os.close(read_end)


def keyed(pattern: str) -> Tool:
    """A tool whose parameter names must match ``pattern`` (nothing else is allowed)."""
    schema = {
        "type": "object",
        "patternProperties": {pattern: {"type": "string"}},
        "additionalProperties": False,
    }
    return Tool(name="t", description="d", inputSchema=schema, origin="http://a.test", frame="main")


def test_additional_properties_reads_the_pattern_properties_beside_it_as_ecmascript() -> None:
    # jsonschema's `additionalProperties` matched the keys with Python's `re`: a key pattern
    # only ECMAScript reads (`\p{Lu}`) raised re.error out of the check instead of deciding.
    upper = keyed(r"^\p{Lu}")
    assert check_arguments(upper, {"Ärger": "x"}) is None
    refused = check_arguments(upper, {"ärger": "x"})
    assert refused is not None and refused.is_error
    assert [p.schema_path for p in validate_arguments(upper, {"ärger": "x"})] == [
        "/additionalProperties"
    ]


@pytest.mark.timeout(120)
def test_a_key_pattern_that_backtracks_is_stopped_beside_additional_properties() -> None:
    # Python's `re` on `^(a+)+$` and 32 a's and a "!" runs for hours, and nothing stops it:
    # the process was held. Matched as every page pattern is, it stops at its budget.
    backtracks = keyed("^(a+)+$")
    refused = check_arguments(backtracks, {"a" * 32 + "!": "x"})
    assert refused is not None and refused.is_error
    assert "backtracks" in str(refused.content[0].text)


def unevaluated(pattern: str, via: str = "beside") -> Tool:
    """A tool whose parameter names must match ``pattern``, read by ``unevaluatedProperties``
    beside it, or through the ``allOf`` or the ``$ref`` it looks into (``via``)."""
    keyed = {"patternProperties": {pattern: {"type": "string"}}}
    schema: dict[str, Any] = {"type": "object", "unevaluatedProperties": False}
    if via == "allOf":
        schema["allOf"] = [keyed]
    elif via == "$ref":
        schema |= {"$defs": {"keyed": keyed}, "$ref": "#/$defs/keyed"}
    else:
        schema |= keyed
    return Tool(name="t", description="d", inputSchema=schema, origin="http://a.test", frame="main")


@pytest.mark.parametrize("via", ["beside", "allOf", "$ref"])
def test_unevaluated_properties_reads_the_pattern_properties_it_meets_as_ecmascript(
    via: str,
) -> None:
    # jsonschema's `unevaluatedProperties` matched the keys with Python's `re`: a key pattern
    # only ECMAScript reads (`\p{Lu}`) raised re.error out of the check instead of deciding,
    # and `$` matched before a trailing newline, which ECMAScript's does not.
    upper = unevaluated(r"^\p{Lu}", via)
    assert check_arguments(upper, {"Ärger": "x"}) is None
    refused = check_arguments(upper, {"ärger": "x"})
    assert refused is not None and refused.is_error
    assert [p.schema_path for p in validate_arguments(upper, {"ärger": "x"})] == [
        "/unevaluatedProperties"
    ]
    whole = unevaluated("^a$", via)
    assert check_arguments(whole, {"a": "x"}) is None
    assert [p.schema_path for p in validate_arguments(whole, {"a\n": "x"})] == [
        "/unevaluatedProperties"
    ]


@pytest.mark.timeout(60)
def test_a_key_pattern_that_backtracks_is_stopped_beside_unevaluated_properties() -> None:
    # Python's `re` on `^(a+)+$` and 32 a's and a "!" runs for hours, and nothing stops it:
    # the process was held. Matched as every page pattern is, it stops within the budget.
    started = time.monotonic()
    refused = check_arguments(unevaluated("^(a+)+$"), {"a" * 32 + "!": "x"})
    assert time.monotonic() - started < SCHEMA_BUDGET_S + 3
    assert refused is not None and refused.is_error
    assert "not run" in str(refused.content[0].text)
