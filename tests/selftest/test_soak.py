"""The memory soak: the verdict on synthetic curves (a growing one must be flagged), and a
short real soak with its report, table and plot."""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from harness import Harness
from harness.selftest.pages import FaultPages
from harness.selftest.report import PLOT_NAME, ReliabilityReport
from harness.selftest.soak import (
    JUDGED_MINUTES,
    MIN_SAMPLES,
    MIN_SOAK_SAMPLES,
    RssSample,
    SoakResult,
    growth_verdict,
    run_soak,
    verdicts,
)


def wobble(i: int) -> float:
    """A deterministic ± 5 % wobble, as a sampled RSS has."""
    return 1 + 0.05 * math.sin(i * 1.7)


def test_a_flat_noisy_curve_is_bounded() -> None:
    verdict = growth_verdict("chromium", [600 * wobble(i) for i in range(300)])
    assert verdict.bounded, verdict


def test_a_steadily_growing_curve_is_flagged() -> None:
    # 0.5 MB per sample: 150 MB over the run, a leak the tolerance must not hide.
    verdict = growth_verdict("harness", [80 + 0.5 * i for i in range(300)])
    assert not verdict.bounded, verdict
    assert "OVER" in verdict.detail
    assert verdict.last_mb - verdict.first_mb > verdict.allowed_mb


def test_a_slow_leak_on_a_large_process_is_flagged_too() -> None:
    # +30 % over the run on 600 MB, with the wobble.
    values = [600 * (1 + 0.3 * i / 300) * wobble(i) for i in range(300)]
    assert not growth_verdict("chromium", values).bounded


def test_growth_during_warm_up_then_a_plateau_is_bounded() -> None:
    values = [70 + 10 * i for i in range(20)] + [270 * wobble(i) for i in range(280)]
    verdict = growth_verdict("harness", values)
    assert verdict.bounded, verdict


def test_a_small_process_may_wobble_by_the_absolute_slack() -> None:
    # 5 MB → 25 MB is +400 %, but within the 30 MB slack: bounded.
    assert growth_verdict("driver", [5.0] * 50 + [25.0] * 50).bounded
    assert not growth_verdict("driver", [5.0] * 50 + [45.0] * 50).bounded


def test_too_few_samples_are_not_judged_bounded() -> None:
    verdict = growth_verdict("harness", [80.0] * MIN_SAMPLES)
    assert not verdict.bounded and "too few" in verdict.detail


def _result(harness: list[float], errors: dict[str, int] | None = None) -> SoakResult:
    samples = [
        RssSample(seconds=i, sessions=2 * i, harness_mb=mb, driver_mb=50, chromium_mb=600)
        for i, mb in enumerate(harness)
    ]
    return SoakResult(
        minutes=1,
        seconds=60,
        rounds=len(samples),
        sessions=2 * len(samples),
        calls=6 * len(samples),
        errors=errors or {},
        leaks=0,
        samples=samples,
        verdicts=verdicts(samples),
    )


def test_the_report_fails_on_a_growing_harness_or_errors() -> None:
    assert _result([80.0] * 40).bounded
    assert not _result([80.0 + 5 * i for i in range(40)]).bounded
    assert not _result([80.0] * 40, {"timeout": 1}).bounded


def test_only_a_soak_of_minutes_decides_the_selftest() -> None:
    growing = _result([80.0 + 5 * i for i in range(40)])
    assert growing.minutes < JUDGED_MINUTES and growing.passed  # shown, not decisive
    assert "not judged" in growing.verdict() and "NOT bounded" in growing.verdict()
    long = growing.model_copy(update={"minutes": 30.0})
    assert not long.passed and long.verdict() == "NOT bounded"
    assert not _result([80.0] * 40, {"timeout": 1}).passed  # errors always count


@pytest.fixture(scope="module")
async def fault_pages() -> AsyncIterator[FaultPages]:
    async with FaultPages() as pages:
        yield pages


@pytest.mark.slow
async def test_a_short_real_soak_samples_all_three_curves_and_reports_them(
    chromium_path: str, fault_pages: FaultPages, tmp_path: Path
) -> None:
    async with Harness(executable_path=chromium_path) as harness:
        soak = await run_soak(harness, fault_pages, minutes=0.25, interval=1.0)
    assert soak.rounds >= 1 and soak.sessions == 2 * soak.rounds
    assert soak.calls == 3 * soak.sessions
    assert soak.errors == {} and soak.leaks == 0
    assert len(soak.samples) >= MIN_SOAK_SAMPLES  # a short soak runs on until it can judge
    assert soak.verdicts[0].detail.startswith("median")  # judged, not "too few"
    assert all(s.harness_mb > 0 and s.driver_mb > 0 and s.chromium_mb > 0 for s in soak.samples)
    assert [v.series for v in soak.verdicts] == [
        "harness (Python)",
        "Playwright driver (node)",
        "Chromium (all processes)",
    ]
    report = ReliabilityReport(
        mode="quick",
        faults=[],
        inputs=[],
        load=None,
        trace_valid=True,
        leaks=0,
        canaries=[],
        peak_rss_mb={},
        seconds=1,
        soak=soak,
    )
    json_path, md_path = report.write(tmp_path)
    written = json.loads(json_path.read_text())
    assert len(written["soak"]["samples"]) == len(soak.samples)
    assert written["summary"]["memory_bounded"] is None  # a 15-second soak is not judged
    assert "not judged" in md_path.read_text()
    text = md_path.read_text()
    assert "## Memory soak" in text and "| min | sessions |" in text
    assert (tmp_path / PLOT_NAME).read_bytes().startswith(b"\x89PNG")
