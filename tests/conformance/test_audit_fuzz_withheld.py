"""``conformance site --fuzz`` on a page whose sensitive tool throws an error quoting its
secret: the error is withheld from the agent, and so from every report file the audit
writes (findings.json, JUnit, the wptreport, Markdown, HTML) — audit evidence never holds
a value the harness withheld."""

from __future__ import annotations

import asyncio
from pathlib import Path

from harness.catalog import Settle
from harness.conformance.audit import (
    AuditOptions,
    SiteTarget,
    audit_report,
    audit_sites,
    findings_json,
)
from harness.conformance.baseline import Baseline
from harness.conformance.reports import build_view, write_reports
from harness.qa.fuzz import FuzzOptions
from tests.qa.pages import page, serve

# Not shaped like a key: the reports' own secret masking does not catch it, redaction must.
SECRET = "swordfish-4821"
PIN_LOOKUP = """
document.modelContext.registerTool({
  name: "pin_lookup", description: "Looks up the account's PIN (a secret).",
  annotations: {readOnlyHint: true, sensitiveHint: true},
  inputSchema: {type: "object", properties: {account: {type: "string", maxLength: 4}},
                required: ["account"]},
  execute: async ({account}) => { throw new Error("PIN SECRET is locked for " + account); },
});
""".replace("SECRET", SECRET)


async def test_a_sensitive_tool_s_error_reaches_no_report_file(tmp_path: Path) -> None:
    fuzzing = FuzzOptions(properties=["no-throw"], examples=3, seed=1, database=None)
    async with serve({"/": page(PIN_LOOKUP)}) as server:
        info, audits = await asyncio.wait_for(
            audit_sites(
                [SiteTarget(server.url("/"), "/pin")],
                options=AuditOptions(fuzz=fuzzing),
                settle=Settle.quiet_ms(100),
            ),
            240,
        )
    [threw] = [f for f in audits[0].findings if f.code == "fuzz-no-throw"]
    assert threw.tool == "pin_lookup" and "threw on valid input" in threw.message
    report = audit_report(info, audits, "error", 0)
    view = build_view("site audit", [report], Baseline().compare([report]), Baseline())
    written = write_reports(tmp_path, view, {"findings.json": findings_json(audits)})
    assert {path.name for path in written.files} >= {
        "findings.json",
        "junit.xml",
        "report.html",
        "summary.md",
        "wptreport-polyfill.json",
    }
    for path in written.files:
        assert SECRET not in path.read_text(encoding="utf-8"), path.name
