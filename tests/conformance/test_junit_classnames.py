"""JUnit class names: each distinct test id its own (classname, name) pairs, and the names
CI histories key on unchanged where no two ids meet."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import junitparser

from harness.conformance.baseline import Baseline
from harness.conformance.junit import classname, classnames, junit_xml
from harness.conformance.results import Report, RunInfo, Subtest, TestResult
from tests.conformance.junit_rules import gitlab_problems, junit10_problems

# Distinct ids that the `.` → `_` of a segment maps to one class, and one that meets none.
MEETING = ["/coll/page.html?v=1.2", "/coll/page.html?v=1_2"]
ALONE = "/coll/other.html"


def _report(tests: list[str]) -> Report:
    results = [
        TestResult(
            test=test,
            status="OK",
            subtests=[
                Subtest(name="secret-in-output · z_settings", status="FAIL"),
                Subtest(name="(harness status)", status="PASS"),  # the harness's own name
            ],
        )
        for test in tests
    ]
    info = RunInfo(suite="site", backend="polyfill")
    return Report(run_info=info, time_start=0, time_end=1, results=results)


def test_distinct_ids_never_share_a_class_and_other_classes_keep_their_names(
    tmp_path: Path,
) -> None:
    text = junit_xml("t", [_report([*MEETING, ALONE])], Baseline())
    path = tmp_path / "junit.xml"
    path.write_text(text, encoding="utf-8")
    keys = [
        (case.classname, case.name)
        for suite in junitparser.JUnitXml.fromfile(str(path))
        for case in suite
    ]
    assert len(keys) == len(set(keys)) == 6
    # Unique by their classes, not by renaming one id's cases: each keeps its names.
    assert {name for _, name in keys} == {"secret-in-output · z_settings", "(harness status)"}
    by_suite = {
        suite.get("name"): {case.get("classname") for case in suite.iter("testcase")}
        for suite in ET.fromstring(text).iter("testsuite")
    }
    assert len({min(classes) for classes in by_suite.values()}) == 3
    assert gitlab_problems(path) == [] and junit10_problems(ET.fromstring(text)) == []
    owners = classnames("site", "polyfill", [*MEETING, ALONE])
    assert owners[ALONE] == classname("site", "polyfill", ALONE) == "site.polyfill.coll.other_html"
    shared = "site.polyfill.coll.page_html?v=1_2"
    assert owners[MEETING[0]] != owners[MEETING[1]]
    assert all(owners[test].startswith(shared + "~") for test in MEETING)
    # The same id gets the same class in every run, whatever else ran.
    assert classnames("site", "polyfill", [*reversed(MEETING)]) == {
        test: owners[test] for test in MEETING
    }
    # One id alone is never renamed.
    assert classnames("site", "polyfill", MEETING[:1]) == {MEETING[0]: shared}


def test_a_test_id_listed_twice_still_gives_unique_pairs() -> None:
    root = ET.fromstring(junit_xml("t", [_report([ALONE, ALONE])], Baseline()))
    keys = [(c.get("classname"), c.get("name")) for c in root.iter("testcase")]
    assert len(keys) == len(set(keys)) == 4
