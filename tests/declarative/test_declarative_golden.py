"""Seed 002 §2–§3 golden tests: real HTML (tests/pages/ds_golden.html), read by the real
extractor in Chromium, synthesized by harness/declarative/synthesis.py; one case per rule of §3,
plus the combinations and the attributes of §2."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from harness import BrowserPool, Harness, Session
from harness.declarative.invocation import seed_tools_of
from harness.declarative.synthesis import SEED_SURFACE, elicit_fields, file_schema
from harness.models import Tool
from tests.conftest import PageServer

PAGE = "ds_golden.html"


def obj(
    properties: dict[str, Any], required: list[str] | None = None, **extra: Any
) -> dict[str, Any]:
    """A closed-world object schema, as the synthesis writes it."""
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    schema.update(extra)
    return schema


S = {"type": "string"}
LINE = {"sku": S, "qty": {"type": "integer", "minimum": 1}, "gift": {"type": "boolean"}}

# rule → (tool, expected inputSchema)
GOLDEN: dict[str, tuple[str, dict[str, Any]]] = {
    # Types
    "email → string/email": ("t_email", obj({"v": {"type": "string", "format": "email"}})),
    "email multiple → string (a comma-separated list is no email)": (
        "t_email_multiple",
        obj({"v": S}),
    ),
    "url → string/uri": ("t_url", obj({"v": {"type": "string", "format": "uri"}})),
    "number, default step 1 → integer": ("t_number", obj({"v": {"type": "integer"}})),
    "number, fractional step → number": (
        "t_number_fraction",
        obj({"v": {"type": "number", "multipleOf": 0.25}}),
    ),
    "number, step any → number": ("t_number_any", obj({"v": {"type": "number"}})),
    "range → integer, HTML's default 0..100": (
        "t_range",
        obj({"v": {"type": "integer", "minimum": 0, "maximum": 100}}),
    ),
    "date → string/date": ("t_date", obj({"v": {"type": "string", "format": "date"}})),
    "datetime-local → string/date-time": (
        "t_datetime_local",
        obj({"v": {"type": "string", "format": "date-time"}}),
    ),
    "time → string/time": ("t_time", obj({"v": {"type": "string", "format": "time"}})),
    "checkbox → boolean": ("t_checkbox", obj({"v": {"type": "boolean"}})),
    "file → base64 (or a data: URL), or {name, type, content}": (
        "t_file",
        obj({"v": file_schema()}),
    ),
    "file multiple → array of files": (
        "t_file_multiple",
        obj({"v": {"type": "array", "items": file_schema()}}),
    ),
    "text, search, tel, password, color, month, week (and unknown types) → string": (
        "t_strings",
        obj(
            {k: S for k in ("text", "search", "tel", "password", "color", "month", "week", "bogus")}
        ),
    ),
    "textarea → string (lengths apply, pattern does not)": (
        "t_textarea",
        obj({"v": {"type": "string", "minLength": 2, "maxLength": 9}}),
    ),
    "select → enum of the enabled options' values": (
        "t_select",
        obj({"v": {"type": "string", "enum": ["low", "mid", "high"]}}),
    ),
    "required select → enum without the placeholder option": (
        "t_select_placeholder",
        obj({"v": {"type": "string", "enum": ["a", "b"]}}, ["v"]),
    ),
    "select multiple → array of enum": (
        "t_select_multiple",
        obj(
            {
                "v": {
                    "type": "array",
                    "items": {"type": "string", "enum": ["a", "b", "c"]},
                    "uniqueItems": True,
                    "minItems": 1,
                }
            },
            ["v"],
        ),
    ),
    "radio group → enum of the enabled radios' values": (
        "t_radio",
        obj({"v": {"type": "string", "enum": ["open", "done", "on"]}}, ["v"]),
    ),
    # Constraints
    "required → required (not on hidden; a checkbox must be checked; readonly is no parameter)": (
        "t_required",
        obj({"a": S, "b": S, "c": S, "d": {"type": "boolean", "const": True}}, ["a", "d"]),
    ),
    "pattern → anchored pattern": (
        "t_pattern",
        obj({"v": {"type": "string", "pattern": r"^(?:[a-z]{2}|\d+)$"}}),
    ),
    "minlength/maxlength → minLength/maxLength": (
        "t_lengths",
        obj({"v": {"type": "string", "minLength": 3, "maxLength": 140}}),
    ),
    "min/max → minimum/maximum (numbers), formatMinimum/formatMaximum (dates)": (
        "t_min_max",
        obj(
            {
                "n": {"type": "integer", "minimum": -5, "maximum": 10.5},
                "d": {
                    "type": "string",
                    "format": "date",
                    "formatMinimum": "2025-01-01",
                    "formatMaximum": "2025-12-31",
                },
                "t": {"type": "string", "format": "time", "formatMinimum": "09:00:00Z"},
                "r": {"type": "integer", "minimum": 10, "maximum": 10},
            }
        ),
    ),
    "step → multipleOf and integer inference (from the step base)": (
        "t_step",
        obj(
            {
                "five": {"type": "integer", "multipleOf": 5},
                "odd": {"type": "integer", "minimum": 1},
                "cents": {"type": "number", "minimum": 0, "multipleOf": 0.01},
                "half": {"type": "number", "minimum": 0.5},
            }
        ),
    ),
    # Structure
    "fieldset[name] → nested objects": (
        "t_fieldset",
        obj(
            {
                "address": obj(
                    {
                        "street": S,
                        "city": S,
                        "geo": obj({"lat": {"type": "number"}}, description="Geo"),
                    },
                    ["street"],
                    description="Where it goes",
                ),
                "note": S,
            },
            ["address"],
        ),
    ),
    "dot-notation → nested objects": (
        "t_dot",
        obj({"address": obj({"street": S, "city": S}, ["city"]), "a..b": S}, ["address"]),
    ),
    "repeated names → arrays": (
        "t_repeated",
        obj(
            {
                "tag": {"type": "array", "items": S, "maxItems": 3, "minItems": 1},
                "pick": {
                    "type": "array",
                    "items": {"type": "string", "enum": ["x", "y"]},
                    "maxItems": 2,
                },
            },
            ["tag"],
        ),
    ),
    "checkbox group → array of its values": (
        "t_checkbox_group",
        obj(
            {
                "v": {
                    "type": "array",
                    "items": {"type": "string", "enum": ["a", "b", "c"]},
                    "uniqueItems": True,
                    "maxItems": 3,
                    "allOf": [{"contains": {"const": "b"}}],
                }
            },
            ["v"],
        ),
    ),
    "hidden inputs included": ("t_hidden", obj({"projectId": S})),
    "closed world: disabled, unnamed, buttons and outputs left out": (
        "t_closed_world",
        obj({"kept": S}),
    ),
    # Combinations
    "nested object holding arrays": (
        "t_object_with_arrays",
        obj(
            {
                "filters": obj(
                    {
                        "tags": {
                            "type": "array",
                            "items": {"type": "string", "enum": ["red", "blue"]},
                            "uniqueItems": True,
                            "maxItems": 2,
                        },
                        "words": {"type": "array", "items": S, "maxItems": 2},
                        "sizes": {
                            "type": "array",
                            "items": {"type": "string", "enum": ["S", "M"]},
                            "uniqueItems": True,
                        },
                    }
                )
            }
        ),
    ),
    "array of objects from dot-notation with repeated names (required only where HTML says)": (
        "t_rows",
        obj(
            {
                "lines": {
                    "type": "array",
                    "prefixItems": [
                        obj(LINE, ["sku"]),  # the first row's sku is `required`
                        obj(LINE),
                        obj(LINE),
                    ],
                    "maxItems": 3,
                    "minItems": 1,
                }
            },
            ["lines"],
        ),
    ),
    "array of objects from repeated named fieldsets": (
        "t_fieldset_rows",
        obj(
            {
                "people": {
                    "type": "array",
                    "items": obj({"name": S, "email": {"type": "string", "format": "email"}}),
                    "maxItems": 2,
                }
            }
        ),
    ),
    "fieldset and dot-notation together": (
        "t_fieldset_dot",
        obj(
            {
                "shipping": obj(
                    {
                        "address": obj(
                            {"street": S, "zip": {"type": "string", "pattern": r"^(?:\d{5})$"}},
                            ["street"],
                        )
                    },
                    ["address"],
                )
            },
            ["shipping"],
        ),
    ),
    "a name that is a field and an object: the later control is left out": (
        "t_clash",
        obj({"a": S, "c": obj({"d": S})}),
    ),
    # Seed 002 §2.2
    "tool-param-title, -description (else the label), -type": (
        "t_attributes",
        obj(
            {
                "text": {"type": "string", "title": "The text", "description": "What to do"},
                "priority": {"type": "string", "enum": ["low"], "description": "Priority"},
                "forced": {"type": "integer", "multipleOf": 0.5},
                "count": {"type": "number"},
                "level": {"type": "integer", "enum": [1, 2]},
                "asked": S,
                "secret": S,
            }
        ),
    ),
    "<a> and <button> → no parameters": ("t_link", obj({})),
}


@pytest.fixture(scope="module")
async def golden(browser_pool: BrowserPool, page_server: PageServer) -> AsyncIterator[Session]:
    async with Harness(browsers=browser_pool, backend="polyfill", call_timeout=10) as harness:
        session = await harness.open(page_server.url(PAGE))
        yield session
        await session.close()


async def tool(session: Session, name: str) -> Tool:
    tools = {t.name: t for t in session.catalog.tools()} or {
        t.name: t for t in await session.tools()
    }
    return tools[name]


@pytest.mark.parametrize("rule", list(GOLDEN))
async def test_golden(golden: Session, rule: str) -> None:
    name, expected = GOLDEN[rule]
    synthesized = await tool(golden, name)
    assert synthesized.input_schema == expected
    Draft202012Validator.check_schema(synthesized.input_schema)
    assert synthesized.source == "declarative" and synthesized.surface == SEED_SURFACE


async def test_tool_attributes_become_title_description_and_mcp_annotations(
    golden: Session,
) -> None:
    declared = await tool(golden, "t_attributes")
    assert (declared.title, declared.description) == ("Add Todo", "Create a todo")
    assert declared.annotations == {
        "readOnlyHint": True,  # present
        "idempotentHint": True,  # present with an empty value
        "destructiveHint": False,  # "false"
        "openWorldHint": False,  # default true, here "false"
    }
    plain = await tool(golden, "t_defaults")
    assert plain.title is None and plain.description == ""
    assert plain.annotations == {
        "readOnlyHint": False,
        "idempotentHint": False,
        "destructiveHint": False,
        "openWorldHint": True,
    }
    link = await tool(golden, "t_link")
    assert link.description == "Page 1" and link.annotations["readOnlyHint"] is True


async def test_tool_elicit_is_carried_on_interactive_controls_only(golden: Session) -> None:
    seeds = seed_tools_of(golden.backend)
    assert seeds is not None
    declared = seeds.declared(await tool(golden, "t_attributes"))
    assert declared is not None
    # `secret` is hidden and `frozen` readonly: §8.1.1 ignores tool-elicit there.
    assert [path for path, _ in elicit_fields(declared.plan)] == [("asked",)]


async def test_links_and_buttons_submit_where_html_would(
    golden: Session, page_server: PageServer
) -> None:
    seeds = seed_tools_of(golden.backend)
    assert seeds is not None

    async def plan(name: str) -> Any:
        declared = seeds.declared(await tool(golden, name))
        assert declared is not None
        return declared.plan

    link = await plan("t_link")
    assert (link.method, link.url) == ("GET", page_server.url("submit?page=1&per=20"))
    button = await plan("t_button")  # its form's action and method, itself as the submitter
    assert (button.method, button.url, button.submitter) == (
        "GET",
        page_server.url("submit"),
        ("go", "now"),
    )
    assert button.submit_form and [c.key for c in button.root.children] == ["q"]
    override = await plan("t_button_formaction")
    assert (override.method, override.url, override.encoding) == (
        "POST",
        page_server.url("other?z=1"),
        "multipart",
    )
    alone = await plan("t_button_alone")
    assert (alone.method, alone.url, alone.submit_form) == ("GET", page_server.url("alone"), False)


async def test_elements_that_cannot_be_tools_are_warnings(golden: Session) -> None:
    names = {t.name for t in golden.catalog.tools()}
    refused = {
        "bad name!": "does not match",
        "a_name_that_is_far_too_long_for_the_pattern_of_the_seed_draft_0123456789": "does not match",
        "t_dialog": 'method="dialog"',
        "t_no_href": "href (missing)",
        "t_javascript": "not an http(s) URL",
        "t_plain_button": "only a submit button",
        "t_formless": "neither a form nor a formaction",
    }
    warnings = {w.tool: w for w in golden.warnings if w.code == "malformed-tool"}
    for name, reason in refused.items():
        assert name not in names
        assert reason in warnings[name].message, name


async def test_two_elements_with_one_name_the_later_is_refused_naming_both(golden: Session) -> None:
    [warning] = [w for w in golden.warnings if w.code == "duplicate-name"]
    assert warning.tool == "t_twice"
    assert '<form id="first">' in warning.message and '<form id="second">' in warning.message
    assert "second is refused" in warning.message


async def test_a_clash_between_field_and_object_is_a_warning(golden: Session) -> None:
    messages = [w.message for w in golden.warnings if w.tool == "t_clash"]
    assert messages == [
        "control 'a.b' left out: 'a.b' needs 'a' to be an object, but it is a field",
        "control 'c' left out: 'c' is a field, but also the object of other fields",
    ]


@pytest.mark.native
async def test_the_native_backend_reads_the_same_tools(
    browser_pool: BrowserPool, golden: Session, page_server: PageServer
) -> None:
    """Chromium has no seed dialect: the injected extractor serves the native backend too."""
    async with Harness(browsers=browser_pool, backend="native", call_timeout=10) as harness:
        session = await harness.open(page_server.url(PAGE))
        native = {
            t.name: (t.input_schema, t.annotations, t.description) for t in await session.tools()
        }
        await session.close()
    polyfill = {
        t.name: (t.input_schema, t.annotations, t.description) for t in await golden.tools()
    }
    assert native == polyfill and len(native) == 42
