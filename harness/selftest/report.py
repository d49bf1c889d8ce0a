"""The reliability report: ``reports/reliability.json`` (the model) and ``.md`` (for people)."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel

from harness.elicitation.wording import markdown_cell
from harness.selftest.faults import FaultResult
from harness.selftest.inputs import InputResult
from harness.selftest.load import LoadResult
from harness.selftest.soak import SoakResult, plot

# The most rows of the soak's sample table in the Markdown report (the JSON has them all).
SAMPLE_ROWS = 30
PLOT_NAME = "reliability-soak.png"


class ReliabilityReport(BaseModel):
    """Everything one selftest run saw, and its verdict."""

    mode: str
    faults: list[FaultResult]
    inputs: list[InputResult]
    load: LoadResult | None
    bridge_load: LoadResult | None = None  # MCP clients over HTTP (`pages` is 1: one bridge)
    soak: SoakResult | None = None  # the memory soak (None: not run)
    trace_valid: bool
    leaks: int
    canaries: list[str]  # what was looked for (names, not values)
    peak_rss_mb: dict[str, float]
    seconds: float
    # The machine, and its load (1-minute average) at the start and the end of the run:
    # timings on a shared machine are read with it.
    machine: str = ""

    @property
    def faults_survived(self) -> int:
        """Fault kinds that ended clearly with a usable (or clearly recovered) session."""
        return sum(1 for fault in self.faults if fault.survived)

    @property
    def inputs_clear(self) -> int:
        """Bad inputs answered clearly."""
        return sum(1 for item in self.inputs if item.clear)

    @property
    def ok(self) -> bool:
        """No fault failed, every input was answered clearly, nothing lost, crossed or leaked."""
        load_ok = all(
            load.lost == 0 and load.crossed == 0 and load.duplicated == 0 and not load.errors
            for load in (self.load, self.bridge_load)
            if load is not None
        )
        return (
            self.faults_survived == len(self.faults)
            and self.inputs_clear == len(self.inputs)
            and load_ok
            and self.trace_valid
            and self.leaks == 0
            and (self.soak is None or self.soak.passed)
        )

    def write(self, directory: Path) -> tuple[Path, Path]:
        """Write ``reliability.json`` and ``reliability.md`` into ``directory`` (and the
        soak's curve, ``reliability-soak.png``, when the soak ran)."""
        directory.mkdir(parents=True, exist_ok=True)
        json_path = directory / "reliability.json"
        md_path = directory / "reliability.md"
        summary = {
            "ok": self.ok,
            "faults_survived": self.faults_survived,
            "fault_kinds": len(self.faults),
            "inputs_clear": self.inputs_clear,
            "inputs_tried": len(self.inputs),
            "memory_bounded": self.soak.bounded if self.soak and self.soak.judged else None,
        }
        data = {"summary": summary, **self.model_dump(mode="json")}
        json_path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        md_path.write_text(self.markdown(), encoding="utf-8")
        if self.soak is not None and self.soak.samples:
            plot(self.soak, directory / PLOT_NAME)
        return json_path, md_path

    def markdown(self) -> str:
        """The report for people."""
        lines = [
            "# Reliability report (`webmcp-harness selftest`)",
            "",
            f"Mode: `{self.mode}`; {self.seconds:.0f} s; verdict: **{'PASS' if self.ok else 'FAIL'}**.",
            "",
            *([f"Machine: {self.machine}.", ""] if self.machine else []),
            "| figure | value |",
            "|---|---|",
            f"| fault kinds survived | {self.faults_survived} / {len(self.faults)} |",
            f"| malformed inputs answered clearly | {self.inputs_clear} / {len(self.inputs)} |",
        ]
        if self.load is not None:
            load = self.load
            lines += [
                f"| calls over {load.pages} concurrent pages | {load.calls} in {load.seconds:g} s |",
                f"| results lost / duplicated / crossed | {load.lost} / {load.duplicated} / {load.crossed} |",
                f"| results that were errors | {sum(load.errors.values())} {load.errors or ''} |",
            ]
        if self.bridge_load is not None:
            bridged = self.bridge_load
            lines += [
                f"| MCP bridge over HTTP, 8 concurrent clients | {bridged.calls} calls in {bridged.seconds:g} s |",
                f"| its results lost / duplicated / crossed / errors | {bridged.lost} / {bridged.duplicated} / {bridged.crossed} / {sum(bridged.errors.values())} |",
            ]
        if self.soak is not None:
            soak = self.soak
            lines += [
                f"| memory soak | {soak.seconds / 60:.1f} min: {soak.sessions} sessions, "
                f"{soak.calls} calls, {len(soak.samples)} samples |",
                f"| memory over the soak | {soak.verdict()} |",
            ]
        lines += [
            f"| trace valid JSONL | {'yes' if self.trace_valid else 'NO'} |",
            f"| leaks of canary secrets ({', '.join(self.canaries)}) | {self.leaks} |",
        ]
        for name, mb in self.peak_rss_mb.items():
            lines.append(f"| peak RSS, {name} | {mb:.0f} MB |")
        lines += [
            "",
            "## Faults",
            "",
            "| scenario | group | ended as | survived | s | told |",
            "|---|---|---|---|---|---|",
        ]
        for fault in self.faults:
            told = markdown_cell(fault.detail[:110])
            lines.append(
                f"| `{fault.name}` | {fault.group} | {fault.outcome} | "
                f"{'yes' if fault.survived else 'NO'} | {fault.seconds:g} | {told} |"
            )
        lines += [
            "",
            "## Bad inputs",
            "",
            "| family | tried | clear | answers |",
            "|---|---|---|---|",
        ]
        families: dict[str, list[InputResult]] = {}
        for item in self.inputs:
            families.setdefault(item.family, []).append(item)
        for family, items in families.items():
            answers: dict[str, int] = {}
            for item in items:
                answers[item.answer if item.clear else "UNCLEAR"] = (
                    answers.get(item.answer if item.clear else "UNCLEAR", 0) + 1
                )
            spread = ", ".join(f"{k} {v}" for k, v in sorted(answers.items()))
            lines.append(f"| {family} | {len(items)} | {sum(i.clear for i in items)} | {spread} |")
        unclear = [i for i in self.inputs if not i.clear]
        for item in unclear:
            lines.append(f"- NOT CLEAR: {item.family} `{item.case}`: {item.answer}")
        if self.soak is not None:
            lines += self._soak_markdown(self.soak)
        lines.append("")
        return "\n".join(lines)

    @staticmethod
    def _soak_markdown(soak: SoakResult) -> list[str]:
        lines = [
            "",
            "## Memory soak",
            "",
            f"Rounds of {soak.sessions // max(soak.rounds, 1)} sessions at once on the selftest's "
            "page (each calls `echo`, a 0.25 MB `return_big` and the `x-sensitive` `secret`, "
            f"then closes) for {soak.seconds / 60:.1f} min: {soak.rounds} rounds, {soak.sessions} "
            f"sessions, {soak.calls} calls, errors {soak.errors or 'none'}, canary leaks "
            f"{soak.leaks}. Resident memory (RSS; Chromium's summed over its processes, shared "
            "pages counted in each) is sampled between rounds, when the round's sessions have "
            "closed (each sample the lowest of 3 readings 0.3 s apart, so that a process "
            f"starting at that moment makes no spike). Bounded: after a warm-up (the first {soak.warmup_fraction:.0%} of the "
            "samples), the median of the last third of the samples is at most "
            f"{soak.tolerance} above the median of the first third.",
            "",
            "| curve | first third (median) | last third (median) | allowed rise | bounded |",
            "|---|---|---|---|---|",
        ]
        for verdict in soak.verdicts:
            lines.append(
                f"| {verdict.series} | {verdict.first_mb:.0f} MB | {verdict.last_mb:.0f} MB | "
                f"{verdict.allowed_mb:.0f} MB | {'yes' if verdict.bounded else 'NO: ' + verdict.detail} |"
            )
        step = max(1, -(-len(soak.samples) // SAMPLE_ROWS))
        shown = soak.samples[::step]
        if soak.samples and shown[-1] is not soak.samples[-1]:
            shown.append(soak.samples[-1])
        lines += [
            "",
            f"The curve ({len(shown)} of {len(soak.samples)} samples; all in `reliability.json`, "
            f"plotted in `{PLOT_NAME}`):",
            "",
            "| min | sessions | harness (Python) MB | Playwright driver MB | Chromium MB |",
            "|---|---|---|---|---|",
        ]
        for sample in shown:
            lines.append(
                f"| {sample.seconds / 60:.1f} | {sample.sessions} | {sample.harness_mb:.0f} | "
                f"{sample.driver_mb:.0f} | {sample.chromium_mb:.0f} |"
            )
        return lines
