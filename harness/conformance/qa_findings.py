"""The QA tools' results as audit findings: ``conformance site --fuzz`` and
``--catalog-baseline``, so that CI gates a deploy on them through the audit's own reports
(wptreport, JUnit, Markdown, HTML) and baseline.

- A fuzz run (:func:`harness.qa.fuzz.fuzz`): every property that held or broke on a tool is
  a check ``fuzz-<property>``; each broken one a finding with the failure's message and, as
  its evidence, the command that reproduces it with the shrunk input.
- A catalog baseline (a ``webmcp-harness snapshot`` file): every change
  :func:`harness.qa.drift.diff_catalogs` finds is a finding ``catalog-<kind>`` graded by the
  change (fail → error, warn → warning, info → info); each tool of the baseline is checked
  for every kind of change but ``added`` (a new tool is a finding only).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import get_args

from harness.conformance.rules import Finding, Severity, finding
from harness.models import Tool
from harness.qa.drift import ChangeKind, diff_catalogs
from harness.qa.drift import Severity as DriftSeverity
from harness.qa.fuzz import FuzzReport
from harness.qa.properties import PROPERTIES
from harness.qa.snapshot import CatalogSnapshot, snapshot_of

Check = tuple[str, str]
"""(tool or "page", rule code) of a check that ran."""

FUZZ_CODES: dict[str, str] = {name: f"fuzz-{name}" for name in PROPERTIES}
"""The rule code of each fuzz property."""
CATALOG_CODES: dict[str, str] = {kind: f"catalog-{kind}" for kind in get_args(ChangeKind)}
"""The rule code of each class of catalog change."""
SEVERITY: dict[DriftSeverity, Severity] = {"fail": "error", "warn": "warning", "info": "info"}
"""A catalog change's severity as a finding's."""
EVIDENCE_LINES = 6
"""How many lines of a change's details its evidence keeps (a description's diff can be long)."""


def fuzz_findings(report: FuzzReport) -> tuple[list[Finding], list[Check]]:
    """The findings and checks of a fuzz run: a check per property that held or broke on a
    tool (not for one that did not apply or a tool it could not call), and a ``probe-failed``
    warning for each tool whose properties could not be checked (no inputs could be made
    from its schema, it went away during the run), naming them and why."""
    checks = [
        (tool.tool, FUZZ_CODES[result.property])
        for tool in report.tools
        for result in tool.results
        if result.status in ("passed", "failed")
    ]
    findings = [
        finding(FUZZ_CODES[prop], failure.message, tool=tool, evidence=failure.cli)
        for tool, prop, failure in report.failures()
    ]
    for tool in report.tools:
        unchecked: dict[str, list[str]] = {}  # why → the properties it kept unchecked
        for result in tool.results:
            if result.status == "skipped":
                unchecked.setdefault(result.reason, []).append(result.property)
        for reason, properties in unchecked.items():
            findings.append(
                finding(
                    "probe-failed",
                    f"Fuzzing could not check {', '.join(properties)} on {tool.tool}.",
                    tool=tool.tool,
                    evidence=reason,
                    severity="warning",
                )
            )
            checks.append((tool.tool, "probe-failed"))
    return findings, checks


def catalog_findings(
    baseline: CatalogSnapshot, tools: Iterable[Tool], page_url: str
) -> tuple[list[Finding], list[Check]]:
    """The findings and checks of the catalog read at ``page_url`` against ``baseline``."""
    drift = diff_catalogs(baseline, snapshot_of(tools, page_url))
    checks = [
        (entry.label(), code)
        for entry in baseline.tools
        for kind, code in CATALOG_CODES.items()
        if kind != "added"
    ]
    findings = [
        finding(
            CATALOG_CODES[change.kind],
            f"{change.tool}: {change.summary}",
            tool=change.tool,
            evidence="; ".join(change.details[:EVIDENCE_LINES])
            + ("; …" if len(change.details) > EVIDENCE_LINES else ""),
            severity=SEVERITY[change.severity],
        )
        for change in drift.changes
    ]
    return findings, checks
