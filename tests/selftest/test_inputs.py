"""Bad input answered clearly: every family the selftest tries, and the defects it found
(each reproduced first: a KeyError from a snapshot without a name, names outside the
spec's rule accepted, 10^5-deep arguments taking a minute, a pattern that backtracks
for ever), plus property tests of argument validation and snapshot reading."""

from __future__ import annotations

import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.browser.backends.snapshots import tools_from_snapshots
from harness.catalog import FrameInfo
from harness.models import Tool
from harness.selftest.inputs import TRICK_NAMES, all_inputs
from harness.stages.validation import check_arguments

FRAME = FrameInfo(key="f0", url="http://127.0.0.1:1/", origin="http://127.0.0.1:1", is_main=True)


def tool(schema: dict[str, Any]) -> Tool:
    return Tool(name="t", description="d", inputSchema=schema, origin=FRAME.origin, frame="f0")


@pytest.mark.slow
def test_every_bad_input_the_selftest_tries_is_answered_clearly() -> None:
    results = all_inputs()
    unclear = [r for r in results if not r.clear]
    assert len(results) >= 300
    assert unclear == []
    assert {r.family for r in results} == {
        "tool-definition",
        "unicode-name",
        "input-schema",
        "arguments",
        "policy-file",
        "answers-file",
    }


def test_a_snapshot_without_a_name_is_a_warning_not_a_key_error() -> None:
    tools, warnings = tools_from_snapshots([{"description": "no name"}], FRAME, FRAME.origin)
    assert tools == []
    assert [w.code for w in warnings] == ["malformed-tool"]


def test_names_with_unicode_tricks_are_refused_with_a_warning() -> None:
    for _, name in TRICK_NAMES:
        snapshot = {"name": name, "description": "d", "inputSchema": {"type": "object"}}
        tools, warnings = tools_from_snapshots([snapshot], FRAME, FRAME.origin)
        assert tools == [], name
        assert "is not [A-Za-z0-9_.-]{1,128}" in warnings[0].message
        assert name not in warnings[0].message or name.isascii()  # shown escaped


def test_deeply_nested_arguments_are_refused_at_once() -> None:
    deep: Any = 1
    for _ in range(100_000):
        deep = [deep]
    started = time.perf_counter()
    refused = check_arguments(tool({"type": "object"}), {"n": deep})
    assert refused is not None and refused.is_error
    assert "nested deeper than 128 levels" in refused.content[0].text  # type: ignore[union-attr]
    assert time.perf_counter() - started < 30  # it took about a minute before


def test_a_catastrophic_pattern_does_not_hang_the_validator() -> None:
    schema = {"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a|a)*$"}}}
    refused = check_arguments(tool(schema), {"s": "a" * 40 + "b"})
    assert refused is not None and refused.is_error
    assert "took over 1 s" in refused.content[0].text  # type: ignore[union-attr]
    assert check_arguments(tool(schema), {"s": "aaaa"}) is None


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=20,
)
schemas = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(["object", "string", "integer", "array", 3, None, ["string"]]),
        "properties": st.dictionaries(st.text(max_size=3), st.just({"type": "integer"}), max_size=3)
        | json_values,
        "required": st.lists(st.text(max_size=3), max_size=3) | json_values,
        "pattern": st.sampled_from(["^a", "(", "[", "a{2,}", "^(a|a)*$"]) | json_values,
        "minimum": json_values,
        "items": json_values,
    },
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schemas, json_values)
def test_validation_answers_any_schema_and_arguments_without_raising(
    schema: dict[str, Any], arguments: Any
) -> None:
    refused = check_arguments(tool(schema), arguments)
    if refused is not None:
        assert refused.is_error
        assert refused.content[0].text.strip()  # type: ignore[union-attr]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        json_values
        | st.dictionaries(
            st.sampled_from(
                [
                    "name",
                    "description",
                    "inputSchema",
                    "annotations",
                    "title",
                    "registration",
                    "source",
                ]
            ),
            json_values,
        ),
        max_size=5,
    )
)
def test_any_snapshot_list_gives_tools_or_warnings_never_an_exception(snapshots: Any) -> None:
    tools, warnings = tools_from_snapshots(snapshots, FRAME, FRAME.origin)
    for found in tools:
        assert isinstance(found, Tool)
    for warning in warnings:
        assert warning.message.strip()
