"""Rendering for people: tools, call outcomes, revealed secrets (rich on stdout, plain on stderr)."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from harness.elicitation.base import ElicitationRecord
from harness.models import CallOutcome, CatalogWarning, Tool
from harness.stages.redemption import RevealAttempt


def print_tools(
    console: Console, url: str, tools: list[Tool], warnings: Sequence[CatalogWarning]
) -> None:
    """A table of tools (or a line saying there are none), for people."""
    if not tools:
        console.print(
            f"No WebMCP tools at {url}: the page registered none by the time its catalog "
            "settled (--settle MS waits longer; --wait-for-tool NAME waits for one).",
            markup=False,
            highlight=False,
        )
    table = Table(title=f"WebMCP tools at {url}", show_lines=False)
    for column in ("name", "source", "annotations", "description"):
        table.add_column(column, overflow="fold")
    for tool in tools:
        hints = ", ".join(f"{k}={v}" for k, v in tool.annotations.items() if v not in (None, False))
        table.add_row(tool.name, tool.source, hints, tool.description)
    if tools:
        console.print(table)
    for warning in warnings:
        console.print("[yellow]warning:[/] ", end="", highlight=False)
        console.print(f"{warning.message} ({warning.code})", markup=False, highlight=False)


def print_outcome(
    console: Console, outcome: CallOutcome, elicitations: Sequence[ElicitationRecord] = ()
) -> None:
    """A call's agent view, and what the user was asked, for people."""
    status = "[red]isError[/]" if outcome.is_error else "[green]ok[/]"
    console.print(f"{outcome.tool}: {status} in {outcome.duration_ms:.0f} ms")
    console.print_json(json.dumps(outcome.agent_json()))
    for record in elicitations:
        changed = f" (changed: {', '.join(record.changed)})" if record.changed else ""
        why = f" — {record.reason}" if record.reason else ""
        line = f"asked the user ({record.source}, {record.tool or 'no tool'}): {record.action}"
        console.print(line + changed + why, markup=False, highlight=False)


def print_revealed(attempts: Sequence[RevealAttempt]) -> None:
    """``--reveal``: the withheld values, on stderr (the user's terminal), apart from the
    agent view on stdout. Plain text: a value is never read as markup."""
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
    print("\n".join(lines), file=sys.stderr)
