"""What a fuzz run is asked to do and what it reports (:mod:`harness.qa.fuzz`): the options,
each property's result on each tool, and the report for people."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from harness.errors import ConfigError
from harness.models import BackendName
from harness.qa import DEFAULT_DATABASE, DEFAULT_EXAMPLES
from harness.qa.properties import PROPERTIES, Severity

Status = Literal["passed", "failed", "not-applicable", "skipped"]


@dataclass(frozen=True)
class FuzzOptions:
    """What to fuzz, and how hard."""

    tools: Sequence[str] = ()
    """Tool names (default: every tool the page offers)."""
    properties: Sequence[str] = ()
    """Property names (default: every property)."""
    examples: int = DEFAULT_EXAMPLES
    """Inputs tried per tool, property set and kind of input."""
    allow_writes: bool = False
    """Call tools not declared read-only, and let them write to the page's own origin."""
    seed: int | None = None
    """Generate the same inputs each run (the example database is then not used)."""
    database: Path | None = DEFAULT_DATABASE
    """Where found failures are kept and replayed first (None: nowhere)."""
    example: dict[str, Any] | None = None
    """Check this one input instead of searching (a reproduction)."""
    timeout: float = 10.0
    """Seconds a call may take."""

    def check(self) -> None:
        """Raise :class:`ConfigError` for options that cannot be used."""
        unknown = [p for p in self.properties if p not in PROPERTIES]
        if unknown:
            raise ConfigError(
                f"Unknown propert{'ies' if len(unknown) > 1 else 'y'} {', '.join(unknown)}; "
                f"choose from {', '.join(PROPERTIES)}."
            )
        if self.examples < 1:
            raise ConfigError(f"examples must be at least 1, not {self.examples}.")
        if self.timeout <= 0:
            raise ConfigError(f"timeout must be positive, not {self.timeout}.")

    def selected(self) -> list[str]:
        """The properties to check, in the table's order."""
        wanted = set(self.properties) or set(PROPERTIES)
        return [name for name in PROPERTIES if name in wanted]


class Failure(BaseModel):
    """A property broken by a (shrunk) input, and how to run it again."""

    arguments: dict[str, Any]
    message: str
    mistake: str | None = None
    found_after: int = Field(description="Inputs tried before the first failing one, plus one.")
    cli: str
    pytest: str


class PropertyResult(BaseModel):
    """One property on one tool."""

    property: str
    status: Status
    severity: Severity = "error"
    """``warning``: a failure of it does not fail the run (``form-constraints``)."""
    examples: int = 0
    reason: str = ""
    failure: Failure | None = None


class ToolReport(BaseModel):
    """Every property on one tool (or why the tool was not called)."""

    tool: str
    skipped: str | None = None
    results: list[PropertyResult] = Field(default_factory=list)

    @property
    def failed(self) -> list[PropertyResult]:
        """The properties the tool broke (warnings among them)."""
        return [r for r in self.results if r.status == "failed"]

    @property
    def errors(self) -> list[PropertyResult]:
        """The properties the tool broke that fail the run (not the warnings)."""
        return [r for r in self.failed if r.severity == "error"]


class FuzzReport(BaseModel):
    """A fuzz run: the page, how, and every tool's results."""

    url: str
    backend: BackendName
    seed: int | None = None
    database: str | None = None
    tools: list[ToolReport] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether no property failed (a ``warning`` one may have: it is reported, and
        does not fail the run)."""
        return not any(t.errors for t in self.tools)

    def failures(self) -> list[tuple[str, str, Failure]]:
        """(tool, property, failure) of every property that failed: what a report built on
        this one (the site audit's findings, a CI summary) lists."""
        return [
            (tool.tool, result.property, result.failure)
            for tool in self.tools
            for result in tool.failed
            if result.failure is not None
        ]

    def describe(self) -> str:
        """The report for people (page text inside: escape it before a terminal)."""
        lines = [f"fuzz {self.url} ({self.backend})"]
        for tool in self.tools:
            if tool.skipped:
                lines.append(f"  {tool.tool}: skipped ({tool.skipped})")
                continue
            for result in tool.results:
                status = (
                    "warning"
                    if result.status == "failed" and result.severity == "warning"
                    else result.status
                )
                head = f"  {tool.tool}  {result.property}: {status}"
                if result.status == "passed":
                    more = f"; {result.reason}" if result.reason else ""
                    head += f" ({result.examples} input{'s' if result.examples != 1 else ''}{more})"
                elif result.reason:
                    head += f" ({result.reason})"
                lines.append(head)
                failure = result.failure
                if failure is not None:
                    lines.append(f"      {failure.message}")
                    shrunk = json.dumps(failure.arguments, ensure_ascii=False, sort_keys=True)
                    lines.append(f"      minimal input: {shrunk}")
                    if failure.mistake:
                        lines.append(f"      near-miss: {failure.mistake}")
                    lines.append("      reproduce with:")
                    lines.append(f"        {failure.cli}")
                    lines += [f"        {line}" for line in failure.pytest.splitlines()]
        failed = sum(len(t.errors) for t in self.tools)
        warned = sum(len(t.failed) - len(t.errors) for t in self.tools)
        where = f"; found failures are kept in {self.database}" if self.database else ""
        unchecked, checked = self.unchecked(), self.checked()
        if failed:
            verdict = f"{failed} propert{'ies' if failed > 1 else 'y'} failed"
        elif unchecked and not checked:
            verdict = f"no property could be checked ({unchecked} skipped, above)"
        elif not checked:
            # Not "all held": a gate that checked nothing says so.
            verdict = "no property was checked: " + (
                "no tool to fuzz" if not self.tools else "none applied to the tools (above)"
            )
        elif warned:
            verdict = "no property failed"
        else:
            verdict = "all properties checked held" if unchecked else "all properties held"
        if unchecked and checked:
            verdict += f"; {unchecked} could not be checked (skipped, above)"
        if warned:
            verdict += f"; {warned} warning{'s' if warned > 1 else ''} (above)"
        lines.append(verdict + (f" (seed {self.seed})" if self.seed is not None else where))
        return "\n".join(lines)

    def checked(self) -> int:
        """How many properties were checked on a tool (they held or failed)."""
        return sum(r.status in ("passed", "failed") for t in self.tools for r in t.results)

    def unchecked(self) -> int:
        """How many properties of the tools called could not be checked (no inputs could
        be made, the tool went away, …): a run that checked nothing on a tool says so."""
        return sum(r.status == "skipped" for t in self.tools for r in t.results)
