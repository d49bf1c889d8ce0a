"""``webmcp-harness bench``: the quick run works end to end; the report's arithmetic holds.

Nothing here asserts a speed: the figures are findings of the report (PASS/MISS), and a
busy machine must not fail a test. What is asserted is the shape a reader relies on —
every figure a positive number with min ≤ median ≤ max, a ratio wherever there is an
anchor, a verdict for every target — and that no sensitive value reaches the report.
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path

import pytest

from harness.bench import cpu
from harness.bench.peers import (
    BARE_START,
    CPU_ROW,
    SDK_ROW,
    bare_start_note,
    cpu_bound_note,
)
from harness.bench.report import BenchReport, Item, Target, machine_info, markdown, to_json
from harness.bench.suite import native_call_bound
from harness.bench.timing import Measured, Sample, interleaved
from tests.console_script import run_script

QUICK_ITEMS = {
    "call",
    "discovery",
    "declarative",
    "throughput",
    "mcp",
    "cold_start",
    "cli_start",
    "redaction",
    "episodes",
}


@pytest.mark.slow
@pytest.mark.native
@pytest.mark.timeout(600)
async def test_quick_bench_through_the_console_script(tmp_path: Path) -> None:
    code, out, err = await run_script(
        "bench", "--quick", "--json", "--output", str(tmp_path), timeout=540
    )
    assert code == 0, err
    report = json.loads(out)
    assert report["quick"] is True
    assert report["machine"]["cpus"] >= 1 and report["machine"]["chromium"]
    items = {item["key"]: item for item in report["items"]}
    assert set(items) == QUICK_ITEMS
    measured = 0
    for item in report["items"]:
        names = [f["name"] for f in item["figures"]]
        if item["anchor"] is not None and names:  # what was measured includes its anchor
            assert item["anchor"] in names, item["key"]
        for figure in item["figures"]:
            s = figure["sample"]
            for value in (s["median"], s["min"], s["max"]):
                assert isinstance(value, float) and math.isfinite(value) and value > 0
            assert s["min"] <= s["median"] <= s["max"] and s["n"] >= 1
            step = figure["note"] == "since the spawn"  # a step of the cold start: no ratio
            if item["anchor"] is not None and figure["name"] != item["anchor"] and not step:
                assert isinstance(figure["ratio"], float) and figure["ratio"] > 0
            assert figure["status"] in ("PASS", "MISS", "")
            for target in figure["targets"]:
                assert target["met"] in (True, False), (figure["name"], target)
            measured += 1
    # Every variant the issue names is measured, each next to its anchor.
    call = {f["name"] for f in items["call"]["figures"]}
    assert {
        "Session.call, polyfill",
        "Session.call, native",
        "Playwright page.webmcp.call_tool (native)",
        "native executeTool in the page",
    } <= call
    assert len(items["throughput"]["figures"]) == 4  # 1 and 2 pages, harness and floor
    assert items["mcp"]["figures"] and items["cold_start"]["figures"]
    # The cold start step by step: each step after the one before it, the last one the total.
    steps = [f for f in items["cold_start"]["figures"] if f["note"] == "since the spawn"]
    assert [f["name"].partition(": ")[2] for f in steps] == [
        "the command running (Python and the CLI loaded)",
        "Playwright's driver started",
        "Chromium launched",
        "the page loaded",
        "its catalog settled",
        "the first tools/list with the page's tool",
    ]
    medians = [f["sample"]["median"] for f in steps]
    assert medians == sorted(medians)
    cli = {f["name"] for f in items["cli_start"]["figures"]}
    assert {
        "webmcp-harness tools URL --json",
        "webmcp-harness call URL echo --json",
        "webmcp-harness --help",
        "webmcp-harness tools URL --json --settle 0 (no quiet window)",
    } <= cli and items["cli_start"]["anchor"] in cli
    assert "Playwright MCP" in items["mcp"]["skipped"]  # the quick run has no peers
    assert "quick run does not run experiments" in items["episodes"]["skipped"]
    assert "(must be 0)" in items["redaction"]["note"]
    assert items["redaction"]["note"].startswith("Sensitive values left in the agent view: 0 ")
    assert measured >= 20
    # Both files, and the JSON on stdout is the file's.
    assert json.loads((tmp_path / "bench.json").read_text()) == report
    md = (tmp_path / "bench.md").read_text()
    assert "| variant | median | min–max | ratio to anchor | target |" in md
    assert "## 1. Call overhead" in md
    # The redaction item's sensitive values never reach a report or the output.
    for text in (out, err, md):
        assert "HXBENCH" not in text


@pytest.mark.timeout(300)
async def test_only_measures_the_items_asked_for(tmp_path: Path) -> None:
    # Without --output: a partial run never overwrites the reference report in reports/.
    code, out, err = await run_script(
        "bench", "--quick", "--only", "redaction", "--json", timeout=240, cwd=tmp_path
    )
    assert code == 0, err
    assert not (tmp_path / "reports").exists()
    tmp_path = tmp_path / "bench-results"
    report = json.loads(out)
    assert [item["key"] for item in report["items"]] == ["redaction"]
    assert report["only"] == ["redaction"]
    [figure] = [f for f in report["items"][0]["figures"] if f["name"] == "Redactor (the stage)"]
    assert figure["sample"]["median"] > 0 and figure["status"] in ("PASS", "MISS")
    assert "(quick, only redaction, " in (tmp_path / "bench.md").read_text()


async def test_only_names_the_items_there_are(tmp_path: Path) -> None:
    code, out, err = await run_script(
        "bench", "--only", "redaction,nope", "--output", str(tmp_path)
    )
    assert code == 2 and out == ""
    assert "unknown item nope" in err and "cold_start" in err and "usage:" in err
    assert not (tmp_path / "bench.json").exists()


def _sample(median: float) -> Sample:
    return Sample(median=median, min=median, max=median, n=1)


def test_ratios_and_verdicts() -> None:
    item = Item(key="k", title="t", anchor="floor")
    item.add("floor", _sample(2.0))
    item.add("peer", _sample(5.0))
    item.add(
        "ours",
        _sample(3.0),
        targets=[
            Target(text="≤ 1.2× floor", against="floor", max_ratio=1.2),
            Target(text="below peer", against="peer", max_ratio=1.0),
            Target(text="below missing", against="missing", max_ratio=1.0),
        ],
    )
    item.add("fast", _sample(2.2), targets=[Target(text="≤ 1.2×", against="floor", max_ratio=1.2)])
    item.add("abs", _sample(400.0), targets=[Target(text="≤ 0.5 s", max_value=500.0)])
    item.finish()
    ours, fast, absolute = item.figure("ours"), item.figure("fast"), item.figure("abs")
    assert ours is not None and fast is not None and absolute is not None
    assert item.figure("floor").ratio is None  # type: ignore[union-attr]
    assert ours.ratio == pytest.approx(1.5)
    assert [t.met for t in ours.targets] == [False, True, None]
    assert ours.status == "MISS" and fast.status == "PASS" and absolute.status == "PASS"


@pytest.mark.parametrize(
    ("execute", "poly_call", "verdict"),
    [(1.0, 1.26, "above the 1.5× target"), (0.82, 1.0, "within the 1.5× target")],
)
def test_the_native_calls_bound_is_worked_out_from_the_runs_medians(
    execute: float, poly_call: float, verdict: str
) -> None:
    item = Item(key="call", title="t", anchor="floor: page.evaluate (polyfill browser)")
    item.add("floor: page.evaluate (polyfill browser)", _sample(0.98))
    item.add("floor: page.evaluate (native browser)", _sample(0.8))
    item.add("Session.call, polyfill", _sample(poly_call))
    item.add("native executeTool in the page", _sample(execute))
    note = native_call_bound(item)
    assert f"`executeTool` alone is {execute / 0.8:.2f}× the native floor" in note
    assert f"{(execute + poly_call - 0.98) / 0.8:.2f}× — {verdict}" in note
    # Without the figures it needs (an item measured in part), nothing is claimed.
    assert native_call_bound(Item(key="call", title="t")) == ""


def test_the_cold_starts_note_places_the_bare_script() -> None:
    item = Item(key="cold_start", title="t", anchor="Playwright MCP, stdio, --timeout-settle 0")
    item.add("Playwright MCP, stdio, --timeout-settle 0", _sample(800.0))
    item.add(BARE_START, _sample(720.0))
    item.add("webmcp-harness mcp, stdio", _sample(1080.0))
    note = bare_start_note(item)
    assert "reaches the page's tools at 0.90× Playwright MCP's time" in note
    assert "webmcp-harness is 1.50× that script" in note
    assert bare_start_note(Item(key="cold_start", title="t")) == ""


@pytest.mark.parametrize(
    ("bare", "sdk", "verdict"),
    [
        (1000.0, 600.0, "the rest of webmcp-harness's start (900 ms: its own"),
        (1300.0, 400.0, "no Python server on the official SDK starts within it"),
    ],
)
def test_the_cold_starts_cpu_note_bounds_it_by_the_cores(
    bare: float, sdk: float, verdict: str
) -> None:
    item = Item(key="cold_start", title="t", anchor="Playwright MCP, stdio, --timeout-settle 0")
    item.add("Playwright MCP, stdio, --timeout-settle 0", _sample(850.0))
    item.add(CPU_ROW + "webmcp-harness mcp, stdio", _sample(2500.0))
    item.add(CPU_ROW + BARE_START, _sample(bare))
    item.add(SDK_ROW, _sample(sdk))
    note = cpu_bound_note(item, cores=2)
    assert "Playwright MCP's 850 ms allows 1700 ms of CPU" in note
    assert "used 2500 ms (1.47× that)" in note
    assert f"is {bare + sdk:.0f} ms, {(bare + sdk) / 1700:.2f}× the allowance" in note
    assert verdict in note
    # Without its figures (nothing measurable, or an item measured in part), no claim.
    assert cpu_bound_note(Item(key="cold_start", title="t"), cores=2) == ""


@pytest.mark.skipif(not cpu.measurable(), reason="processes' CPU time is read from Linux's /proc")
def test_a_starts_cpu_counts_only_the_processes_it_started() -> None:
    """Processes that were there before are left out; a new one's busy loop is counted,
    under its kind, with its children."""
    import subprocess

    older = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        before = cpu.descendants()
        assert older.pid in before
        busy = (
            "import subprocess, sys, time\n"
            "child = subprocess.Popen([sys.executable, '-c', "
            "'import time\\nend = time.process_time() + 0.3\\n"
            "while time.process_time() < end: pass\\ntime.sleep(30)'])\n"
            "end = time.process_time() + 0.3\n"
            "while time.process_time() < end: pass\n"
            "time.sleep(30)\n"
        )
        started = subprocess.Popen([sys.executable, "-c", busy])
        try:
            deadline = time.monotonic() + 30
            used = cpu.started_since(before)
            while used is not None and used.by_kind["Python"] < 550 and time.monotonic() < deadline:
                time.sleep(0.05)
                used = cpu.started_since(before)
            assert used is not None and 550 <= used.by_kind["Python"] < 5000
            assert used.total == used.by_kind["Python"]  # the older sleeper is not counted
        finally:
            started.kill()
            started.wait()
    finally:
        older.kill()
        older.wait()
    assert cpu.process_cpu_ms([sys.executable, "-c", "pass"]) > 0


def test_a_target_against_another_figure_than_the_anchor_shows_its_own_ratio() -> None:
    """Native's call is held to the native floor while the item's anchor is the polyfill's:
    the report must say how it compares with the native floor, not only with the anchor."""
    report = BenchReport(started="now", quick=True, machine=machine_info())
    item = Item(key="call", title="Calls", anchor="polyfill floor")
    item.add("polyfill floor", _sample(1.2))
    item.add("native floor", _sample(1.0))
    item.add(
        "native call",
        _sample(1.8),
        targets=[Target(text="≤ 1.5× native floor", against="native floor", max_ratio=1.5)],
    )
    report.items = [item.finish()]
    call = item.figure("native call")
    assert call is not None and call.ratio == pytest.approx(1.5)  # to the anchor
    assert call.targets[0].ratio == pytest.approx(1.8) and call.status == "MISS"
    assert "| 1.50× | MISS: ≤ 1.5× native floor, at 1.80× |" in markdown(report)
    figures = to_json(report)["items"][0]["figures"]  # type: ignore[index]
    assert figures[2]["targets"][0]["ratio"] == pytest.approx(1.8)


def test_higher_is_better_targets() -> None:
    item = Item(key="k", title="t", anchor="floor")
    item.add("floor", _sample(100.0), higher_is_better=True)
    item.add(
        "ours",
        _sample(90.0),
        higher_is_better=True,
        targets=[Target(text="≥ floor / 1.2", against="floor", max_ratio=1.2)],
    )
    item.finish()
    assert item.figure("ours").status == "PASS"  # type: ignore[union-attr]


async def test_rounds_are_interleaved_and_rotated() -> None:
    order: list[str] = []

    def op(name: str):  # type: ignore[no-untyped-def]
        async def run() -> None:
            order.append(name)

        return run

    samples = await interleaved({"a": op("a"), "b": op("b"), "c": op("c")}, rounds=3, warmup=0)
    assert order == ["a", "b", "c", "b", "c", "a", "c", "a", "b"]
    assert {name: s.n for name, s in samples.items()} == {"a": 3, "b": 3, "c": 3}


async def test_an_operation_may_measure_itself() -> None:
    async def own() -> Measured:
        return Measured(7.0)

    samples = await interleaved({"own": own}, rounds=2, warmup=1, batch=2)
    assert samples["own"].median == 7.0 and samples["own"].n == 2


def test_markdown_shows_targets_and_skips() -> None:
    report = BenchReport(started="now", quick=True, machine=machine_info(shared="shared box"))
    item = Item(key="k", title="Some item", anchor="floor", anchor_is="the floor")
    item.add("floor", _sample(1.0))
    item.add("ours", _sample(1.5), targets=[Target(text="≤ 1.2×", against="floor", max_ratio=1.2)])
    report.items = [item.finish(), Item(key="s", title="Skipped one", skipped="no peer")]
    md = markdown(report)
    assert "| ours | 1.50 ms | 1.50 ms–1.50 ms | 1.50× | MISS: ≤ 1.2×, at 1.50× |" in md
    assert "| floor (anchor) |" in md and "Not measured: no peer" in md and "shared box" in md
    assert to_json(report)["items"][0]["figures"][1]["status"] == "MISS"  # type: ignore[index]
