"""Every report the project writes, read by the readers CI systems use.

One run of each suite, through the command a CI job runs: ``ua`` on both backends against a
baseline that lists one backend only; ``site`` on a page whose names and descriptions hold
control characters, a carriage return that would start a Markdown heading, bidi controls,
non-Latin text and a very long name; ``wpt`` on a WPT-shaped tree whose subtest names and
messages hold the same. Each ``junit.xml`` is fed to junitparser, xunitparser and junit2html
(from PyPI), checked against the rules of the Jenkins/Ant schema ``junit-10.xsd`` (no package
ships it: its rules are written out below) and GitLab's (unique test names, size caps); each
``wptreport`` to a reader that applies wpt.fyi's results processor's checks (``wptfyi.py``).
"""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import junitparser
import pytest
import xunitparser
from junit2htmlreport.parser import Junit

from tests.conformance import wptfyi
from tests.conformance.junit_rules import gitlab_problems, junit10_problems
from tests.conftest import PageServer
from tests.console_script import run_script
from tests.gfm import render

KINDS = ["ua", "site", "wpt"]
WPT_FIXTURES = Path(__file__).parent / "wpt"
UA_FILE = "/webmcp/imperative/frames.html"
UA_BASELINE = f"""
polyfill:
  {UA_FILE}:
    subtests:
      "a same-origin iframe's tools are in the catalog": {{status: FAIL, reason: "pretend"}}
"""
WPT_TEST = """<!doctype html>
<meta charset="utf-8">
<title>names no report format can take as they are</title>
<script src="/resources/testharness.js"></script>
<script src="/resources/testharnessreport.js"></script>
<script>
test(() => {}, "bell \\u0007 and nul-ish \\u0001 — 名前 ✓ \\u202emoc.live\\u202c");
test(() => { throw new Error("ESC \\u001b[2J clears\\r# Injected [click](https://evil.test/)"); },
     "form\\r# Injected heading [click](https://evil.test/)");
test(() => {}, "x".repeat(300));
test(() => { throw new Error("lone \\ud800 surrogate"); }, "lone \\ud800 surrogate");
</script>
"""


async def _run(kind: str, page_server: PageServer, base: Path) -> Path:
    """One run of the suite ``kind`` through the command; its report directory."""
    if kind == "ua":
        baseline = base / "ua-baseline.yml"
        baseline.write_text(UA_BASELINE, encoding="utf-8")
        args = ["ua", "--backend", "both", "--tests", UA_FILE, "--baseline", str(baseline)]
    elif kind == "site":
        url = page_server.url("audit_text.html")
        args = ["site", url, "--name", "text", "--expect-tool", "gone"]
    else:
        wpt = base / "wpt"
        wpt.mkdir()
        # The stand-in testharness.js of the WPT-shaped fixture tree (tests/conformance/wpt).
        shutil.copytree(WPT_FIXTURES / "resources", wpt / "resources")
        (wpt / "webmcp").mkdir()
        (wpt / "webmcp" / "names.html").write_text(WPT_TEST, encoding="utf-8")
        args = ["wpt", "--wpt-root", str(wpt), "--backend", "polyfill"]
    out = base / "out"
    code, stdout, err = await run_script(
        "conformance", *args, "--output", str(out), "--no-progress", timeout=400
    )
    assert code == 1, f"{kind}: {err}{stdout}"  # every run has unexpected results
    assert "Traceback" not in err, err  # page text (a lone surrogate) printed, never a crash
    return out


# One test per suite, every reader in it: the run is the costly part, made once.
@pytest.mark.timeout(480)
@pytest.mark.parametrize("kind", KINDS)
async def test_every_reader_takes_what_the_run_wrote(
    page_server: PageServer, tmp_path: Path, kind: str
) -> None:
    out = await _run(kind, page_server, tmp_path)
    junit = out / "junit.xml"
    root = ET.parse(junit).getroot()  # well-formed XML 1.0, or this raises

    # Jenkins' junit-10.xsd, and what CI keys test histories by.
    assert junit10_problems(root) == []
    assert all(case.get("time") is not None for case in root.iter("testcase"))
    for case in root.iter("testcase"):
        # No host, no port, no IP dots in test identities (Jenkins splits classnames at dots).
        assert not re.search(r"127[._]0|localhost|:\d{2,5}", case.get("classname") or "")
    assert gitlab_problems(junit) == []

    # junitparser, and its counts agree with the root's and with the Markdown summary.
    cases = [case for suite in junitparser.JUnitXml.fromfile(str(junit)) for case in suite]
    bad = (junitparser.Failure, junitparser.Error)
    failed = [c for c in cases if any(isinstance(r, bad) for r in c.result)]
    assert len(cases) == int(root.get("tests") or 0)
    assert len(failed) == int(root.get("failures") or 0) + int(root.get("errors") or 0)
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert len(failed) == len([line for line in summary.splitlines() if line.startswith("- [")])

    # xunitparser: it asserts its own totals, and properties unique across the file.
    with junit.open(encoding="utf-8") as handle:
        _, result = xunitparser.parse(handle)
    assert result.testsRun == len(cases) and len(result.failures) + len(result.errors) > 0

    # junit2html renders it.
    html = Junit(filename=str(junit)).html()
    first = cases[0].name or ""
    assert "<html" in html and first[:20].replace("&", "&amp;").replace("<", "&lt;") in html

    # wpt.fyi's results processor takes every wptreport.
    files = sorted(out.glob("wptreport-*.json"))
    runs = [wptfyi.read(path) for path in files]
    for run in runs:
        assert run.run_info["product"] == "chromium"
        assert run.summary and all(test.startswith("/") for test in run.summary)
    if kind == "ua":  # two configurations: two runs, side by side, told apart by run_info
        assert sorted(run.run_info["backend"] for run in runs) == ["native", "polyfill"]
        with pytest.raises(wptfyi.Refused, match="conflicting"):
            wptfyi.read(*files)
    if kind == "wpt":
        assert list(runs[0].summary) == ["/webmcp/names.html"]

    # Markdown and HTML hold page text as text.
    assert "\r" not in summary and "\x1b" not in summary and "\x07" not in summary
    lines = summary.splitlines()
    assert not any(line.startswith("# Injected") for line in lines)
    assert all(len(line) < 400 for line in lines), "a table row a long name made unreadable"
    assert "<a " not in render(summary)  # GitHub's renderer: no link, none autolinked
    assert "<script>alert" not in (out / "report.html").read_text(encoding="utf-8")


async def test_the_reader_refuses_what_wpt_fyi_refuses(tmp_path: Path) -> None:
    def report(**fields: object) -> Path:
        data = {
            "run_info": {
                "product": "chromium",
                "browser_version": "156",
                "os": "linux",
                "revision": "a" * 40,
            },
            "results": [{"test": "/a.html", "status": "OK", "subtests": []}],
            **fields,
        }
        path = tmp_path / f"r{len(list(tmp_path.iterdir()))}.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        return path

    wptfyi.read(report())
    url_ids = [{"test": "http://127.0.0.1:8777/", "status": "OK", "subtests": []}]
    with pytest.raises(wptfyi.Refused, match="not a path"):
        wptfyi.read(report(results=url_ids))
    with pytest.raises(wptfyi.Refused, match=r"no browser wpt\.fyi knows"):
        wptfyi.read(
            report(
                run_info={
                    "product": "webmcp-harness",
                    "browser_version": "1",
                    "os": "linux",
                    "revision": "a" * 40,
                }
            )
        )
    with pytest.raises(wptfyi.Refused, match="revision"):
        wptfyi.read(
            report(
                run_info={
                    "product": "chromium",
                    "browser_version": "1",
                    "os": "linux",
                    "revision": None,
                }
            )
        )


def test_the_reader_fails_where_wpt_fyi_fails_to_store_a_result_or_loses_one() -> None:
    # results-processor/wptreport.py's write_result_directory: directory + test, opened 'wb'.
    refused = [
        (["/mine/"], "IsADirectoryError"),
        (["/a", "/a/b"], "FileExistsError"),
        (["/a/b", "/a"], "IsADirectoryError"),
        (["/a/b", "/a//b"], "stored over"),
        (["/a/./b", "/a/b"], "stored over"),
        (["/../../x"], "outside"),
        (["/a\x00"], "ValueError"),
        (["/a\ud800"], "UnicodeEncodeError"),
        (["/" + "x" * 256], "File name too long"),
        (["/" + "x/" * 600 + "y"], "Cloud Storage"),
    ]
    for tests, message in refused:
        with pytest.raises(wptfyi.Refused, match=message):
            wptfyi.read_tests(tests)
