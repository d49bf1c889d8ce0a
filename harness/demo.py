"""``make demo`` / ``webmcp-harness demo``: the harness at work on the bundled todo site."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.table import Table

from harness.cli import print_tools
from harness.errors import HarnessError
from harness.harness import Harness
from harness.models import CallOutcome

# (tool, arguments, what the step shows)
STEPS: list[tuple[str, dict[str, Any], str]] = [
    ("list_todos", {}, "read the list"),
    ("add_todo", {"text": "Buy oat milk"}, "add a todo"),
    ("complete_todo", {"id": 1}, "complete one"),
    ("list_todos", {"status": "open"}, "only the open ones"),
    ("add_todo", {"text": ""}, "bad arguments: refused before the page sees them"),
    ("delete_todo", {"id": 999}, "a tool that throws: an isError result"),
]


def _summary(outcome: CallOutcome) -> str:
    result = outcome.agent_json()
    if outcome.is_error:
        text = result["content"][0]["text"] if result.get("content") else ""
        return text.splitlines()[0] + (" …" if "\n" in text else "")
    structured = result.get("structuredContent")
    return json.dumps(structured if structured is not None else result.get("content"))[:90]


async def run_demo(console: Console) -> int:
    """Serve the todo site, list its tools, and run a short sequence of calls."""
    from harness.sites.server import serve_sites

    async with serve_sites(["todo"]) as sites:
        url = sites.url("todo")
        console.rule(f"[bold]webmcp-harness demo[/] — todo site at {url}")
        try:
            async with Harness(backend="polyfill") as harness:
                session = await harness.open(url)
                print_tools(
                    console, url, await session.tools(), [w.message for w in session.warnings]
                )
                table = Table(title="Calls through the user agent's pipeline")
                for column in ("step", "tool", "arguments", "result", "ms"):
                    table.add_column(column, overflow="fold")
                for tool, arguments, what in STEPS:
                    outcome = await session.call(tool, arguments)
                    status = "[red]isError[/] " if outcome.is_error else "[green]ok[/] "
                    table.add_row(
                        what,
                        tool,
                        json.dumps(arguments),
                        status + _summary(outcome),
                        f"{outcome.duration_ms:.0f}",
                    )
                console.print(table)
        except HarnessError as exc:
            console.print(f"[red]demo failed:[/] {exc}")
            return 1
    return 0
