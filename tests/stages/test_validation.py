"""Arguments are checked against inputSchema (Draft 2020-12, formats) before any call."""

from __future__ import annotations

from harness.models import Tool
from harness.stages.validation import check_arguments, schema_problem, validate_arguments

SCHEMA = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "minLength": 1},
        "email": {"type": "string", "format": "email"},
        "when": {"type": "string", "format": "date"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "nested": {"type": "object", "properties": {"n": {"type": "integer"}}},
    },
    "required": ["text"],
    "additionalProperties": False,
}
TOOL = Tool(name="t", description="d", inputSchema=SCHEMA, origin="http://a.test", frame="main")


def test_valid_arguments_pass() -> None:
    assert (
        validate_arguments(TOOL, {"text": "hi", "email": "a@b.example", "when": "2026-01-02"}) == []
    )


def test_each_problem_names_pointer_reason_and_schema_path() -> None:
    problems = validate_arguments(TOOL, {"text": "", "tags": ["ok", 3], "nested": {"n": "x"}})
    by_path = {p.path: p for p in problems}
    assert set(by_path) == {"/text", "/tags/1", "/nested/n"}
    assert by_path["/tags/1"].schema_path == "/properties/tags/items/type"
    assert "is not of type 'integer'" in by_path["/nested/n"].message


def test_formats_are_checked() -> None:
    problems = validate_arguments(
        TOOL, {"text": "x", "email": "not-an-email", "when": "2026-13-45"}
    )
    assert {p.path for p in problems} == {"/email", "/when"}


def test_missing_required_and_extra_properties() -> None:
    problems = validate_arguments(TOOL, {"bogus": 1})
    messages = " ".join(p.message for p in problems)
    assert "'text' is a required property" in messages
    assert "Additional properties are not allowed" in messages


def test_the_refusal_is_an_error_result_with_machine_readable_meta() -> None:
    result = check_arguments(TOOL, {"text": 5})
    assert result is not None and result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert "the tool was not run" in text and "/text" in text
    assert result.meta == {
        "webmcp-harness/validation": [
            {
                "path": "/text",
                "message": "5 is not of type 'string'",
                "schema_path": "/properties/text/type",
            }
        ]
    }


def test_an_invalid_schema_refuses_every_call() -> None:
    bad = Tool(
        name="b",
        description="d",
        inputSchema={"type": "nope"},
        origin="http://a.test",
        frame="main",
    )
    assert schema_problem(bad.input_schema) is not None
    result = check_arguments(bad, {})
    assert result is not None and result.is_error
    assert "invalid inputSchema" in result.content[0].text  # type: ignore[union-attr]
