"""What a command loads: every command starts fast, and ``mcp``'s cold start does not pay
for the other front ends.

``webmcp-harness --help`` and every ``COMMAND --help`` (and a usage error) load the
standard library and the CLI's own modules only: no Playwright, no MCP SDK, no pydantic,
no rich, no selftest. ``webmcp-harness mcp`` is spawned by MCP clients, which wait for
it; the agents, experiments, conformance, bench and selftest stacks, and the terminal UI
(rich) are not its business. Each check runs in a fresh interpreter and reads
``sys.modules`` (what was imported, not how long it took: no timing here).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest

HEAVY = (
    "harness.agents",
    "harness.experiments",
    "harness.conformance",
    "harness.bench",
    "harness.selftest",
    "harness.trace.view",
    "harness.cli.render",
    "harness.cli.demo",
    "harness.cli.conformance",
    "harness.cli.experiment",
    "harness.cli.selftest",
    "harness.cli.bench",
    "rich",
    "matplotlib",
    "jinja2",
    "ray",
    "openai",
    "anthropic",
)

# Runs `main(argv)` with asyncio.run replaced by a stand-in (no browser starts), then
# loads what the server loads while the browser starts, and prints the modules loaded.
PROBE = """
import asyncio, json, sys
def no_run(coroutine, **_):
    coroutine.close()
asyncio.run = no_run
from harness.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
import harness.mcp.server
print(json.dumps(sorted(sys.modules)))
"""


def loaded(*argv: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout.splitlines()[-1]))


def heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)]


@pytest.mark.parametrize(
    "argv",
    [
        ["mcp", "--help"],
        ["mcp", "http://127.0.0.1:9/"],  # the whole command, its server module included
        ["mcp", "http://127.0.0.1:9/", "--transport", "http", "--port", "0"],
    ],
)
def test_mcp_loads_no_other_front_end(argv: list[str]) -> None:
    modules = loaded(*argv)
    assert "harness.mcp.server" in modules and "harness.harness" in modules
    assert heavy(modules) == []


def test_the_probe_sees_what_other_commands_load() -> None:
    """The check can fail: ``demo`` (its browser stand-in aside) loads the demo's stack."""
    assert "harness.cli.demo" in heavy(loaded("demo"))


# Parses each command line in turn in one interpreter (asyncio.run stubbed out: nothing
# runs) and prints, for each, the modules it loaded beyond the standard library.
HELP_PROBE = """
import asyncio, contextlib, io, json, sys
asyncio.run = lambda coroutine, **_: coroutine.close()
from harness.cli import main
found = {}
for argv in json.loads(sys.argv[1]):
    before = set(sys.modules)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            main(argv)
        except SystemExit:
            pass
    found[" ".join(argv)] = sorted(set(sys.modules) - before)
print(json.dumps(found))
"""

# What parsing may load besides the standard library and the CLI: small modules that
# import nothing else (the error types, the bench's item names, the error line's escaping,
# the start's marks, the fuzzer's defaults).
PARSING_MAY_LOAD = (
    "harness",
    "harness.errors",
    "harness.bench",
    "harness.conformance",
    "harness.conformance.escaping",
    "harness.qa",
    "harness.elicitation",
    "harness.elicitation.wording",
    "harness.browser",
    "harness.browser.marks",
)


def help_lines() -> list[list[str]]:
    """``--help``, every ``COMMAND --help`` (sub-commands' too) and a usage error each."""
    from harness.cli.commands import build_parser

    lines = [["--help"]]
    parser = build_parser()
    for name, command in _choices(parser).items():
        lines += [[name, "--help"], [name, "--no-such-flag"]]
        lines += [[name, sub, "--help"] for sub in _choices(command)]
    return lines


def _choices(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def test_help_and_usage_errors_load_nothing_beyond_the_cli() -> None:
    lines = help_lines()
    assert ["mcp", "--help"] in lines and ["conformance", "ua", "--help"] in lines
    done = subprocess.run(
        [sys.executable, "-c", HELP_PROBE, json.dumps(lines)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.splitlines()[-1])
    beyond = {
        line: [
            m
            for m in modules
            if m.split(".")[0] not in sys.stdlib_module_names
            and not m.startswith(("_", "harness.cli"))  # `_…`: the interpreter's site hooks
            and m not in PARSING_MAY_LOAD
        ]
        for line, modules in found.items()
    }
    assert {line: extra for line, extra in beyond.items() if extra} == {}
    assert len(found) == len(lines)


def test_the_parsers_defaults_are_the_cores() -> None:
    """The parsers write the core's names and defaults out (so that parsing loads none of
    the core): each is the core's own."""
    from harness.agents.loop import DEFAULT_MAX_STEPS
    from harness.browser.launch import launch_flags
    from harness.cli import commands, options
    from harness.elicitation.choice import ELICIT_CHOICES
    from harness.harness import BACKENDS, DEFAULT_CALL_TIMEOUT_S, Harness
    from harness.mcp.server import DEFAULT_PORT
    from harness.stages.policy import PACK_NAMES

    assert tuple(sorted(BACKENDS)) == options.BACKEND_CHOICES
    assert options.ELICIT_CHOICES == ELICIT_CHOICES
    assert options.DEFAULT_CALL_TIMEOUT_S == DEFAULT_CALL_TIMEOUT_S
    assert tuple(PACK_NAMES) == options.POLICY_PACKS
    assert commands.DEFAULT_MAX_STEPS == DEFAULT_MAX_STEPS
    assert commands.DEFAULT_MCP_PORT == DEFAULT_PORT
    for backend in BACKENDS:  # the CLI launches Chromium before it imports the harness
        assert launch_flags(backend) == Harness(backend=backend).launch_args()  # type: ignore[arg-type]
