"""The site audit against an outside tester's findings: a page that crashes mid-audit (it
passed, the tool after the crash unprobed), probes that got no answer (a tool that hangs, a
tool probed after another navigated the page away: both passed ``secret-in-output``),
ECMAScript patterns read as Python's (valid ones were ``input-schema-invalid`` errors), and
test ids that two pages of one site shared (one inside the start URL's directory, one not)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from harness.conformance.audit import (
    AuditOptions,
    SiteAudit,
    SiteTarget,
    audit_report,
    audit_sites,
    site_targets,
)
from harness.conformance.baseline import Baseline
from harness.conformance.findings import PageScan, lint
from harness.conformance.results import Report, TestResult
from harness.models import Tool
from tests.conftest import serve_pages

ORIGIN = "http://127.0.0.1:1"
LEAK = "api_key=sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a AKIAIOSFODNN7EXAMPLE"


def _page(*tools: tuple[str, str]) -> str:
    """A page registering read-only tools, each ``(name, body of execute)``."""
    registered = "".join(
        f"""document.modelContext.registerTool({{name: "{name}",
  description: "Returns the account settings of the current user for display.",
  inputSchema: {{type: "object", properties: {{}}}}, annotations: {{readOnlyHint: true}},
  execute() {{ {body} }} }});
"""
        for name, body in tools
    )
    return f"<!doctype html><meta charset=utf-8><title>t</title><body><script>{registered}</script>"


PAGES = {
    "crash.html": _page(
        ("settings", "const kept = []; for (;;) kept.push(new Array(1e5).fill(Math.random()));"),
        ("z_settings", f'return "{LEAK}";'),
    ),
    "hang.html": _page(
        ("settings", "return new Promise(() => {});"), ("z_settings", f'return "{LEAK}";')
    ),
    "nav.html": _page(
        ("a_lister", 'location.href = "/gone.html"; return "ok";'),
        ("z_settings", f'return "{LEAK}";'),
    ),
    "gone.html": "<!doctype html><title>gone</title>gone",
    "zip.html": f"""<!doctype html><meta charset=utf-8><title>t</title><script>
document.modelContext.registerTool({{name: "lookup_zip", description: "Looks a code up.",
  inputSchema: {{type: "object", required: ["zip"],
    properties: {{zip: {{type: "string", pattern: "^[0-9]{{5}}$"}}}}}},
  annotations: {{readOnlyHint: true}}, execute() {{ return "{LEAK}"; }} }});
</script>""",
    "unicode.html": f"""<!doctype html><meta charset=utf-8><title>t</title><script>
document.modelContext.registerTool({{name: "profile", description: "Returns a profile.",
  inputSchema: {{type: "object", required: ["name"],
    properties: {{name: {{type: "string", pattern: "^\\\\p{{Ll}}+$"}}}}}},
  annotations: {{readOnlyHint: true}}, execute() {{ return "{LEAK}"; }} }});
</script>""",
}


@pytest.fixture
async def site() -> AsyncIterator[str]:
    """Serves :data:`PAGES`; yields the origin."""
    async with serve_pages(PAGES) as origin:
        yield origin


async def _audited(url: str, options: AuditOptions | None = None) -> tuple[SiteAudit, Report]:
    info, [audit] = await asyncio.wait_for(
        audit_sites([SiteTarget(url, "/t/page")], options=options or AuditOptions()), 90
    )
    return audit, audit_report(info, [audit], "error", 0)


def _statuses(result: TestResult) -> dict[str, str]:
    return {s.name: s.status for s in result.subtests}


async def test_a_crash_mid_audit_is_a_crash_and_the_tools_after_it_are_probed_on_a_fresh_page(
    site: str,
) -> None:
    # The allocation crashes the renderer in seconds; the long limit keeps a loaded machine
    # from timing the call out first.
    audit, report = await _audited(f"{site}/crash.html", AuditOptions(probe_timeout=60))
    [result] = report.results
    assert result.status == "CRASH" and "settings" in (result.message or "")
    statuses = _statuses(result)
    assert statuses["secret-in-output · settings"] == "NOTRUN"  # never a pass: it did not run
    assert statuses["probe-failed · settings"] == "FAIL"
    assert statuses["secret-in-output · z_settings"] == "FAIL"  # the leak after the crash
    assert Baseline().compare([report]).unexpected  # the run fails (exit 1): a CRASH
    assert {(f.code, f.tool, f.severity) for f in audit.findings} >= {
        ("probe-failed", "settings", "error"),
        ("secret-in-output", "z_settings", "error"),
    }


async def test_a_tool_that_never_answers_does_not_pass_its_probe(site: str) -> None:
    audit, report = await _audited(f"{site}/hang.html", AuditOptions(probe_timeout=1.0))
    [result] = report.results
    statuses = _statuses(result)
    assert statuses["secret-in-output · settings"] == "TIMEOUT"
    assert statuses["probe-failed · settings"] == "FAIL"
    assert statuses["secret-in-output · z_settings"] == "FAIL"  # probed on a fresh page
    assert result.status == "OK"
    assert [f.message for f in audit.findings if f.code == "probe-failed"] == [
        "settings did not answer within 1 s."
    ]


async def test_a_tool_that_navigates_away_does_not_hide_the_next_tools_leak(site: str) -> None:
    audit, report = await _audited(f"{site}/nav.html")
    [result] = report.results
    statuses = _statuses(result)
    assert statuses["secret-in-output · z_settings"] == "FAIL"
    assert statuses["secret-in-output · a_lister"] == "PASS"  # it answered "ok", then left
    assert not any(f.code == "probe-failed" for f in audit.findings)


def _tool(pattern: str, where: str = "input") -> Tool:
    schema = {"type": "object", "properties": {"code": {"type": "string", "pattern": pattern}}}
    return Tool.model_validate(
        {
            "name": "t",
            "description": "Looks up an entry by its code and shows it to the user.",
            "origin": ORIGIN,
            "frame": "main",
            "inputSchema": schema if where == "input" else {"type": "object"},
            **({"outputSchema": schema} if where == "output" else {}),
        }
    )


def _schema_codes(tool: Tool) -> set[str]:
    found = lint(PageScan(url=ORIGIN + "/", origin=ORIGIN, tools=[tool]))
    return {f.code for f in found if f.code.endswith("schema-invalid")}


@pytest.mark.parametrize(
    "pattern",
    [
        "^(?<area>[0-9]{3})-[0-9]{4}$",  # a named group
        "^\\p{Lu}[a-z]+$",  # a Unicode property
        "^\\u{1F600}$",  # a code point escape
        "^(?<=a)b$",  # a lookbehind
        "^[A-Z][a-z]+$",
    ],
)
@pytest.mark.parametrize("where", ["input", "output"])
def test_ecmascript_patterns_are_valid_json_schema(pattern: str, where: str) -> None:
    assert _schema_codes(_tool(pattern, where)) == set()


@pytest.mark.parametrize("pattern", ["(", "[z-a]", "a**"])
def test_a_pattern_no_ecmascript_engine_accepts_is_still_invalid(pattern: str) -> None:
    assert _schema_codes(_tool(pattern)) == {"input-schema-invalid"}
    assert _schema_codes(_tool(pattern, "output")) == {"output-schema-invalid"}


def test_pages_inside_and_outside_the_start_directory_get_distinct_stable_ids() -> None:
    urls = [
        "http://127.0.0.1:8772/a/x.html",  # the start URL: its directory is /a/
        "http://127.0.0.1:8772/x.html",
        "http://127.0.0.1:8772/b/x.html",
        "http://127.0.0.1:8772/a/b/x.html",
        "http://127.0.0.1:8772/a",
    ]
    ids = [t.test for t in site_targets([(url, "site") for url in urls])]
    assert ids == [
        "/site/x.html",
        "/site/@root/x.html",
        "/site/@root/b/x.html",
        "/site/b/x.html",
        "/site/@root/a",
    ]
    moved = [url.replace("127.0.0.1:8772", "localhost:9") for url in urls]
    assert [t.test for t in site_targets([(url, "site") for url in moved])] == ids


async def test_a_tool_whose_pattern_only_ecmascript_reads_is_probed(site: str) -> None:
    # `\p{Ll}` is not Python's: the audit's own check of its example arguments called the
    # schema unusable ("No arguments … fit") and never probed the tool, leak and all.
    audit, report = await _audited(f"{site}/unicode.html")
    statuses = _statuses(report.results[0])
    assert statuses["secret-in-output · profile"] == "FAIL", statuses
    assert not any(f.code == "probe-failed" for f in audit.findings)


async def test_a_tool_whose_pattern_the_default_string_misses_is_probed(site: str) -> None:
    # "audit" is no five-digit code: the audit had no arguments for it ("No arguments …
    # fit", info) and never looked at what it returns.
    audit, report = await _audited(f"{site}/zip.html")
    statuses = _statuses(report.results[0])
    assert statuses["secret-in-output · lookup_zip"] == "FAIL", statuses
    assert not any(f.code == "probe-failed" for f in audit.findings)
