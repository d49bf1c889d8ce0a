"""The ``webmcp-harness`` commands: the parser and the dispatch; rich output for people
(:mod:`harness.cli.render`), ``--json`` for machines.

Exit status: 0 when the command did its job (a tool result with ``isError``
included), 1 when the harness could not (unknown tool, unreachable page, no
browser, bad ``--args``), 2 for command-line usage errors, 130 when Ctrl-C stopped it.

Every command starts fast: this module, the parsers and :mod:`harness.cli.options` import
the standard library (and :mod:`harness.errors`) only, so that ``--help`` and a usage
error cost no more than Python's start. A command's stack (Playwright, the harness, the
MCP SDK, rich, …) is imported inside the function that runs it, once it is the command
given — see :mod:`harness.cli` for the pattern, and tests/cli/test_cli_imports.py, which
checks that every ``COMMAND --help`` loads nothing else and that ``mcp`` loads no other
front end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import importlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.browser.marks import mark
from harness.cli.options import (
    DEFAULT_CALL_TIMEOUT_S,
    EXIT_BROKEN_PIPE,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    LATE_TOOL_HINT,
    URL_HELP,
    Interrupted,
    Parser,
    ReaderGone,
    UsageError,
    add_elicit_options,
    add_page_options,
    add_user_agent_options,
    check_elicit,
    check_settle,
    page_url,
    parse,
    policy_option,
    refusal_hint,
    report_error,
    settle_from_ms,
    settle_option,
    unanswered_hint,
)
from harness.cli.startup import early_harness
from harness.errors import ConfigError, HarnessError, UnknownTool

if TYPE_CHECKING:  # imported by the functions that run the commands
    from rich.console import Console

    from harness.agents.loop import RunResult
    from harness.elicitation.base import ElicitationRecord
    from harness.harness import Harness
    from harness.models import CallOutcome, CatalogWarning, Tool
    from harness.session import Session
    from harness.stages.policy import PolicyOption
    from harness.stages.redemption import RevealAttempt

__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "UsageError",
    "add_elicit_options",
    "main",
]

# Where `agent` writes a run's trace when no --trace-dir is given.
DEFAULT_RUNS_DIR = "webmcp-runs"
DEFAULT_MAX_STEPS = 20  # harness.agents.loop.DEFAULT_MAX_STEPS (checked equal by a test)
DEFAULT_MCP_PORT = 8765  # harness.mcp.server.DEFAULT_PORT (checked equal by a test)


def build_parser(command: str | None = None) -> Parser:
    """The argument parser (no abbreviations; see :mod:`options`): for ``command`` alone
    when one is given (its modules are the only ones imported), for every command else."""
    parser = Parser(
        prog="webmcp-harness",
        description="A headless browser agent harness for WebMCP.",
    )
    parser.add_argument(
        "--version", action="version", version=f"%(prog)s {_version()}", help="its version"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, register in COMMANDS.items():
        if command is None or name == command:
            register(sub)
    return parser


def _version() -> str:
    """The installed package's version (a bug report's first line)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("webmcp-harness")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "(not installed)"


def _add_tools_command(sub: Any) -> None:
    tools = sub.add_parser("tools", help="list the WebMCP tools a page offers")
    tools.add_argument("url", type=page_url, help=URL_HELP)
    add_page_options(tools)


def _add_call_command(sub: Any) -> None:
    call = sub.add_parser("call", help="call one tool through the user agent's pipeline")
    call.add_argument("url", type=page_url, help=URL_HELP)
    call.add_argument("tool")
    call.add_argument("--args", default="{}", metavar="JSON", help="arguments, a JSON object")
    call.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_CALL_TIMEOUT_S,
        metavar="S",
        help=f"abort the call after S seconds (default {DEFAULT_CALL_TIMEOUT_S:g})",
    )
    add_user_agent_options(call)
    call.add_argument(
        "--reveal",
        action="store_true",
        help="after the call, reveal the values withheld from the agent, to you: printed on "
        "stderr, never in the agent view or --json",
    )
    add_page_options(call)


def _module_parser(module: str, function: str = "add_parser") -> Callable[[Any], None]:
    """Registration by a command module's ``add_parser`` (or ``function``), imported only
    when it is called."""

    def register(sub: Any) -> None:
        getattr(importlib.import_module(f"harness.cli.{module}"), function)(sub)

    return register


def _add_demo_command(sub: Any) -> None:
    sub.add_parser(
        "demo", help="serve the bundled sites and show the harness at work (nine short acts)"
    )


def _add_agent_command(sub: Any) -> None:
    """``agent``: run an agent on a page."""
    agent = sub.add_parser("agent", help="let an agent use a page's tools; records a trace")
    agent.add_argument(
        "url", type=page_url, help="the start page; the agent's relative navigations resolve here"
    )
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
    add_user_agent_options(agent)
    add_page_options(agent)


def _add_trace_command(sub: Any) -> None:
    """``trace show``: a run's timeline."""
    trace = sub.add_parser("trace", help="read recorded runs")
    trace_sub = trace.add_subparsers(dest="trace_command", required=True, metavar="ACTION")
    show = trace_sub.add_parser("show", help="a run's trace as a timeline")
    show.add_argument("dir", metavar="DIR", help="the run directory (holds trace.jsonl)")
    show.add_argument("--full", action="store_true", help="whole results and messages")
    show.add_argument("--timing", action="store_true", help="also the timing events")


def _add_mcp_command(sub: Any) -> None:
    """``mcp``: serve a page's tools to MCP clients (see ``harness.mcp.server``)."""
    mcp = sub.add_parser("mcp", help="serve a page's tools to MCP clients (stdio or HTTP)")
    mcp.add_argument(
        "url", type=page_url, help="the page to serve; harness.navigate resolves paths here"
    )
    mcp.add_argument(
        "--transport", choices=["stdio", "http"], default="stdio", help="default: stdio"
    )
    mcp.add_argument(
        "--host",
        help="HTTP: a loopback address (127.0.0.1, ::1, localhost; default 127.0.0.1)",
    )
    mcp.add_argument(
        "--port", type=int, metavar="N", help="HTTP: the port (default 8765; 0: any free port)"
    )
    add_user_agent_options(mcp)
    add_page_options(mcp, json_output=False)
    mcp.add_argument(
        "--forward-console",
        action="store_true",
        help="send the page's console during a call to its client as MCP log messages, "
        "framed as page text (off by default: a page may print secrets)",
    )


COMMANDS: dict[str, Callable[[Any], None]] = {
    "tools": _add_tools_command,
    "call": _add_call_command,
    "sites": _module_parser("sites"),
    "selftest": _module_parser("selftest"),
    "demo": _add_demo_command,
    "agent": _add_agent_command,
    "trace": _add_trace_command,
    "mcp": _add_mcp_command,
    "conformance": _module_parser("conformance"),
    "experiment": _module_parser("experiment"),
    "bench": _module_parser("bench"),
    "fuzz": _module_parser("qa", "add_fuzz_parser"),
    "snapshot": _module_parser("qa", "add_snapshot_parser"),
    "diff": _module_parser("qa", "add_diff_parser"),
    "doctor": _module_parser("qa", "add_doctor_parser"),
}
"""Every command and how its parser is registered, in the order ``--help`` lists them."""


def _refuse_http_options(args: argparse.Namespace) -> None:
    """``--host`` and ``--port`` mean nothing over stdio: said there, a usage error."""
    said = [flag for flag in ("--host", "--port") if getattr(args, flag[2:]) is not None]
    if said:
        one = len(said) == 1
        raise UsageError(
            f"{' and '.join(said)} {'goes' if one else 'go'} with --transport http (stdio "
            f"listens on no address): add --transport http, or leave {'it' if one else 'them'} "
            "out."
        )


def run_mcp_command(args: argparse.Namespace) -> int:
    """Serve until the client closes stdio, or Ctrl-C stops the server (either transport)."""
    check_elicit(args.elicit, args.elicit_timeout)
    policy = policy_option(args.policy)
    check_settle(args)
    if args.transport == "stdio" and args.elicit == "terminal":
        raise UsageError("--elicit terminal needs stdin, which the stdio transport uses.")
    port = 0  # stdio has none
    host = "127.0.0.1" if args.host is None else args.host
    if args.transport == "stdio":
        _refuse_http_options(args)
    else:
        from harness.mcp.server import is_loopback

        if not is_loopback(host):
            raise UsageError(
                f"--host {host}: the MCP server listens on loopback only (127.0.0.1, ::1, "
                "localhost); it has no authentication and drives your browser page."
            )
        port = DEFAULT_MCP_PORT if args.port is None else args.port
        if not 0 <= port <= 65535:
            raise UsageError(f"--port must be 0–65535, not {port}.")
    # Over stdio the terminal is not the user's: stdin carries the protocol.
    elicit = args.elicit or ("cancel" if args.transport == "stdio" else None)
    headless = elicit != "browser"

    def make() -> Harness:
        from harness.elicitation.choice import handler_from_option
        from harness.harness import Harness

        harness = Harness(
            backend=args.backend, headless=headless, policy=policy, settle=settle_option(args)
        )
        harness.elicitation = handler_from_option(
            elicit, browser=lambda: harness.browser, timeout=args.elicit_timeout
        )
        return harness

    def ready(where: str) -> None:
        print(
            f"webmcp-harness: serving the tools of {args.url} over "
            f"{'stdio' if where == 'stdio' else f'streamable HTTP at {where}'}",
            file=sys.stderr,
            flush=True,
        )

    async def run() -> None:
        if args.transport == "http":
            # The port is bound first (serve): a taken port fails before any browser starts.
            from harness.mcp.server import serve

            await serve(
                make(),
                args.url,
                transport="http",
                host=host,
                port=port,
                on_ready=ready,
                wait_for=args.wait_for_tool,
                forward_console=args.forward_console,
            )
            return
        # Over stdio: Chromium launches while the core is imported (startup.early_harness);
        # then the page opens, and its catalog settles, while the MCP SDK (a third of a
        # second and more) is imported.
        harness = await early_harness(args.backend, make, headless=headless)
        loading = asyncio.ensure_future(
            asyncio.to_thread(importlib.import_module, "harness.mcp.server")
        )
        opened: asyncio.Future[None] | None = None
        try:
            session = await harness.new_session()
            opened = asyncio.ensure_future(session.open(args.url))
            server = await loading
        except BaseException:
            if opened is not None:
                opened.cancel()
            await asyncio.gather(loading, *([opened] if opened else []), return_exceptions=True)
            await harness.close()
            raise
        await server.serve(
            harness,
            args.url,
            transport="stdio",
            on_ready=ready,
            wait_for=args.wait_for_tool,
            forward_console=args.forward_console,
            session=session,
            opened=opened,
        )

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run())
    return EXIT_OK


def parse_arguments(text: str) -> dict[str, Any]:
    """``--args``: a JSON object, or a :class:`UsageError` that says what is wrong."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"--args is not valid JSON ({exc}); pass an object like '{{}}'.") from exc
    if not isinstance(value, dict):
        raise UsageError(f"--args must be a JSON object, not {type(value).__name__}.")
    return value


async def wait_for_tools(session: Session, names: list[str]) -> None:
    """``--wait-for-tool``: each name offered within the settle cap, or :class:`UnknownTool`."""
    for name in names:
        await session.wait_for_tool(name, timeout=session.settle.timeout)


async def run_tools(
    url: str, backend: str, *, settle: float | None = None, wait_for: list[str] | None = None
) -> tuple[list[Tool], list[CatalogWarning], bool]:
    """The tools at ``url`` once its catalog settled, the catalog's warnings, and whether
    it settled (rather than reaching the cap); ``settle``: ``--settle MS``."""

    def make() -> Harness:
        from harness.harness import Harness

        return Harness(backend=backend, settle=settle_from_ms(settle))  # type: ignore[arg-type]

    async with await early_harness(backend, make, modules=PRINTING) as harness:
        session = await harness.new_session()
        await session.open(url, settle=False)
        report = await session.ready()
        await wait_for_tools(session, wait_for or [])
        tools = await session.tools()
        warnings = list(session.warnings)
        if not tools and not await _secure_context(session):
            from harness.models import CatalogWarning

            warnings.append(
                CatalogWarning(
                    code="insecure-context",
                    message="the page is not a secure context, and WebMCP is exposed only to "
                    "secure contexts (on either backend): serve it over https, from "
                    "http://localhost or 127.0.0.1, or as a file",
                )
            )
        return tools, warnings, report.settled


async def _secure_context(session: Session) -> bool:
    """Whether the page is a secure context, read where the page's script cannot answer
    for it (an isolated world); True when it cannot be read (nothing to add then)."""
    from playwright.async_api import Error as PlaywrightError

    from harness.browser.isolated import IsolatedWorlds, PageReadTimeout

    try:
        async with IsolatedWorlds(session.page) as worlds:
            world = await worlds.top()
            return bool(await worlds.evaluate(world, "() => self.isSecureContext"))
    except (PageReadTimeout, PlaywrightError, HarnessError):
        return True


async def run_call(
    url: str,
    backend: str,
    name: str,
    arguments: dict[str, Any],
    timeout: float,
    *,
    elicit: str | None = None,
    elicit_timeout: float | None = None,
    policy: PolicyOption = "default",
    reveal: bool = False,
    settle: float | None = None,
    wait_for: list[str] | None = None,
) -> tuple[CallOutcome, list[ElicitationRecord], list[RevealAttempt]]:
    """One call at ``url`` once its catalog settled (an unknown name fails then), its
    elicitations, and with ``reveal`` what revealing its withheld values gave the user."""
    headless = elicit != "browser"

    def make() -> Harness:
        from harness.elicitation.choice import handler_from_option
        from harness.harness import Harness

        harness = Harness(
            backend=backend,  # type: ignore[arg-type]
            call_timeout=timeout,
            headless=headless,
            policy=policy,
            settle=settle_from_ms(settle),
        )
        harness.elicitation = handler_from_option(
            elicit, browser=lambda: harness.browser, timeout=elicit_timeout
        )
        return harness

    async with await early_harness(backend, make, headless=headless, modules=PRINTING) as harness:
        session = await harness.open(url)
        await wait_for_tools(session, wait_for or [])
        try:
            outcome = await session.call(name, arguments)
        except UnknownTool as exc:
            raise UnknownTool(exc.name, exc.available, hint=LATE_TOOL_HINT) from None
        # Before the session closes: closing clears the vault.
        revealed = await session.reveal_all(outcome) if reveal else []
        return outcome, list(session.elicitations), revealed


# What `tools` and `call` print with, imported while the browser launches.
PRINTING = ("rich.console", "harness.cli.render", "harness.stages.trust")


def default_trace_dir(spec: str) -> Path:
    """A new directory ``webmcp-runs/<UTC time>-<agent kind>`` for this run, made here.

    Made at once, with ``mkdir`` that fails when the name is taken: runs started in the
    same second (the stamp's resolution) each get their own, ``-2``, ``-3``, … added in
    the order they came, rather than all choosing the one name that was free.
    """
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    kind = "".join(c if c.isalnum() else "-" for c in spec.partition(":")[0]) or "agent"
    base = Path(DEFAULT_RUNS_DIR) / f"{stamp}-{kind}"
    base.parent.mkdir(parents=True, exist_ok=True)
    n = 1
    while True:
        candidate = base if n == 1 else base.with_name(f"{base.name}-{n}")
        try:
            candidate.mkdir()
        except FileExistsError:
            n += 1
        else:
            return candidate


async def run_agent_command(args: argparse.Namespace, out: Console | None) -> RunResult:
    """Run ``--agent`` on ``url``; with ``out``, show each step as it happens."""
    from harness.agents import make_agent
    from harness.agents.loop import run_agent
    from harness.elicitation.choice import handler_from_option
    from harness.harness import Harness
    from harness.trace.events import TraceEvent
    from harness.trace.recorder import TraceOptions, check_run_dir
    from harness.trace.view import live_line

    # Everything the command line names is checked before the browser starts: a problem
    # with it (an unknown agent, an unreadable plan, a used trace directory) is a usage error.
    try:
        agent = make_agent(args.agent)
    except ConfigError as exc:
        raise UsageError(str(exc)) from exc
    if not args.task and not getattr(agent, "default_task", ""):
        raise UsageError(f"--task is required for the {args.agent.partition(':')[0]} agent.")
    if args.trace_dir:
        try:
            check_run_dir(Path(args.trace_dir))
        except ConfigError as exc:
            raise UsageError(str(exc)) from exc
    check_elicit(args.elicit, args.elicit_timeout)
    policy = policy_option(args.policy)
    settle = settle_option(args)
    options = TraceOptions(
        playwright=args.playwright_trace, screenshots=args.screenshots, har=args.har
    )

    def show(event: TraceEvent) -> None:
        line = live_line(event)
        if out is not None and line is not None:
            out.print(line)

    harness = Harness(
        backend=args.backend,
        call_timeout=args.timeout,
        headless=args.elicit != "browser",
        policy=policy,
        settle=settle,
    )
    harness.elicitation = handler_from_option(
        args.elicit, browser=lambda: harness.browser, timeout=args.elicit_timeout
    )
    # The default directory is taken (made) only now that the command line proved usable.
    made = None if args.trace_dir else default_trace_dir(args.agent)
    try:
        async with harness:
            session = await harness.new_session()
            try:
                return await run_agent(
                    session,
                    agent,
                    args.url,
                    task=args.task,
                    max_steps=args.max_steps,
                    trace_dir=made or Path(args.trace_dir),
                    trace_options=options,
                    on_event=show,
                    settle_timeout=settle.timeout,
                    wait_for_tools=args.wait_for_tool,
                )
            finally:
                await session.close()  # writes the HAR, when one is recorded
    except BaseException:
        if made is not None:  # a run that never began (no browser) leaves no empty directory
            with contextlib.suppress(OSError):  # rmdir: only while it is empty
                made.rmdir()
        raise


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``webmcp-harness`` console script."""
    mark("python")
    argv = list(sys.argv[1:] if argv is None else argv)
    # Before parsing: an error in the arguments is JSON too when --json was asked for.
    as_json = "--json" in argv
    command = argv[0] if argv and argv[0] in COMMANDS else None
    try:
        args = parse(build_parser(command), argv)
        return _dispatch(args)
    except UsageError as exc:
        report_error(exc, as_json=as_json)
        return EXIT_USAGE
    except HarnessError as exc:
        report_error(exc, as_json=as_json)
        return EXIT_FAILED
    except BrokenPipeError:
        # The reader of the output went away (`| head`): nothing more to tell it, and no
        # error to report — a shell's pipeline ends the same way for any command. What is
        # still buffered goes nowhere, rather than failing again at exit.
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except OSError as exc:  # an output directory that cannot be made, a file not there
        where = f" ({exc.filename})" if exc.filename else ""
        report_error(
            type(exc)(f"{exc.strerror or exc}{where}; check the path and its permissions"),
            as_json=as_json,
        )
        return EXIT_FAILED
    except KeyboardInterrupt as exc:
        # Ctrl-C, in any command: asyncio.run cancelled the command's task, so its
        # `async with` blocks closed their browsers on the way here. A command may say
        # how to go on (Interrupted); a command that serves until Ctrl-C (`mcp`,
        # `sites`) handles it itself and never gets here.
        interrupted = exc if isinstance(exc, Interrupted) else Interrupted()
        if sys.stderr.isatty():
            sys.stderr.write("\n")  # past the terminal's echoed ^C
        report_error(interrupted, as_json=as_json)
        return EXIT_INTERRUPTED


def _hint(text: str | None) -> None:
    """A hint for the person at the terminal (stderr), never in --json output."""
    if text is not None:
        print(text, file=sys.stderr)


def _dispatch(args: argparse.Namespace) -> int:
    return RUNNERS[args.command](args)


def _console() -> Console:
    from rich.console import Console

    class Output(Console):
        def on_broken_pipe(self) -> None:
            # rich's own answer is a silent exit 1 (a failure, to the caller's script):
            # the reader left, which main() ends the way a pipeline does.
            self.quiet = True
            raise ReaderGone(errno.EPIPE, "the reader of the output went away")

    return Output(soft_wrap=True)


def _run_tools(args: argparse.Namespace) -> int:
    check_settle(args)
    tools, warnings, settled = asyncio.run(
        run_tools(args.url, args.backend, settle=args.settle, wait_for=args.wait_for_tool)
    )
    if args.json:
        payload = {
            "url": args.url,
            "backend": args.backend,
            "settled": settled,
            "tools": [t.public() for t in tools],
            "warnings": [w.model_dump(mode="json") for w in warnings],
        }
        print(json.dumps(payload, indent=2))
    else:
        from harness.cli.render import print_tools

        print_tools(_console(), args.url, tools, warnings)
    return EXIT_OK


def _run_call(args: argparse.Namespace) -> int:
    arguments = parse_arguments(args.args)
    if args.timeout <= 0:
        raise UsageError("--timeout must be a positive number of seconds.")
    check_elicit(args.elicit, args.elicit_timeout)
    policy = policy_option(args.policy)  # a bad file fails before the browser starts
    check_settle(args)  # after the files (the selftest's wrong-file probes meet --settle -1)
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
            settle=args.settle,
            wait_for=args.wait_for_tool,
        )
    )
    from rich.console import Console

    from harness.cli.render import page_text, print_outcome, print_revealed
    from harness.stages.trust import trust_warnings

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
        print_outcome(_console(), outcome, elicitations)
        _hint(refusal_hint([outcome.agent_json()]) or unanswered_hint(elicitations))
    if args.reveal:
        print_revealed(revealed)
        if any(attempt.error is not None for attempt in revealed):
            return EXIT_FAILED
    return EXIT_OK


def _run_agent(args: argparse.Namespace) -> int:
    if args.max_steps < 1:
        raise UsageError("--max-steps must be at least 1.")
    if args.timeout <= 0:
        raise UsageError("--timeout must be a positive number of seconds.")
    out = _console()
    result = asyncio.run(run_agent_command(args, None if args.json else out))
    if args.json:
        print(json.dumps(result.summary(), indent=2))
    else:
        from harness.cli.render import page_text

        style = "green" if result.ok else "red"
        out.print(f"[{style}]{result.stop_reason}[/] after {len(result.steps)} steps")
        if result.detail:
            out.print(page_text(result.detail), highlight=False)
        out.print(page_text(f"trace: {result.trace_dir}"), highlight=False)
        _hint(refusal_hint(step.result for step in result.steps))
    return EXIT_OK if result.ok else EXIT_FAILED


def _run_trace(args: argparse.Namespace) -> int:
    from harness.trace.view import show_trace

    try:
        show_trace(args.dir, _console(), full=args.full, timing=args.timing)
    except ConfigError as exc:  # the trace the command line names cannot be used (status 2)
        raise UsageError(str(exc)) from None
    return EXIT_OK


def _run_demo(args: argparse.Namespace) -> int:
    from harness.cli.demo import run_demo

    return asyncio.run(run_demo(_console()))


def _module_runner(module: str, *, console: bool) -> Callable[[argparse.Namespace], int]:
    """Running by a command module's ``run(args[, console])``, imported only when it runs."""

    def run(args: argparse.Namespace) -> int:
        command = importlib.import_module(f"harness.cli.{module}")
        return int(command.run(args, _console()) if console else command.run(args))

    return run


def _run_selftest(args: argparse.Namespace) -> int:
    from harness.cli import selftest

    return selftest.run(args, sys.stdout)


RUNNERS: dict[str, Callable[[argparse.Namespace], int]] = {
    "tools": _run_tools,
    "call": _run_call,
    "sites": _module_runner("sites", console=False),
    "selftest": _run_selftest,
    "demo": _run_demo,
    "agent": _run_agent,
    "trace": _run_trace,
    "mcp": run_mcp_command,
    "conformance": _module_runner("conformance", console=True),
    "experiment": _module_runner("experiment", console=True),
    "bench": _module_runner("bench", console=True),
    "fuzz": _module_runner("qa", console=True),
    "snapshot": _module_runner("qa", console=True),
    "diff": _module_runner("qa", console=True),
    "doctor": _module_runner("qa", console=True),
}
"""How each command of :data:`COMMANDS` runs: a function that imports what the command
needs when it is called (never at module level; see the module's docstring)."""


if __name__ == "__main__":
    sys.exit(main())
