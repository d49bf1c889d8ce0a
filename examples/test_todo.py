"""Testing a site's WebMCP tools from pytest: the bundled todo site.

    pytest examples/                          # headless, the polyfill backend
    pytest examples/ -n 2                     # two workers (pytest-xdist), a browser each
    pytest examples/ --headed --webmcp-backend native

`page` is pytest-playwright's page; `webmcp` is the harness session on that same
page. Drive the page as a person would with Playwright, call its tools as an agent
would with `webmcp.call`, and check both. A failing test keeps the harness trace
in test-results/<test id>/trace.jsonl (`webmcp-harness trace show` prints it).
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from harness.expect import expect_result, expect_tool
from harness.testing.page import PageSession


def test_the_page_offers_its_tools(page: Page, webmcp: PageSession, todo_url: str) -> None:
    page.goto(todo_url)
    expect_tool(webmcp, "add_todo").to_have_input_schema(
        {"required": ["text"], "properties": {"text": {"type": "string", "minLength": 1}}}
    )
    expect_tool(webmcp, "list_todos").to_have_annotation("readOnlyHint", True)
    expect_tool(webmcp, "delete_todo").to_have_annotation("destructiveHint", True)


def test_a_tool_call_shows_on_the_page(page: Page, webmcp: PageSession, todo_url: str) -> None:
    page.goto(todo_url)
    outcome = webmcp.call("add_todo", {"text": "Water the plants"})
    expect_result(outcome).to_have_structured_content(
        {"todo": {"id": 4, "text": "Water the plants", "done": False}}
    )
    expect(page.get_by_text("Water the plants")).to_be_visible()
    expect(page.locator("#counter")).to_have_text("3 open, 1 done")


def test_what_a_person_does_the_tools_see(page: Page, webmcp: PageSession, todo_url: str) -> None:
    page.goto(todo_url)
    page.get_by_label("New todo").fill("Call the plumber")
    page.get_by_role("button", name="Add").click()
    page.get_by_label("Complete: Buy oat milk").check()
    expect(page.locator("#counter")).to_have_text("2 open, 2 done")

    outcome = webmcp.call("list_todos", {"status": "open"})
    expect_result(outcome).to_have_structured_content(
        {"todos": [{"text": "Send the quarterly report to Dana"}, {"text": "Call the plumber"}]}
    )


def test_bad_arguments_never_reach_the_site(
    page: Page, webmcp: PageSession, todo_url: str, sites: object
) -> None:
    page.goto(todo_url)
    outcome = webmcp.call("add_todo", {"text": ""})
    expect_result(outcome).to_be_error(r"/text", kind="validation")
    assert "POST /api/todos" not in sites.requests("todo")  # type: ignore[attr-defined]


def test_a_failing_tool_is_an_error_result(page: Page, webmcp: PageSession, todo_url: str) -> None:
    page.goto(todo_url)
    outcome = webmcp.call("complete_todo", {"id": 99})
    expect_result(outcome).to_be_error("No todo with id 99", kind="thrown")


def test_deleting_needs_the_users_yes(page: Page, webmcp: PageSession, todo_url: str) -> None:
    # The default policy asks the user before a destructive tool runs; by default the
    # plugin answers every question with "cancel", so the tool does not run.
    page.goto(todo_url)
    outcome = webmcp.call("delete_todo", {"id": 1})
    expect_result(outcome).to_be_error(kind="refused")
    assert [record.action for record in webmcp.elicitations] == ["cancel"]
    expect(page.get_by_text("Buy oat milk")).to_be_visible()


@pytest.mark.webmcp(elicit="accept")
def test_with_the_users_yes_a_todo_is_deleted(
    page: Page, webmcp: PageSession, todo_url: str
) -> None:
    page.goto(todo_url)
    outcome = webmcp.call("delete_todo", {"id": 1})
    expect_result(outcome).to_have_structured_content({"deleted": True, "todo": {"id": 1}})
    expect(page.get_by_text("Buy oat milk")).to_have_count(0)


def test_each_page_has_its_own_tools(page: Page, webmcp: PageSession, todo_url: str) -> None:
    page.goto(todo_url)
    page.get_by_role("link", name="Archive").click()
    expect_tool(webmcp, "list_archived").to_exist()
    expect_tool(webmcp, "add_todo").not_to_exist()
    outcome = webmcp.call("list_archived")
    expect_result(outcome).to_have_structured_content(
        {"todos": [{"id": 3, "text": "Renew the library card", "done": True}]}
    )


@pytest.mark.webmcp(backend="native")
def test_chromiums_own_webmcp_runs_the_same_tools(
    page: Page, webmcp: PageSession, todo_url: str
) -> None:
    page.goto(todo_url)
    outcome = webmcp.call("add_todo", {"text": "Compare the backends"})
    expect_result(outcome).to_have_structured_content({"todo": {"text": "Compare the backends"}})
    assert webmcp.backend_name == "native"
