"""The assertions of `harness.expect`, on hand-built tools, results and sessions (no browser)."""

from __future__ import annotations

from typing import Any

import pytest
from mcp.types import CallToolResult, TextContent

from harness.browser.backends.polyfill import PolyfillBackend
from harness.browser.injection import ChannelKeys
from harness.catalog import FrameInfo
from harness.expect import expect_no_leak, expect_result, expect_tool, subset_mismatch
from harness.harness import Harness
from harness.models import CallOutcome, ErrorKind, Tool
from harness.session import Session
from harness.stages.redaction import REDACTED_META_KEY

ORIGIN = "http://127.0.0.1:8101"

ADD_TODO = Tool(
    name="add_todo",
    description="Add a todo.",
    inputSchema={
        "type": "object",
        "properties": {"text": {"type": "string", "minLength": 1}},
        "required": ["text"],
    },
    annotations={"readOnlyHint": False, "title": "Add"},
    origin=ORIGIN,
    frame="main",
)


def outcome(
    result: dict[str, Any], *, tool: str = "add_todo", kind: ErrorKind | None = None
) -> CallOutcome:
    return CallOutcome(
        call_id="c1",
        tool=tool,
        arguments={"text": "x"},
        result=CallToolResult.model_validate(result),
        duration_ms=3.0,
        error_kind=kind,
        backend="polyfill",
    )


OK = outcome(
    {
        "content": [{"type": "text", "text": '{"todo":{"id":4,"text":"x","done":false}}'}],
        "structuredContent": {"todo": {"id": 4, "text": "x", "done": False}},
        "isError": False,
    }
)
THROWN = outcome(
    {
        "content": [{"type": "text", "text": "Tool error: Error: No todo with id 9"}],
        "isError": True,
    },
    kind="thrown",
)


def test_a_subset_matches_recursively_and_lists_item_by_item() -> None:
    actual = {"a": {"b": [1, {"c": True, "d": 2}]}, "e": "f"}
    assert subset_mismatch({"a": {"b": [1, {"c": True}]}}, actual) is None
    assert subset_mismatch({"a": {"b": [1]}}, actual) == "/a/b: expected 1 items, got 2"
    assert subset_mismatch({"a": {"x": 1}}, actual) == "/a/x: missing (expected 1)"
    assert subset_mismatch({"a": {"b": [True, {}]}}, actual) == "/a/b/0: expected true, got 1"
    assert subset_mismatch({"e": {}}, actual) == '/e: expected an object, got string "f"'


def test_to_succeed_passes_and_shows_the_error_when_it_fails() -> None:
    assert expect_result(OK).to_succeed() is OK.result
    with pytest.raises(AssertionError) as failure:
        expect_result(THROWN).to_succeed()
    assert str(failure.value).splitlines()[:4] == [
        "expect_result('add_todo').to_succeed() failed",
        "  expected: a result without isError",
        "  message: Tool error: Error: No todo with id 9",
        "  received: isError (thrown)",
    ]


def test_to_be_error_checks_the_text_and_the_kind() -> None:
    assert expect_result(THROWN).to_be_error(r"id \d+", kind="thrown").endswith("id 9")
    with pytest.raises(AssertionError, match="expected: error kind 'validation'"):
        expect_result(THROWN).to_be_error(kind="validation")
    with pytest.raises(AssertionError, match="received text: Tool error"):
        expect_result(THROWN).to_be_error("timed out")
    with pytest.raises(AssertionError, match="expected: an isError result"):
        expect_result(OK).to_be_error()
    with pytest.raises(TypeError, match="needs the CallOutcome"):
        expect_result(THROWN.result).to_be_error(kind="thrown")


def test_to_have_structured_content_names_the_mismatch() -> None:
    expect_result(OK).to_have_structured_content({"todo": {"text": "x"}})
    with pytest.raises(AssertionError) as failure:
        expect_result(OK).to_have_structured_content({"todo": {"done": True}})
    message = str(failure.value)
    assert "mismatch at /todo/done: expected true, got false" in message
    assert '"id": 4' in message  # the whole structured content is shown
    with pytest.raises(AssertionError, match="expected: structuredContent"):
        expect_result(THROWN).to_have_structured_content({})


def test_to_have_redacted_reads_what_the_redaction_stage_lists() -> None:
    withheld = {
        "path": "/structuredContent/secret",
        "label": "key",
        "handle": "h1",
        "kind": "field",
    }
    redacted = CallToolResult(
        content=[TextContent(type="text", text="{}")],
        structured_content={"secret": "h1"},
        meta={REDACTED_META_KEY: [withheld]},
    )
    expect_result(redacted).to_have_redacted("/structuredContent/secret")
    expect_result(redacted).to_have_redacted("secret")  # a pointer into structuredContent
    with pytest.raises(AssertionError) as failure:
        expect_result(redacted).to_have_redacted("/token")
    assert "the result lists as withheld: /structuredContent/secret (field)" in str(failure.value)
    with pytest.raises(AssertionError, match="withheld: nothing"):
        expect_result(OK).to_have_redacted("/todo")


def test_tool_assertions_on_a_list_check_once_and_say_what_is_there() -> None:
    tools = [ADD_TODO]
    assert expect_tool(tools, "add_todo").to_exist() is ADD_TODO
    expect_tool(tools, "add_todo").to_have_input_schema({"required": ["text"]})
    expect_tool(tools, "add_todo").to_have_annotation("readOnlyHint", False)
    expect_tool(tools, "add_todo").to_have_annotation("title")
    expect_tool(tools, "nope").not_to_exist()
    with pytest.raises(AssertionError) as failure:
        expect_tool(tools, "list_todos").to_exist()
    assert str(failure.value).splitlines() == [
        "expect_tool('list_todos').to_exist() failed",
        "  expected: a tool named 'list_todos'",
        "  received: no such tool; the page offers: add_todo",
    ]
    with pytest.raises(AssertionError, match=r"mismatch at /properties/text/minLength"):
        expect_tool(tools, "add_todo").to_have_input_schema(
            {"properties": {"text": {"minLength": 2}}}
        )
    with pytest.raises(AssertionError, match=r"annotations \{\"readOnlyHint\": false"):
        expect_tool(tools, "add_todo").to_have_annotation("readOnlyHint", True)
    with pytest.raises(AssertionError, match="received: the page offers it"):
        expect_tool(tools, "add_todo").not_to_exist()


TWO_REQUIRED = Tool(
    name="add_todo",
    description="Add a todo with a due date.",
    inputSchema={
        "type": "object",
        "properties": {
            "text": {"type": "string"},
            "due": {"type": ["string", "null"]},
            "list": {"enum": ["home", "work", "shop"]},
            # A parameter named like a keyword: its schema is matched as a schema.
            "required": {"type": "boolean"},
        },
        "required": ["text", "due"],
    },
    origin=ORIGIN,
    frame="main",
)


@pytest.mark.parametrize(
    "subset",
    [
        {"required": ["text"]},  # the README's line, on a tool that requires two
        {"required": ["due", "text"]},  # all of them, in another order
        {"properties": {"list": {"enum": ["shop", "home"]}}},
        {"properties": {"due": {"type": ["null"]}}},
        {"properties": {"required": {"type": "boolean"}}},
    ],
)
def test_an_input_schema_s_sets_match_as_sets(subset: dict[str, Any]) -> None:
    expect_tool([TWO_REQUIRED], "add_todo").to_have_input_schema(subset)


@pytest.mark.parametrize(
    ("subset", "said"),
    [
        ({"required": ["text", "owner"]}, 'mismatch at /required: missing "owner"'),
        (
            {"properties": {"list": {"enum": ["home", "school"]}}},
            'mismatch at /properties/list/enum: missing "school"',
        ),
        (
            {"properties": {"due": {"type": ["string", "integer"]}}},
            'mismatch at /properties/due/type: missing "integer"',
        ),
        ({"required": "text"}, 'mismatch at /required: expected "text", got ["text", "due"]'),
    ],
)
def test_an_input_schema_s_set_that_lacks_a_member_names_it(
    subset: dict[str, Any], said: str
) -> None:
    with pytest.raises(AssertionError) as failure:
        expect_tool([TWO_REQUIRED], "add_todo").to_have_input_schema(subset)
    lines = str(failure.value).splitlines()
    assert lines[0].startswith("expect_tool('add_todo').to_have_input_schema(")
    assert lines[1] == f"  {said}"


def test_tool_assertions_retry_until_the_tool_arrives() -> None:
    class Arriving:
        def __init__(self) -> None:
            self.reads = 0

        def tools(self) -> list[Tool]:
            self.reads += 1
            return [ADD_TODO] if self.reads >= 3 else []

    source = Arriving()
    expect_tool(source, "add_todo", timeout=5).to_exist()
    assert source.reads == 3
    with pytest.raises(AssertionError, match=r"no such tool \(waited 0.3 s\)"):
        expect_tool(Arriving(), "list_todos", timeout=0.3).to_exist()


def bare_session() -> Session:
    """A real Session with its catalog and history filled by hand (it never touches a page)."""
    harness = Harness()
    backend = PolyfillBackend(ChannelKeys())
    session = Session(harness, None, None, backend, call_timeout=1)  # type: ignore[arg-type]
    info = FrameInfo(key="main", url=ORIGIN + "/", origin=ORIGIN, is_main=True)
    session.catalog.replace_frame(info, [ADD_TODO])
    return session


def test_expect_tool_refuses_an_async_session() -> None:
    with pytest.raises(TypeError, match=r"await session.tools\(\)"):
        expect_tool(bare_session(), "add_todo")  # type: ignore[arg-type]


def test_expect_no_leak_searches_the_tool_list_and_every_result() -> None:
    session = bare_session()
    session.history.append(OK)
    expect_no_leak(session, "sk_live_123")
    with pytest.raises(AssertionError) as failure:
        expect_no_leak(session, "Add a todo")
    assert "the tool list at /0/description" in str(failure.value)
    with pytest.raises(AssertionError) as failure:
        expect_no_leak(session, '"text":"x"')
    assert str(failure.value).splitlines()[1:] == [
        "  expected: the value in no agent view; found in 1 place(s):",
        '  call 1 (add_todo) result at /content/0/text: …{"todo":{"id":4,"text":"x","done":false}}…',
    ]
    with pytest.raises(AssertionError, match=r"/structuredContent/todo/id: 4"):
        expect_no_leak(session, 4)
    with pytest.raises(ValueError, match="needs a value"):
        expect_no_leak(session, "")


# A page's escape sequences: a clipboard write (OSC 52), a screen clear, a bidi override.
ESCAPES = "\x1b]52;c;SGVsbG8=\x07\x1b[2J\x1b[H\u202e"


def framed_outcome(text: str, structured: dict[str, Any] | None, *, error: bool) -> CallOutcome:
    """A call's agent view as a session hands it out: the page's text framed."""
    from harness.stages.framing import frame_result

    raw = CallToolResult.model_validate(
        {
            "content": [{"type": "text", "text": text}],
            "structuredContent": structured,
            "isError": error,
        }
    )
    made = outcome({"content": []}, kind="thrown" if error else None)
    return made.model_copy(update={"result": frame_result(raw, ORIGIN)})


@pytest.mark.parametrize(
    "check",
    [
        lambda o: expect_result(o).to_succeed(),
        lambda o: expect_result(o).to_be_error("never"),
        lambda o: expect_result(o).to_have_structured_content({"note": "other"}),
    ],
    ids=["to_succeed", "to_be_error", "to_have_structured_content"],
)
def test_assertion_messages_show_page_text_for_a_person(check: Any) -> None:
    failing = framed_outcome(f"bad {ESCAPES} news", {"note": f"n {ESCAPES}"}, error=True)
    with pytest.raises(AssertionError) as failure:
        check(failing)
    message = str(failure.value)
    # Nothing pytest writes to the terminal is obeyed by it: the escapes are shown.
    assert not any(c in message for c in ("\x1b", "\x07", "\u202e"))
    assert "\\x1b]52;c;SGVsbG8=\\x07" in message or "\\u001b]52;c;SGVsbG8=\\u0007" in message
    # A person reads the page's text as the page wrote it: the agent's frames are left out.
    assert "untrusted-data" not in message
