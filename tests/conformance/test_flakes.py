"""``--rerun-failures N``: a failure that passes on a rerun is FLAKY — never a pass, expected
only when the baseline lists it as intermittent — and a failure that fails every rerun stays
a failure. The decisions on plain reports first; then the command on a site this test serves,
one of whose pages is bad only the first time it is loaded."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from harness.conformance.baseline import Baseline
from harness.conformance.flakes import rerun_failures
from harness.conformance.reports import build_view, markdown
from harness.conformance.results import Report
from tests.conformance.test_baseline import report
from tests.conftest import listen
from tests.console_script import run_script


class Reruns:
    """A suite whose subtests give the statuses listed, one per run after the first."""

    def __init__(self, **later: list[str]) -> None:
        self.later = later
        self.asked: list[list[str]] = []

    async def __call__(self, backend: str, tests: list[str]) -> Report:
        self.asked.append(tests)
        return report(**{name: statuses.pop(0) for name, statuses in self.later.items()})


async def test_a_failure_that_passes_on_a_rerun_is_flaky_and_fails_the_run() -> None:
    run = report(steady="PASS", racy="FAIL", broken="FAIL")
    again = Reruns(steady=["PASS", "PASS"], racy=["PASS", "FAIL"], broken=["FAIL", "FAIL"])
    await rerun_failures([run], Baseline(), 2, again)
    racy, broken = run.results[0].subtests[1:]
    assert (racy.status, racy.reruns, racy.outcome) == ("FAIL", ["PASS"], "FLAKY")
    assert (broken.status, broken.reruns, broken.outcome) == ("FAIL", ["FAIL", "FAIL"], "FAIL")
    assert run.results[0].subtests[0].reruns == []  # a pass is never rerun
    comparison = Baseline().compare([run])
    assert {(u.subtest, u.status) for u in comparison.unexpected} == {
        ("racy", "FLAKY"),
        ("broken", "FAIL"),
    }
    assert not comparison.unexpected_passes  # flaky is no pass
    assert run.counts() == Counter({"PASS": 1, "FLAKY": 1, "FAIL": 1})


async def test_a_known_intermittent_flake_is_expected_and_updating_records_one(
    tmp_path: Path,
) -> None:
    path = tmp_path / "baseline.yml"
    path.write_text(
        "polyfill:\n  /a.html:\n    subtests:\n"
        "      racy: {status: PASS, reason: 'a known race', intermittent: [FAIL]}\n",
        encoding="utf-8",
    )
    baseline = Baseline.load(path)
    run = report(racy="FAIL", fresh="FAIL")
    again = Reruns(fresh=["PASS"])
    await rerun_failures([run], baseline, 1, again)
    assert again.asked == [["/a.html"]]
    racy = run.results[0].subtests[0]
    assert racy.reruns == []  # its failure is a known one: not rerun
    comparison = baseline.compare([run])
    assert [(u.subtest, u.status) for u in comparison.unexpected] == [("fresh", "FLAKY")]
    assert comparison.expected_failures == 1
    view = build_view("t", [run], comparison, baseline)
    summary = markdown(view)
    assert "- [polyfill] /a.html › fresh: **FLAKY** (expected PASS)" in summary
    assert "1 flaky" in summary
    updated = baseline.updated([run]).expectation("polyfill", "/a.html").subtests
    assert updated["fresh"].status == "PASS" and updated["fresh"].intermittent == ["FAIL"]
    assert baseline.updated([run]).compare([run]).unexpected == []


# -- the command -------------------------------------------------------------------------------


@pytest.fixture
async def flaky_site() -> AsyncIterator[str]:
    """``/once.html`` is bad (a deleting tool that declares nothing) the first time only;
    ``/bad.html`` every time."""
    loads: Counter[str] = Counter()

    def page(annotations: dict[str, bool]) -> str:
        return (
            "<!doctype html><meta charset=utf-8><script>document.modelContext.registerTool({"
            "name: 'delete_items', description: 'Deletes every item of the list.',"
            "inputSchema: {type: 'object', properties: {}},"
            f"annotations: {json.dumps(annotations)}, execute: () => ({{deleted: 0}})}});"
            "</script>"
        )

    async def serve(request: web.Request) -> web.Response:
        name = request.match_info["name"]
        loads[name] += 1
        bad = name == "bad.html" or loads[name] == 1
        annotations = {} if bad else {"destructiveHint": True, "openWorldHint": False}
        return web.Response(text=page(annotations), content_type="text/html")

    app = web.Application()
    app.router.add_get("/{name}", serve)
    runner = web.AppRunner(app)
    await runner.setup()
    port = await listen(runner)
    yield f"http://127.0.0.1:{port}"
    await runner.cleanup()


@pytest.mark.slow  # a `conformance` run with its reruns (~6 s)
async def test_the_command_reports_flaky_and_consistent_failures_apart(
    flaky_site: str, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    code, stdout, err = await run_script(
        "conformance",
        "site",
        f"{flaky_site}/once.html",
        f"{flaky_site}/bad.html",
        "--rerun-failures",
        "2",
        "--output",
        str(out),
        "--no-progress",
        timeout=240,
    )
    assert code == 1, err + stdout
    assert (
        "/site/once.html › consequential-unannotated · delete_items: FLAKY (expected PASS)"
        in stdout
    )
    assert (
        "/site/bad.html › consequential-unannotated · delete_items: FAIL (expected PASS)" in stdout
    )
    report = json.loads((out / "wptreport-polyfill.json").read_text(encoding="utf-8"))
    reruns = {
        r["test"]: next(
            s for s in r["subtests"] if s["name"] == "consequential-unannotated · delete_items"
        )
        for r in report["results"]
    }
    assert reruns["/site/once.html"]["status"] == "FAIL"  # the first run's status, kept
    assert reruns["/site/once.html"]["reruns"] == ["PASS"]
    assert reruns["/site/bad.html"]["reruns"] == ["FAIL", "FAIL"]
    cases = {
        (c.get("classname"), c.get("name")): c
        for c in ET.parse(out / "junit.xml").getroot().iter("testcase")
    }
    flaky = cases[("site.polyfill.site.once_html", "consequential-unannotated · delete_items")]
    failure = flaky.find("failure")
    assert failure is not None and failure.get("type") == "FLAKY"
    assert "FAIL, then PASS on rerun 1" in (failure.get("message") or "")
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "1 flaky" in summary
