"""Whatever a tool returns becomes an MCP CallToolResult."""

from __future__ import annotations

from harness.browser.backends.base import RawResult
from harness.models import dump_result
from harness.stages.normalization import normalize


def agent(raw: RawResult) -> dict[str, object]:
    return dump_result(normalize(raw))


def test_an_object_becomes_text_plus_structured_content() -> None:
    assert agent(RawResult(status="ok", json_text='{"a":1}')) == {
        "content": [{"type": "text", "text": '{"a":1}'}],
        "structuredContent": {"a": 1},
        "isError": False,
    }


def test_an_mcp_result_passes_through() -> None:
    text = '{"content":[{"type":"text","text":"hi"}],"structuredContent":{"x":1},"isError":true}'
    assert agent(RawResult(status="ok", json_text=text)) == {
        "content": [{"type": "text", "text": "hi"}],
        "structuredContent": {"x": 1},
        "isError": True,
    }


def test_strings_arrays_and_nothing() -> None:
    assert agent(RawResult(status="ok", json_text="hello"))["content"] == [
        {"type": "text", "text": "hello"}
    ]
    array = agent(RawResult(status="ok", json_text="[1,2]"))
    assert (
        array["content"] == [{"type": "text", "text": "[1,2]"}] and "structuredContent" not in array
    )
    assert agent(RawResult(status="ok", json_text=None)) == {"content": [], "isError": False}


def test_malformed_content_is_treated_as_plain_data() -> None:
    out = agent(RawResult(status="ok", json_text='{"content":[{"type":"bogus"}]}'))
    assert out["structuredContent"] == {"content": [{"type": "bogus"}]}


def test_errors_cancellation_and_navigation() -> None:
    thrown = agent(RawResult(status="error", error_name="RangeError", error_message="bad"))
    assert thrown["isError"] is True
    assert thrown["content"] == [{"type": "text", "text": "Tool error: RangeError: bad"}]
    nav = agent(RawResult(status="navigation"))
    assert nav["isError"] and "interrupted by navigation" in nav["content"][0]["text"]  # type: ignore[index]
    cancelled = agent(RawResult(status="cancelled", error_message="timeout"))
    assert cancelled["isError"] and "cancelled" in cancelled["content"][0]["text"]  # type: ignore[index]
