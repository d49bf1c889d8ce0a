"""What a WPT test's page reports reaches every report whole: subtests that share a name
each keep their result (wptrunner logs every one; wpt.fyi keeps only the first of a name, so
the reports number the second on: ``name [2]``), and a
lone surrogate a JavaScript string may hold arrives well-formed (U+FFFD), so it can neither
crash the terminal summary nor leave ``\\ud800`` in a wptreport.
"""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness.conformance.baseline import Baseline, diff
from harness.conformance.flakes import merge
from harness.conformance.junit import junit_xml
from harness.conformance.reports import build_view
from harness.conformance.results import Report, RunInfo, Subtest, TestResult
from harness.conformance.wpt.runner import _Collected
from harness.conformance.wpt.server import REPORT_PREFIX
from tests.console_script import run_script

WPT_FIXTURES = Path(__file__).parent / "wpt"
DUPLICATE = """<!doctype html>
<meta charset="utf-8">
<script src="/resources/testharness.js"></script>
<script src="/resources/testharnessreport.js"></script>
<script>
test(() => { assert_equals(1, 2, "the first one fails"); }, "same name");
test(() => {}, "same name");
</script>
"""
SURROGATE = """<!doctype html>
<meta charset="utf-8">
<script src="/resources/testharness.js"></script>
<script src="/resources/testharnessreport.js"></script>
<script>
test(() => { throw new Error("a lone surrogate \\uD800 in the message"); }, "lone \\uDC00 name");
</script>
"""


def _heard(*messages: dict[str, object]) -> _Collected:
    """What the runner collects from the report script's console messages."""
    collected = _Collected()
    for message in messages:
        collected.heard(REPORT_PREFIX + json.dumps(message))
    return collected


def _report(subtests: list[Subtest]) -> Report:
    result = TestResult(test="/webmcp/dup.html", status="OK", subtests=subtests)
    return Report(run_info=RunInfo(backend="polyfill"), time_start=0, time_end=1, results=[result])


def test_subtests_that_share_a_name_each_keep_their_result() -> None:
    fail = {"name": "same name", "status": 1, "message": "the first one fails"}
    ok = {"name": "same name", "status": 0, "message": None}
    # Results as they finish, then the verdict listing both (nothing more to add) …
    collected = _heard({"kind": "result", **fail}, {"kind": "result", **ok})
    collected.heard(
        REPORT_PREFIX + json.dumps({"kind": "complete", "status": 0, "tests": [fail, ok]})
    )
    assert [(s.name, s.status) for s in collected.results] == [
        ("same name", "FAIL"),
        ("same name", "PASS"),
    ]
    assert collected.repeated() == (
        "subtest names used more than once, numbered from the second: 'same name' (2 results)"
    )
    assert [s.name for s in collected.subtests()] == ["same name", "same name [2]"]
    # … or only the first result heard before the verdict: the second comes from the verdict.
    late = _heard(
        {"kind": "result", **fail}, {"kind": "complete", "status": 0, "tests": [fail, ok]}
    )
    assert [s.status for s in late.results] == ["FAIL", "PASS"]

    report = _report(list(collected.results))
    comparison = Baseline().compare([report])
    assert [u.describe() for u in comparison.unexpected] == [
        "[polyfill] /webmcp/dup.html › same name: FAIL (expected PASS)"
    ]
    # JUnit: two cases, the failure among them; the HTML grid: two rows.
    cases = ET.fromstring(junit_xml("t", [report], Baseline())).iter("testcase")
    assert [(c.get("name"), c.find("failure") is not None) for c in cases] == [
        ("same name", True),
        ("same name [2]", False),
    ]
    view = build_view("t", [report], comparison, Baseline())
    assert [row.name for row in view.grid[0].rows] == ["same name", "same name [2]"]
    assert view.grid[0].rows[0].cells["polyfill"].status == "FAIL"
    # --diff compares each of them: the first regressed even though the second passed.
    before = _report([Subtest(name="same name", status="PASS")] * 2)
    assert [c.describe() for c in diff([before], [report]).regressed] == [
        "[polyfill] /webmcp/dup.html › same name: PASS → FAIL"
    ]
    # --rerun-failures: the first is rerun against the first, never the second's pass.
    again = _report([s.model_copy(deep=True) for s in collected.results])
    merge(report.results[0], again.results[0])
    assert report.results[0].subtests[0].reruns == ["FAIL"]
    assert report.results[0].subtests[0].outcome == "FAIL"


def test_a_baseline_updated_from_a_repeated_name_expects_both_results(tmp_path: Path) -> None:
    report = _report([Subtest(name="x", status="FAIL"), Subtest(name="x", status="PASS")])
    path = tmp_path / "baseline.yml"
    Baseline().updated([report]).save(path)
    entry = Baseline.load(path).expectation("polyfill", "/webmcp/dup.html").subtests["x"]
    assert (entry.status, entry.intermittent) == ("PASS", ["FAIL"])
    assert "2 subtests share this name (FAIL, PASS)" in entry.reason
    assert not Baseline.load(path).compare([report]).unexpected


def test_a_lone_surrogate_from_the_page_arrives_well_formed() -> None:
    bad = {"name": "lone \ud800 name", "status": 1, "message": "lone \udc00 message"}
    collected = _heard({"kind": "result", **bad})
    collected.heard(
        REPORT_PREFIX
        + json.dumps({"kind": "complete", "status": 1, "message": "x \ud800", "tests": [bad]})
    )
    [subtest] = collected.results
    assert (subtest.name, subtest.message) == ("lone \ufffd name", "lone \ufffd message")
    assert collected.message == "x \ufffd"


@pytest.mark.timeout(300)
async def test_the_command_keeps_both_results_and_prints_a_lone_surrogate(tmp_path: Path) -> None:
    wpt = tmp_path / "wpt"
    shutil.copytree(WPT_FIXTURES / "resources", wpt / "resources")
    (wpt / "webmcp").mkdir()
    (wpt / "webmcp" / "dup.https.html").write_text(DUPLICATE, encoding="utf-8")
    (wpt / "webmcp" / "surrogate.https.html").write_text(SURROGATE, encoding="utf-8")
    out = tmp_path / "out"
    code, stdout, err = await run_script(
        "conformance", "wpt", "--wpt-root", str(wpt), "--backend", "polyfill",
        "--output", str(out), "--no-progress", timeout=240,
    )  # fmt: skip
    assert "Traceback" not in err and code == 1, err
    assert "polyfill: 1/3 passed" in stdout
    assert (
        "unexpected: [polyfill] /webmcp/dup.https.html › same name: FAIL (expected PASS)" in stdout
    )
    assert "lone \ufffd name" in stdout
    text = (out / "wptreport-polyfill.json").read_text(encoding="utf-8")
    assert "\\ud800" not in text.lower() and "\\udc00" not in text.lower()
    results = {r["test"]: r for r in json.loads(text)["results"]}
    dup = results["/webmcp/dup.https.html"]
    assert [(s["name"], s["status"]) for s in dup["subtests"]] == [
        ("same name", "FAIL"),
        ("same name [2]", "PASS"),
    ]
    assert "'same name' (2 results)" in dup["message"]
    assert results["/webmcp/surrogate.https.html"]["subtests"][0]["message"] == (
        "a lone surrogate \ufffd in the message"
    )
