"""The ``webmcp-harness`` commands: the parser and the dispatch; rich output for people
(:mod:`harness.cli.render`), ``--json`` for machines.

Exit status: 0 when the command did its job (a tool result with ``isError``
included), 1 when the harness could not (unknown tool, unreachable page, no
browser, bad ``--args``), 2 for command-line usage errors.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console

from harness.agents import make_agent
from harness.agents.loop import DEFAULT_MAX_STEPS, RunResult, run_agent
from harness.cli import experiment
from harness.cli.render import page_text, print_outcome, print_revealed, print_tools
from harness.elicitation.answers import load_answers
from harness.elicitation.base import ElicitationRecord
from harness.elicitation.choice import ELICIT_CHOICES, handler_from_option
from harness.errors import ConfigError, HarnessError
from harness.harness import BACKENDS, DEFAULT_CALL_TIMEOUT_S, Harness
from harness.models import CallOutcome, Tool
from harness.stages.policy import DEFAULT_POLICY, Policy, policy_from_argument
from harness.stages.redemption import RevealAttempt
from harness.stages.trust import trust_warnings
from harness.trace.events import TraceEvent
from harness.trace.recorder import TraceOptions, check_run_dir
from harness.trace.view import live_line, show_trace

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

# How long `call` waits for a tool that the page registers after load.
TOOL_WAIT_S = 5.0

# Where `agent` writes a run's trace when no --trace-dir is given.
DEFAULT_RUNS_DIR = "webmcp-runs"


class UsageError(HarnessError):
    """A command-line argument is malformed."""


def _add_backend(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--backend",
        choices=sorted(BACKENDS),
        default="polyfill",
        help="polyfill: the injected JS (any Chromium); native: Chromium's own WebMCP",
    )
    parser.add_argument("--json", action="store_true", help="print JSON for machines")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every sub-command."""
    parser = argparse.ArgumentParser(
        prog="webmcp-harness",
        description="A headless browser agent harness for WebMCP.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    tools = sub.add_parser("tools", help="list the WebMCP tools a page offers")
    tools.add_argument("url")
    _add_backend(tools)

    call = sub.add_parser("call", help="call one tool through the user agent's pipeline")
    call.add_argument("url")
    call.add_argument("tool")
    call.add_argument("--args", default="{}", metavar="JSON", help="arguments, a JSON object")
    call.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_CALL_TIMEOUT_S,
        metavar="S",
        help=f"abort the call after S seconds (default {DEFAULT_CALL_TIMEOUT_S:g})",
    )
    add_elicit_options(call)
    call.add_argument(
        "--policy",
        default="default",
        metavar="FILE|none",
        help="trust policy: the default pack (default), none, or a TOML/YAML/JSON rule file",
    )
    call.add_argument(
        "--reveal",
        action="store_true",
        help="after the call, reveal the values withheld from the agent, to you: printed on "
        "stderr, never in the agent view or --json",
    )
    _add_backend(call)

    sites = sub.add_parser("sites", help="serve the bundled demo sites and print their URLs")
    sites.add_argument("names", nargs="*", metavar="SITE", help="sites to serve (default: all)")

    sub.add_parser("demo", help="serve the todo site and show the harness at work")
    _add_agent_commands(sub)
    _add_mcp_command(sub)
    experiment.add_parser(sub)
    return parser


def _add_agent_commands(sub: Any) -> None:
    """``agent`` (run an agent on a page) and ``trace show`` (a run's timeline)."""
    agent = sub.add_parser("agent", help="let an agent use a page's tools; records a trace")
    agent.add_argument("url", help="the start page; the agent's relative navigations resolve here")
    agent.add_argument(
        "--agent",
        required=True,
        metavar="SPEC",
        help="scripted:PLAN.yaml, replay:DIR, obedient[:PLAN.yaml], openai:MODEL, anthropic:MODEL",
    )
    agent.add_argument("--task", help="what the agent should do (a plan or recording has its own)")
    agent.add_argument(
        "--max-steps",
        type=int,
        default=DEFAULT_MAX_STEPS,
        metavar="N",
        help=f"stop after N actions (default {DEFAULT_MAX_STEPS})",
    )
    agent.add_argument(
        "--trace-dir",
        metavar="DIR",
        help="where the run's trace goes; a new or empty directory "
        f"(default: {DEFAULT_RUNS_DIR}/<time>-<agent>)",
    )
    agent.add_argument(
        "--playwright-trace",
        choices=["off", "on", "retain-on-failure"],
        default="off",
        help="also keep a Playwright trace.zip (user view: it shows the page)",
    )
    agent.add_argument(
        "--screenshots", action="store_true", help="a screenshot after each call (user view)"
    )
    agent.add_argument("--har", action="store_true", help="record the network as a HAR (user view)")
    agent.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_CALL_TIMEOUT_S,
        metavar="S",
        help=f"abort a call after S seconds (default {DEFAULT_CALL_TIMEOUT_S:g})",
    )
    _add_backend(agent)

    trace = sub.add_parser("trace", help="read recorded runs")
    trace_sub = trace.add_subparsers(dest="trace_command", required=True, metavar="ACTION")
    show = trace_sub.add_parser("show", help="a run's trace as a timeline")
    show.add_argument("dir", metavar="DIR", help="the run directory (holds trace.jsonl)")
    show.add_argument("--full", action="store_true", help="whole results and messages")
    show.add_argument("--timing", action="store_true", help="also the timing events")


def _add_mcp_command(sub: Any) -> None:
    """``mcp``: serve a page's tools to MCP clients (see ``harness.mcp.server``)."""
    mcp = sub.add_parser("mcp", help="serve a page's tools to MCP clients (stdio or HTTP)")
    mcp.add_argument("url", help="the page to serve; harness.navigate resolves paths here")
    mcp.add_argument(
        "--transport", choices=["stdio", "http"], default="stdio", help="default: stdio"
    )
    mcp.add_argument(
        "--host", default="127.0.0.1", help="HTTP: a loopback address (127.0.0.1, ::1, localhost)"
    )
    mcp.add_argument(
        "--port", type=int, metavar="N", help="HTTP: the port (default 8765; 0: any free port)"
    )
    add_elicit_options(mcp)
    mcp.add_argument(
        "--backend",
        choices=sorted(BACKENDS),
        default="polyfill",
        help="polyfill: the injected JS (any Chromium); native: Chromium's own WebMCP",
    )


def run_mcp_command(args: argparse.Namespace, err: Console) -> int:
    """Serve until the client closes stdio, or Ctrl-C stops the HTTP server."""
    from harness.mcp.server import DEFAULT_PORT, is_loopback, serve

    check_elicit(args.elicit, args.elicit_timeout)
    if args.transport == "stdio" and args.elicit == "terminal":
        raise UsageError("--elicit terminal needs stdin, which the stdio transport uses.")
    if args.transport == "http" and not is_loopback(args.host):
        raise UsageError(
            f"--host {args.host}: the MCP server listens on loopback only (127.0.0.1, ::1, "
            "localhost); it has no authentication and drives your browser page."
        )
    port = DEFAULT_PORT if args.port is None else args.port
    if not 0 <= port <= 65535:
        raise UsageError(f"--port must be 0–65535, not {port}.")
    # Over stdio the terminal is not the user's: stdin carries the protocol.
    elicit = args.elicit or ("cancel" if args.transport == "stdio" else None)
    harness = Harness(backend=args.backend, headless=elicit != "browser")
    harness.elicitation = handler_from_option(
        elicit, browser=lambda: harness.browser, timeout=args.elicit_timeout
    )

    def ready(where: str) -> None:
        err.print(
            f"webmcp-harness: serving the tools of {args.url} over "
            f"{'stdio' if where == 'stdio' else f'streamable HTTP at {where}'}",
            markup=False,
            highlight=False,
        )

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(
            serve(
                harness,
                args.url,
                transport=args.transport,
                host=args.host,
                port=port,
                on_ready=ready,
            )
        )
    return EXIT_OK


def add_elicit_options(parser: argparse.ArgumentParser) -> None:
    """``--elicit`` and ``--elicit-timeout``, for every command that runs tools."""
    parser.add_argument(
        "--elicit",
        metavar="accept|decline|cancel|terminal|browser|FILE",
        help="who answers the user's questions: the same answer every time, a person at "
        "this terminal, a person in a browser tab (headed), or an answers file "
        "(default: terminal when stdin is a terminal, cancel otherwise)",
    )
    parser.add_argument(
        "--elicit-timeout",
        type=float,
        metavar="S",
        help="an unanswered question is cancelled after S seconds",
    )


def check_elicit(text: str | None, timeout: float | None) -> None:
    """``--elicit`` and ``--elicit-timeout``, checked before the browser starts."""
    if timeout is not None and timeout <= 0:
        raise UsageError("--elicit-timeout must be a positive number of seconds.")
    if text is None or text in ELICIT_CHOICES:
        return
    if not Path(text).is_file():
        raise UsageError(
            f"--elicit {text!r}: not one of {', '.join(ELICIT_CHOICES)}, and no answers file "
            "by that name."
        )
    try:
        load_answers(text)
    except ConfigError as exc:
        raise UsageError(str(exc)) from exc


def parse_arguments(text: str) -> dict[str, Any]:
    """``--args``: a JSON object, or a :class:`UsageError` that says what is wrong."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"--args is not valid JSON ({exc}); pass an object like '{{}}'.") from exc
    if not isinstance(value, dict):
        raise UsageError(f"--args must be a JSON object, not {type(value).__name__}.")
    return value


async def run_tools(url: str, backend: str) -> tuple[list[Tool], list[str]]:
    """The tools at ``url`` and the catalog's warnings."""
    async with Harness(backend=backend) as harness:  # type: ignore[arg-type]
        session = await harness.open(url)
        tools = await session.tools()
        return tools, [w.message for w in session.warnings]


async def run_call(
    url: str,
    backend: str,
    name: str,
    arguments: dict[str, Any],
    timeout: float,
    *,
    elicit: str | None = None,
    elicit_timeout: float | None = None,
    policy: Policy | None = DEFAULT_POLICY,
    reveal: bool = False,
) -> tuple[CallOutcome, list[ElicitationRecord], list[RevealAttempt]]:
    """One call at ``url`` (waiting briefly for a tool registered after load), its
    elicitations, and with ``reveal`` what revealing its withheld values gave the user."""
    harness = Harness(
        backend=backend,  # type: ignore[arg-type]
        call_timeout=timeout,
        headless=elicit != "browser",
        policy=policy,
    )
    harness.elicitation = handler_from_option(
        elicit, browser=lambda: harness.browser, timeout=elicit_timeout
    )
    async with harness:
        session = await harness.open(url)
        await session.wait_for_tool(name, timeout=TOOL_WAIT_S)
        outcome = await session.call(name, arguments)
        # Before the session closes: closing clears the vault.
        revealed = await session.reveal_all(outcome) if reveal else []
        return outcome, list(session.elicitations), revealed


def default_trace_dir(spec: str) -> Path:
    """``webmcp-runs/<UTC time>-<agent kind>``, made unique with a counter."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    kind = "".join(c if c.isalnum() else "-" for c in spec.partition(":")[0]) or "agent"
    base = Path(DEFAULT_RUNS_DIR) / f"{stamp}-{kind}"
    candidate, n = base, 1
    while candidate.exists():
        n += 1
        candidate = base.with_name(f"{base.name}-{n}")
    return candidate


async def run_agent_command(args: argparse.Namespace, out: Console | None) -> RunResult:
    """Run ``--agent`` on ``url``; with ``out``, show each step as it happens."""
    agent = make_agent(args.agent)
    if not args.task and not getattr(agent, "default_task", ""):
        raise UsageError(f"--task is required for the {args.agent.partition(':')[0]} agent.")
    trace_dir = Path(args.trace_dir) if args.trace_dir else default_trace_dir(args.agent)
    check_run_dir(trace_dir)  # before the browser starts
    options = TraceOptions(
        playwright=args.playwright_trace, screenshots=args.screenshots, har=args.har
    )

    def show(event: TraceEvent) -> None:
        line = live_line(event)
        if out is not None and line is not None:
            out.print(line)

    async with Harness(backend=args.backend, call_timeout=args.timeout) as harness:
        session = await harness.new_session()
        try:
            return await run_agent(
                session,
                agent,
                args.url,
                task=args.task,
                max_steps=args.max_steps,
                trace_dir=trace_dir,
                trace_options=options,
                on_event=show,
            )
        finally:
            await session.close()  # writes the HAR, when one is recorded


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``webmcp-harness`` console script."""
    args = build_parser().parse_args(argv)
    out = Console(soft_wrap=True)
    err = Console(stderr=True, soft_wrap=True)
    try:
        return _dispatch(args, out)
    except UsageError as exc:
        err.print(page_text(f"webmcp-harness: {exc}"), highlight=False)
        return EXIT_USAGE
    except HarnessError as exc:  # messages may quote the page (a URL, a tool name)
        err.print(page_text(f"webmcp-harness: {exc}"), highlight=False)
        return EXIT_FAILED
    except KeyboardInterrupt:
        return EXIT_FAILED


def _dispatch(args: argparse.Namespace, out: Console) -> int:
    if args.command == "tools":
        tools, warnings = asyncio.run(run_tools(args.url, args.backend))
        if args.json:
            payload = {
                "url": args.url,
                "backend": args.backend,
                "tools": [t.public() for t in tools],
                "warnings": warnings,
            }
            print(json.dumps(payload, indent=2))
        else:
            print_tools(out, args.url, tools, warnings)
        return EXIT_OK
    if args.command == "call":
        arguments = parse_arguments(args.args)
        if args.timeout <= 0:
            raise UsageError("--timeout must be a positive number of seconds.")
        check_elicit(args.elicit, args.elicit_timeout)
        policy = policy_from_argument(args.policy)  # a bad file fails before the browser starts
        outcome, elicitations, revealed = asyncio.run(
            run_call(
                args.url,
                args.backend,
                args.tool,
                arguments,
                args.timeout,
                elicit=args.elicit,
                elicit_timeout=args.elicit_timeout,
                policy=policy,
                reveal=args.reveal,
            )
        )
        warn = Console(stderr=True, soft_wrap=True)
        for warning in trust_warnings(outcome.result):
            warn.print(page_text("warning: ", "yellow") + page_text(warning), highlight=False)
        if args.json:
            payload = {
                "tool": outcome.tool,
                "result": outcome.agent_json(),
                "durationMs": round(outcome.duration_ms, 1),
                "elicitations": [r.model_dump(mode="json") for r in elicitations],
            }
            print(json.dumps(payload, indent=2))
        else:
            print_outcome(out, outcome, elicitations)
        if args.reveal:
            print_revealed(revealed)
            if any(attempt.error is not None for attempt in revealed):
                return EXIT_FAILED
        return EXIT_OK
    if args.command == "agent":
        if args.max_steps < 1:
            raise UsageError("--max-steps must be at least 1.")
        if args.timeout <= 0:
            raise UsageError("--timeout must be a positive number of seconds.")
        result = asyncio.run(run_agent_command(args, None if args.json else out))
        if args.json:
            print(json.dumps(result.summary(), indent=2))
        else:
            style = "green" if result.ok else "red"
            out.print(f"[{style}]{result.stop_reason}[/] after {len(result.steps)} steps")
            if result.detail:
                out.print(page_text(result.detail), highlight=False)
            out.print(page_text(f"trace: {result.trace_dir}"), highlight=False)
        return EXIT_OK if result.ok else EXIT_FAILED
    if args.command == "trace":
        show_trace(args.dir, out, full=args.full, timing=args.timing)
        return EXIT_OK
    if args.command == "mcp":
        return run_mcp_command(args, Console(stderr=True, soft_wrap=True))
    if args.command == "experiment":
        return experiment.run(args, out)
    if args.command == "sites":
        from harness.sites.server import main as serve_main

        return int(serve_main(args.names))
    if args.command == "demo":
        from harness.cli.demo import run_demo

        return asyncio.run(run_demo(out))
    raise UsageError(f"unknown command {args.command!r}")


if __name__ == "__main__":
    sys.exit(main())
