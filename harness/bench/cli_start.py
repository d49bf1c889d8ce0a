"""Item 8: the command line's start — ``tools URL`` and ``call URL TOOL`` as a person types
them, against a bare Playwright script that does the same (launch the same Chromium, load
the page, read ``getTools()``); and ``--help``. Every variant is a process of its own,
timed from spawn to exit, interleaved with the others.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Awaitable, Callable

from harness.bench.report import Item, Target
from harness.bench.timing import Measured, interleaved
from harness.browser.chromium import find_chromium
from harness.browser.launch import launch_flags

# The anchor: what a person would write with Playwright alone (native WebMCP's getTools()).
BARE_SCRIPT = """
import asyncio, json, sys
from playwright.async_api import async_playwright

async def main(chromium, url, args):
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=chromium, args=args)
        page = await browser.new_page()
        await page.goto(url)
        names = await page.evaluate(
            "async () => (await document.modelContext.getTools()).map((t) => t.name)"
        )
        print(json.dumps(names))
        await browser.close()

asyncio.run(main(sys.argv[1], sys.argv[2], json.loads(sys.argv[3])))
"""
ANCHOR = "a bare Playwright script: launch Chromium, load the page, getTools()"
UNSETTLED = "webmcp-harness tools URL --json --settle 0 (no quiet window)"
HELP_LIMIT_MS = 300.0


def bare_command(url: str) -> list[str]:
    """The command that runs :data:`BARE_SCRIPT` on ``url`` (the same Chromium, with the
    flags the harness's native backend launches it with)."""
    flags = json.dumps(launch_flags("native"))
    return [sys.executable, "-c", BARE_SCRIPT, str(find_chromium()), url, flags]


def _harness(*argv: str) -> list[str]:
    return [sys.executable, "-m", "harness.cli", *argv]


async def _run(command: list[str]) -> Measured:
    """Spawn ``command``, wait for it to exit (successfully), in milliseconds."""
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        *command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    _, err = await process.communicate()
    took = Measured((time.perf_counter() - started) * 1000)
    if process.returncode != 0:
        raise RuntimeError(f"{command[2:4]} failed ({process.returncode}): {err.decode()[-300:]}")
    return took


def _timed(command: list[str]) -> Callable[[], Awaitable[Measured]]:
    return lambda: _run(command)


async def cli_start(url: str, *, rounds: int) -> Item:
    """Item 8 on the page ``url`` (one tool, ``echo``)."""
    tools = "webmcp-harness tools URL --json"
    call = "webmcp-harness call URL echo --json"
    variants = {
        ANCHOR: _timed(bare_command(url)),
        tools: _timed(_harness("tools", url, "--json")),
        # The readiness contract's share: the same command with no quiet window (a person who
        # knows their page may ask for that; no target, the contract is the default).
        UNSETTLED: _timed(_harness("tools", url, "--json", "--settle", "0")),
        call: _timed(_harness("call", url, "echo", "--args", '{"text": "hi"}', "--json")),
        "webmcp-harness --help": _timed(_harness("--help")),
        "webmcp-harness mcp --help": _timed(_harness("mcp", "--help")),
    }
    # One round is a smoke run (the quick bench): no warm-up either, as for the cold start.
    samples = await interleaved(variants, rounds=rounds, warmup=0 if rounds == 1 else 1)
    item = Item(
        key="cli_start",
        title="8. CLI start: a command from spawn to exit",
        anchor=ANCHOR,
        anchor_is="a bare Playwright script (the same Chromium with the WebMCP flags: launch, "
        "load the page, read `getTools()`, close), run as a process like the commands. "
        "`tools` and `call` wait for the page's catalog to settle (the readiness contract, "
        "which the script does not keep; `--settle 0` shows its share); `call` runs the "
        "whole pipeline.",
    )
    for name, sample in samples.items():
        targets = []
        if name in (tools, call):
            targets = [Target(text="≤ 1.3× the bare script", against=ANCHOR, max_ratio=1.3)]
        elif name.endswith("--help"):
            targets = [Target(text="≤ 0.3 s", max_value=HELP_LIMIT_MS)]
        item.add(name, sample, targets=targets)
    return item.finish()
