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


def test_a_schema_is_checked_against_the_metaschema_once_not_per_call(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The profile of issue 17: the meta-schema check was the largest cost of every call."""
    from harness.stages import validation

    seen: list[object] = []
    original = validation.schema_problem

    def counting(schema: dict[str, object]) -> str | None:
        seen.append(schema)
        return original(schema)

    monkeypatch.setattr(validation, "schema_problem", counting)
    schema = {"type": "object", "properties": {"q": {"type": "string", "maxLength": 7}}}
    tool = Tool(
        name="once", description="d", inputSchema=schema, origin="http://a.test", frame="main"
    )
    for _ in range(5):
        assert check_arguments(tool, {"q": "fits"}) is None
        refused = check_arguments(tool, {"q": "far too long"})
        assert refused is not None and refused.is_error
    assert len(seen) == 1


def test_the_checks_follow_the_schema_not_the_tool_name() -> None:
    """A page that registers a name again with another schema gets that schema's verdict."""
    strict = Tool(
        name="same",
        description="d",
        inputSchema={"type": "object", "properties": {"n": {"type": "integer"}}},
        origin="http://a.test",
        frame="main",
    )
    broken = strict.model_copy(update={"input_schema": {"type": "object", "minProperties": -1}})
    outside = strict.model_copy(
        update={
            "input_schema": {"type": "object", "properties": {"n": {"$ref": "http://x.test/s"}}}
        }
    )
    assert check_arguments(strict, {"n": 1}) is None
    problem = check_arguments(broken, {"n": 1})
    assert problem is not None and "invalid inputSchema" in problem.content[0].text  # type: ignore[union-attr]
    refused = check_arguments(outside, {"n": 1})
    assert refused is not None and "never fetches" in refused.content[0].text  # type: ignore[union-attr]
    loose = strict.model_copy(update={"input_schema": {"type": "object"}})
    assert check_arguments(loose, {"n": "text"}) is None
    assert check_arguments(strict, {"n": "text"}) is not None  # the strict verdict still holds


def test_a_forms_pattern_is_checked_as_html_reads_it_the_whole_value() -> None:
    # Chromium's schema for a <form toolname> copies `pattern` as written; HTML anchors it
    # (^(?:…)$), JSON Schema does not: the check follows HTML, for forms only.
    schema = {"type": "object", "properties": {"phone": {"type": "string", "pattern": "[0-9]{3}"}}}
    form = Tool(
        name="f", description="", inputSchema=schema, origin="o", frame="main", source="declarative"
    )
    script = form.model_copy(update={"source": "script"})
    assert validate_arguments(form, {"phone": "123"}) == []
    [problem] = validate_arguments(form, {"phone": "x123x"})
    # The refusal says how the pattern was read; the pattern itself is the page's text,
    # named by its place (schema_path), never quoted.
    assert problem.path == "/phone" and "whole value" in problem.message
    assert problem.schema_path == "/properties/phone/pattern" and "[0-9]" not in problem.message
    assert validate_arguments(script, {"phone": "x123x"}) == []  # JSON Schema's own reading


REFERRED = {
    "$id": "https://shelves.example/schema",
    "type": "object",
    "properties": {
        "shelves": {"type": "array", "items": {"$ref": "#/$defs/Shelf"}},
        "label": {"$ref": "label"},  # the resource whose $id is "label", by its URI
        "size": {"$ref": "#size"},  # an $anchor
        "width": {"$ref": "label#/$defs/Width"},  # a pointer inside that resource
    },
    "$defs": {
        "Shelf": {"type": "object", "required": ["name"], "properties": {"name": {}}},
        "Label": {
            "$id": "label",
            "type": "string",
            "$defs": {"Width": {"type": "integer", "maximum": 3}},
        },
        "Size": {"$anchor": "size", "minimum": 0},
    },
}


def test_a_schema_path_through_a_ref_names_where_the_keyword_is() -> None:
    # jsonschema's own paths leave out the $ref step ("/properties/shelves/items/required",
    # which is nowhere in the schema): the path given is where the failing keyword is.
    tool = Tool(
        name="t", description="d", inputSchema=REFERRED, origin="http://a.test", frame="main"
    )
    problems = validate_arguments(tool, {"shelves": [{}], "label": 5, "size": -1, "width": 9})
    assert {p.path: p.schema_path for p in problems} == {
        "/shelves/0": "/$defs/Shelf/required",
        "/label": "/$defs/Label/type",
        "/size": "/$defs/Size/minimum",
        "/width": "/$defs/Label/$defs/Width/maximum",
    }
    result = check_arguments(tool, {"shelves": [{}]})
    assert result is not None and result.meta is not None
    [problem] = result.meta["webmcp-harness/validation"]
    assert problem["schema_path"] == "/$defs/Shelf/required"


def test_a_schema_path_through_a_dynamic_ref_and_to_a_false_schema() -> None:
    tree = {
        "$id": "https://tree.example/node",
        "$dynamicAnchor": "node",
        "type": "object",
        "properties": {
            "n": {"type": "integer"},
            "kids": {"type": "array", "items": {"$dynamicRef": "#node"}},
            "never": {"$ref": "#/$defs/Never"},
        },
        "$defs": {"Never": False},
    }
    tool = Tool(name="t", description="d", inputSchema=tree, origin="http://a.test", frame="main")
    problems = validate_arguments(tool, {"kids": [{"n": "x"}], "never": 1})
    # A `false` schema holds no keyword: the path stops at the $ref that leads to it.
    assert {p.path: p.schema_path for p in problems} == {
        "/kids/0/n": "/properties/n/type",
        "/never": "/properties/never",
    }
