"""``conformance wpt`` on a web-platform-tests-shaped tree of the project's own
(``tests/conformance/wpt/``, with a stand-in testharness.js: the project ships no WPT file).

- The runner follows WPT's conventions (``webmcp/runner/``): ``// META:`` lines, variants,
  ``.headers`` files, generated ``.any.html``/``.window.html`` pages, ``.sub.`` and pipes;
  what it cannot run is reported ``SKIP`` with the reason, never passed.
- ``native`` is Chromium's own WebMCP with nothing injected: it gives exactly what a plain
  Playwright run of the same pages gives, and differs from ``native+layer`` where the
  harness's layer adds to Chromium (``webmcp/configurations/``).
- The polyfill behaves as native Chromium where it used not to (``webmcp/fidelity/``), in all
  three configurations.
- Results survive a page that hangs and a renderer that crashes (``webmcp/robustness/``).
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from aiohttp import ClientSession, web
from playwright.async_api import TimeoutError as PlaywrightTimeoutError
from playwright.async_api import async_playwright

from harness.browser.launch import launch_flags
from harness.conformance.results import Report
from harness.conformance.wpt import CONFIGURATIONS, discover, run_wpt
from harness.conformance.wpt.manifest import LONG_TIMEOUT_S, WptTest
from harness.conformance.wpt.runner import HARNESS_STATUS, SUBTEST_STATUS
from harness.conformance.wpt.server import WptServer
from harness.errors import ConfigError
from harness.harness import Harness
from harness.models import BackendName
from tests.console_script import run_script
from tests.unreadable import as_a_user, unreadable

TREE = Path(__file__).resolve().parent / "wpt"
# The pages where the configurations differ, and the polyfill's fidelity to Chromium.
COMPARED = ["/webmcp/configurations", "/webmcp/fidelity"]
# Their own deadlines are 15 s (a loaded machine can be slow); a page gets 40 s in all.
PAGE_TIMEOUT_S = 40
# How many more times a page whose native and plain runs differ is run both ways.
RERUNS = 4

Results = dict[str, tuple[str, dict[str, str]]]


def _results(report: Report) -> Results:
    return {
        r.test: (r.status, {s.name: s.status for s in r.subtests})
        for r in report.results
        if r.status != "SKIP"
    }


def _not_passing(results: Results) -> dict[tuple[str, str], str]:
    """Every subtest that did not pass, by (test, subtest)."""
    return {
        (test, name): status
        for test, (_, subtests) in results.items()
        for name, status in subtests.items()
        if status != "PASS"
    }


# -- discovery: WPT's manifest rules --------------------------------------------------------


def test_discovery_follows_wpts_rules() -> None:
    runner = {t.path: t for t in discover(TREE, ["/webmcp/runner"])}
    window_only = "this runner runs window scopes only"
    skipped = {path: t.skip for path, t in runner.items() if t.skip is not None}
    assert skipped == {
        "/webmcp/runner/dedicated.worker.html": f"a worker scope: {window_only}",
        "/webmcp/runner/scopes.any.worker.html?first": f"the dedicatedworker scope: {window_only}",
        "/webmcp/runner/scopes.any.worker.html?second": f"the dedicatedworker scope: {window_only}",
        "/webmcp/runner/workers-only.any.worker.html": f"the dedicatedworker scope: {window_only}",
        "/webmcp/runner/workers-only.any.sharedworker.html": f"the sharedworker scope: {window_only}",
        "/webmcp/runner/workers-only.any.serviceworker.html": (
            f"the serviceworker scope: {window_only}"
        ),
        "/webmcp/runner/needs-testdriver.https.html": (
            "needs testdriver.js (WebDriver actions), which this runner does not provide; "
            "run it with ./wpt run"
        ),
        "/webmcp/runner/over-http2.h2.html": (
            "the .h2. flag: the test needs HTTP/2, which this runner does not serve"
        ),
        "/webmcp/runner/reftest.html": "a reftest: this runner compares no screenshots",
        "/webmcp/runner/removal-crash.html": "a crashtest: this runner runs testharness tests only",
    }
    run = {path for path, t in runner.items() if t.skip is None}
    assert run == {
        "/webmcp/runner/headers/generated.window.html",
        "/webmcp/runner/headers/own.https.html",
        "/webmcp/runner/long.https.html",
        "/webmcp/runner/meta.window.html",
        "/webmcp/runner/module.any.window-module.html",
        "/webmcp/runner/pipes.https.html",
        "/webmcp/runner/python-handler.https.html",
        "/webmcp/runner/scopes.any.html?first",
        "/webmcp/runner/scopes.any.html?second",
        "/webmcp/runner/substitution.sub.https.html",
        "/webmcp/runner/variants.https.html?a",
        "/webmcp/runner/variants.https.html#b",
    }
    # Support files, references, manual tests and .headers files are no tests at all.
    assert not any(
        part in path
        for path in runner
        for part in ("support/", "-ref", "-manual", "headers/__dir__", ".headers")
    )
    long = {path for path, t in runner.items() if t.timeout == LONG_TIMEOUT_S}
    assert long == {"/webmcp/runner/long.https.html", "/webmcp/runner/meta.window.html"}


def test_discovery_needs_a_webmcp_directory_and_well_formed_variants(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="has no webmcp/ directory"):
        discover(TREE / "resources")
    (tmp_path / "webmcp").mkdir()
    (tmp_path / "webmcp" / "bad.window.js").write_text("// META: variant=first\n")
    with pytest.raises(ConfigError, match="variant 'first' must start with \\? or #"):
        discover(tmp_path)
    assert discover(tmp_path, ["/webmcp/other"]) == []  # only files under --tests are read


def _checkout(root: Path) -> Path:
    """A small checkout: the stand-in resources, one test in webmcp/, one in webmcp/deep/."""
    shutil.copytree(TREE / "resources", root / "resources")
    (root / "webmcp" / "deep").mkdir(parents=True)
    for test in ("webmcp/first.window.js", "webmcp/deep/second.window.js"):
        (root / test).write_text("test(() => {}, 'runs');\n", encoding="utf-8")
    return root


@pytest.mark.parametrize(
    "part", [".", "webmcp", "webmcp/first.window.js", "webmcp/deep", "resources/testharness.js"]
)
async def test_a_checkout_that_cannot_be_read_is_a_usage_error_that_names_the_path(
    tmp_path: Path, part: str
) -> None:
    # Before any browser: the run would lose the tests it cannot read (a directory
    # rglob skips), or stop with "could not run" (3), as if the machine were at fault.
    root = _checkout(tmp_path / "wpt")
    output = tmp_path / "out"
    with unreadable(root / part):
        code, out, err = await run_script(
            "conformance", "wpt", "--wpt-root", str(root), "--output", str(output),
            "--no-progress", prefix=as_a_user(), timeout=120,
        )  # fmt: skip
    unread = root / "webmcp" if part == "." else root / part  # what the OS names
    assert code == 2, out + err
    assert f"--wpt-root {root}: cannot read {unread} (Permission denied)" in err, err
    assert f"readable to this user (chmod -R a+rX {root})" in err and "Traceback" not in err
    assert "could not run" not in err and not any(output.glob("*.json")), err


async def test_generated_pages_are_what_wptserve_writes() -> None:
    server = await WptServer(TREE).start()
    try:
        async with ClientSession() as client:
            async with client.get(server.url("/webmcp/runner/meta.window.html")) as response:
                page = await response.text()
            async with client.get(server.url("/webmcp/runner/scopes.any.html?first")) as response:
                any_page = await response.text()
            worker = server.url("/webmcp/runner/workers-only.any.html")
            async with client.get(worker) as response:
                assert response.status == 404  # no window scope: wptserve answers 404 too
            async with client.get(server.url("/webmcp/runner/support/handler.py")) as response:
                assert response.status == 501
    finally:
        await server.stop()
    # In wptserve's order: META title and timeout, the harness, the META scripts, the test.
    assert page.index("<title>The META lines of a .window.js test</title>") < page.index(
        '<meta name="timeout" content="long">'
    )
    scripts = [
        '<script src="/resources/testharness.js"></script>',
        '<script src="/resources/testharnessreport.js"></script>',
        '<script src="/webmcp/resources/helpers.js"></script>',
        '<script src="support/local-helper.js"></script>',
        '<script src="/webmcp/runner/meta.window.js"></script>',
    ]
    assert [page.index(s) for s in scripts] == sorted(page.index(s) for s in scripts)
    assert "self.GLOBAL" in any_page and "self.GLOBAL" not in page
    assert server.unserved == [
        "/webmcp/runner/support/handler.py (wptserve's Python handlers are not run)"
    ]


# -- the runner's conventions, in a browser -------------------------------------------------


@pytest.mark.slow
@pytest.mark.timeout(300)
async def test_the_runner_follows_wpts_conventions() -> None:
    report = await run_wpt(TREE, "native", include=["/webmcp/runner"])
    results = {r.test: r for r in report.results}
    skipped = {t.path: t.skip for t in discover(TREE, ["/webmcp/runner"]) if t.skip}
    assert {test: (r.status, r.message) for test, r in results.items() if test in skipped} == {
        test: ("SKIP", why) for test, why in skipped.items()
    }
    passed = {
        test: [s.name for s in r.subtests]
        for test, r in results.items()
        if r.status == "OK" and r.subtests and all(s.status == "PASS" for s in r.subtests)
    }
    assert passed == {
        "/webmcp/runner/headers/generated.window.html": [
            "a generated page gets its script's headers"
        ],
        "/webmcp/runner/headers/own.https.html": [
            "Origin-Agent-Cluster: ?0 from the .headers file",
            "__dir__.headers, then the file's own",
        ],
        "/webmcp/runner/long.https.html": ["a long test"],
        "/webmcp/runner/meta.window.html": [
            "META: script= loads an absolute path",
            "META: script= loads a relative path",
            "META: title= becomes the title",
            "META: timeout=long becomes the timeout meta",
        ],
        "/webmcp/runner/module.any.window-module.html": ["runs as a module script"],
        "/webmcp/runner/pipes.https.html": [
            "?pipe=header() adds a header",
            "?pipe=sub substitutes",
        ],
        "/webmcp/runner/scopes.any.html?first": [
            "an .any.js test runs in a window",
            "its variant is its query",
        ],
        "/webmcp/runner/scopes.any.html?second": [
            "an .any.js test runs in a window",
            "its variant is its query",
        ],
        "/webmcp/runner/substitution.sub.https.html": [
            "the host is substituted",
            "the port is substituted",
            "the second port is another port",
        ],
        "/webmcp/runner/variants.https.html?a": ["the variant is in the URL"],
        "/webmcp/runner/variants.https.html#b": ["the variant is in the URL"],
    }
    # A test that asks for what the runner cannot serve fails, and says why.
    python = results["/webmcp/runner/python-handler.https.html"]
    assert [s.status for s in python.subtests] == ["FAIL"]
    assert python.message == (
        "not served: /webmcp/runner/support/handler.py (wptserve's Python handlers are not run)"
    )


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("configuration", ["polyfill", "native"])
async def test_results_survive_a_hang_and_a_renderer_crash(configuration: str) -> None:
    # A small V8 heap makes the crash test's runaway allocation kill its renderer at once.
    report = await run_wpt(
        TREE,
        configuration,
        include=["/webmcp/robustness"],
        timeout=8,
        launch_args=("--js-flags=--max-old-space-size=32",),
    )
    results = _results(report)
    assert results["/webmcp/robustness/results.https.html"] == (
        "OK",
        {
            "registerTool resolves": "PASS",
            "getTools lists it": "PASS",
            "a subtest that fails": "FAIL",
        },
    )
    hang_status, hang = results["/webmcp/robustness/hang.https.html"]
    assert hang_status == "TIMEOUT" and hang["before the hang"] == "PASS"
    crash_status, crash = results["/webmcp/robustness/out-of-memory.https.html"]
    assert crash_status == "CRASH" and crash == {"before the crash": "PASS"}
    assert report.run_info.suite == "wpt" and report.run_info.backend == configuration
    basic = next(r for r in report.results if r.test.endswith("results.https.html"))
    [failed] = [s for s in basic.subtests if s.status == "FAIL"]
    assert failed.message == "arithmetic: expected 2 but got 1"


# -- the configurations ----------------------------------------------------------------------


async def _plain_run(tests: list[WptTest], chromium: str) -> tuple[Results, list[str]]:
    """The pages in Chromium with native WebMCP and nothing else: Playwright, a static
    server that applies the ``.headers`` files, and the checkout's own report script. With
    the results, the messages of the subtests that did not pass."""

    async def serve(request: web.Request) -> web.StreamResponse:
        file = TREE / request.match_info["path"]
        if not file.is_file():
            raise web.HTTPNotFound()
        headers_file = file.with_name(file.name + ".headers")
        headers = {}
        if headers_file.is_file():
            for line in headers_file.read_text().splitlines():
                name, _, value = line.partition(":")
                headers[name.strip()] = value.strip()
        return web.FileResponse(file, headers=headers)

    app = web.Application()
    app.router.add_get("/{path:.*}", serve)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    port = runner.addresses[-1][1]
    results: Results = {}
    messages: list[str] = []
    try:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(
                executable_path=chromium, args=launch_flags("native")
            )
            for test in tests:
                context = await browser.new_context()
                page = await context.new_page()
                await page.goto(f"http://127.0.0.1:{port}{test.path}")
                try:
                    handle = await page.wait_for_function(
                        "window.wptResults", timeout=PAGE_TIMEOUT_S * 1000
                    )
                except PlaywrightTimeoutError:
                    # Chromium alone, on a busy machine, now and then: a page that never
                    # reports is this run's TIMEOUT, which the caller runs again both ways.
                    results[test.path] = ("TIMEOUT", {})
                    messages.append(f"{test.path}: no results within {PAGE_TIMEOUT_S} s")
                    await context.close()
                    continue
                raw = await handle.json_value()
                results[test.path] = (
                    HARNESS_STATUS[raw["status"]],
                    {t["name"]: SUBTEST_STATUS[t["status"]] for t in raw["tests"]},
                )
                messages += [f"{t['name']}: {t['message']}" for t in raw["tests"] if t["status"]]
                await context.close()
            await browser.close()
    finally:
        await runner.cleanup()
    return results, messages


@pytest.mark.slow
@pytest.mark.timeout(300)
async def test_native_is_chromium_with_nothing_injected(chromium_path: str) -> None:
    tests = [t for t in discover(TREE, COMPARED) if t.skip is None]
    plain, plain_failures = await _plain_run(tests, chromium_path)
    report = await run_wpt(TREE, "native", include=COMPARED, timeout=PAGE_TIMEOUT_S)
    native = _results(report)
    failures = [f"{s.name}: {s.message}" for r in report.results for s in r.subtests if s.message]
    # Chromium alone is not deterministic on every page (about one run in six, a popup's call
    # to its opener's tool stays pending; now and then a frame's first executeTool never
    # runs): a page whose two runs differ is run again both ways, up to RERUNS times, until
    # they agree. A difference the harness makes shows on every run; Chromium's own race
    # does not.
    for _ in range(RERUNS):
        differing = [t for t in tests if native.get(t.path) != plain.get(t.path)]
        if not differing:
            break
        again, plain_failures = await _plain_run(differing, chromium_path)
        plain.update(again)
        report_again = await run_wpt(
            TREE, "native", include=[t.path for t in differing], timeout=PAGE_TIMEOUT_S
        )
        native.update(_results(report_again))
        failures = [
            f"{s.name}: {s.message}" for r in report_again.results for s in r.subtests if s.message
        ]
    assert native == plain, f"native: {failures}; plain: {plain_failures}"
    assert (report.run_info.backend, report.run_info.configuration) == ("native", "native")
    assert report.run_info.injected == []
    # the native backend's flags, their features merged with Playwright's (chromium_args)
    assert report.run_info.flags == launch_flags("native")
    # Chromium passes every subtest there: each states what Chromium does.
    assert _not_passing(native) == {}
    # The column is not the harness's: its layer changes what Chromium alone gives.
    layer = await run_wpt(
        TREE, "native+layer", include=["/webmcp/configurations"], timeout=PAGE_TIMEOUT_S
    )
    [(_, layered)] = _results(layer).values()
    assert {name for name, status in layered.items() if status != "PASS"} == {
        "navigator.modelContext is not (the API moved to document)",
        "there is no unregisterTool()",
        "executeTool() runs a tool with input its inputSchema does not allow (no DataError)",
    }
    assert layer.run_info.backend == layer.run_info.configuration == "native+layer"
    assert layer.run_info.flags == report.run_info.flags  # the same Chromium
    injected = layer.run_info.injected or []
    assert any("navigator.modelContext" in item for item in injected)
    assert any(item.startswith("DataError validation") for item in injected)


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("configuration", ["polyfill", "native+layer"])
async def test_the_polyfill_and_the_layer_behave_as_native_chromium(configuration: str) -> None:
    # document.domain, a call aborted at once into a frame, a caller that goes away, calls
    # across trees: what native Chromium passes (above), the harness's JS passes too.
    report = await run_wpt(
        TREE, configuration, include=["/webmcp/fidelity"], timeout=PAGE_TIMEOUT_S
    )
    fidelity = _results(report)
    assert len(fidelity) == 4
    assert all(status == "OK" and subtests for status, subtests in fidelity.values())
    assert _not_passing(fidelity) == {}


@pytest.mark.slow
@pytest.mark.timeout(300)
async def test_the_command_runs_the_configurations_and_writes_the_reports(tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, stdout, err = await run_script(
        "conformance",
        "wpt",
        "--wpt-root",
        str(TREE),
        "--tests",
        "/webmcp/configurations",
        "--backend",
        "all",
        "--output",
        str(out),
        "--no-progress",
        timeout=240,
    )
    assert code == 1, err  # the layer's and the polyfill's differences are unexpected
    assert "native: 4/4 passed" in stdout
    assert "native+layer: 1/4 passed" in stdout and "polyfill: 1/4 passed" in stdout
    reports = {
        name: json.loads((out / f"wptreport-{name}.json").read_text(encoding="utf-8"))
        for name in CONFIGURATIONS
    }
    assert reports["native"]["run_info"]["injected"] == []
    assert reports["polyfill"]["run_info"]["configuration"] == "polyfill"
    assert {p.name for p in out.iterdir()} == {
        "wptreport-native.json",
        "wptreport-native+layer.json",
        "wptreport-polyfill.json",
        "junit.xml",
        "report.html",
        "summary.md",
    }


async def test_an_unknown_configuration_is_a_usage_error() -> None:
    code, _, err = await run_script(
        "conformance", "wpt", "--wpt-root", str(TREE), "--backend", "chromium"
    )
    assert code == 2 and "invalid choice: 'chromium'" in err
    with pytest.raises(ConfigError, match="Unknown WPT configuration 'layer'; use one of"):
        await asyncio.wait_for(run_wpt(TREE, "layer"), 10)


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.parametrize("backend", ["polyfill", "native"])
async def test_forms_are_no_tools_where_document_domain_is_enabled(backend: BackendName) -> None:
    # Chromium makes no tool of a <form toolname> in such a document; the polyfill neither.
    server = await WptServer(TREE).start()
    try:
        async with Harness(backend=backend) as harness:
            found = {}
            for query in ("", "?pipe=header(Origin-Agent-Cluster,?0)"):
                session = await harness.open(
                    server.url(f"/webmcp/fidelity/support/form.html{query}")
                )
                found[query] = [tool.name for tool in await session.tools()]
                await session.close()
    finally:
        await server.stop()
    assert found == {"": ["search"], "?pipe=header(Origin-Agent-Cluster,?0)": []}
