"""One benchmark run: every item in turn, then the report.

The in-process items share two browsers (launched concurrently); the MCP item runs its
servers as processes after those browsers are closed, so they do not compete with them.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable

from harness.bench import episodes, peers, suite
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


async def run_bench(*, quick: bool, progress: Progress | None = None) -> BenchReport:
    """Run every item at the quick or the full scale; the report (not yet written)."""
    say = progress or (lambda _text: None)
    scale = suite.Scale.of(quick)
    started = time.perf_counter()
    machine = machine_info(shared=SHARED_MACHINE)
    machine.chromium = _chromium_version()
    found = peers.playwright_mcp()
    if found is not None and not quick:
        machine.playwright_mcp = found[1]
    report = BenchReport(started=now(), quick=quick, machine=machine)
    async with BenchSite() as site:
        async with suite.Browsers(site) as browsers:
            say("call overhead")
            report.items.append(await suite.call_overhead(browsers, scale))
            say("discovery")
            report.items.append(await suite.discovery(browsers, scale))
            say("declarative calls")
            report.items.append(await suite.declarative(browsers, scale))
            say("throughput")
            report.items.append(await suite.throughput(browsers, scale))
        say("MCP round trip and cold start")
        report.items += await peers.mcp_items(
            site.url("echo.html"),
            rounds=scale.rounds,
            cold_rounds=1 if quick else 5,
            peers=not quick,
        )
    say("redaction")
    report.items.append(await suite.redaction(scale))
    say("episodes per minute")
    report.items.append(await episodes.episodes_item(quick=quick))
    finish_machine(machine)
    report.duration_s = time.perf_counter() - started
    return report
