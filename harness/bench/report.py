"""The benchmark's report: figures, their anchors, the targets, and the two files.

Every figure is absolute (a :class:`~harness.bench.timing.Sample`) and, where the item
has an anchor, a ratio to it — the anchor measured in the same run, interleaved. A
target is printed PASS or MISS next to its figure; a missed target is a finding for the
report, never a failure of the command.
"""

from __future__ import annotations

import json
import os
import platform
import sys
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from harness.bench.timing import Sample


class Target(BaseModel):
    """One goal for a figure: at most ``max_ratio`` × another figure, or at most ``max_value``."""

    text: str
    against: str | None = None  # the figure (by name, in the same item) it is compared to
    max_ratio: float | None = None
    max_value: float | None = None
    met: bool | None = None  # None: the figure it is compared to was not measured
    # This figure's median over the one it is compared to (which need not be the item's
    # anchor: native's call is held to the native floor, not the item's polyfill floor).
    ratio: float | None = None


class Figure(BaseModel):
    """One measured variant of an item."""

    name: str
    sample: Sample
    ratio: float | None = None  # to the item's anchor (None: this is the anchor, or none)
    targets: list[Target] = Field(default_factory=list)
    note: str = ""
    higher_is_better: bool = False  # throughput; everything else is a time

    @property
    def status(self) -> Literal["PASS", "MISS", ""]:
        """PASS when every target with a verdict is met, MISS when one is not."""
        verdicts = [t.met for t in self.targets if t.met is not None]
        if not verdicts:
            return ""
        return "PASS" if all(verdicts) else "MISS"


class Item(BaseModel):
    """One benchmark item: its figures and what its anchor is."""

    key: str
    title: str
    anchor: str | None = None  # the name of the anchor figure
    anchor_is: str = ""  # what the anchor is, for the reader
    figures: list[Figure] = Field(default_factory=list)
    skipped: str | None = None  # why the item (or part of it) was not measured
    note: str = ""

    def figure(self, name: str) -> Figure | None:
        """The figure called ``name``, if measured."""
        return next((f for f in self.figures if f.name == name), None)

    def add(
        self,
        name: str,
        sample: Sample,
        *,
        targets: list[Target] | None = None,
        note: str = "",
        higher_is_better: bool = False,
    ) -> Figure:
        """Record a figure (its ratio and targets are worked out by :meth:`finish`)."""
        figure = Figure(
            name=name,
            sample=sample,
            targets=targets or [],
            note=note,
            higher_is_better=higher_is_better,
        )
        self.figures.append(figure)
        return figure

    def finish(self) -> Item:
        """Ratios to the anchor, and each target's verdict."""
        anchor = self.figure(self.anchor) if self.anchor else None
        for figure in self.figures:
            if anchor is not None and figure is not anchor and anchor.sample.median > 0:
                figure.ratio = figure.sample.median / anchor.sample.median
            for target in figure.targets:
                target.ratio = self._ratio(figure, target)
                target.met = _verdict(figure, target)
        return self

    def _ratio(self, figure: Figure, target: Target) -> float | None:
        """``figure`` over the figure a ratio target names (None: not such a target, or
        that figure was not measured)."""
        other = self.figure(target.against) if target.against else None
        if other is None or target.max_ratio is None or other.sample.median <= 0:
            return None
        return figure.sample.median / other.sample.median


def _verdict(figure: Figure, target: Target) -> bool | None:
    """Whether ``target`` is met (its ``ratio`` worked out first); None: no verdict."""
    if target.max_value is not None:
        return figure.sample.median <= target.max_value
    if target.ratio is None or target.max_ratio is None:
        return None
    if figure.higher_is_better:
        return target.ratio >= 1 / target.max_ratio
    return target.ratio <= target.max_ratio


class Machine(BaseModel):
    """Where the run happened: a figure means little without it."""

    python: str
    platform: str
    cpus: int
    load_before: list[float]
    load_after: list[float] = Field(default_factory=list)
    chromium: str = ""
    playwright: str = ""
    playwright_mcp: str = ""
    shared: str = ""


class BenchReport(BaseModel):
    """A whole run: when, where, how (``quick`` or full), and every item."""

    started: str
    quick: bool
    only: list[str] = Field(default_factory=list)
    """The items ``--only`` asked for; empty: every item."""
    duration_s: float = 0.0
    machine: Machine
    items: list[Item] = Field(default_factory=list)


def machine_info(*, shared: str = "") -> Machine:
    """Python, the OS, the CPU count and the load average now."""
    try:
        playwright = version("playwright")
    except PackageNotFoundError:  # pragma: no cover - a dependency
        playwright = ""
    return Machine(
        python=sys.version.split()[0],
        platform=platform.platform(),
        cpus=os.cpu_count() or 0,
        load_before=list(_load()),
        playwright=playwright,
        shared=shared,
    )


def _load() -> tuple[float, ...]:
    try:
        return tuple(round(x, 2) for x in os.getloadavg())
    except OSError:  # pragma: no cover - no load average on this platform
        return ()


def finish_machine(machine: Machine) -> None:
    """Record the load average at the end of the run."""
    machine.load_after = list(_load())


def now() -> str:
    """The time now, UTC, ISO 8601."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _number(value: float, unit: str) -> str:
    if unit == "ms" and value >= 1000:
        return f"{value / 1000:.2f} s"
    if value >= 100:
        return f"{value:.0f} {unit}"
    if value >= 10:
        return f"{value:.1f} {unit}"
    return f"{value:.2f} {unit}"


def _ratio(figure: Figure) -> str:
    return "—" if figure.ratio is None else f"{figure.ratio:.2f}×"


def _targets(figure: Figure) -> str:
    parts = []
    for target in figure.targets:
        verdict = {True: "PASS", False: "MISS", None: "n/a"}[target.met]
        measured = "" if target.ratio is None else f", at {target.ratio:.2f}×"
        parts.append(f"{verdict}: {target.text}{measured}")
    return "; ".join(parts)


def markdown(report: BenchReport) -> str:
    """The report for people: one table per item, the machine, and what was skipped."""
    m = report.machine
    lines = [
        "# webmcp-harness benchmark",
        "",
        f"Run {report.started} ({'quick' if report.quick else 'full'}"
        + (f", only {', '.join(report.only)}" if report.only else "")
        + ", "
        f"{report.duration_s:.0f} s). Python {m.python}, Playwright {m.playwright}, "
        f"{m.chromium or 'Chromium'}, {m.platform}, {m.cpus} CPUs; load average "
        f"{' / '.join(map(str, m.load_before))} before, {' / '.join(map(str, m.load_after))} after.",
    ]
    if m.playwright_mcp:
        lines[-1] += f" Playwright MCP {m.playwright_mcp}."
    if m.shared:
        lines += ["", m.shared]
    lines += [
        "",
        "Each figure: median (min–max) over interleaved rounds; the ratio is to the item's "
        "anchor, measured in the same run; a target compares with the figure it names, at "
        "the ratio it gives.",
    ]
    for item in report.items:
        lines += ["", f"## {item.title}", ""]
        if item.anchor_is:
            lines += [f"Anchor: {item.anchor_is}", ""]
        if item.figures:
            lines += [
                "| variant | median | min–max | ratio to anchor | target |",
                "|---|---:|---:|---:|---|",
            ]
            for figure in item.figures:
                s = figure.sample
                name = figure.name + (" (anchor)" if figure.name == item.anchor else "")
                if figure.note:
                    name += f" — {figure.note}"
                lines.append(
                    f"| {name} | {_number(s.median, s.unit)} | "
                    f"{_number(s.min, s.unit)}–{_number(s.max, s.unit)} | {_ratio(figure)} | "
                    f"{_targets(figure)} |"
                )
        if item.note:
            lines += ["", item.note]
        if item.skipped:
            lines += ["", f"Not measured: {item.skipped}"]
    return "\n".join(lines) + "\n"


def to_json(report: BenchReport) -> dict[str, object]:
    """The report for machines, with each figure's PASS/MISS status spelled out."""
    data = report.model_dump(mode="json")
    for item, raw in zip(report.items, data["items"], strict=True):
        for figure, raw_figure in zip(item.figures, raw["figures"], strict=True):
            raw_figure["status"] = figure.status
    return data


def write(report: BenchReport, directory: Path) -> tuple[Path, Path]:
    """Write ``bench.json`` and ``bench.md`` into ``directory``; their paths."""
    directory.mkdir(parents=True, exist_ok=True)
    as_json = directory / "bench.json"
    as_md = directory / "bench.md"
    as_json.write_text(json.dumps(to_json(report), indent=2) + "\n", encoding="utf-8")
    as_md.write_text(markdown(report), encoding="utf-8")
    return as_json, as_md
