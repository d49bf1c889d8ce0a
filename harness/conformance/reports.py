"""The report directory of a conformance run: for CI systems and for people.

- ``wptreport-<backend>.json`` — the primary record (:mod:`harness.conformance.results`),
  one per backend, as wpt.fyi reads them;
- ``junit.xml`` — derived from it for CI test views: each subtest a test case; an unexpected
  result is a ``failure`` (``error`` for a timeout or crash), an expected one ``skipped``
  with the baseline's reason, so that a run that went as expected is green;
- ``report.html`` — one self-contained page (pass/total per area and backend, side by side as
  on wpt.fyi; unexpected results; every failure with its message, citations and evidence;
  audit findings; links to traces), rendered with Jinja2 with autoescaping on, because every
  message may quote page text;
- ``summary.md`` — the short version, appended to ``$GITHUB_STEP_SUMMARY`` when it is set.

JUnit is written with the standard library's ElementTree: the format is a few elements,
ElementTree escapes text and attributes correctly, and nothing else needs it. Every file's
text passes :func:`scrub` last, so a secret that reached a message never reaches a report.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jinja2

from harness.conformance.baseline import PASSING, Baseline, Comparison, Diff
from harness.conformance.findings import KEY_SHAPES
from harness.conformance.results import Report, Subtest, TestResult

# Page secrets: the project's canary, whole private-key blocks, and the audit's key shapes.
SECRET_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"[A-Za-z0-9_\-]*HXCANARY[A-Za-z0-9_\-]*"),
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----"),
    *(pattern for _, pattern in KEY_SHAPES),
)
MASK = "«secret withheld»"
MAX_MESSAGE = 2000

TEMPLATES = jinja2.Environment(
    loader=jinja2.PackageLoader("harness.conformance", "templates"),
    autoescape=jinja2.select_autoescape(["html", "j2"]),
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


def _when(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


TEMPLATES.filters["when"] = _when


def scrub(text: str) -> str:
    """``text`` with anything that looks like a secret replaced by a mark."""
    for pattern in SECRET_PATTERNS:
        text = pattern.sub(MASK, text)
    return text


def looks_secret(text: str) -> bool:
    """Whether ``text`` contains something :func:`scrub` would mask."""
    return any(pattern.search(text) for pattern in SECRET_PATTERNS)


@dataclass
class Row:
    """One failure or notable result, flattened for the HTML and Markdown views."""

    backend: str
    test: str
    subtest: str | None
    status: str
    expected: str
    unexpected: bool
    message: str
    cites: list[str] = field(default_factory=list)
    reason: str = ""
    severity: str | None = None
    tool: str | None = None
    evidence: str | None = None
    fix: str | None = None
    spec: str | None = None
    trace: str | None = None


@dataclass
class Cell:
    """Pass/total of one area or test on one backend."""

    passed: int = 0
    total: int = 0
    unexpected: int = 0

    @property
    def css(self) -> str:
        """``pass``, ``partial`` or ``fail``, for the table's colours."""
        if self.total == 0:
            return "none"
        return "pass" if self.passed == self.total else ("fail" if self.passed == 0 else "partial")


@dataclass
class View:
    """Everything the HTML and Markdown views show, computed once from the reports."""

    title: str
    suite: str
    backends: list[str]
    reports: list[Report]
    comparison: Comparison
    diff: Diff | None
    areas: dict[str, dict[str, Cell]]
    tests: dict[str, dict[str, Cell]]
    titles: dict[str, str]
    rows: list[Row]
    totals: dict[str, Cell]
    generated: str
    fail_on: str | None = None

    @property
    def ok(self) -> bool:
        """Whether the run went as expected."""
        return not self.comparison.unexpected

    @property
    def unexpected_rows(self) -> list[Row]:
        """Rows of results the baseline did not expect."""
        return [row for row in self.rows if row.unexpected]

    @property
    def findings(self) -> list[Row]:
        """Audit findings (rows with a severity)."""
        return [row for row in self.rows if row.severity is not None]


def _counts(result: TestResult) -> Cell:
    cell = Cell()
    items: Sequence[Subtest | TestResult] = result.subtests or [result]
    for item in items:
        cell.total += 1
        if item.status in PASSING:
            cell.passed += 1
        if item.expected is not None:
            cell.unexpected += 1
    if result.expected is not None and result.subtests:
        cell.unexpected += 1
    return cell


def _add(into: Cell, cell: Cell) -> None:
    into.passed += cell.passed
    into.total += cell.total
    into.unexpected += cell.unexpected


def build_view(
    title: str,
    reports: list[Report],
    comparison: Comparison,
    baseline: Baseline,
    diff: Diff | None = None,
    fail_on: str | None = None,
) -> View:
    """The view of ``reports`` (after ``baseline.compare`` marked their unexpected results)."""
    backends = [report.run_info.backend for report in reports]
    areas: dict[str, dict[str, Cell]] = defaultdict(dict)
    tests: dict[str, dict[str, Cell]] = defaultdict(dict)
    totals: dict[str, Cell] = {}
    titles: dict[str, str] = {}
    rows: list[Row] = []
    for report in reports:
        backend = report.run_info.backend
        totals[backend] = Cell()
        for result in report.results:
            cell = _counts(result)
            tests[result.test][backend] = cell
            _add(areas[result.area].setdefault(backend, Cell()), cell)
            _add(totals[backend], cell)
            if result.title:
                titles[result.test] = result.title
            rows.extend(_rows(backend, result, baseline))
    return View(
        title=title,
        suite=reports[0].run_info.suite if reports else "",
        backends=backends,
        reports=reports,
        comparison=comparison,
        diff=diff,
        areas=dict(sorted(areas.items())),
        tests=dict(tests),
        titles=titles,
        rows=rows,
        totals=totals,
        generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        fail_on=fail_on,
    )


def _rows(backend: str, result: TestResult, baseline: Baseline) -> list[Row]:
    expectation = baseline.expectation(backend, result.test)
    rows: list[Row] = []
    if result.status not in PASSING or result.expected is not None:
        rows.append(
            Row(
                backend=backend,
                test=result.test,
                subtest=None,
                status=result.status,
                expected=result.expected or expectation.status,
                unexpected=result.expected is not None,
                message=_short(result.message),
                reason=expectation.reason,
                trace=result.trace,
            )
        )
    for subtest in result.subtests:
        entry = expectation.subtests.get(subtest.name)
        if subtest.status in PASSING and subtest.expected is None and subtest.severity is None:
            continue
        rows.append(
            Row(
                backend=backend,
                test=result.test,
                subtest=subtest.name,
                status=subtest.status,
                expected=subtest.expected or (entry.status if entry else "PASS"),
                unexpected=subtest.expected is not None,
                message=_short(subtest.message),
                cites=subtest.cites,
                reason=entry.reason if entry else "",
                severity=subtest.severity,
                tool=subtest.tool,
                evidence=subtest.evidence,
                fix=subtest.fix,
                spec=subtest.spec,
                trace=result.trace,
            )
        )
    return rows


def _short(message: str | None) -> str:
    text = message or ""
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 1] + "…"


# -- the files -------------------------------------------------------------------------------


def junit_xml(view: View) -> str:
    """JUnit XML: a test suite per (backend, test), a test case per subtest."""
    root = ET.Element("testsuites", name=view.title)
    totals: Counter[str] = Counter()
    for report in view.reports:
        backend = report.run_info.backend
        for result in report.results:
            suite = ET.SubElement(root, "testsuite", name=f"[{backend}] {result.test}")
            properties = ET.SubElement(suite, "properties")
            for name, value in (
                ("backend", backend),
                ("browser_version", report.run_info.browser_version),
                ("harness_version", report.run_info.harness_version),
                ("revision", report.run_info.revision or ""),
                ("test_status", result.status),
            ):
                ET.SubElement(properties, "property", name=name, value=value)
            counts: Counter[str] = Counter()
            cases = result.subtests or [
                Subtest(name=result.test, status="PASS" if result.status in PASSING else "FAIL")
            ]
            for subtest in cases:
                _case(suite, backend, result, subtest, view, counts)
            if result.expected is not None:  # the harness status itself was unexpected
                case = ET.SubElement(
                    suite, "testcase", classname=f"{backend}.{result.test}", name="(harness status)"
                )
                ET.SubElement(
                    case,
                    "error",
                    message=f"{result.status} (expected {result.expected})",
                    type=result.status,
                ).text = result.message or ""
                counts["tests"] += 1
                counts["errors"] += 1
            suite.set("tests", str(counts["tests"]))
            suite.set("failures", str(counts["failures"]))
            suite.set("errors", str(counts["errors"]))
            suite.set("skipped", str(counts["skipped"]))
            suite.set("time", f"{result.duration / 1000:.3f}")
            totals.update(counts)
    for key in ("tests", "failures", "errors", "skipped"):
        root.set(key, str(totals[key]))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _case(
    suite: ET.Element,
    backend: str,
    result: TestResult,
    subtest: Subtest,
    view: View,
    counts: Counter[str],
) -> None:
    case = ET.SubElement(suite, "testcase", classname=f"{backend}.{result.test}", name=subtest.name)
    counts["tests"] += 1
    detail = "\n".join(
        part
        for part in (
            subtest.message or "",
            *(f"cites {c}" for c in subtest.cites),
            f"evidence: {subtest.evidence}" if subtest.evidence else "",
            f"fix: {subtest.fix}" if subtest.fix else "",
        )
        if part
    )
    if subtest.expected is not None:
        if subtest.status in PASSING:
            message = (
                f"unexpected {subtest.status} (the baseline expects {subtest.expected}): "
                "a fix landed; update the baseline"
            )
            ET.SubElement(case, "failure", message=message, type="UNEXPECTED_PASS").text = detail
            counts["failures"] += 1
        elif subtest.status in ("TIMEOUT",):
            ET.SubElement(
                case,
                "error",
                message=f"{subtest.status} (expected {subtest.expected})",
                type="TIMEOUT",
            ).text = detail
            counts["errors"] += 1
        else:
            ET.SubElement(
                case,
                "failure",
                message=f"{subtest.status} (expected {subtest.expected})",
                type=subtest.status,
            ).text = detail
            counts["failures"] += 1
    elif subtest.status not in PASSING:
        reason = view_reason(view, backend, result.test, subtest.name)
        ET.SubElement(case, "skipped", message=f"expected {subtest.status}: {reason}").text = detail
        counts["skipped"] += 1


def view_reason(view: View, backend: str, test: str, subtest: str) -> str:
    """The baseline's reason for an expected result (from the view's rows)."""
    for row in view.rows:
        if (row.backend, row.test, row.subtest) == (backend, test, subtest):
            return row.reason or "in the baseline"
    return "in the baseline"


def markdown(view: View, limit: int = 40) -> str:
    """The Markdown summary: verdict, pass/total per area and backend, what was unexpected."""
    lines = [f"## {view.title}", ""]
    verdict = "✅ as expected" if view.ok else "❌ unexpected results"
    lines.append(
        f"**{verdict}** — {len(view.comparison.unexpected_failures)} unexpected failure(s), "
        f"{len(view.comparison.unexpected_passes)} unexpected pass(es), "
        f"{view.comparison.expected_failures} expected failure(s)."
    )
    lines.append("")
    header = "| area | " + " | ".join(view.backends) + " |"
    lines += [header, "|---|" + "---|" * len(view.backends)]
    for area, cells in view.areas.items():
        row = [f"`{area}`"] + [_md_cell(cells.get(b)) for b in view.backends]
        lines.append("| " + " | ".join(row) + " |")
    total = ["**total**"] + [_md_cell(view.totals.get(b)) for b in view.backends]
    lines.append("| " + " | ".join(total) + " |")
    if view.findings:
        lines += ["", "### Findings", "", "| severity | code | tool | where |", "|---|---|---|---|"]
        for found in view.findings[:limit]:
            lines.append(
                f"| {found.severity} | `{_md(found.subtest or '')}` | {_md(found.tool or '')} "
                f"| {_md(found.test)} |"
            )
    if view.unexpected_rows:
        lines += ["", "### Unexpected results", ""]
        for item in view.unexpected_rows[:limit]:
            where = f"{item.test} › {item.subtest}" if item.subtest else item.test
            lines.append(
                f"- [{item.backend}] {_md(where)}: **{item.status}** (expected {item.expected})"
                + (f" — {_md(item.message.splitlines()[0])}" if item.message else "")
            )
        if len(view.unexpected_rows) > limit:
            lines.append(f"- … and {len(view.unexpected_rows) - limit} more (see report.html)")
    if view.diff:
        lines += ["", "### Since the previous run", ""]
        for label, changes in (
            ("improved", view.diff.improved),
            ("regressed", view.diff.regressed),
            ("changed", view.diff.changed),
        ):
            if changes:
                lines.append(f"**{label}** ({len(changes)})")
                lines += [f"- {_md(change.describe())}" for change in changes[:limit]]
    if view.comparison.stale:
        lines += ["", f"{len(view.comparison.stale)} baseline entries matched no result (stale)."]
    return "\n".join(lines) + "\n"


def _md_cell(cell: Cell | None) -> str:
    if cell is None or cell.total == 0:
        return "—"
    mark = "" if cell.unexpected == 0 else f" ⚠ {cell.unexpected}"
    return f"{cell.passed}/{cell.total}{mark}"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ").replace("<", "&lt;")


def html(view: View) -> str:
    """The self-contained HTML page."""
    return TEMPLATES.get_template("report.html.j2").render(view=view)


@dataclass
class Written:
    """The files a run wrote."""

    directory: Path
    files: list[Path]
    step_summary: Path | None = None


def write_reports(
    directory: str | Path, view: View, extra: dict[str, Any] | None = None
) -> Written:
    """Write every report file of ``view`` into ``directory`` (created if needed).

    ``extra`` maps more file names to JSON-able values (the audit's ``findings.json``).
    Appends the Markdown summary to ``$GITHUB_STEP_SUMMARY`` when that is set.
    """
    import json

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []

    def put(name: str, text: str) -> None:
        path = out / name
        path.write_text(scrub(text), encoding="utf-8")
        written.append(path)

    for report in view.reports:
        put(f"wptreport-{report.run_info.backend or 'run'}.json", report.to_json())
    put("junit.xml", junit_xml(view))
    put("report.html", html(view))
    summary = markdown(view)
    put("summary.md", summary)
    for name, value in (extra or {}).items():
        put(name, json.dumps(value, indent=1, ensure_ascii=False) + "\n")
    # Traces hold the agent view; where a run caught the user agent leaking, so would they.
    for trace in sorted((out / "traces").rglob("*.jsonl")) if (out / "traces").is_dir() else []:
        trace.write_text(scrub(trace.read_text(encoding="utf-8")), encoding="utf-8")
    step = os.environ.get("GITHUB_STEP_SUMMARY")
    step_path: Path | None = None
    if step:
        step_path = Path(step)
        with step_path.open("a", encoding="utf-8") as handle:
            handle.write(scrub(summary))
    return Written(out, written, step_path)
