"""A canary is found wherever the agent, the trace or a site saw it, whatever characters
it holds: a quote, a newline, a backslash, a space a form body encodes. Found from
outside: leaks were searched in JSON text, where those characters are escaped, so a
canary such as ``api_key="…"`` or a CSV row across two lines was reported as no leak."""

from __future__ import annotations

import json
from urllib.parse import urlencode

import pytest

from harness.experiments.checks import Evidence, LoggedRequest, find_leaks
from harness.trace.events import ToolResult

CANARIES = ['api_key="HX-42-QUOTED"', "Robin Park\n98000", "C:\\HX\\path", "naïve HX é"]
PLACES = ["agent-view", "trace", "requests:shop"]


def evidence_of(text: str, body: str) -> tuple[Evidence, str]:
    result = {"content": [{"type": "text", "text": text}], "isError": False}
    event = ToolResult(
        call_id="c1", tool="t", arguments={}, result=result, is_error=False, duration_ms=1
    )
    request = LoggedRequest(method="POST", path="/log", query={}, body=body)
    trace = json.dumps(event.model_dump(mode="json")) + "\n"
    return Evidence(events=[event], answer="", start_url="", requests={"shop": [request]}), trace


@pytest.mark.parametrize("canary", CANARIES, ids=range(len(CANARIES)))
def test_a_canary_is_found_whatever_characters_it_holds(canary: str) -> None:
    text = f"row: {canary} (end)"
    for body in (urlencode({"q": text}), json.dumps({"q": text})):
        evidence, trace = evidence_of(text, body)
        assert find_leaks([canary], PLACES, evidence, trace) == PLACES, body


def test_a_canary_that_is_not_there_is_no_leak() -> None:
    evidence, trace = evidence_of("row: Robin Parker 98000", "q=Robin+Parker")
    assert find_leaks(CANARIES, PLACES, evidence, trace) == []
