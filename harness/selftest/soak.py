"""The memory soak: session after session for a set time, the resident memory of the
harness and of Chromium sampled as it goes, and a verdict on the curve.

Each round opens a few sessions on the selftest's page at once, calls its tools (the
well-behaved ``echo``, a small ``return_big`` and the ``x-sensitive`` ``secret``), and
closes them. Memory is sampled between rounds, when every session of the round has closed:
what is still held then is what a long run would pile up, and samples taken in the same
state compare (a sample taken mid-round would swing with the renderers open at the time).

The verdict (:func:`growth_verdict`): the first part of the run is warm-up (caches and
pools filling) and left out; the median of the last third of the remaining samples must be
within a tolerance of the median of the first third.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from pathlib import Path

from pydantic import BaseModel

from harness.harness import Harness
from harness.selftest.pages import FaultPages

# The sessions each round opens at once.
SOAK_CONCURRENCY = 2
# Samples in the first WARMUP_FRACTION of the run (and at least the first one) are warm-up.
WARMUP_FRACTION = 0.1
# Bounded: the last third's median is at most this much above the first third's ...
TOLERANCE_FRACTION = 0.15
# ... or at most this many MB above it, whichever is more (small processes wobble by MBs).
TOLERANCE_MB = 30.0
# After a round, how long to wait for its renderer processes to exit before sampling.
SETTLE_S = 3.0
# Each sample is the lowest of this many readings, READING_GAP_S apart: a process starting
# or collecting garbage at the moment of one reading does not make a spike, while memory
# that is held (a leak) raises every reading.
READINGS = 3
READING_GAP_S = 0.3
# Fewer samples than this after warm-up cannot show a trend.
MIN_SAMPLES = 6
# The fewest samples a soak takes, however short (the first is warm-up).
MIN_SOAK_SAMPLES = MIN_SAMPLES + 2
# A soak shorter than this cannot tell bounded memory from warm-up (Playwright's driver,
# a garbage-collected node process, rises for minutes before its first full collection):
# its verdicts are shown, but do not decide the selftest.
JUDGED_MINUTES = 5.0
# The canary of the page's x-sensitive value (see ``pages/faults.html``).
CANARY = "HXCANARY"


class RssSample(BaseModel):
    """Resident memory at one moment of the soak, in MB."""

    seconds: float  # since the soak began
    sessions: int  # sessions opened and closed so far
    harness_mb: float  # this Python process
    driver_mb: float  # Playwright's driver (node), a child of the harness
    chromium_mb: float  # every Chromium process (browser, renderers, GPU, utilities), summed


class Verdict(BaseModel):
    """Whether one curve stayed bounded, and the figures that say so."""

    series: str
    first_mb: float  # median of the first third after warm-up
    last_mb: float  # median of the last third
    allowed_mb: float  # how far above ``first_mb`` the last third may be
    bounded: bool
    detail: str


class SoakResult(BaseModel):
    """What the soak did and saw."""

    minutes: float  # asked for (a short soak runs on until it has MIN_SOAK_SAMPLES)
    seconds: float  # how long it ran
    rounds: int
    sessions: int
    calls: int
    errors: dict[str, int]  # calls that came back as errors, by kind (none expected)
    leaks: int  # agent views that held the page's x-sensitive canary (none expected)
    samples: list[RssSample]
    verdicts: list[Verdict]
    warmup_fraction: float = WARMUP_FRACTION
    tolerance: str = f"max({TOLERANCE_FRACTION:.0%}, {TOLERANCE_MB:g} MB)"

    @property
    def bounded(self) -> bool:
        """Every curve stayed bounded, and every call answered."""
        return bool(self.verdicts) and all(v.bounded for v in self.verdicts) and not self.errors

    @property
    def judged(self) -> bool:
        """Long enough (:data:`JUDGED_MINUTES`) for its verdict to decide the selftest."""
        return self.minutes >= JUDGED_MINUTES

    @property
    def passed(self) -> bool:
        """Every call answered, nothing leaked, and (when judged) memory stayed bounded."""
        return not self.errors and self.leaks == 0 and (self.bounded or not self.judged)

    def verdict(self) -> str:
        """ "bounded", "NOT bounded", or for a short soak, what its curves suggest."""
        said = "bounded" if self.bounded else "NOT bounded"
        return said if self.judged else f"not judged (under {JUDGED_MINUTES:g} min; looked {said})"


def growth_verdict(series: str, values: list[float]) -> Verdict:
    """Bounded when, after the warm-up, the median of the last third of ``values`` is at
    most max(TOLERANCE_FRACTION, TOLERANCE_MB) above the median of the first third."""
    warmup = max(1, int(len(values) * WARMUP_FRACTION))
    kept = values[warmup:]
    if len(kept) < MIN_SAMPLES:
        return Verdict(
            series=series,
            first_mb=0.0,
            last_mb=0.0,
            allowed_mb=0.0,
            bounded=False,
            detail=f"{len(kept)} samples after warm-up: too few to judge (need {MIN_SAMPLES})",
        )
    third = len(kept) // 3
    first = statistics.median(kept[:third])
    last = statistics.median(kept[-third:])
    allowed = max(first * TOLERANCE_FRACTION, TOLERANCE_MB)
    bounded = last - first <= allowed
    detail = (
        f"median {first:.0f} MB → {last:.0f} MB ({last - first:+.0f} MB; "
        f"{'within' if bounded else 'OVER'} the {allowed:.0f} MB allowed)"
    )
    return Verdict(
        series=series,
        first_mb=round(first, 1),
        last_mb=round(last, 1),
        allowed_mb=round(allowed, 1),
        bounded=bounded,
        detail=detail,
    )


def verdicts(samples: list[RssSample]) -> list[Verdict]:
    """The verdict on each curve: the harness, its Playwright driver, Chromium."""
    return [
        growth_verdict("harness (Python)", [s.harness_mb for s in samples]),
        growth_verdict("Playwright driver (node)", [s.driver_mb for s in samples]),
        growth_verdict("Chromium (all processes)", [s.chromium_mb for s in samples]),
    ]


async def run_soak(
    harness: Harness, pages: FaultPages, *, minutes: float, interval: float
) -> SoakResult:
    """Rounds of sessions for ``minutes``, memory sampled at most every ``interval`` s."""
    started = time.perf_counter()
    deadline = started + minutes * 60
    samples: list[RssSample] = []
    errors: dict[str, int] = {}
    counts = {"rounds": 0, "sessions": 0, "calls": 0, "leaks": 0}
    last_sample = -interval
    idle = _chromium_processes()  # the browser's own processes, no page open

    async def one_session(number: int) -> None:
        session = await harness.open(pages.url("faults.html", id=f"soak{number}"))
        try:
            for tool, arguments in (
                ("echo", {"n": number}),
                ("return_big", {"mb": 0.25}),
                ("secret", {}),
            ):
                outcome = await session.call(tool, arguments)
                counts["calls"] += 1
                if outcome.error_kind is not None:
                    errors[outcome.error_kind] = errors.get(outcome.error_kind, 0) + 1
                if CANARY in outcome.result.model_dump_json():
                    counts["leaks"] += 1
        finally:
            await session.close()

    while True:
        now = time.perf_counter()
        # A short soak goes on past its time until its curve has enough samples to judge.
        over = now >= deadline and len(samples) + 1 >= MIN_SOAK_SAMPLES
        if over or now - started - last_sample >= interval:
            await _renderers_gone(idle)
            last_sample = now - started
            samples.append(await _lowest_reading(last_sample, counts["sessions"]))
        if over:
            break
        base = counts["sessions"]
        await asyncio.gather(*(one_session(base + i) for i in range(SOAK_CONCURRENCY)))
        counts["sessions"] += SOAK_CONCURRENCY
        counts["rounds"] += 1
    return SoakResult(
        minutes=minutes,
        seconds=round(time.perf_counter() - started, 1),
        rounds=counts["rounds"],
        sessions=counts["sessions"],
        calls=counts["calls"],
        errors=errors,
        leaks=counts["leaks"],
        samples=samples,
        verdicts=verdicts(samples),
    )


def _chromium_processes() -> int:
    return sum(1 for pid in descendants(os.getpid()) if _name(pid).startswith("chrom"))


async def _renderers_gone(idle: int) -> None:
    """Wait (at most SETTLE_S) until the closed sessions' renderers have exited, so that
    every sample sees the browser in the same state."""
    deadline = time.perf_counter() + SETTLE_S
    while _chromium_processes() > idle and time.perf_counter() < deadline:
        await asyncio.sleep(0.1)


async def _lowest_reading(seconds: float, sessions: int) -> RssSample:
    readings = [sample_rss(seconds, sessions)]
    for _ in range(READINGS - 1):
        await asyncio.sleep(READING_GAP_S)
        readings.append(sample_rss(seconds, sessions))
    return RssSample(
        seconds=round(seconds, 1),
        sessions=sessions,
        harness_mb=min(r.harness_mb for r in readings),
        driver_mb=min(r.driver_mb for r in readings),
        chromium_mb=min(r.chromium_mb for r in readings),
    )


def sample_rss(seconds: float = 0.0, sessions: int = 0) -> RssSample:
    """The resident memory of this process, its Playwright driver and its Chromium now."""
    driver = chromium = 0
    for pid in descendants(os.getpid()):
        rss = rss_kb(pid)
        name = _name(pid)
        if name.startswith("chrom"):
            chromium += rss
        elif name.startswith("node"):
            driver += rss
    return RssSample(
        seconds=round(seconds, 1),
        sessions=sessions,
        harness_mb=round(rss_kb(os.getpid()) / 1024, 1),
        driver_mb=round(driver / 1024, 1),
        chromium_mb=round(chromium / 1024, 1),
    )


def rss_kb(pid: int) -> int:
    """A process's resident memory in kB (Linux ``/proc``); 0 when it is gone."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    for line in text.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip().lower()
    except OSError:
        return ""


def descendants(root: int) -> list[int]:
    """Every process below ``root``, from each process's parent in ``/proc`` (Linux).

    Not ``/proc/PID/task/PID/children``: that lists only the children of a process's
    main thread, and Chromium starts its renderers from other threads.
    """
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 1:
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: list[int] = []
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def plot(result: SoakResult, path: Path) -> Path:
    """The RSS curves as a PNG at ``path`` (matplotlib, no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    minutes = [s.seconds / 60 for s in result.samples]
    figure, axes = plt.subplots(figsize=(8, 4.5), dpi=100)
    for label, values in (
        ("Chromium (all processes)", [s.chromium_mb for s in result.samples]),
        ("harness (Python)", [s.harness_mb for s in result.samples]),
        ("Playwright driver (node)", [s.driver_mb for s in result.samples]),
    ):
        axes.plot(minutes, values, label=label, linewidth=1)
    warmup = max(1, int(len(result.samples) * result.warmup_fraction))
    if len(result.samples) > warmup:
        axes.axvline(minutes[warmup], color="grey", linestyle=":", label="end of warm-up")
    axes.set_xlabel("minutes")
    axes.set_ylabel("resident memory (MB)")
    axes.set_ylim(bottom=0)
    verdict = "bounded" if result.bounded else "NOT bounded"
    axes.set_title(
        f"Memory soak: {result.sessions} sessions, {result.calls} calls in "
        f"{result.seconds / 60:.1f} min ({verdict})"
    )
    axes.legend(loc="center right")
    axes.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
    return path


def soak_interval(minutes: float) -> float:
    """Seconds between samples: every second for a short soak, at most 300 samples in all."""
    return max(1.0, minutes * 60 / 300)
