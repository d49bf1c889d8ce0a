"""Secrets a tool returns stay out of what the agent sees: the bundled keys console.

`generate_api_key` returns a secret in a field its outputSchema marks
`"x-sensitive": true`; every secret the site makes contains the marker HXCANARY.
"""

from __future__ import annotations

from playwright.sync_api import Page

from harness.expect import expect_no_leak, expect_result
from harness.testing.page import PageSession


def test_a_new_api_key_is_withheld_from_the_agent(
    page: Page, webmcp: PageSession, keys_url: str
) -> None:
    page.goto(keys_url)
    outcome = webmcp.call("generate_api_key", {"name": "ci"})
    expect_result(outcome).to_have_structured_content({"name": "ci"})
    expect_result(outcome).to_have_redacted("/structuredContent/secret")
    expect_no_leak(webmcp, "HXCANARY")
