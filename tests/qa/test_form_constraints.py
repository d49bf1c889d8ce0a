"""``form-constraints``: a ``<form toolname>`` whose own validation refuses input its derived
inputSchema allows is a warning naming the control and the fix, not a ``no-throw`` failure;
a form whose page really throws still fails ``no-throw`` — on pages the test writes, on both
backends."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import AsyncIterator
from datetime import date, datetime
from typing import Any

import pytest
from hypothesis import find, settings
from hypothesis.errors import NoSuchExample

from harness import Harness, Session
from harness.models import FormRefusal, Tool
from harness.qa.form_constraints import Control, accepted_schema
from harness.qa.fuzz import FuzzOptions, FuzzReport, PropertyResult, fuzz
from harness.qa.fuzz_report import Failure
from harness.qa.strategies import valid_arguments
from tests.qa.pages import QAServer, serve


def form(name: str, controls: str, script: str = "") -> str:
    """A page with one auto-submitted ``<form toolname>`` that submits to /results."""
    return (
        "<!doctype html><html><body>"
        f'<form toolname="{name}" tooldescription="Finds books." toolautosubmit '
        f'action="/results" method="get">{controls}<button>Go</button></form>'
        f"<script>{script}</script></body></html>"
    )


# The submit handler answers with a rejected promise: the page's own error, on every
# submission the form's validation lets through.
THROWS = """document.querySelector("form").addEventListener("submit", (e) => {
  e.preventDefault(); e.respondWith(Promise.reject(new Error("catalogue offline")));
});"""


def imitates(said: str) -> str:
    """A submit handler whose result is an error in the words of a form's refusal: the page's
    own error, whatever it says."""
    result = json.dumps({"isError": True, "content": [{"type": "text", "text": said}]})
    return f"""document.querySelector("form").addEventListener("submit", (e) => {{
  e.preventDefault(); e.respondWith(Promise.resolve({result}));
}});"""


# A page's error in the words of each refusal (the browser's fill, its validation, the
# harness's exact fill): the fuzzer must not take it for one.
IMITATED = {
    "fill": 'Invalid value "0" for parameter title',
    "validation": "Form validation failed: title: Please fill out this field. ",
    "changed": (
        "Invalid value 8 for parameter title: the form's range control would change it to 7 "
        "(it takes steps of 3 from 1, between 1 and 10); the nearest values it takes are 7 "
        "and 10. Nothing was filled."
    ),
}

PAGES = {
    **{
        f"/imitates-{kind}": form("find_book", '<input name="title">', imitates(said))
        for kind, said in IMITATED.items()
    },
    "/required": form("find_book", '<input name="title" required>'),
    "/fixed": form("find_book", '<input name="title" required pattern=".+">'),
    "/email": form("subscribe", '<input name="email" type="email" required pattern=".+">'),
    "/throws": form("find_book", '<input name="title" required>', THROWS),
    # Sold in packs of 3 from 1: 1, 4, 7, 10; the schema has no multipleOf (1 is no multiple
    # of 3), and the range would round any other value to the nearest of those.
    "/packs": form(
        "order_boxes", '<input type="range" name="qty" min="1" max="10" step="3" value="1">'
    ),
    # Chromium's schema for these says a value's form only as a regular expression in
    # `format`, which JSON Schema does not read: "0" fits it, and the browser's fill of the
    # control refuses it ('Invalid value "0" for parameter t').
    "/time": form(
        "book_slot", '<input type="time" name="t"><input type="datetime-local" name="at">'
    ),
    # Required choices: one with an empty placeholder option, a multiple one with none.
    "/shelf": form(
        "find_book",
        '<select name="shelf" required><option value="">Any shelf</option>'
        '<option value="a">A</option></select>',
    ),
    "/rooms": form(
        "book_room",
        '<select name="rooms" multiple required><option value="a">Room A</option>'
        '<option value="b">Room B</option></select>',
    ),
    "/results": "<!doctype html><p>results</p>",
}


@pytest.fixture(scope="module")
async def server() -> AsyncIterator[QAServer]:
    async with serve(PAGES) as qa:
        yield qa


async def fuzzed(
    harness: Harness, server: QAServer, path: str, example: dict[str, Any] | None = None
) -> FuzzReport:
    session: Session = await harness.open(server.url(path))
    try:
        options = FuzzOptions(
            properties=["no-throw", "form-constraints"],
            allow_writes=True,
            examples=10,
            seed=3,
            database=None,
            example=example,
        )
        return await fuzz(session, options)
    finally:
        await session.close()


def result(report: FuzzReport, prop: str) -> PropertyResult:
    [tool] = report.tools
    [found] = [r for r in tool.results if r.property == prop]
    return found


def warning(report: FuzzReport) -> Failure:
    """The ``form-constraints`` warning of a report whose form threw nothing: ``no-throw``
    held, and the run does not fail for a warning."""
    warned = result(report, "form-constraints")
    assert (warned.status, warned.severity) == ("failed", "warning")
    assert warned.failure is not None
    assert result(report, "no-throw").status == "passed"
    assert report.ok
    return warned.failure


async def test_a_required_input_the_schema_lets_be_empty_is_a_warning_with_the_fix(
    harness: Harness, server: QAServer
) -> None:
    report = await fuzzed(harness, server, "/required")
    failure = warning(report)
    assert failure.arguments == {"title": ""}
    assert '<input name="title" required> refused "" (valueMissing)' in failure.message
    assert 'add pattern=".+" to <input name="title" required>' in failure.message
    text = report.describe()
    assert "form-constraints: warning" in text
    assert "no property failed; 1 warning (above)" in text


@pytest.mark.parametrize(
    ("path", "example", "said", "unsaid"),
    [
        (
            "/shelf",
            {"shelf": ""},
            "remove the placeholder option (or make it a real choice)",
            "minItems",
        ),
        # No placeholder to remove: the schema's array has no minItems.
        (
            "/rooms",
            {"rooms": []},
            "Chromium's array for a <select multiple> has no minItems",
            "placeholder",
        ),
    ],
)
async def test_a_required_choice_left_empty_is_a_warning_with_the_fix_for_its_kind(
    harness: Harness, server: QAServer, path: str, example: dict[str, Any], said: str, unsaid: str
) -> None:
    failure = warning(await fuzzed(harness, server, path, example))
    assert failure.arguments == example
    assert "(valueMissing)" in failure.message
    assert said in failure.message
    assert unsaid not in failure.message


async def test_the_fix_it_names_makes_the_warning_go(harness: Harness, server: QAServer) -> None:
    report = await fuzzed(harness, server, "/fixed")
    assert result(report, "form-constraints").status == "passed"
    assert report.describe().endswith("all properties held (seed 3)")


async def test_an_email_input_without_a_format_in_its_schema_is_named_with_a_pattern(
    harness: Harness, server: QAServer
) -> None:
    warned = result(await fuzzed(harness, server, "/email"), "form-constraints")
    assert warned.failure is not None
    message = warned.failure.message
    assert "(typeMismatch): Chromium adds no `format` for type=email" in message
    assert "add a pattern to <input" in message


async def test_a_form_whose_page_throws_still_fails_no_throw_beside_the_warning(
    harness: Harness, server: QAServer
) -> None:
    report = await fuzzed(harness, server, "/throws")
    failed = result(report, "no-throw")
    # Drawn from what the form accepts (a title, not ""): the page's own error is found.
    assert (failed.status, failed.severity) == ("failed", "error")
    assert failed.failure is not None
    assert failed.failure.arguments["title"] != ""
    assert "threw on valid input" in failed.failure.message
    assert result(report, "form-constraints").status == "failed"
    assert not report.ok


async def test_a_value_the_browser_s_fill_refuses_is_a_warning_not_a_throw(
    harness: Harness, server: QAServer
) -> None:
    report = await fuzzed(harness, server, "/time")
    # Drawn from what the form accepts (a time, a date and time): nothing threw.
    assert result(report, "no-throw").status == "passed", report.describe()
    warned = result(report, "form-constraints")
    assert (warned.status, warned.severity) == ("failed", "warning"), report.describe()
    assert warned.failure is not None
    [(name, value)] = warned.failure.arguments.items()
    message = warned.failure.message
    control = '<input type="time" name="t">' if name == "t" else '<input type="datetime-local"'
    assert f"{control}" in message and f"refused {json.dumps(value)}" in message, message
    assert "as a regular expression in `format`" in message
    assert report.ok


# What Chromium puts in `format` for these controls (step 60 s for time and datetime-local).
CHROMIUM_FORMATS = {
    "time": "^([01][0-9]|2[0-3]):[0-5][0-9]$",
    "datetime-local": "^[0-9]{4}-(0[1-9]|1[0-2])-[0-9]{2}T([01][0-9]|2[0-3]):[0-5][0-9]$",
    "month": "^[0-9]{4}-(0[1-9]|1[0-2])$",
    "week": "^[0-9]{4}-W(0[1-9]|[1-4][0-9]|5[0-3])$",
    "color": "^#[0-9a-zA-Z]{6}$",
}


def html_accepts(kind: str, value: str) -> bool:
    """Whether HTML's value sanitization of an input of type ``kind`` keeps ``value``."""
    if kind == "color":
        return re.fullmatch("#[0-9a-fA-F]{6}", value) is not None
    if kind == "week":
        found = re.fullmatch("([0-9]{4,})-W([0-9]{2})", value)
        try:
            return found is not None and bool(date.fromisocalendar(*map(int, found.groups()), 1))
        except ValueError:
            return False
    shape = {"time": "%H:%M", "datetime-local": "%Y-%m-%dT%H:%M", "month": "%Y-%m"}[kind]
    try:
        datetime.strptime(value, shape)
    except ValueError:
        return False
    return kind == "time" or re.match("[0-9]{4}-", value) is not None  # a year of 4 digits


@pytest.mark.parametrize("kind", CHROMIUM_FORMATS)
def test_the_inputs_of_a_control_whose_form_is_in_format_are_values_it_holds(kind: str) -> None:
    schema = {
        "type": "object",
        "properties": {"v": {"type": "string", "format": CHROMIUM_FORMATS[kind]}},
        "required": ["v"],
    }
    control = Control("v", "input", kind, {"type": kind}, f'<input type="{kind}" name="v">', ())
    narrowed = accepted_schema(schema, [control])
    tool = Tool(
        name="t", description="d", inputSchema=narrowed, origin="http://a.test", frame="main"
    )
    seen: list[str] = []

    def condition(value: dict[str, Any]) -> bool:
        seen.append(value["v"])
        return False

    with contextlib.suppress(NoSuchExample):
        find(valid_arguments(tool), condition, settings=settings(max_examples=40, database=None))
    assert seen and [v for v in seen if not html_accepts(kind, v)] == []


def test_the_inputs_of_the_other_properties_are_what_the_form_accepts() -> None:
    schema = {
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "agree": {"type": "boolean"},
            "shelf": {
                "type": "string",
                "enum": ["", "a"],
                "anyOf": [{"const": ""}, {"const": "a"}],
            },
        },
        "required": ["title", "agree", "shelf"],
    }

    def control(name: str, kind: str, first: str | None = None) -> Control:
        return Control(name, "input", kind, {"required": ""}, f"<{name}>", (), first)

    narrowed = accepted_schema(
        schema,
        [
            control("title", "text"),
            control("agree", "checkbox"),
            control("shelf", "select-one", ""),
        ],
    )
    assert narrowed["properties"] == {
        "title": {"type": "string", "minLength": 1, "pattern": "^[^\\r\\n]*$"},
        "agree": {"type": "boolean", "const": True},
        "shelf": {"type": "string", "enum": ["a"], "anyOf": [{"const": "a"}]},
    }
    assert schema["properties"]["title"] == {"type": "string"}  # the tool's own is left alone


async def test_a_range_value_off_its_step_is_a_warning_with_the_fix(
    harness: Harness, server: QAServer
) -> None:
    # The harness refuses a value the range would round (nothing is typed in): the schema let
    # it through, which the fuzzer reports as it reports the form's own refusals.
    failure = warning(await fuzzed(harness, server, "/packs"))
    assert failure.arguments["qty"] not in (1, 4, 7, 10)
    start = '<input type="range" name="qty" min="1" max="10" step="3">'
    assert f"{start} would not keep " in failure.message
    assert "(it takes steps of 3 from 1, between 1 and 10)" in failure.message
    assert "set min to a multiple of step" in failure.message


def test_the_other_properties_draw_what_the_form_keeps() -> None:
    schema = {
        "type": "object",
        "properties": {
            "qty": {"type": "number", "minimum": 1, "maximum": 10},
            "level": {"type": "number", "minimum": 0, "maximum": 50},
            "fine": {"type": "number", "minimum": 0, "maximum": 100000},
            "title": {"type": "string"},
            "body": {"type": "string"},
        },
    }

    def control(name: str, kind: str, **attributes: str) -> Control:
        tag = "textarea" if kind == "textarea" else "input"
        return Control(name, tag, kind, attributes, f"<{name}>", ())

    narrowed = accepted_schema(
        schema,
        [
            control("qty", "range", min="1", max="10", step="3"),
            control("level", "range", max="50", step="0.5", value="0.25"),
            control("fine", "range", max="100000", step="3", value="1"),  # too many to list
            control("title", "text"),
            control("body", "textarea"),
        ],
    )["properties"]
    assert narrowed["qty"]["enum"] == [1, 4, 7, 10]
    assert narrowed["level"]["enum"][:3] == [0.25, 0.75, 1.25]
    assert narrowed["level"]["enum"][-1] == 49.75
    assert "enum" not in narrowed["fine"]
    assert narrowed["title"]["pattern"] == "^[^\\r\\n]*$"  # a one-line field
    assert narrowed["body"] == {"type": "string"}


@pytest.mark.parametrize("kind", IMITATED)
async def test_a_page_s_error_in_the_words_of_a_form_s_refusal_is_not_one(
    harness: Harness, server: QAServer, kind: str
) -> None:
    # Every call ends in the page's isError result, which says what a refusal says: the form
    # took every value, so there is nothing for form-constraints to report.
    report = await fuzzed(harness, server, f"/imitates-{kind}")
    assert result(report, "form-constraints").status == "passed", report.describe()


async def called(harness: Harness, server: QAServer, path: str, arguments: dict[str, Any]) -> Any:
    """The outcome of one call of the page's form tool."""
    session: Session = await harness.open(server.url(path))
    try:
        [tool] = await session.tools()
        return await session.call(tool.name, arguments)
    finally:
        await session.close()


@pytest.mark.parametrize(
    ("path", "arguments", "refusal"),
    [
        ("/time", {"t": "0"}, FormRefusal(kind="fill", parameter="t")),
        ("/packs", {"qty": 8}, FormRefusal(kind="changed", parameter="qty")),
        ("/required", {"title": ""}, FormRefusal(kind="validation")),
        ("/imitates-fill", {"title": "0"}, None),
        ("/imitates-validation", {"title": ""}, None),
        ("/throws", {"title": "x"}, None),
    ],
)
async def test_a_call_says_how_the_form_refused_its_input(
    harness: Harness,
    server: QAServer,
    path: str,
    arguments: dict[str, Any],
    refusal: FormRefusal | None,
) -> None:
    outcome = await called(harness, server, path, arguments)
    assert outcome.is_error
    assert outcome.form_refusal == refusal, outcome.result
