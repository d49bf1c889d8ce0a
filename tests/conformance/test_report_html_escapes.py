"""The HTML report shows the characters a reader would not see (controls, format
characters, lone surrogates) as the escapes JUnit, Markdown and the wptreport show."""

from __future__ import annotations

from harness.conformance.baseline import Baseline
from harness.conformance.escaping import one_line
from harness.conformance.junit import junit_xml
from harness.conformance.reports import build_view, html, markdown
from harness.conformance.results import Report, RunInfo, Subtest, TestResult

NAME = "bell \x07 and \x01 — 名前 \u202emoc.live\u202c"
MESSAGE = "ESC \x1b[2J clears\x00 and a lone \ud800"


def test_control_characters_in_page_text_are_shown_as_escapes_in_the_html() -> None:
    result = TestResult(
        test="/site/a\x01.html",
        status="OK",
        title="title \x02",
        subtests=[Subtest(name=NAME, status="FAIL", message=MESSAGE, evidence="ev \x03")],
    )
    report = Report(
        run_info=RunInfo(suite="site", backend="polyfill"),
        time_start=0,
        time_end=1,
        results=[result],
    )
    baseline = Baseline()
    comparison = baseline.compare([report])
    page = html(build_view("t", [report], comparison, baseline))
    assert not any(ch in page for ch in "\x00\x01\x02\x03\x07\x1b\u202e\u202c\ud800")
    for shown in ("\\x07", "\\x01", "\\u202e", "\\x1b[2J", "\\x00", "\\ud800", "\\x02", "\\x03"):
        assert shown in page, shown
    assert "名前" in page  # text a reader sees stays as it is
    # The same escapes as JUnit's and the Markdown summary's.
    junit = junit_xml("t", [report], baseline)
    summary = markdown(build_view("t", [report], comparison, baseline))
    assert "bell \\x07 and \\x01" in page and "bell \\x07 and \\x01" in junit
    assert "\\x07" in summary


def test_a_terminal_line_shows_a_lone_surrogate_as_an_escape() -> None:
    line = one_line("a lone \ud800\nsurrogate")
    assert line == "a lone \\ud800 surrogate" and line.encode("utf-8")
