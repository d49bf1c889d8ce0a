"""The report directory: wptreport JSON, JUnit XML, HTML and Markdown — for CI and people.

The HTML report is opened in Chromium and photographed: the results table and a failure
message must be visible. The screenshot is kept as a test artifact in
``test-results/<test>/`` (never in the repository).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from playwright.async_api import async_playwright

from harness.browser.chromium import QUIET_FLAGS
from harness.conformance.baseline import Baseline, diff
from harness.conformance.reports import MASK, build_view, scrub, write_reports
from harness.conformance.results import Report, RunInfo, Subtest, TestResult

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
    cls = "polyfill./seeds/sensitive/x-sensitive.html"
    assert list(cases[(cls, "redacts fields")]) == []
    skipped = cases[(cls, "known gap")].find("skipped")
    assert skipped is not None and "issue 12" in (skipped.get("message") or "")
    unexpected_pass = cases[(cls, "fixed meanwhile")].find("failure")
    assert unexpected_pass is not None and unexpected_pass.get("type") == "UNEXPECTED_PASS"
    failure = cases[(cls, "a new failure")].find("failure")
    assert failure is not None and FAILURE in (failure.text or "")
    harness_status = cases[("polyfill./webmcp/imperative/events.html", "(harness status)")]
    assert harness_status.find("error") is not None
    assert root.get("failures") == "4" and root.get("errors") == "2"


def test_the_markdown_summary_is_appended_to_the_github_step_summary(written: Path) -> None:
    summary = (written / "out" / "summary.md").read_text(encoding="utf-8")
    assert "❌ unexpected results" in summary
    assert "| `/seeds/sensitive` | 2/4 ⚠ 2 | 2/4 ⚠ 2 |" in summary
    assert "**improved** (1)" not in summary and "**regressed** (1)" in summary
    step = (written / "step-summary.md").read_text(encoding="utf-8")
    assert step.startswith("# earlier steps\n") and step.endswith(
        summary.replace(CANARY_SECRET, MASK)
    )


def test_page_text_in_the_html_is_escaped(written: Path) -> None:
    html = (written / "out" / "report.html").read_text(encoding="utf-8")
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_scrub_masks_secrets_of_known_shapes() -> None:
    text = scrub("key sk_live_abcdefghijklmnopqrstu, ghp_" + "a1" * 12 + ", HXCANARY-x-1, fine")
    assert text == f"key {MASK}, {MASK}, {MASK}, fine"


async def test_the_html_report_in_chromium_shows_the_table_and_a_failure(
    written: Path, chromium_path: str, request: pytest.FixtureRequest
) -> None:
    artifacts = Path(request.config.rootpath) / "test-results" / "conformance-html-report"
    artifacts.mkdir(parents=True, exist_ok=True)
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=chromium_path, args=list(QUIET_FLAGS)
        )
        try:
            page = await browser.new_page(viewport={"width": 1280, "height": 1000})
            await page.goto((written / "out" / "report.html").as_uri())
            table = page.locator("#areas")
            await table.wait_for(state="visible")
            assert await table.locator("td", has_text="/seeds/sensitive").is_visible()
            assert await table.locator("th", has_text="polyfill").is_visible()
            message = page.locator("#unexpected .message", has_text=FAILURE).first
            await message.scroll_into_view_if_needed()
            assert await message.is_visible()
            assert await page.locator("#verdict").inner_text() == "Unexpected results"
            shot = artifacts / "report.png"
            await page.screenshot(path=str(shot), full_page=True)
            assert shot.stat().st_size > 10_000
        finally:
            await browser.close()
