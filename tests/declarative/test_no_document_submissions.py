"""A ``<form toolname>`` whose submission loads no page — the server answers 204, sends a
download, or the action is ``mailto:`` or ``javascript:`` — ends its call at once, saying
the form was submitted and the page stays as it was, as Chromium's ``executeTool()``
answers at once. It used to wait for a navigation that never came (10 s, or the call's
timeout: an error, though the request was sent — an agent that retries submits twice)."""

from __future__ import annotations

import pytest

from harness import Session
from tests.conftest import PageServer

PAGE = "d_no_document.html"

pytestmark = pytest.mark.timeout(120)


@pytest.mark.parametrize(
    ("tool", "said", "requested"),
    [
        ("no_content", "the server answered 204 with no page", "/__nocontent/0?q=x"),
        ("download", "the response was a download ('report.csv')", "/__download/report.csv?q=x"),
        ("mail", "its action is a mailto: URL, which loads no page", None),
        ("script", "its action is a javascript: URL, which loads no page", None),
    ],
)
async def test_a_submission_that_loads_no_page_ends_the_call_at_once(
    page_session: Session, page_server: PageServer, tool: str, said: str, requested: str | None
) -> None:
    outcome = await page_session.call(tool, {"q": "x"})
    text = outcome.agent_json()["content"][0]["text"]
    assert outcome.result.is_error is False, text
    assert f"{said}, so the page stays as it was" in text
    if requested is not None:
        assert any(line.endswith(requested) for line in page_server.requests), requested
    assert [t.name for t in await page_session.tools()].count(tool) == 1  # still here
