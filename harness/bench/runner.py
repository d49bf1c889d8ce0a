"""One benchmark run: every item in turn, then the report.

The in-process items share two browsers (launched concurrently); the MCP item runs its
servers as processes after those browsers are closed, so they do not compete with them.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Collection

from harness.bench import ITEMS, cli_start, episodes, peers, suite
from harness.bench.pages import BenchSite
from harness.bench.report import BenchReport, finish_machine, machine_info, now
from harness.browser.chromium import find_chromium

SHARED_MACHINE = (
    "The machine is shared: other engineers' Chromium test runs may have been running "
    "at the same time (see the load averages). Interleaving makes the ratios comparable "
    "within this run; the absolute numbers move with the load."
)

Progress = Callable[[str], None]


def _chromium_version() -> str:
    try:
        found = subprocess.run(
            [str(find_chromium()), "--version"], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return found.stdout.strip()


async def run_bench(
    *, quick: bool, only: Collection[str] = (), progress: Progress | None = None
) -> BenchReport:
    """Run every item (or the ``only`` ones) at the quick or the full scale; the report
    (not yet written)."""
    say = progress or (lambda _text: None)
    wanted = set(only or ITEMS)
    scale = suite.Scale.of(quick)
    started = time.perf_counter()
    machine = machine_info(shared=SHARED_MACHINE)
    machine.chromium = _chromium_version()
    found = peers.playwright_mcp()
    if found is not None and not quick and wanted & {"mcp", "cold_start"}:
        machine.playwright_mcp = found[1]
    report = BenchReport(started=now(), quick=quick, only=sorted(only), machine=machine)
    in_process = [
        ("call", "call overhead", suite.call_overhead),
        ("discovery", "discovery", suite.discovery),
        ("declarative", "declarative calls", suite.declarative),
        ("throughput", "throughput", suite.throughput),
    ]
    async with BenchSite() as site:
        if wanted & {key for key, _, _ in in_process}:
            async with suite.Browsers(site) as browsers:
                for key, what, measure in in_process:
                    if key in wanted:
                        say(what)
                        report.items.append(await measure(browsers, scale))
        if wanted & {"mcp", "cold_start"}:
            say("MCP round trip and cold start")
            report.items += await peers.mcp_items(
                site.url("echo.html"),
                rounds=scale.rounds,
                cold_rounds=1 if quick else 5,
                peers=not quick,
                round_trip="mcp" in wanted,
                cold="cold_start" in wanted,
            )
        if "cli_start" in wanted:
            say("CLI start")
            report.items.append(
                await cli_start.cli_start(site.url("echo.html"), rounds=1 if quick else 10)
            )
    if "redaction" in wanted:
        say("redaction")
        report.items.append(await suite.redaction(scale))
    if "episodes" in wanted:
        say("episodes per minute")
        report.items.append(await episodes.episodes_item(quick=quick))
    finish_machine(machine)
    report.duration_s = time.perf_counter() - started
    return report
