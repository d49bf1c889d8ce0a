"""The report directory: wptreport JSON, JUnit XML, HTML and Markdown — for CI and people.

The HTML report is a results view: it is opened in Chromium (no screenshot) and used — its
grid shows every test and subtest with the backends side by side and a column against the
baseline, passing subtests fold away and come back, the filters hide and show rows, and each
row's link leads to its message and its trace.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from playwright.async_api import async_playwright

from harness.browser.launch import launch_flags
from harness.conformance.baseline import Baseline, diff
from harness.conformance.reports import MASK, build_view, markdown, scrub, write_reports
from harness.conformance.results import Report, RunInfo, Subtest, TestResult
from tests.gfm import HARMLESS, HOSTILE, inert, render

FAILURE = "the agent view contains the secret value it must not carry"
CANARY_SECRET = "hk_HXCANARY_4f1c2a9e77"
BASELINE_YAML = """
polyfill:
  /seeds/sensitive/x-sensitive.html:
    subtests:
      known gap: {status: FAIL, reason: "issue 12: keys are not redacted yet"}
      fixed meanwhile: {status: FAIL, reason: "issue 13"}
"""


def _run(backend: str) -> Report:
    return Report(
        run_info=RunInfo(
            suite="ua", backend=backend, browser_version="156.0", harness_version="0.1.0"
        ),
        time_start=1_700_000_000_000,
        time_end=1_700_000_060_000,
        results=[
            TestResult(
                test="/seeds/sensitive/x-sensitive.html",
                status="OK",
                title="x-sensitive fields",
                trace="traces/x.jsonl",
                subtests=[
                    Subtest(
                        name="redacts fields", status="PASS", cites=['seed 000 §1: "MUST NOT"']
                    ),
                    Subtest(name="known gap", status="FAIL", message="still leaks"),
                    Subtest(name="fixed meanwhile", status="PASS"),
                    Subtest(
                        name="a new failure",
                        status="FAIL",
                        message=f"{FAILURE} (it was {CANARY_SECRET}) <script>alert(1)</script>",
                        cites=['seed 000 §1: "MUST NOT forward raw sensitive values"'],
                    ),
                ],
            ),
            TestResult(test="/webmcp/imperative/events.html", status="TIMEOUT", message="hung"),
        ],
    )


@pytest.fixture
def written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    baseline_file = tmp_path / "baseline.yml"
    baseline_file.write_text(BASELINE_YAML, encoding="utf-8")
    baseline = Baseline.load(baseline_file)
    reports = [_run("native"), _run("polyfill")]
    previous = [_run("polyfill")]
    previous[0].results[0].subtests[3].status = "PASS"
    comparison = baseline.compare(reports)
    view = build_view("conformance", reports, comparison, baseline, diff(previous, reports))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "step-summary.md"))
    (tmp_path / "step-summary.md").write_text("# earlier steps\n", encoding="utf-8")
    write_reports(tmp_path / "out", view, {"findings.json": {"note": CANARY_SECRET}})
    return tmp_path


def test_every_file_is_written_and_none_carries_a_secret(written: Path) -> None:
    out = written / "out"
    names = sorted(p.name for p in out.iterdir())
    assert names == [
        "findings.json",
        "junit.xml",
        "report.html",
        "summary.md",
        "wptreport-native.json",
        "wptreport-polyfill.json",
    ]
    for path in [*out.iterdir(), written / "step-summary.md"]:
        text = path.read_text(encoding="utf-8")
        assert "HXCANARY" not in text, path.name
    assert MASK in (out / "wptreport-polyfill.json").read_text(encoding="utf-8")


def test_the_wptreport_marks_unexpected_results(written: Path) -> None:
    data = json.loads((written / "out" / "wptreport-polyfill.json").read_text(encoding="utf-8"))
    assert data["run_info"]["backend"] == "polyfill" and data["run_info"]["suite"] == "ua"
    subtests = {s["name"]: s for s in data["results"][0]["subtests"]}
    assert "expected" not in subtests["known gap"]  # as the baseline expects
    assert subtests["fixed meanwhile"]["expected"] == "FAIL"  # an unexpected pass
    assert subtests["a new failure"]["expected"] == "PASS"
    assert data["results"][1]["expected"] == "OK"


def test_junit_fails_only_what_is_unexpected_and_skips_what_is_expected(written: Path) -> None:
    root = ET.parse(written / "out" / "junit.xml").getroot()
    cases = {(case.get("classname"), case.get("name")): case for case in root.iter("testcase")}
    # A '/' ends a package, a dot inside a file name does not (Jenkins splits at dots).
    cls = "ua.polyfill.seeds.sensitive.x-sensitive_html"
    assert list(cases[(cls, "redacts fields")]) == []
    skipped = cases[(cls, "known gap")].find("skipped")
    assert skipped is not None and "issue 12" in (skipped.get("message") or "")
    unexpected_pass = cases[(cls, "fixed meanwhile")].find("failure")
    assert unexpected_pass is not None and unexpected_pass.get("type") == "UNEXPECTED_PASS"
    failure = cases[(cls, "a new failure")].find("failure")
    assert failure is not None and FAILURE in (failure.text or "")
    harness_status = cases[("ua.polyfill.webmcp.imperative.events_html", "(harness status)")]
    assert harness_status.find("error") is not None
    assert root.get("failures") == "4" and root.get("errors") == "2"
    assert root.get("skipped") is None  # junit-10.xsd has no skipped on <testsuites>
    assert all(case.get("time") is not None for case in cases.values())


def test_the_markdown_summary_is_appended_to_the_github_step_summary(written: Path) -> None:
    summary = (written / "out" / "summary.md").read_text(encoding="utf-8")
    assert "❌ unexpected results" in summary
    assert "| /seeds/sensitive | 2/4 ⚠ 2 | 2/4 ⚠ 2 |" in summary
    assert "**fixed**" not in summary and "**regressed** (1)" in summary
    assert "native: not in the previous run (nothing to compare)." in summary
    step = (written / "step-summary.md").read_text(encoding="utf-8")
    assert step.startswith("# earlier steps\n") and step.endswith(
        summary.replace(CANARY_SECRET, MASK)
    )


@pytest.mark.parametrize("kind", ["in a missing directory", "a directory"])
def test_a_step_summary_that_cannot_be_appended_to_is_said_and_costs_no_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    step = tmp_path / "gone" / "summary.md" if kind != "a directory" else tmp_path
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    run = _run("polyfill")
    view = build_view("t", [run], Baseline().compare([run]), Baseline())
    written = write_reports(tmp_path / "out", view)
    assert {p.name for p in written.files} == {
        "wptreport-polyfill.json",
        "junit.xml",
        "report.html",
        "summary.md",
    }
    assert written.step_summary is None
    assert written.step_summary_problem is not None
    assert str(step) in written.step_summary_problem
    reason = "No such file or directory" if kind != "a directory" else "Is a directory"
    assert reason in written.step_summary_problem


def test_page_text_in_the_html_is_escaped(written: Path) -> None:
    html = (written / "out" / "report.html").read_text(encoding="utf-8")
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_scrub_masks_secrets_of_known_shapes() -> None:
    text = scrub("key sk_live_abcdefghijklmnopqrstu, ghp_" + "a1" * 12 + ", HXCANARY-x-1, fine")
    assert text == f"key {MASK}, {MASK}, {MASK}, fine"


def test_page_text_cannot_write_markdown_into_the_summary(tmp_path: Path) -> None:
    """A ``\r`` in a name started a heading and a link in the GitHub step summary."""
    run = _run("polyfill")
    run.results[0].subtests[3].name = "form\r# Injected [click](https://evil.test/)\x1b[2J"
    run.results[0].subtests[3].message = "line\r## two\n<img src=x onerror=alert(1)>"
    view = build_view("t", [run], Baseline().compare([run]), Baseline())
    summary = write_reports(tmp_path, view).directory / "summary.md"
    lines = summary.read_text(encoding="utf-8").splitlines()
    assert "\r" not in summary.read_text(encoding="utf-8")
    assert not any(line.startswith("# Injected") or line.startswith("## two") for line in lines)
    [line] = [line for line in lines if "Injected" in line]
    # A URL in it, which GFM would autolink: the whole text is a code span, shown verbatim.
    assert (
        "`/seeds/sensitive/x-sensitive.html › form # Injected [click](https://evil.test/)\\x1b[2J`"
        in line
    )
    assert "<a " not in render(line)
    assert "\\<img" in line and "<img" not in line.replace("\\<img", "")


def test_long_page_provided_names_are_clipped_in_tables(tmp_path: Path) -> None:
    run = _run("polyfill")
    run.results[0].test = "/" + "very-long-segment-" * 30 + ".html"
    view = build_view("t", [run], Baseline().compare([run]), Baseline())
    summary = markdown(view)
    assert max(len(line) for line in summary.splitlines() if line.startswith("| ")) < 200
    assert "…" in summary


async def test_the_html_report_is_a_results_view_its_filters_and_links_work(
    written: Path, chromium_path: str
) -> None:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=chromium_path, args=launch_flags("polyfill")
        )
        try:
            page = await browser.new_page(viewport={"width": 1280, "height": 1000})
            await page.goto((written / "out" / "report.html").as_uri())
            assert await page.locator("#verdict").inner_text() == "Unexpected results"
            grid = page.locator("#grid")
            header = await grid.locator("thead th").all_inner_texts()
            assert header == [
                "test › subtest",
                "native",
                "polyfill",
                "vs baseline",
                "since previous",
            ]
            test = grid.locator("tbody.test", has_text="/seeds/sensitive/x-sensitive.html")
            row = test.locator("tr.subtest", has_text="a new failure")
            assert await row.locator("td.st").all_inner_texts() == ["FAIL ⧉", "FAIL ⧉"]
            assert await row.locator(".mark").first.inner_text() == "regression"
            fix = test.locator("tr.subtest", has_text="fixed meanwhile")
            assert await fix.locator(".mark").first.inner_text() == "fix"
            # The subtest that passed everywhere is folded away, and comes back.
            passing = test.locator("tr.subtest", has_text="redacts fields")
            assert not await passing.is_visible()
            await test.locator("button.toggle").click()
            assert await passing.is_visible()
            await page.locator("#show-passing").check()
            await test.locator("button.toggle").click()
            assert await passing.is_visible()  # shown by the filter, whatever the toggle
            # The filter box hides tests that do not match.
            other = grid.locator("tbody.test", has_text="/webmcp/imperative/events.html")
            await page.locator("#filter").fill("x-sensitive")
            assert await test.is_visible() and not await other.is_visible()
            await page.locator("#filter").fill("")
            # Only what differs from the baseline: the passes go away, the regressions stay.
            await page.locator("#only-differs").check()
            assert not await passing.is_visible() and await row.is_visible()
            assert await test.locator("tr.subtest", has_text="known gap").is_visible()  # native
            # A status links to its message; the trace link is there.
            await row.locator("td.st a").first.click()
            target = page.locator(".detail:target")
            assert FAILURE in await target.locator(".message").inner_text()
            assert await target.locator("a.trace").get_attribute("href") == "traces/x.jsonl"
            assert "regressed" in await page.locator("#diff").inner_text()
        finally:
            await browser.close()


def _audited(names: tuple[str, ...]) -> str:
    """summary.md of an audit whose page named its tools, subtests and messages ``names``:
    each a finding (a warning) and an unexpected failure."""
    run = _run("polyfill")
    run.results = [
        TestResult(
            test="/links/{index}",
            status="OK",
            subtests=[
                Subtest(name=name, status="FAIL", message=name, severity="warning", tool=name)
                for name in names
            ],
        )
    ]
    return markdown(build_view("links", [run], Baseline().compare([run]), Baseline()))


def test_page_text_in_the_summary_is_shown_as_written_and_never_becomes_a_link() -> None:
    """A tool named ``www.attacker.example`` (a valid WebMCP name) became a link in the
    GitHub step summary, and so did a URL a message quoted: GitHub's renderer read them as
    autolinks. Rendered by cmark-gfm, the summary has the elements harmless names give it."""
    inert(_audited(HOSTILE), _audited(HARMLESS))
