"""The report directory of a conformance run: for CI systems and for people.

- ``wptreport-<backend>.json`` — the primary record (:mod:`harness.conformance.results`),
  one per backend, as wpt.fyi reads them;
- ``junit.xml`` — derived from it for CI test views (:mod:`harness.conformance.junit`);
- ``report.html`` — one self-contained results view, as wpt.fyi's: pass/total per area, then
  a grid of every test and subtest with the backends side by side, a column that says what
  differs from the baseline (regression, fix, flaky), passing subtests folded away, filters,
  and every row linked to its message and trace; audit findings; what changed since
  ``--diff``. Rendered with Jinja2 with autoescaping on, because every message may quote
  page text;
- ``summary.md`` — the short version, appended to ``$GITHUB_STEP_SUMMARY`` when it is set
  (page text in it passes :func:`~harness.conformance.escaping.md_text`: one line, no
  Markdown syntax of its own; a step summary that cannot be written is said, and costs
  neither a report nor the run's verdict).

Every file's text passes :func:`scrub` last, so a secret that reached a message never
reaches a report.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from harness.conformance.baseline import Baseline, Comparison, Diff
from harness.conformance.escaping import TABLE_WIDTH, clip, md_text, one_line, xml_text
from harness.conformance.findings import KEY_SHAPES
from harness.conformance.junit import junit_xml
from harness.conformance.results import FLAKY, PASSING, Report, Subtest, TestResult, keyed

# Page secrets: the project's canary, whole private-key blocks, and the audit's key shapes.
SECRET_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"[A-Za-z0-9_\-]*HXCANARY[A-Za-z0-9_\-]*"),
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----"),
    *(pattern for _, pattern in KEY_SHAPES),
)
MASK = "«secret withheld»"
MAX_MESSAGE = 2000


def _shown(value: Any) -> Any:
    """What the HTML template prints of a value: text with the characters a reader would
    not see (controls, format characters) as the escapes JUnit shows (``\\x01``), before
    autoescaping; markup the template made itself (a macro's cells) as it is."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return xml_text(value)
    return value


TEMPLATES = jinja2.Environment(
    loader=jinja2.PackageLoader("harness.conformance", "templates"),
    autoescape=jinja2.select_autoescape(["html", "j2"]),
    finalize=_shown,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


def _when(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


TEMPLATES.filters["when"] = _when
TEMPLATES.filters["clip"] = clip


def scrub(text: str) -> str:
    """``text`` with anything that looks like a secret replaced by a mark."""
    for pattern in SECRET_PATTERNS:
        text = pattern.sub(MASK, text)
    return text


def looks_secret(text: str) -> bool:
    """Whether ``text`` contains something :func:`scrub` would mask."""
    return any(pattern.search(text) for pattern in SECRET_PATTERNS)


Mark = str
"""How a result stands against the baseline: ``regression`` (an unexpected failure),
``fix`` (an unexpected pass), ``flaky`` (passed only on a rerun, not listed as intermittent),
``known-flaky``, ``expected`` (a failure the baseline lists) or ``""`` (a pass)."""
_MARK_ORDER = ("regression", "flaky", "fix", "known-flaky", "expected", "")


def _mark(status: str, unexpected: bool) -> Mark:
    if unexpected:
        if status == FLAKY:
            return "flaky"
        return "fix" if status in PASSING else "regression"
    if status == FLAKY:
        return "known-flaky"
    return "" if status in PASSING else "expected"


def _worst(marks: Sequence[Mark]) -> Mark:
    return min(marks, key=_MARK_ORDER.index, default="")


@dataclass
class Row:
    """One notable result (not a plain pass), with everything the views say about it."""

    id: str
    """The HTML anchor of its details (``d-12``)."""
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
    lighthouse: str | None = None
    trace: str | None = None
    reruns: list[str] = field(default_factory=list)
    change: str | None = None
    """How it changed since ``--diff``'s run (regressed, fixed, new, gone, changed)."""

    @property
    def mark(self) -> Mark:
        """How it stands against the baseline (see :data:`Mark`)."""
        return _mark(self.status, self.unexpected)


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
class GridCell:
    """One result in the grid: a subtest (or a test's harness status) on one backend."""

    status: str
    mark: Mark
    detail: str | None = None
    """The anchor of its row of details, when it has one."""
    trace: str | None = None
    change: str | None = None


@dataclass
class GridRow:
    """One subtest across the backends."""

    name: str
    cells: dict[str, GridCell]

    @property
    def mark(self) -> Mark:
        """The worst mark of its cells."""
        return _worst([cell.mark for cell in self.cells.values()])

    @property
    def passing(self) -> bool:
        """Whether it passed everywhere it ran, as expected (folded away by default)."""
        return all(c.status in PASSING and not c.mark and not c.change for c in self.cells.values())


@dataclass
class GridTest:
    """One test across the backends: its pass/total cells and its subtests."""

    test: str
    title: str
    cells: dict[str, Cell]
    status: GridRow
    """Its harness status across the backends (``OK`` when it ran to the end)."""
    rows: list[GridRow]

    @property
    def mark(self) -> Mark:
        """The worst mark of its status and subtests."""
        return _worst([self.status.mark, *(row.mark for row in self.rows)])

    @property
    def passing_rows(self) -> int:
        """How many of its subtests are folded away."""
        return sum(row.passing for row in self.rows)

    @property
    def search(self) -> str:
        """What the grid's filter box matches: path, title and subtest names."""
        return " ".join([self.test, self.title, *(row.name for row in self.rows)]).lower()


@dataclass
class View:
    """Everything the HTML and Markdown views show, computed once from the reports."""

    title: str
    suite: str
    backends: list[str]
    reports: list[Report]
    comparison: Comparison
    baseline: Baseline
    diff: Diff | None
    areas: dict[str, dict[str, Cell]]
    grid: list[GridTest]
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

    @property
    def flaky_rows(self) -> list[Row]:
        """Results that passed only on a rerun."""
        return [row for row in self.rows if row.status == FLAKY]


def _counts(result: TestResult) -> Cell:
    cell = Cell()
    items: Sequence[Subtest | TestResult] = result.subtests or [result]
    for item in items:
        cell.total += 1
        if item.outcome in PASSING:
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


class _Builder:
    """Walks the reports once, numbering the rows of details as it goes."""

    def __init__(self, baseline: Baseline, diff: Diff | None) -> None:
        self.baseline = baseline
        self.diff = diff
        self.rows: list[Row] = []

    def cell(
        self,
        backend: str,
        result: TestResult,
        item: Subtest | TestResult,
        notable: bool,
        key: str | None = None,
        **details: Any,
    ) -> GridCell:
        """The grid cell of ``item`` (a subtest of ``result`` known by ``key``, see
        :func:`~harness.conformance.results.keyed`, or ``result`` itself for its harness
        status) and, when it is not a plain pass, its row of details."""
        subtest = key if isinstance(item, Subtest) else None
        found = self.diff.of(backend, result.test, subtest) if self.diff else None
        unexpected = item.expected is not None
        cell = GridCell(
            status=item.outcome,
            mark=_mark(item.outcome, unexpected),
            trace=result.trace,
            change=found.kind if found else None,
        )
        if item.outcome not in PASSING or unexpected or notable:
            row = Row(
                id=f"d-{len(self.rows) + 1}",
                backend=backend,
                test=result.test,
                subtest=subtest,
                status=item.outcome,
                unexpected=unexpected,
                message=_short(item.message),
                trace=result.trace,
                reruns=item.reruns,
                change=cell.change,
                **details,
            )
            self.rows.append(row)
            cell.detail = row.id
        return cell

    def status_cell(self, backend: str, result: TestResult) -> GridCell:
        """The cell of a test's harness status."""
        expectation = self.baseline.expectation(backend, result.test)
        return self.cell(
            backend,
            result,
            result,
            False,
            expected=result.expected or expectation.status,
            reason=expectation.reason,
        )

    def subtest_cell(
        self, backend: str, result: TestResult, key: str, subtest: Subtest
    ) -> GridCell:
        """The cell of one subtest (an audit finding always has a row of details)."""
        entry = self.baseline.expectation(backend, result.test).subtests.get(subtest.name)
        return self.cell(
            backend,
            result,
            subtest,
            subtest.severity is not None,
            key,
            expected=subtest.expected or (entry.status if entry else "PASS"),
            cites=subtest.cites,
            reason=entry.reason if entry else "",
            severity=subtest.severity,
            tool=subtest.tool,
            evidence=subtest.evidence,
            fix=subtest.fix,
            spec=subtest.spec,
            lighthouse=subtest.lighthouse,
        )


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
    totals: dict[str, Cell] = {}
    builder = _Builder(baseline, diff)
    by_test: dict[str, dict[str, TestResult]] = {}
    for report in reports:
        backend = report.run_info.backend
        totals[backend] = Cell()
        for result in report.results:
            by_test.setdefault(result.test, {})[backend] = result
            cell = _counts(result)
            _add(areas[result.area].setdefault(backend, Cell()), cell)
            _add(totals[backend], cell)
    grid = [_grid_test(builder, test, results) for test, results in by_test.items()]
    return View(
        title=title,
        suite=reports[0].run_info.suite if reports else "",
        backends=backends,
        reports=reports,
        comparison=comparison,
        baseline=baseline,
        diff=diff,
        areas=dict(sorted(areas.items())),
        grid=grid,
        rows=builder.rows,
        totals=totals,
        generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        fail_on=fail_on,
    )


def _grid_test(builder: _Builder, test: str, results: dict[str, TestResult]) -> GridTest:
    # A row per subtest key: two subtests of one name are two rows (``name [2]``).
    by_key = {backend: dict(keyed(r.subtests)) for backend, r in results.items()}
    keys: dict[str, None] = {}
    for subtests in by_key.values():
        keys.update(dict.fromkeys(subtests))
    status = GridRow(
        "(harness status)",
        {backend: builder.status_cell(backend, r) for backend, r in results.items()},
    )
    rows = []
    for key in keys:
        cells = {}
        for backend, result in results.items():
            subtest = by_key[backend].get(key)
            if subtest is not None:
                cells[backend] = builder.subtest_cell(backend, result, key, subtest)
        rows.append(GridRow(key, cells))
    title = next((r.title for r in results.values() if r.title), "") or ""
    return GridTest(
        test=test,
        title=title,
        cells={backend: _counts(r) for backend, r in results.items()},
        status=status,
        rows=rows,
    )


def _short(message: str | None) -> str:
    text = message or ""
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 1] + "…"


# -- the files -------------------------------------------------------------------------------


def markdown(view: View, limit: int = 40) -> str:
    """The Markdown summary: verdict, pass/total per area and backend, what was unexpected,
    flaky results, findings and what changed. Page text in it is one escaped line, and
    names in tables are clipped (see :mod:`harness.conformance.escaping`)."""
    lines = [f"## {md_text(view.title)}", ""]
    verdict = "✅ as expected" if view.ok else "❌ unexpected results"
    flaky = len([u for u in view.comparison.unexpected if u.status == FLAKY])
    lines.append(
        f"**{verdict}** — {len(view.comparison.unexpected_failures) - flaky} unexpected "
        f"failure(s), {len(view.comparison.unexpected_passes)} unexpected pass(es), "
        f"{flaky} flaky, {view.comparison.expected_failures} expected failure(s)."
    )
    lines.append("")
    header = "| area | " + " | ".join(md_text(b, cell=True) for b in view.backends) + " |"
    lines += [header, "|---|" + "---|" * len(view.backends)]
    for area, cells in view.areas.items():
        row = [md_text(area, TABLE_WIDTH, cell=True)] + [
            _md_cell(cells.get(b)) for b in view.backends
        ]
        lines.append("| " + " | ".join(row) + " |")
    total = ["**total**"] + [_md_cell(view.totals.get(b)) for b in view.backends]
    lines.append("| " + " | ".join(total) + " |")
    if view.findings:
        lines += ["", "### Findings", "", "| severity | code | tool | where |", "|---|---|---|---|"]
        for found in view.findings[:limit]:
            lines.append(
                f"| {found.severity} | {md_text(found.subtest or '', TABLE_WIDTH, cell=True)} "
                f"| {md_text(found.tool or '', 40, cell=True)} | {md_text(found.test, 40, cell=True)} |"
            )
        if len(view.findings) > limit:
            lines.append(f"\n… and {len(view.findings) - limit} more findings (see report.html)")
    if view.unexpected_rows:
        lines += ["", "### Unexpected results", ""]
        for item in view.unexpected_rows[:limit]:
            message = one_line(item.message)
            lines.append(
                f"- {_md_where(item)}: **{item.status}** (expected {item.expected})"
                + (f" — {md_text(message, 160)}" if message else "")
            )
        if len(view.unexpected_rows) > limit:
            lines.append(f"- … and {len(view.unexpected_rows) - limit} more (see report.html)")
    if view.diff is not None:
        lines += ["", "### Since the previous run", ""]
        if not view.diff:
            lines.append("No change.")
        for kind, changes in view.diff.groups():
            lines.append(f"**{kind}** ({len(changes)})")
            lines += [f"- {md_text(change.describe(), 160)}" for change in changes[:limit]]
            if len(changes) > limit:
                lines.append(f"- … and {len(changes) - limit} more (see report.html)")
        for backend in view.diff.absent:
            lines.append(f"{md_text(backend)}: not in the previous run (nothing to compare).")
    if view.comparison.stale:
        lines += ["", f"{len(view.comparison.stale)} baseline entries matched no result (stale)."]
    return "\n".join(lines) + "\n"


def _md_where(item: Row) -> str:
    where = f"{clip(item.test, 60)} › {clip(item.subtest, 60)}" if item.subtest else item.test
    return f"[{md_text(item.backend)}] {md_text(where, 160)}"


def _md_cell(cell: Cell | None) -> str:
    if cell is None or cell.total == 0:
        return "—"
    mark = "" if cell.unexpected == 0 else f" ⚠ {cell.unexpected}"
    return f"{cell.passed}/{cell.total}{mark}"


def html(view: View) -> str:
    """The self-contained HTML page."""
    return TEMPLATES.get_template("report.html.j2").render(view=view)


@dataclass
class Written:
    """The files a run wrote."""

    directory: Path
    files: list[Path]
    step_summary: Path | None = None
    step_summary_problem: str | None = None
    """Why ``$GITHUB_STEP_SUMMARY`` could not be appended to (the step summary is a
    courtesy to the CI page: the reports are written, and the run's verdict stands)."""


def _write_whole(path: Path, text: str) -> None:
    """``path`` written whole or left as it was: the text goes to a file beside it, renamed
    over it once complete. A full disk then leaves no half-written report, and a trace the
    scrub pass rewrites is never cut short to look like a run that stopped there."""
    part = path.with_name(f".{path.name}.part")
    try:
        # A lone surrogate from page text is shown as an escape, never a crash.
        with part.open("w", encoding="utf-8", errors="backslashreplace") as file:
            file.write(text)
        os.replace(part, path)
    except BaseException:
        part.unlink(missing_ok=True)
        raise


def write_reports(
    directory: str | Path, view: View, extra: dict[str, Any] | None = None
) -> Written:
    """Write every report file of ``view`` into ``directory`` (created if needed).

    ``extra`` maps more file names to JSON-able values (the audit's ``findings.json``).
    Appends the Markdown summary to ``$GITHUB_STEP_SUMMARY`` when that is set, as best it
    can: a file that cannot be written there is said in :attr:`Written.step_summary_problem`.
    Raises ``OSError`` when a report file cannot be written.
    """
    import json

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []

    def put(name: str, text: str) -> None:
        path = out / name
        _write_whole(path, scrub(text))
        written.append(path)

    for report in view.reports:
        put(f"wptreport-{report.run_info.backend or 'run'}.json", report.to_json())
    put("junit.xml", junit_xml(view.title, view.reports, view.baseline))
    put("report.html", html(view))
    summary = markdown(view)
    put("summary.md", summary)
    for name, value in (extra or {}).items():
        put(name, json.dumps(value, indent=1, ensure_ascii=False) + "\n")
    # Traces hold the agent view; where a run caught the user agent leaking, so would they.
    for trace in sorted((out / "traces").rglob("*.jsonl")) if (out / "traces").is_dir() else []:
        _write_whole(trace, scrub(trace.read_text(encoding="utf-8")))
    step = os.environ.get("GITHUB_STEP_SUMMARY")
    if not step:
        return Written(out, written)
    try:
        with Path(step).open("a", encoding="utf-8", errors="backslashreplace") as handle:
            handle.write(scrub(summary))
    except OSError as exc:
        problem = (
            f"cannot append the summary to $GITHUB_STEP_SUMMARY {step} ({exc.strerror or exc})"
        )
        return Written(out, written, step_summary_problem=problem)
    return Written(out, written, Path(step))
