"""Expected results: unexpected failures and unexpected passes both fail a run; updating
keeps the reasons; --diff says what regressed, was fixed, is new or gone. No browser needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.conformance.baseline import NEW_REASON, Baseline, diff
from harness.conformance.results import Report, RunInfo, Subtest, TestResult, load_reports
from harness.errors import ConfigError
from tests.console_script import run_script


def report(backend: str = "polyfill", **subtests: str) -> Report:
    """One test, /a.html, whose subtests have the given statuses."""
    return Report(
        run_info=RunInfo(suite="ua", backend=backend),
        time_start=0,
        time_end=1,
        results=[
            TestResult(
                test="/a.html",
                status="OK",
                subtests=[Subtest(name=name, status=status) for name, status in subtests.items()],  # type: ignore[arg-type]
            )
        ],
    )


BASELINE_YAML = """
polyfill:
  /a.html:
    subtests:
      known gap: {status: FAIL, reason: "issue 12: not fixed yet"}
"""


@pytest.fixture
def baseline(tmp_path: Path) -> Baseline:
    path = tmp_path / "baseline.yml"
    path.write_text(BASELINE_YAML, encoding="utf-8")
    return Baseline.load(path)


def test_results_as_expected_pass_the_run(baseline: Baseline) -> None:
    comparison = baseline.compare([report(works="PASS", **{"known gap": "FAIL"})])
    assert comparison.unexpected == []
    assert comparison.expected_failures == 1


def test_an_unexpected_failure_fails_the_run_and_is_marked(baseline: Baseline) -> None:
    run = report(works="FAIL", **{"known gap": "FAIL"})
    comparison = baseline.compare([run])
    assert [(u.subtest, u.status, u.expected) for u in comparison.unexpected] == [
        ("works", "FAIL", "PASS")
    ]
    assert comparison.unexpected_failures and not comparison.unexpected_passes
    assert run.results[0].subtests[0].expected == "PASS"  # wptreport's convention


def test_an_unexpected_pass_fails_the_run_too(baseline: Baseline) -> None:
    comparison = baseline.compare([report(works="PASS", **{"known gap": "PASS"})])
    [unexpected] = comparison.unexpected
    assert (unexpected.subtest, unexpected.status, unexpected.expected) == (
        "known gap",
        "PASS",
        "FAIL",
    )
    assert unexpected.is_pass and comparison.unexpected_passes == [unexpected]


def test_the_baseline_is_per_backend(baseline: Baseline) -> None:
    comparison = baseline.compare([report("native", **{"known gap": "FAIL"})])
    assert [u.backend for u in comparison.unexpected] == ["native"]


def test_a_test_level_status_is_compared_too(baseline: Baseline) -> None:
    run = report(works="PASS", **{"known gap": "FAIL"})
    run.results[0].status = "CRASH"
    [unexpected] = baseline.compare([run]).unexpected
    assert (unexpected.subtest, unexpected.status, unexpected.expected) == (None, "CRASH", "OK")


def test_entries_no_result_matched_are_reported_as_stale(baseline: Baseline) -> None:
    comparison = baseline.compare([report(works="PASS")])
    assert comparison.stale == ["[polyfill] /a.html › known gap"]


def test_updating_keeps_reasons_and_marks_new_entries(baseline: Baseline, tmp_path: Path) -> None:
    run = report(works="PASS", **{"known gap": "FAIL", "new gap": "TIMEOUT"})
    run.results[0].subtests[2].message = "no verdict within 20 s"
    updated = baseline.updated([run, report("native", other="FAIL")])
    path = tmp_path / "new.yml"
    updated.save(path)
    again = Baseline.load(path)
    polyfill = again.expectation("polyfill", "/a.html").subtests
    assert polyfill["known gap"].reason == "issue 12: not fixed yet"
    assert polyfill["new gap"].status == "TIMEOUT"
    assert polyfill["new gap"].reason == NEW_REASON + "no verdict within 20 s"
    assert "works" not in polyfill
    assert again.expectation("native", "/a.html").subtests["other"].status == "FAIL"
    assert again.compare([run]).unexpected == []


def test_updating_one_backend_leaves_the_other(baseline: Baseline) -> None:
    updated = baseline.updated([report("native", works="PASS")])
    assert "known gap" in updated.expectation("polyfill", "/a.html").subtests


def test_a_known_race_may_give_either_status(tmp_path: Path) -> None:
    path = tmp_path / "race.yml"
    path.write_text(
        "polyfill:\n  /a.html:\n    subtests:\n      racy: {status: FAIL, reason: r, intermittent: [PASS]}\n",
        encoding="utf-8",
    )
    baseline = Baseline.load(path)
    assert baseline.compare([report(racy="PASS")]).unexpected == []
    assert baseline.compare([report(racy="FAIL")]).unexpected == []
    assert [u.status for u in baseline.compare([report(racy="TIMEOUT")]).unexpected] == ["TIMEOUT"]
    kept = baseline.updated([report(racy="PASS")]).expectation("polyfill", "/a.html").subtests
    assert kept["racy"].intermittent == ["PASS"] and kept["racy"].reason == "r"


def test_diff_says_regressed_fixed_new_and_gone() -> None:
    before = report(a="FAIL", b="PASS", c="FAIL", gone="PASS")
    after = report(a="PASS", b="FAIL", c="TIMEOUT", new="PASS", broken="FAIL")
    changes = diff([before], [after])
    assert [c.subtest for c in changes.fixed] == ["a"]
    assert [c.subtest for c in changes.regressed] == ["b", "broken"]  # a new failure regressed
    assert [c.subtest for c in changes.new] == ["new"]
    assert [c.subtest for c in changes.gone] == ["gone"]
    assert [c.subtest for c in changes.changed] == ["c"]
    assert changes.fixed[0].describe() == "[polyfill] /a.html › a: FAIL → PASS"
    assert changes.regressed[1].describe() == "[polyfill] /a.html › broken: new, FAIL"
    assert changes.gone[0].describe() == "[polyfill] /a.html › gone: gone, was PASS"


def test_a_backend_the_previous_run_lacked_is_named_once_not_listed_result_by_result() -> None:
    changes = diff([report(a="PASS")], [report(a="FAIL"), report("native", a="FAIL", b="PASS")])
    assert [c.describe() for c in changes.regressed] == ["[polyfill] /a.html › a: PASS → FAIL"]
    assert changes.absent == ["native"] and not changes.new


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("- a list", "maps backend names"),
        ("polyfill: 3", "must map test paths"),
        (
            "polyfill:\n  /a.html:\n    subtests:\n      x: {state: FAIL}\n",
            "status, reason and subtests",
        ),
        ("polyfill: [unclosed", "cannot read the baseline"),
    ],
)
def test_a_bad_baseline_says_what_is_wrong(tmp_path: Path, text: str, why: str) -> None:
    path = tmp_path / "bad.yml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=why):
        Baseline.load(path)


def test_a_missing_baseline_expects_every_pass(tmp_path: Path) -> None:
    assert Baseline.load(tmp_path / "none.yml").compare([report(x="FAIL")]).unexpected


def test_load_reports_reads_a_file_or_a_directory_and_refuses_other_files(tmp_path: Path) -> None:
    (tmp_path / "wptreport-polyfill.json").write_text(report(x="PASS").to_json(), encoding="utf-8")
    (tmp_path / "wptreport-native.json").write_text(report("native").to_json(), encoding="utf-8")
    assert [r.run_info.backend for r in load_reports(tmp_path)] == ["native", "polyfill"]
    (tmp_path / "junk.json").write_text("{]", encoding="utf-8")
    with pytest.raises(ConfigError, match="not a wptreport JSON file"):
        load_reports(tmp_path / "junk.json")
    with pytest.raises(ConfigError, match="no wptreport here"):
        load_reports(tmp_path / "missing.json")


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (
            'polyfill:\n  /x/page.html:\n    subtests:\n      "a · b": {status: MAYBE}\n',
            r"\[polyfill\] /x/page.html › a · b: status 'MAYBE' is no subtest status; "
            "use one of PASS, FAIL, TIMEOUT, NOTRUN, PRECONDITION_FAILED",
        ),
        (
            "polyfill:\n  /a.html:\n    subtests:\n      x: {status: PASS, intermittent: [fail]}\n",
            r"\[polyfill\] /a.html › x: intermittent 'fail' is no subtest status",
        ),
        (
            "native:\n  /a.html: {status: FLAKY}\n",
            r"\[native\] /a.html: status 'FLAKY' is no test status; use one of OK, ERROR",
        ),
        (
            "native:\n  /a.html:\n    subtests:\n      x: {status: OK}\n",
            r"\[native\] /a.html › x: status 'OK' is no subtest status",
        ),
    ],
)
def test_a_status_no_wptreport_has_is_refused(tmp_path: Path, text: str, why: str) -> None:
    path = tmp_path / "bad.yml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=why):
        Baseline.load(path)


async def test_the_command_refuses_such_a_baseline_as_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "base.yml"
    path.write_text("polyfill:\n  /x/page.html:\n    status: MAYBE\n", encoding="utf-8")
    code, _, err = await run_script(
        "conformance", "site", "http://127.0.0.1:9/page.html", "--name", "x",
        "--baseline", str(path), "--output", str(tmp_path / "out"), "--no-progress",
    )  # fmt: skip
    assert code == 2, err
    assert "[polyfill] /x/page.html: status 'MAYBE' is no test status" in err
    assert "Traceback" not in err and not (tmp_path / "out").exists()


def test_a_previous_report_with_a_lone_surrogate_is_read_well_formed(tmp_path: Path) -> None:
    # JSON can escape a lone surrogate; a wptreport written elsewhere may hold one.
    text = report(x="FAIL").to_json().replace('"name": "x"', '"name": "x \\ud800"')
    (tmp_path / "wptreport-polyfill.json").write_text(text, encoding="utf-8")
    [previous] = load_reports(tmp_path)
    assert previous.results[0].subtests[0].name == "x \ufffd"
