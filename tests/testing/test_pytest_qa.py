"""The QA helpers of the pytest plugin, run the way users run them (pytest in a subprocess):
``webmcp.fuzz(...)`` and the syrupy snapshot of the catalog — created with
``--snapshot-update``, unchanged passes, changed fails with a diff, updated again."""

from __future__ import annotations

import json

import pytest

from harness import BrowserPool, Harness
from harness.catalog import Settle
from harness.testing.plugin import describe_session
from tests.qa.pages import ODD_TOOLS, PROPERTY_TOOLS, page, serve

pytest_plugins = ["pytester"]

# A run launches Chromium in a fresh interpreter: slow on a busy machine.
pytestmark = pytest.mark.timeout(900)

CONFTEST = """
import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest


class Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="session")
def site_url():
    handler = functools.partial(Quiet, directory=str(Path(__file__).parent / "site"))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
"""

TESTS = """
import pytest


def test_the_catalog(webmcp, site_url, snapshot):
    webmcp.open(site_url)
    assert webmcp.catalog_snapshot() == snapshot


def test_fuzz_finds_the_planted_bug_and_passes_the_correct_tool(webmcp, site_url):
    webmcp.open(site_url)
    with pytest.raises(AssertionError) as failed:
        webmcp.fuzz(tools=["search_throws"], properties=["no-throw"], seed=3, examples=10)
    assert 'minimal input: {"query": ""}' in str(failed.value)
    assert "webmcp-harness fuzz " in str(failed.value)
    report = webmcp.fuzz(tools=["search_ok"], properties=["no-throw"], seed=3, examples=5)
    assert report.ok and report.tools[0].results[0].status == "passed"


def test_fuzz_warns_when_a_property_could_not_be_checked(webmcp, site_url):
    from harness.qa import FuzzUnchecked

    webmcp.open(site_url + "odd.html")
    with pytest.warns(FuzzUnchecked, match="may allow no value at all"):
        report = webmcp.fuzz(tools=["impossible"], properties=["no-throw"], seed=3, examples=5)
    assert report.ok and report.unchecked() == 1
"""


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "--output", "out", *args)


@pytest.mark.slow
def test_fuzz_and_the_catalog_snapshot_flow(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_qa=TESTS)
    site = pytester.path / "site"
    site.mkdir()
    html = page(PROPERTY_TOOLS)
    (site / "index.html").write_text(html, encoding="utf-8")
    (site / "odd.html").write_text(page(ODD_TOOLS), encoding="utf-8")

    # No snapshot yet: the catalog test fails until one is written.
    created = run(pytester, "--snapshot-update")
    created.assert_outcomes(passed=3)
    stored = list((pytester.path / "__snapshots__").glob("*.ambr"))
    assert len(stored) == 1 and "search_throws" in stored[0].read_text(encoding="utf-8")

    unchanged = run(pytester, "-k", "catalog")
    unchanged.assert_outcomes(passed=1)

    # A deploy flips a tool's readOnlyHint: the snapshot shows it, in the test's failure.
    flipped = html.replace(
        'name: "peek_ok", description: "Reads a value.", annotations: ro,',
        'name: "peek_ok", description: "Reads a value.", annotations: {readOnlyHint: false},',
    )
    assert flipped != html
    (site / "index.html").write_text(flipped, encoding="utf-8")
    changed = run(pytester, "-k", "catalog")
    changed.assert_outcomes(failed=1)
    output = changed.stdout.str()
    assert "readOnlyHint" in output and "snapshot" in output.lower()
    assert any(line.lstrip().startswith(("-", "+")) for line in output.splitlines())

    updated = run(pytester, "-k", "catalog", "--snapshot-update")
    updated.assert_outcomes(passed=1)
    again = run(pytester, "-k", "catalog")
    again.assert_outcomes(passed=1)


WIPE = """document.modelContext.registerTool({name: "wipe", description: "Deletes everything.",
  annotations: {destructiveHint: true}, execute: async () => ({wiped: true})});"""


async def test_a_failing_test_s_report_names_the_fix_for_a_policy_refusal(
    browser_pool: BrowserPool,
) -> None:
    async with (
        serve({"/": page(WIPE)}) as server,
        Harness(browsers=browser_pool, settle=Settle.quiet_ms(100)) as harness,
    ):
        session = await harness.open(server.url("/"))
        outcome = await session.call("wipe")
        assert outcome.error_kind == "refused"
        report = describe_session(session)
        assert '@pytest.mark.webmcp(elicit="accept")' in report
        assert '@pytest.mark.webmcp(policy="none")' in report and "--webmcp-elicit accept" in report
        session.policy = None
        await session.call("wipe")
        await session.close()
        fresh = await harness.open(server.url("/"))
        fresh.policy = None
        assert (await fresh.call("wipe")).error_kind is None
        assert "hint:" not in describe_session(fresh)
        await fresh.close()


LOAN_FORM = """<!doctype html><form toolname="loan_book" tooldescription="Borrows a book."
  action="/done"><input name="isbn" required>
  <input name="weeks" type="number" min="1" max="4" value="2"><button>Borrow</button></form>"""


async def test_a_failing_test_s_report_names_the_fix_for_a_form_left_waiting(
    browser_pool: BrowserPool,
) -> None:
    # Found from outside: "the review was cancelled (auto-cancel)" and no word of what to do.
    from harness.elicitation.answers import ScriptedHandler

    async with (
        serve({"/": LOAN_FORM, "/done": "<p>done</p>"}) as server,
        Harness(browsers=browser_pool, settle=Settle.quiet_ms(100)) as harness,
    ):
        session = await harness.open(server.url("/"))
        session.policy = None
        outcome = await session.call("loan_book", {"isbn": "978"})
        assert outcome.is_error and "review was cancelled" in json.dumps(outcome.agent_json())
        report = describe_session(session)
        assert "no toolautosubmit" in report and "nobody answered" in report
        assert '@pytest.mark.webmcp(elicit="accept")' in report
        assert "--webmcp-elicit accept" in report
        await session.close()

        # An answer was given, with a value the form refuses: its rule is the fix.
        answers = {
            "answers": [{"source": "form-review", "action": "accept", "values": {"weeks": 9}}]
        }
        refused = await harness.open(server.url("/"))
        refused.policy = None
        refused.elicitation = ScriptedHandler.from_data(answers)
        assert (await refused.call("loan_book", {"isbn": "978"})).is_error
        report = describe_session(refused)
        assert "nobody answered" not in report and 'elicit="accept"' not in report
        assert "breaks its rules (weeks must be at most 4)" in report
        await refused.close()
