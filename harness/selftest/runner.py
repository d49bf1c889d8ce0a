"""``webmcp-harness selftest``: the fault scenarios, the bad inputs and the load run, with
one verdict and a report (:mod:`harness.selftest.report`).

``quick`` (CI): every fault kind and bad input, 10^4 tools, 1 600 calls over 16 pages,
8 MCP clients × 20 calls. ``full``: 10^5 tools, 10 000 calls over 16 pages, 8 MCP clients
× 500 calls (the committed report's run).
"""

from __future__ import annotations

import os
import resource
import tempfile
import time
from pathlib import Path
from typing import Literal

from harness.harness import Harness
from harness.selftest.bridge import BridgeProcess, bridge_load, malformed_requests
from harness.selftest.command_files import command_files
from harness.selftest.faults import FAULT_CALL_TIMEOUT_S, SMALL_HEAP_FLAG, FaultRun
from harness.selftest.inputs import all_inputs
from harness.selftest.load import run_load
from harness.selftest.pages import FaultPages
from harness.selftest.report import ReliabilityReport
from harness.selftest.soak import run_soak, sample_rss, soak_interval

Mode = Literal["quick", "full"]

# The canaries: the secret a page returns under x-sensitive, and the channel's own secret.
PAGE_CANARY = "HXCANARY"


# The memory soak's length by mode, in minutes (``--soak-minutes`` overrides it).
SOAK_MINUTES = {"quick": 0.25, "full": 30.0}


async def run_selftest(
    mode: Mode = "quick", soak_minutes: float | None = None
) -> ReliabilityReport:
    """Run everything and return the report (nothing written). ``soak_minutes``: the
    memory soak's length (default by mode; 0: no soak)."""
    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    full = mode == "full"
    minutes = SOAK_MINUTES[mode] if soak_minutes is None else soak_minutes
    with tempfile.TemporaryDirectory(prefix="webmcp-selftest-") as scratch:
        trace_dir = Path(scratch) / "trace"
        async with FaultPages() as pages:
            run = FaultRun(pages, trace_dir)
            async with Harness(call_timeout=FAULT_CALL_TIMEOUT_S) as harness:
                secrets = [harness.keys.secret]
                await run.calls(harness)
                session = await harness.open(pages.url("faults.html", id="canary"))
                outcome = await run._call(session, "secret", {})
                agent_view = outcome.result.model_dump_json()
                await session.close()
                await run.storms(harness, many=100_000 if full else 10_000)
                await run.browser_killed(harness)
            # Load with the default call timeout: a busy machine is slow, not lossy.
            async with Harness() as loaded:
                secrets.append(loaded.keys.secret)
                load = await run_load(
                    loaded, pages, calls=10_000 if full else 1_600, concurrency=16
                )
                chromium_mb = sample_rss().chromium_mb
            soak = None
            if minutes > 0:
                async with Harness() as soaked:
                    secrets.append(soaked.keys.secret)
                    soak = await run_soak(
                        soaked, pages, minutes=minutes, interval=soak_interval(minutes)
                    )
            async with BridgeProcess(pages.url("faults.html", id="bridge")) as bridge:
                bridge_requests = await malformed_requests(bridge)
                bridged = await bridge_load(bridge, clients=8, calls=500 if full else 20)
            async with Harness(
                call_timeout=FAULT_CALL_TIMEOUT_S, launch_args=[SMALL_HEAP_FLAG]
            ) as small:
                secrets.append(small.keys.secret)
                await run.crash(small)
            trace_valid = run.close()
            trace_text = (trace_dir / "trace.jsonl").read_text(encoding="utf-8")
        inputs = [*all_inputs(), *command_files(), *bridge_requests]
    report = ReliabilityReport(
        mode=mode,
        faults=run.results,
        inputs=inputs,
        load=load,
        bridge_load=bridged,
        soak=soak,
        trace_valid=trace_valid,
        leaks=0,
        canaries=["the page's x-sensitive value", "the channel secrets"],
        peak_rss_mb={
            "harness (Python)": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "Chromium (all processes, after the load run)": chromium_mb,
        },
        seconds=time.perf_counter() - started,
        machine=f"{os.cpu_count()} CPUs, shared; load average (1 min) {load_before:.1f} at "
        f"the start, {os.getloadavg()[0]:.1f} at the end",
    )
    written = report.model_dump_json() + report.markdown()
    leaks = (soak.leaks if soak is not None else 0) + sum(
        text.count(canary)
        for canary in [PAGE_CANARY, *secrets]
        for text in (agent_view, trace_text, written)
    )
    return report.model_copy(update={"leaks": leaks})
