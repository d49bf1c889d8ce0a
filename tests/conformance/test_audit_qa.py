"""The QA tools in the site audit: ``--fuzz`` (a broken property is a ``fuzz-<property>``
finding with its reproduction) and ``--catalog-baseline`` (each catalog change a
``catalog-<kind>`` finding graded as drift grades it), on pages the tests write, on both
backends — and the CLI that gates on them through the audit's reports."""

from __future__ import annotations

import asyncio
import json
import shlex
import xml.etree.ElementTree as ET
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast, get_args

import pytest

from harness import BrowserPool
from harness.catalog import Settle
from harness.conformance import audit as audit_module
from harness.conformance.audit import (
    AuditOptions,
    SiteAudit,
    SiteTarget,
    audit_report,
    audit_sites,
)
from harness.conformance.qa_findings import (
    CATALOG_CODES,
    FUZZ_CODES,
    catalog_findings,
    fuzz_findings,
)
from harness.conformance.results import RunInfo
from harness.conformance.rules import RULES, WITHOUT_LIGHTHOUSE, Finding
from harness.harness import Harness
from harness.models import BackendName, Tool
from harness.qa.drift import ChangeKind
from harness.qa.fuzz import Failure, FuzzOptions, FuzzReport, PropertyResult, ToolReport
from harness.qa.properties import PROPERTIES
from harness.qa.snapshot import CatalogSnapshot, snapshot_of
from harness.session import Session
from tests.console_script import run_script
from tests.qa.pages import CANARY, QAServer, page, serve

ROOT = Path(__file__).resolve().parents[2]
ORIGIN = "http://127.0.0.1:8000"

# A correct tool beside one that breaks a property (/broken) or keeps it (/fixed, /flipped).
TOOLS = """
const mc = document.modelContext;
const obj = (properties, required = []) => ({type: "object", properties, required});
const text = {type: "string", maxLength: 20};
mc.registerTool({
  name: "find_ok", description: "Finds the items whose name starts with the query.",
  annotations: {readOnlyHint: READ_ONLY}, inputSchema: obj({query: text}, ["query"]),
  execute: async ({query}) => ({count: query.length}),
});
mc.registerTool({
  name: "find_first", description: "Finds items; capitalises the query's first letter.",
  annotations: {readOnlyHint: true}, inputSchema: obj({query: QUERY}, ["query"]),
  execute: async ({query}) => {
    if (!query) throw new Error("no first letter (token CANARY)");
    return {first: query[0].toUpperCase()};
  },
});
EXTRA
""".replace("CANARY", CANARY)
STORES = """
mc.registerTool({
  name: "peek_stores", description: "Reads a value (and remembers it).",
  annotations: {readOnlyHint: true}, inputSchema: obj({key: text}),
  execute: async ({key}) => { localStorage.setItem("last", String(key)); return {ok: true}; },
});
"""


def tools(read_only: str = "true", query: str = "{...text, minLength: 1}", extra: str = "") -> str:
    return TOOLS.replace("READ_ONLY", read_only).replace("QUERY", query).replace("EXTRA", extra)


PAGES = {
    # find_first throws on the empty query its schema allows; peek_stores writes.
    "/broken": page(tools(query="text", extra=STORES)),
    "/fixed": page(tools()),
    # /fixed's catalog with find_ok's readOnlyHint flipped.
    "/flipped": page(tools(read_only="false")),
}
BACKENDS: list[BackendName] = ["polyfill", "native"]
SETTLE = Settle.quiet_ms(100)
Audits = tuple[RunInfo, dict[str, SiteAudit]]
"""An audit run's ``run_info`` and its audits by test id."""


def fuzzing(**options: Any) -> FuzzOptions:
    settings: dict[str, Any] = {
        "properties": ["no-throw", "read-only"],
        "examples": 6,
        "seed": 3,
        "database": None,
    }
    return FuzzOptions(**{**settings, **options})


@pytest.fixture(scope="module")
async def server() -> AsyncIterator[QAServer]:
    async with serve(PAGES) as qa:
        yield qa


@pytest.fixture(scope="module")
async def baseline(browser_pool: BrowserPool, server: QAServer) -> CatalogSnapshot:
    """The catalog of /fixed, as `webmcp-harness snapshot` writes it (read back)."""
    async with Harness(browsers=browser_pool, backend="polyfill", settle=SETTLE) as harness:
        session = await harness.open(server.url("/fixed"))
        taken = snapshot_of(await session.tools(), session.url)
        await session.close()
    return CatalogSnapshot.model_validate_json(taken.to_json())


@pytest.fixture(scope="module", params=BACKENDS)
async def audits(
    request: pytest.FixtureRequest, server: QAServer, baseline: CatalogSnapshot
) -> Audits:
    """One audit run per backend: every page fuzzed and held to the baseline."""
    targets = [SiteTarget(server.url(path), f"/t{path}", baseline) for path in PAGES]
    info, found = await asyncio.wait_for(
        audit_sites(
            targets, backend=request.param, options=AuditOptions(fuzz=fuzzing()), settle=SETTLE
        ),
        240,
    )
    return info, {audit.test: audit for audit in found}


def findings(audit: SiteAudit, prefix: str) -> dict[tuple[str, str | None], Finding]:
    return {(f.code, f.tool): f for f in audit.findings if f.code.startswith(prefix)}


def statuses(audits: Audits, test: str) -> dict[str, str]:
    """The subtests of a page's test in the wptreport, as CI reads them."""
    info, by_test = audits
    [result] = audit_report(info, [by_test[test]], "error", 0).results
    return {s.name: s.status for s in result.subtests}


@pytest.mark.slow
async def test_a_broken_property_is_a_fuzz_finding_with_its_reproduction(
    audits: Audits,
) -> None:
    audit = audits[1]["/t/broken"]
    found = findings(audit, "fuzz-")
    assert set(found) == {("fuzz-no-throw", "find_first"), ("fuzz-read-only", "peek_stores")}
    threw = found[("fuzz-no-throw", "find_first")]
    assert threw.severity == "error" and "threw on valid input" in threw.message
    # The evidence is the fuzz command that checks that property with the shrunk input.
    command = shlex.split(threw.evidence)
    assert command[:3] == ["webmcp-harness", "fuzz", audit.url]
    assert command[command.index("--property") + 1] == "no-throw"
    assert json.loads(command[command.index("--example") + 1]) == {"query": ""}
    assert "localStorage" in found[("fuzz-read-only", "peek_stores")].message
    assert CANARY not in threw.message  # the page's error quoted a secret: not shown
    subtests = statuses(audits, "/t/broken")
    assert subtests["fuzz-no-throw · find_first"] == "FAIL"
    assert subtests["fuzz-read-only · peek_stores"] == "FAIL"
    # The correct tools were fuzzed too, and held.
    assert subtests["fuzz-no-throw · find_ok"] == "PASS"
    assert subtests["fuzz-read-only · find_ok"] == "PASS"


async def test_a_correct_page_passes_the_fuzz_and_its_unchanged_catalog(
    audits: Audits, baseline: CatalogSnapshot
) -> None:
    audit = audits[1]["/t/fixed"]
    assert findings(audit, "fuzz-") == {} and findings(audit, "catalog-") == {}
    subtests = statuses(audits, "/t/fixed")
    assert subtests["fuzz-no-throw · find_first"] == "PASS"
    assert subtests["catalog-annotation · find_ok"] == "PASS"
    assert len([n for n in subtests if n.startswith("catalog-")]) == len(baseline.tools) * (
        len(CATALOG_CODES) - 1
    )
    assert "FAIL" not in subtests.values()


async def test_a_flipped_read_only_hint_fails_against_the_catalog_baseline(
    audits: Audits,
) -> None:
    found = findings(audits[1]["/t/flipped"], "catalog-")
    assert set(found) == {("catalog-annotation", "find_ok")}
    flipped = found[("catalog-annotation", "find_ok")]
    assert flipped.severity == "error" and "readOnlyHint true → false" in flipped.message
    assert statuses(audits, "/t/flipped")["catalog-annotation · find_ok"] == "FAIL"
    # The broken page's catalog drifted as well: a new tool, a widened schema.
    drifted = findings(audits[1]["/t/broken"], "catalog-")
    assert drifted[("catalog-added", "peek_stores")].severity == "warning"
    assert drifted[("catalog-input-widened", "find_first")].severity == "error"


def test_each_property_and_change_class_has_a_rule_without_a_lighthouse_counterpart() -> None:
    codes = [*FUZZ_CODES.values(), *CATALOG_CODES.values()]
    assert list(FUZZ_CODES) == list(PROPERTIES)
    assert list(CATALOG_CODES) == list(get_args(ChangeKind))
    for code in codes:
        rule = RULES[code]
        assert rule.lighthouse is None and code in WITHOUT_LIGHTHOUSE, code
        assert rule.scope in ("fuzz", "catalog") and rule.fix and rule.spec, code


def _tool(name: str, **fields: Any) -> Tool:
    return Tool.model_validate(
        {"name": name, "description": "Reads one thing.", "origin": ORIGIN, "frame": "main"}
        | fields
    )


READ_ONLY = {"readOnlyHint": True}


@pytest.mark.parametrize(
    ("was", "now", "code", "severity"),
    [
        ([_tool("a", annotations=READ_ONLY)], [_tool("a")], "catalog-annotation", "error"),
        (
            [_tool("a")],
            [_tool("a"), _tool("b", annotations={"destructiveHint": True})],
            "catalog-added",
            "error",
        ),
        ([_tool("a")], [_tool("a"), _tool("b")], "catalog-added", "warning"),
        ([_tool("a")], [], "catalog-removed", "warning"),
        ([_tool("a")], [_tool("a", title="A")], "catalog-title", "info"),
        ([_tool("a")], [_tool("a", description="Reads two.")], "catalog-description", "warning"),
    ],
)
def test_a_change_is_graded_as_drift_grades_it(
    was: list[Tool], now: list[Tool], code: str, severity: str
) -> None:
    baseline = snapshot_of(was, ORIGIN + "/")
    # The page moved to another host and port: its own tools are still the same tools.
    moved = [t.model_copy(update={"origin": "http://10.0.0.1:9999"}) for t in now]
    found, checks = catalog_findings(baseline, moved, "http://10.0.0.1:9999/")
    assert [(f.code, f.severity) for f in found] == [(code, severity)]
    assert ("a", "catalog-removed") in checks and ("a", "catalog-added") not in checks


@pytest.mark.slow
async def test_the_cli_gates_on_fuzz_and_catalog_findings(
    server: QAServer, baseline: CatalogSnapshot, tmp_path: Path
) -> None:
    catalog = tmp_path / "catalog.json"
    catalog.write_text(baseline.to_json(), encoding="utf-8")
    out = tmp_path / "reports"
    code, stdout, err = await run_script(
        "conformance",
        "site",
        server.url("/broken"),
        "--name",
        "qa",
        "--fuzz",
        "--fuzz-property",
        "no-throw",
        "--fuzz-examples",
        "6",
        "--fuzz-seed",
        "3",
        "--catalog-baseline",
        str(catalog),
        "--output",
        str(out),
        "--no-progress",
        timeout=240,
    )
    assert code == 1, err + stdout
    assert "unexpected: [polyfill] /qa/broken › fuzz-no-throw · find_first" in stdout
    assert "unexpected: [polyfill] /qa/broken › catalog-input-widened · find_first" in stdout
    root = ET.parse(out / "junit.xml").getroot()
    failures = {
        case.get("name"): case.find("failure")
        for case in root.iter("testcase")
        if case.find("failure") is not None
    }
    failure = failures["fuzz-no-throw · find_first"]
    assert failure is not None and "webmcp-harness fuzz" in ET.tostring(failure, "unicode")
    report = json.loads((out / "wptreport-polyfill.json").read_text(encoding="utf-8"))
    assert report["run_info"]["fuzz"] == ["no-throw"]
    for path in out.rglob("*"):
        if path.is_file():
            assert CANARY not in path.read_text(encoding="utf-8", errors="replace"), path.name


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "why"),
    [
        (["--fuzz-examples", "3"], "--fuzz-examples needs --fuzz"),
        (["--fuzz", "--fuzz-examples", "0"], "--fuzz-examples must be at least 1"),
        (["--catalog-baseline", "/nonexistent/catalog.json"], "/nonexistent/catalog.json"),
        (["--catalog-baseline", str(ROOT / "README.md")], "not JSON"),
        (["--catalog-baseline", "a.json", "--catalog-baseline", "b.json"], "give one for"),
    ],
)
async def test_bad_qa_options_are_usage_errors(args: list[str], why: str) -> None:
    code, _, err = await run_script(
        "conformance", "site", "http://127.0.0.1:9/", *args, "--no-progress"
    )
    assert code == 2 and why in err and "Traceback" not in err, err


async def test_a_fuzz_that_cannot_go_on_fails_the_page_rather_than_passing_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def page_went_away(*_: object) -> None:
        raise RuntimeError("Target page, context or browser has been closed")

    monkeypatch.setattr(audit_module, "fuzz", page_went_away)
    audit = SiteAudit(url=ORIGIN + "/", test="/t/")
    await audit_module._fuzz(cast(Session, None), audit, fuzzing())
    [stopped] = audit.findings
    assert (stopped.code, stopped.severity) == ("probe-failed", "error")
    assert "Fuzzing stopped: RuntimeError" in stopped.message and "closed" in stopped.evidence


def test_properties_the_fuzz_could_not_check_are_a_warning_that_says_why() -> None:
    # A run that asked for the properties' gate shows what it could not check: no inputs
    # could be made from a schema, the tool went away.
    why = "no input drawn from t's inputSchema fits it as the harness validates it"
    report = FuzzReport(
        url="http://a.test/",
        backend="polyfill",
        tools=[
            ToolReport(
                tool="t",
                results=[
                    PropertyResult(property="no-throw", status="skipped", reason=why),
                    PropertyResult(property="read-only", status="skipped", reason=why),
                    PropertyResult(property="no-navigation", status="passed", examples=3),
                    PropertyResult(property="idempotent", status="not-applicable", reason="x"),
                ],
            ),
            ToolReport(tool="u", skipped="not declared readOnlyHint"),
        ],
    )
    found, checks = fuzz_findings(report)
    [unchecked] = found
    assert (unchecked.code, unchecked.severity, unchecked.tool) == ("probe-failed", "warning", "t")
    assert unchecked.message == "Fuzzing could not check no-throw, read-only on t."
    assert unchecked.evidence == why
    assert sorted(checks) == [("t", "fuzz-no-navigation"), ("t", "probe-failed")]


def test_a_form_that_refuses_what_its_schema_allows_is_a_warning_in_the_audit() -> None:
    # The form is right by HTML's rules; the schema Chromium derives says less than it
    # checks: a finding CI sees, which fails the audit only at --fail-on warning.
    why = '<input name="title" required> refused "" (valueMissing): add pattern=".+" to it'
    report = FuzzReport(
        url="http://a.test/",
        backend="polyfill",
        tools=[
            ToolReport(
                tool="find_book",
                results=[
                    PropertyResult(property="no-throw", status="passed", examples=10),
                    PropertyResult(
                        property="form-constraints",
                        status="failed",
                        severity="warning",
                        failure=Failure(
                            arguments={"title": ""},
                            message=why,
                            found_after=1,
                            cli="webmcp-harness fuzz …",
                            pytest="…",
                        ),
                    ),
                ],
            )
        ],
    )
    assert report.ok  # the fuzz command exits 0 for it
    [found], checks = fuzz_findings(report)
    assert (found.code, found.severity, found.tool) == (
        "fuzz-form-constraints",
        "warning",
        "find_book",
    )
    assert found.message == why and 'pattern=".+"' in found.fix
    assert sorted(checks) == [
        ("find_book", "fuzz-form-constraints"),
        ("find_book", "fuzz-no-throw"),
    ]
