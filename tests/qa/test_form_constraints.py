"""``form-constraints``: a ``<form toolname>`` whose own validation refuses input its derived
inputSchema allows is a warning naming the control and the fix, not a ``no-throw`` failure;
a form whose page really throws still fails ``no-throw`` — on pages the test writes, on both
backends."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from harness import Harness, Session
from harness.qa.form_constraints import Control, accepted_schema
from harness.qa.fuzz import FuzzOptions, FuzzReport, PropertyResult, fuzz
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

PAGES = {
    "/required": form("find_book", '<input name="title" required>'),
    "/fixed": form("find_book", '<input name="title" required pattern=".+">'),
    "/email": form("subscribe", '<input name="email" type="email" required pattern=".+">'),
    "/throws": form("find_book", '<input name="title" required>', THROWS),
    "/results": "<!doctype html><p>results</p>",
}


@pytest.fixture(scope="module")
async def server() -> AsyncIterator[QAServer]:
    async with serve(PAGES) as qa:
        yield qa


async def fuzzed(harness: Harness, server: QAServer, path: str) -> FuzzReport:
    session: Session = await harness.open(server.url(path))
    try:
        options = FuzzOptions(
            properties=["no-throw", "form-constraints"],
            allow_writes=True,
            examples=10,
            seed=3,
            database=None,
        )
        return await fuzz(session, options)
    finally:
        await session.close()


def result(report: FuzzReport, prop: str) -> PropertyResult:
    [tool] = report.tools
    [found] = [r for r in tool.results if r.property == prop]
    return found


async def test_a_required_input_the_schema_lets_be_empty_is_a_warning_with_the_fix(
    harness: Harness, server: QAServer
) -> None:
    report = await fuzzed(harness, server, "/required")
    warned = result(report, "form-constraints")
    assert (warned.status, warned.severity) == ("failed", "warning")
    assert warned.failure is not None
    assert warned.failure.arguments == {"title": ""}
    message = warned.failure.message
    assert '<input name="title" required> refused "" (valueMissing)' in message
    assert 'add pattern=".+" to <input name="title" required>' in message
    # The form threw nothing: no-throw held, and the run does not fail for a warning.
    assert result(report, "no-throw").status == "passed"
    assert report.ok
    text = report.describe()
    assert "form-constraints: warning" in text
    assert "no property failed; 1 warning (above)" in text


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
        "title": {"type": "string", "minLength": 1},
        "agree": {"type": "boolean", "const": True},
        "shelf": {"type": "string", "enum": ["a"], "anyOf": [{"const": "a"}]},
    }
    assert schema["properties"]["title"] == {"type": "string"}  # the tool's own is left alone
