"""``webmcp-harness trace show DIR``: a trace as a rich timeline, and the CLI's live step lines.

Page-provided text (tool descriptions, results) is shown as plain text, never
as rich markup, with its control characters made visible
(:func:`harness.elicitation.wording.plain`), so a page can neither style, hide or
overwrite lines of the timeline nor send the terminal escape sequences; and without the
``<untrusted-data>`` frames the agent got around it (a person reads this).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from harness.elicitation.wording import plain
from harness.errors import ConfigError
from harness.models import describe_action
from harness.stages.framing import unframed, unframed_json
from harness.trace.events import (
    TRACE_FILE,
    AgentActed,
    ElicitationAnswered,
    ErrorOccurred,
    Navigated,
    PageOpened,
    PolicyDecided,
    Redacted,
    RunFinished,
    RunStarted,
    ScreenshotTaken,
    Timing,
    TokensUsed,
    ToolResult,
    ToolsChanged,
    TraceEvent,
    ValidationFailed,
    read_trace,
)

SHORT = 160

_STYLES: dict[str, str] = {
    "run-started": "bold",
    "page-opened": "cyan",
    "tools-changed": "magenta",
    "agent-action": "bold blue",
    "validation-error": "yellow",
    "policy-decision": "bold yellow",
    "elicitation": "yellow",
    "tool-result": "green",
    "redaction": "bold magenta",
    "navigation": "cyan",
    "error": "bold red",
    "timing": "dim",
    "token-use": "dim",
    "screenshot": "dim",
    "run-finished": "bold",
}


def _compact(value: Any, full: bool) -> str:
    if full:
        return json.dumps(value, indent=2, ensure_ascii=False)
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return text if len(text) <= SHORT else text[: SHORT - 1] + "…"


def _one_line(text: str, full: bool) -> str:
    text = unframed(text)  # before the lines are joined: a frame is read by its lines
    if full:
        return text
    line = " ".join(text.split())
    return line if len(line) <= SHORT else line[: SHORT - 1] + "…"


def result_summary(result: dict[str, Any], full: bool = False) -> str:
    """What a result said, shortly: the error text, the structured content, or the text
    (page text without the agent's ``<untrusted-data>`` frames: a person reads it)."""
    result = unframed_json(result)
    content = result.get("content") or []
    texts = [c.get("text", "") for c in content if isinstance(c, dict) and c.get("type") == "text"]
    if result.get("isError"):
        return _one_line(" ".join(texts) or "(no message)", full)
    if "structuredContent" in result:
        return _compact(result["structuredContent"], full)
    if texts:
        return _one_line(" ".join(texts), full)
    return _compact(content, full)


class PlainText(Text):
    """A rich ``Text`` whose appended strings are page text: control characters shown."""

    def append(self, text: str | Text, style: Any = None) -> PlainText:
        """Append ``text`` (a string without its ``<untrusted-data>`` frames, through
        :func:`plain` first)."""
        super().append(plain(unframed(text)) if isinstance(text, str) else text, style)
        return self


def describe(event: TraceEvent, full: bool = False) -> Text:
    """One event's details, as plain text with a style per part."""
    text = PlainText()
    if isinstance(event, RunStarted):
        text.append(f"{event.agent} agent on {event.start_url} ({event.backend}), ")
        text.append(f"at most {event.max_steps} steps")
        text.append(f"\ntask: {event.task}" if event.task else "")
        if event.artifacts:
            text.append(f"\nartifacts: {', '.join(event.artifacts)}", style="dim")
    elif isinstance(event, PageOpened):
        names = ", ".join(str(t.get("name")) for t in event.tools) or "none"
        text.append(f"{event.url}\ntools: {names}")
    elif isinstance(event, ToolsChanged):
        parts = [
            f"{sign}{', '.join(names)}"
            for sign, names in (("+", event.added), ("-", event.removed), ("~", event.changed))
            if names
        ]
        text.append(" ".join(parts))
        text.append(f"\nnow: {', '.join(event.names) or 'none'}", style="dim")
    elif isinstance(event, AgentActed):
        text.append(_one_line(describe_action(event.action), full))
        note = getattr(event.action, "note", None)
        if note:
            text.append(f"\n{_one_line(note, full)}", style="italic dim")
    elif isinstance(event, ValidationFailed):
        problems = "; ".join(
            f"{p.get('path') or '(the arguments)'}: {p.get('message')}" for p in event.problems
        )
        text.append(f"{event.tool}: {problems or 'arguments refused'}")
    elif isinstance(event, PolicyDecided):
        text.append(f"{event.effect.upper()} ", style="bold")
        text.append(f"{event.tool} ({event.phase}, {event.policy})")
        if event.rules:
            text.append(f" by {', '.join(event.rules)}")
        if event.answer:
            text.append(f"; the user answered {event.answer}")
        text.append(f" → {event.outcome}", style="bold")
    elif isinstance(event, ElicitationAnswered):
        text.append(f"asked ({event.source}) about {event.tool or 'the page'}: ")
        text.append(_one_line(event.message, full) or "(the page's own question: not traced)")
        if event.destination:
            text.append(f"\ndestination: {event.destination}")
        text.append(f"\nanswer: {event.action}", style="bold")
        if event.reason:
            text.append(f" ({event.reason})", style="dim")
    elif isinstance(event, ToolResult):
        status = "isError" if event.is_error else "ok"
        text.append(f"{event.tool} ")
        text.append(status, style="red" if event.is_error else "green")
        if event.error_kind:
            text.append(f" ({event.error_kind})")
        text.append(f" in {event.duration_ms:.0f} ms\n")
        text.append(result_summary(event.result, full))
    elif isinstance(event, Redacted):
        text.append(f"{event.tool}: removed {', '.join(event.paths)}")
    elif isinstance(event, Navigated):
        if not event.requested:  # not the agent's: the page's own, or a way back
            text.append(f"the page went to {event.final_url or event.url}")
        elif event.ok:
            text.append(f"{event.requested} → {event.final_url or event.url}")
        else:
            text.append(f"{event.requested}: {event.error}", style="red")
    elif isinstance(event, ErrorOccurred):
        text.append(f"{event.where}: {_one_line(event.message, full)}")
    elif isinstance(event, Timing):
        text.append(f"agent {event.agent_ms:.0f} ms, action {event.action_ms:.0f} ms")
    elif isinstance(event, TokensUsed):
        cost = f", ${event.cost_usd:.6f}" if event.cost_usd is not None else ""
        text.append(f"{event.model}: {event.input_tokens} in, {event.output_tokens} out{cost}")
    elif isinstance(event, ScreenshotTaken):
        text.append(event.path)
    elif isinstance(event, RunFinished):
        text.append(event.stop_reason, style="green" if event.stop_reason == "finished" else "red")
        text.append(f" after {event.steps} steps, {event.duration_ms / 1000:.1f} s")
        if event.answer:
            text.append(f"\nanswer: {_one_line(event.answer, full)}")
        if event.detail:
            text.append(f"\n{event.detail}")
        if event.artifacts:
            text.append(f"\nartifacts: {', '.join(event.artifacts)}", style="dim")
    return text


def timeline(events: list[TraceEvent], *, full: bool = False, timing: bool = False) -> Table:
    """The events as a table: time, step, event, details (``timing`` rows only if asked)."""
    table = Table(show_lines=False, expand=False, pad_edge=False)
    table.add_column("ms", justify="right", style="dim")
    table.add_column("step", justify="right")
    table.add_column("event", no_wrap=True)
    table.add_column("details", overflow="fold")
    for event in events:
        if isinstance(event, Timing) and not timing:
            continue
        table.add_row(
            f"{event.at_ms:.0f}",
            "" if event.step is None else str(event.step),
            Text(plain(event.type), style=_STYLES.get(event.type, "")),
            describe(event, full),
        )
    return table


def totals(events: list[TraceEvent]) -> Text:
    """Calls, errors, decisions, redactions and tokens over the whole run."""
    results = [e for e in events if isinstance(e, ToolResult)]
    tokens = [e for e in events if isinstance(e, TokensUsed)]
    counts = [
        f"{len(results)} calls ({sum(r.is_error for r in results)} isError)",
        f"{sum(isinstance(e, Navigated) for e in events)} navigations",
        f"{sum(isinstance(e, ErrorOccurred) for e in events)} errors",
        f"{sum(isinstance(e, PolicyDecided) for e in events)} policy decisions",
        f"{sum(isinstance(e, Redacted) for e in events)} redactions",
    ]
    if tokens:
        counts.append(
            f"{sum(t.input_tokens for t in tokens)} + {sum(t.output_tokens for t in tokens)} tokens"
        )
        costs = [t.cost_usd for t in tokens if t.cost_usd is not None]
        if costs:
            counts.append(f"${sum(costs):.6f}")
    return Text(plain(", ".join(counts)))


def render_trace(
    events: list[TraceEvent], *, full: bool = False, timing: bool = False
) -> RenderableType:
    """The whole timeline and a summary panel."""
    finished = next((e for e in reversed(events) if isinstance(e, RunFinished)), None)
    started = next((e for e in events if isinstance(e, RunStarted)), None)
    title = f"{started.agent} run on {started.start_url}" if started else "trace"
    head = PlainText()
    if finished is None:
        head.append("the run did not finish (no run-finished event)\n", style="red")
    else:
        head.append(
            finished.stop_reason,
            style="bold green" if finished.stop_reason == "finished" else "bold red",
        )
        head.append(f" after {finished.steps} steps\n")
    head.append_text(totals(events))
    return Group(
        Panel(head, title=Text(plain(title)), expand=False),
        timeline(events, full=full, timing=timing),
    )


def show_trace(
    run_dir: str | Path, console: Console, *, full: bool = False, timing: bool = False
) -> None:
    """Print the trace in ``run_dir`` as a timeline."""
    console.print(render_trace(read_trace(_run_directory(run_dir)), full=full, timing=timing))


RUNS_LISTED = 5
"""How many of the runs a directory of runs holds :func:`_run_directory` names."""


def _run_directory(given: str | Path) -> Path:
    """``given``, when it is a run (or its trace); a directory that holds runs instead — an
    experiment's output, whose episodes are ``OUT/episodes/<id>``, or ``webmcp-runs`` — is
    a :class:`ConfigError` naming a few of them."""
    path = Path(given)
    if not path.is_dir() or (path / TRACE_FILE).exists():
        return path  # read_trace says what is wrong with it, if anything
    runs = sorted(
        {
            trace.parent
            for pattern in ("*/" + TRACE_FILE, "*/*/" + TRACE_FILE)
            for trace in path.glob(pattern)
        }
    )
    if not runs:
        return path
    shown = ", ".join(str(run) for run in runs[:RUNS_LISTED])
    more = f" (and {len(runs) - RUNS_LISTED} more)" if len(runs) > RUNS_LISTED else ""
    where = {run.parent for run in runs}
    pattern = f"{next(iter(where))}/<id>" if len(where) == 1 else "one of them"
    raise ConfigError(
        f"{path} holds {len(runs)} runs, not one: give a run's directory ({pattern}), "
        f"e.g. {shown}{more}."
    )


def live_line(event: TraceEvent) -> Text | None:
    """A line for the CLI's live display, or None for events it leaves out."""
    if isinstance(event, Timing | TokensUsed | ScreenshotTaken | RunStarted):
        return None
    line = PlainText()
    line.append(f"{'' if event.step is None else event.step:>3} ", style="dim")
    line.append(f"{event.type:<16} ", style=_STYLES.get(event.type, ""))
    # Continuation lines line up under the details column.
    details = describe(event).split("\n")
    for number, part in enumerate(details):
        if number:
            line.append("\n" + " " * LIVE_INDENT)
        line.append_text(part)
    return line


LIVE_INDENT = 21  # the width of the step and event columns of a live line
