"""``conformance wpt`` on a small web-platform-tests-shaped tree this test writes itself, with
a stand-in testharness.js (the project ships no WPT file): per-subtest results are collected
as they finish, so they survive a page that hangs and a renderer that crashes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.conformance.results import Report
from harness.conformance.wpt import discover, run_wpt
from harness.errors import ConfigError
from tests.console_script import run_script

# A stand-in for WPT's resources/testharness.js: test(), promise_test(), asserts, and the
# callbacks a testharnessreport.js uses. Like the real one, it completes after load once
# every test has a result, and its global timeout() ends the tests still running.
TESTHARNESS_JS = r"""
(function () {
  const PASS = 0, FAIL = 1, TIMEOUT = 2;
  const tests = [], onResult = [], onComplete = [];
  let pending = 0, loaded = false, finished = false;
  function record(t, status, message) {
    if (t.status !== undefined) return;
    t.status = status; t.message = message; pending--;
    onResult.forEach((cb) => cb(t));
    if (loaded && pending === 0) finish(0);
  }
  function finish(status) {
    if (finished) return;
    finished = true;
    onComplete.forEach((cb) => cb(tests, {status, message: null}));
  }
  const failure = (e) => String((e && e.message) || e);
  window.test = (fn, name) => {
    const t = {name}; tests.push(t); pending++;
    try { fn(t); record(t, PASS, null); } catch (e) { record(t, FAIL, failure(e)); }
  };
  window.promise_test = (fn, name) => {
    const t = {name}; tests.push(t); pending++;
    Promise.resolve().then(() => fn(t)).then(() => record(t, PASS, null), (e) => record(t, FAIL, failure(e)));
  };
  window.assert_true = (value, what) => { if (value !== true) throw new Error(`${what}: ${value} is not true`); };
  window.assert_equals = (actual, expected, what) => {
    if (actual !== expected) throw new Error(`${what}: expected ${expected} but got ${actual}`);
  };
  window.setup = () => {};
  window.add_result_callback = (cb) => onResult.push(cb);
  window.add_completion_callback = (cb) => onComplete.push(cb);
  window.timeout = () => {
    tests.forEach((t) => { if (t.status === undefined) record(t, TIMEOUT, "timed out"); });
    finish(2);
  };
  window.addEventListener("load", () => { loaded = true; if (pending === 0) finish(0); });
})();
"""

PAGE = """<!doctype html>
<meta charset="utf-8">
<script src="/resources/testharness.js"></script>
<script src="/resources/testharnessreport.js"></script>
<script>
{body}
</script>
"""

FILES = {
    "resources/testharness.js": TESTHARNESS_JS,
    # The checkout's own report script: the runner must serve its own instead.
    "resources/testharnessreport.js": "throw new Error('the checkout report script ran');",
    "webmcp/resources/helpers.js": "// support file, not a test",
    "webmcp/imperative/basic.https.html": PAGE.format(
        body="""
promise_test(async () => {
  await document.modelContext.registerTool({name: 'wpt_tool', description: 'd', execute: () => 'ok'});
}, 'registerTool resolves');
promise_test(async () => {
  const names = (await document.modelContext.getTools()).map((t) => t.name);
  assert_equals(names.join(), 'wpt_tool', 'getTools() names');
}, 'getTools lists it');
test(() => assert_equals(1, 2, 'arithmetic'), 'a subtest that fails');
"""
    ),
    "webmcp/imperative/hang.https.html": PAGE.format(
        body="""
test(() => assert_true(!!document.modelContext, 'modelContext'), 'before the hang');
promise_test(() => new Promise(() => { setTimeout(() => { for (;;) {} }, 200); }), 'hangs the page');
"""
    ),
    "webmcp/declarative/crash.https.html": PAGE.format(
        body="""
test(() => assert_true(!!document.modelContext, 'modelContext'), 'before the crash');
promise_test(() => new Promise(() => {
  setTimeout(() => { const kept = []; for (;;) kept.push(new Array(1e5).fill(Math.random())); }, 200);
}), 'runs out of memory');
"""
    ),
    "webmcp/imperative/in-window.window.js": (
        "test(() => assert_true(!!document.modelContext, 'modelContext'), 'a .window.js test');\n"
    ),
    "webmcp/imperative/host.sub.https.html": PAGE.format(
        body="test(() => assert_equals('{{host}}', '127.0.0.1', 'host'), 'substituted host');"
    ),
    "webmcp/imperative/reference-ref.html": "<!doctype html><p>a reftest reference</p>",
}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for name, text in FILES.items():
        path = tmp_path / "wpt" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path / "wpt"


def test_discovery_finds_the_tests_and_skips_support_and_references(tree: Path) -> None:
    assert [t.path for t in discover(tree)] == [
        "/webmcp/declarative/crash.https.html",
        "/webmcp/imperative/basic.https.html",
        "/webmcp/imperative/hang.https.html",
        "/webmcp/imperative/host.sub.https.html",
        "/webmcp/imperative/in-window.window.html",
    ]
    assert [t.path for t in discover(tree, ["/webmcp/declarative"])] == [
        "/webmcp/declarative/crash.https.html"
    ]
    with pytest.raises(ConfigError, match="has no webmcp/ directory"):
        discover(tree / "resources")


def _results(report: Report) -> dict[str, tuple[str, dict[str, str]]]:
    return {r.test: (r.status, {s.name: s.status for s in r.subtests}) for r in report.results}


@pytest.mark.timeout(600)
@pytest.mark.parametrize("backend", ["polyfill", "native"])
async def test_results_survive_a_hang_and_a_renderer_crash(tree: Path, backend: str) -> None:
    # A small V8 heap makes the crash test's runaway allocation kill its renderer at once.
    report = await run_wpt(
        tree,
        backend,
        timeout=8,
        launch_args=("--js-flags=--max-old-space-size=32",),  # type: ignore[arg-type]
    )
    results = _results(report)
    assert results["/webmcp/imperative/basic.https.html"] == (
        "OK",
        {
            "registerTool resolves": "PASS",
            "getTools lists it": "PASS",
            "a subtest that fails": "FAIL",
        },
    )
    hang_status, hang = results["/webmcp/imperative/hang.https.html"]
    assert hang_status == "TIMEOUT" and hang["before the hang"] == "PASS"
    crash_status, crash = results["/webmcp/declarative/crash.https.html"]
    assert crash_status == "CRASH" and crash == {"before the crash": "PASS"}
    assert results["/webmcp/imperative/in-window.window.html"] == (
        "OK",
        {"a .window.js test": "PASS"},
    )
    assert results["/webmcp/imperative/host.sub.https.html"] == ("OK", {"substituted host": "PASS"})
    assert report.run_info.suite == "wpt" and report.run_info.backend == backend
    basic = next(r for r in report.results if r.test.endswith("basic.https.html"))
    [failed] = [s for s in basic.subtests if s.status == "FAIL"]
    assert failed.message == "arithmetic: expected 2 but got 1"


@pytest.mark.timeout(300)
async def test_the_command_writes_the_same_reports(tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, stdout, err = await run_script(
        "conformance",
        "wpt",
        "--wpt-root",
        str(tree),
        "--tests",
        "/webmcp/imperative/basic",
        "--backend",
        "both",
        "--output",
        str(out),
        "--no-progress",
        timeout=240,
    )
    assert code == 1, err  # "a subtest that fails" is unexpected without a baseline
    assert "native: 2/3 passed" in stdout and "polyfill: 2/3 passed" in stdout
    report = json.loads((out / "wptreport-native.json").read_text(encoding="utf-8"))
    [failed] = [s for s in report["results"][0]["subtests"] if s["status"] == "FAIL"]
    assert failed["name"] == "a subtest that fails" and failed["expected"] == "PASS"
    assert {p.name for p in out.iterdir()} == {
        "wptreport-native.json",
        "wptreport-polyfill.json",
        "junit.xml",
        "report.html",
        "summary.md",
    }
