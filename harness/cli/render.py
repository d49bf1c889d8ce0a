"""Rendering for people: tools, call outcomes, revealed secrets (rich on stdout, plain on stderr).

Everything a page wrote (names, descriptions, annotations, results, warnings that quote
them) goes through :func:`page_text` / :func:`page_json`: plain text, never rich markup,
with control characters made visible (:func:`harness.elicitation.terminal.plain`).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.highlighter import JSONHighlighter
from rich.table import Table
from rich.text import Text

from harness.elicitation.base import ElicitationRecord
from harness.elicitation.wording import plain
from harness.models import CallOutcome, CatalogWarning, Tool
from harness.stages.redemption import RevealAttempt

_JSON = JSONHighlighter()


def page_text(text: Any, style: str = "") -> Text:
    """Page-provided text for a terminal: no markup is read in it, control characters show."""
    return Text(plain(text), style=style)


def page_json(data: Any) -> Text:
    """JSON that holds page text, indented and highlighted, for a terminal."""
    return _JSON(page_text(json.dumps(data, indent=2, ensure_ascii=False)))


def print_tools(
    console: Console, url: str, tools: list[Tool], warnings: Sequence[CatalogWarning]
) -> None:
    """A table of tools (or a line saying there are none), for people."""
    if not tools:
        why = (
            "it is not a secure context (see the warning)"
            if any(w.code == "insecure-context" for w in warnings)
            else "the page registered none by the time its catalog settled (--settle MS "
            "waits longer; --wait-for-tool NAME waits for one)"
        )
        console.print(page_text(f"No WebMCP tools at {url}: {why}."), highlight=False)
    table = Table(title=page_text(f"WebMCP tools at {url}"), show_lines=False)
    for column in ("name", "source", "annotations", "description"):
        table.add_column(column, overflow="fold")
    for tool in tools:
        hints = annotation_cell(tool.annotations)
        table.add_row(
            page_text(tool.name),
            tool.source,
            page_text(hints),
            page_text(tool.description),
        )
    if tools:
        console.print(table)
    for warning in warnings:
        line = f"{warning.message} ({warning.code})"
        console.print(Text("warning: ", style="yellow") + page_text(line), highlight=False)


def annotation_cell(annotations: dict[str, Any]) -> str:
    """The annotations a tool declared, as the table shows them, each with its value in
    JSON: ``readOnlyHint=true``, ``readOnlyHint=false`` (declared false, which is not the
    same as not declared: that leaves the default); ``(none declared)`` when there are none."""
    shown = [
        f"{key}={json.dumps(value)}" for key, value in annotations.items() if value is not None
    ]
    return ", ".join(shown) or "(none declared)"


def print_outcome(
    console: Console, outcome: CallOutcome, elicitations: Sequence[ElicitationRecord] = ()
) -> None:
    """A call's agent view, and what the user was asked, for people."""
    status = Text("isError", style="red") if outcome.is_error else Text("ok", style="green")
    console.print(
        page_text(f"{outcome.tool}: ") + status + Text(f" in {outcome.duration_ms:.0f} ms")
    )
    console.print(page_json(outcome.agent_json()))
    for record in elicitations:
        changed = f" (changed: {', '.join(record.changed)})" if record.changed else ""
        why = f" — {record.reason}" if record.reason else ""
        line = f"asked the user ({record.source}, {record.tool or 'no tool'}): {record.action}"
        console.print(page_text(line + changed + why), highlight=False)


def print_revealed(attempts: Sequence[RevealAttempt]) -> None:
    """``--reveal``: the withheld values, on stderr (the user's terminal), apart from the
    agent view on stdout. Plain text: a value is never read as markup, and its control
    characters are shown, not obeyed."""
    lines = ["Revealed to you (the user), never to the agent:"]
    if not attempts:
        lines.append("  (nothing was withheld)")
    for attempt in attempts:
        item = attempt.item
        lines.append(f"  {item.label} [{item.kind}, {item.handle}]:")
        if attempt.revealed is not None:
            value = attempt.revealed.value
            lines.append("    " + (value if isinstance(value, str) else json.dumps(value)))
            lines += [f"    site defect: {d.message}" for d in attempt.revealed.defects]
        else:
            lines.append(f"    not revealed: {attempt.error}")
    print(plain("\n".join(lines)), file=sys.stderr)
