"""The committed reference run (``make reports`` writes ``reports/conformance/``): the user-agent
suite on both backends and the audit of every bundled site, with no secret in it, in the
shapes CI readers take (junit-10.xsd's rules, GitLab's, xunitparser, wpt.fyi's checks)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xunitparser
from harness.sites.evil_app import planted

from harness.conformance.ua.suite import all_files, subtest_count
from tests.conformance import wptfyi
from tests.conformance.junit_rules import gitlab_problems, junit10_problems

REPORTS = Path(__file__).resolve().parents[2] / "reports" / "conformance"


def _wptreport(path: Path) -> dict:  # type: ignore[type-arg]
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_ua_suite_ran_on_both_backends_side_by_side() -> None:
    native = _wptreport(REPORTS / "ua" / "wptreport-native.json")
    polyfill = _wptreport(REPORTS / "ua" / "wptreport-polyfill.json")
    for report, backend in ((native, "native"), (polyfill, "polyfill")):
        assert report["run_info"]["backend"] == backend
        assert sum(len(r["subtests"]) for r in report["results"]) == subtest_count(all_files())
    names = [(r["test"], sorted(s["name"] for s in r["subtests"])) for r in native["results"]]
    assert names == [
        (r["test"], sorted(s["name"] for s in r["subtests"])) for r in polyfill["results"]
    ]
    summary = (REPORTS / "ua" / "summary.md").read_text(encoding="utf-8")
    assert "✅ as expected" in summary and "| native | polyfill |" in summary


def test_every_bundled_site_was_audited() -> None:
    sites = _wptreport(REPORTS / "sites" / "wptreport-polyfill.json")
    assert [r["test"] for r in sites["results"]] == [
        "/todo/{index}",
        "/shop/{index}",
        "/keys/{index}",
        "/mail/{index}",
    ]
    assert all(s["status"] == "PASS" for r in sites["results"] for s in r["subtests"])
    evil = json.loads((REPORTS / "evil" / "findings.json").read_text(encoding="utf-8"))
    found = {(f["code"], f["tool"]) for f in evil["sites"][0]["findings"]}
    assert {(d["code"], d["tool"]) for d in planted()} <= found


def test_no_secret_in_the_reports() -> None:
    files = [p for p in REPORTS.rglob("*") if p.is_file()]
    assert len(files) >= 14
    for path in files:
        assert "HXCANARY" not in path.read_text(encoding="utf-8"), path


@pytest.mark.parametrize("run", ["ua", "sites", "evil"])
def test_ci_readers_take_the_committed_reports(run: str) -> None:
    junit = REPORTS / run / "junit.xml"
    assert junit10_problems(ET.parse(junit).getroot()) == []
    assert gitlab_problems(junit) == []
    with junit.open(encoding="utf-8") as handle:
        xunitparser.parse(handle)
    for report in sorted((REPORTS / run).glob("wptreport-*.json")):
        assert wptfyi.read(report).run_info["product"] == "chromium"
