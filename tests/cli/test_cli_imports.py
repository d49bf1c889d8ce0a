"""What a command loads: ``mcp``'s cold start must not pay for the other front ends.

``webmcp-harness mcp`` is spawned by MCP clients, which wait for it; the agents,
experiments, conformance, bench and selftest stacks, and the terminal UI (rich) are
not its business. Each check runs in a fresh interpreter and reads ``sys.modules``.
"""

from __future__ import annotations

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
    """The check can fail: ``agent``'s parser loads the agents' stack."""
    assert "harness.agents.loop" in heavy(loaded("agent", "--help"))
