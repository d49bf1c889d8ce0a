"""The ``webmcp-harness`` command: rich output for people, ``--json`` for machines.

Exit status: 0 when the command did its job (a tool result with ``isError``
included), 1 when the harness could not (unknown tool, unreachable page, no
browser, bad ``--args``), 2 for command-line usage errors.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from harness.errors import HarnessError
from harness.harness import BACKENDS, DEFAULT_CALL_TIMEOUT_S, Harness
from harness.models import CallOutcome, Tool

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

# How long `call` waits for a tool that the page registers after load.
TOOL_WAIT_S = 5.0


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
    _add_backend(call)

    sites = sub.add_parser("sites", help="serve the bundled demo sites and print their URLs")
    sites.add_argument("names", nargs="*", metavar="SITE", help="sites to serve (default: all)")

    sub.add_parser("demo", help="serve the todo site and show the harness at work")
    return parser


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
    url: str, backend: str, name: str, arguments: dict[str, Any], timeout: float
) -> CallOutcome:
    """One call at ``url``, waiting briefly for a tool registered after load."""
    async with Harness(backend=backend, call_timeout=timeout) as harness:  # type: ignore[arg-type]
        session = await harness.open(url)
        await session.wait_for_tool(name, timeout=TOOL_WAIT_S)
        return await session.call(name, arguments)


def print_tools(console: Console, url: str, tools: list[Tool], warnings: list[str]) -> None:
    """A table of tools, for people."""
    table = Table(title=f"WebMCP tools at {url}", show_lines=False)
    for column in ("name", "source", "annotations", "description"):
        table.add_column(column, overflow="fold")
    for tool in tools:
        hints = ", ".join(f"{k}={v}" for k, v in tool.annotations.items() if v not in (None, False))
        table.add_row(tool.name, tool.source, hints, tool.description)
    console.print(table)
    for warning in warnings:
        console.print(f"[yellow]warning:[/] {warning}", markup=True, highlight=False)


def print_outcome(console: Console, outcome: CallOutcome) -> None:
    """A call's agent view, for people."""
    status = "[red]isError[/]" if outcome.is_error else "[green]ok[/]"
    console.print(f"{outcome.tool}: {status} in {outcome.duration_ms:.0f} ms")
    console.print_json(json.dumps(outcome.agent_json()))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``webmcp-harness`` console script."""
    args = build_parser().parse_args(argv)
    out = Console(soft_wrap=True)
    err = Console(stderr=True, soft_wrap=True)
    try:
        return _dispatch(args, out)
    except UsageError as exc:
        err.print(f"webmcp-harness: {exc}", markup=False, highlight=False)
        return EXIT_USAGE
    except HarnessError as exc:
        err.print(f"webmcp-harness: {exc}", markup=False, highlight=False)
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
        outcome = asyncio.run(run_call(args.url, args.backend, args.tool, arguments, args.timeout))
        if args.json:
            payload = {
                "tool": outcome.tool,
                "result": outcome.agent_json(),
                "durationMs": round(outcome.duration_ms, 1),
            }
            print(json.dumps(payload, indent=2))
        else:
            print_outcome(out, outcome)
        return EXIT_OK
    if args.command == "sites":
        from harness.sites.server import main as serve_main

        return int(serve_main(args.names))
    if args.command == "demo":
        from harness.demo import run_demo

        return asyncio.run(run_demo(out))
    raise UsageError(f"unknown command {args.command!r}")


if __name__ == "__main__":
    sys.exit(main())
