"""The site audit against pages that fight it, on both backends: a page that patches the DOM
functions a read would use (it hid forms from the lints and hung the audit for ever), one
whose main thread never yields, one whose tools come after hydration (audited as having none,
it passed) — and the test ids that stay the same when the site moves to another port."""

from __future__ import annotations

import asyncio
import json
import xml.etree.ElementTree as ET
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from harness import BrowserPool
from harness.catalog import Settle
from harness.conformance.audit import (
    AuditOptions,
    SiteAudit,
    SiteTarget,
    audit_sites,
    scan_page,
    site_targets,
)
from harness.conformance.findings import lint
from harness.conformance.page_reads import IsolatedWorlds, PageReadTimeout
from harness.errors import ConfigError
from harness.harness import Harness
from harness.models import BackendName
from tests.conftest import PageServer, listen
from tests.console_script import run_script

BACKENDS: list[BackendName] = ["polyfill", "native"]


def _codes(audit: SiteAudit) -> set[tuple[str, str | None]]:
    return {(f.code, f.tool) for f in audit.findings}


async def _audit(
    url: str, backend: BackendName, options: AuditOptions, settle: Settle | None = None
) -> SiteAudit:
    _, [audit] = await asyncio.wait_for(
        audit_sites([SiteTarget(url, "/t/")], backend=backend, options=options, settle=settle),
        90,
    )
    return audit


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_page_that_patches_the_dom_neither_hides_forms_nor_hangs_the_audit(
    page_server: PageServer, backend: BackendName
) -> None:
    audit = await _audit(page_server.url("audit_hostile.html"), backend, AuditOptions())
    found = _codes(audit)
    assert ("description-missing", "hidden_form") in found  # the form the patch hid
    assert not any(code == "page-unreadable" for code, _ in found)
    assert "list_items" in audit.tools


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
async def test_tools_that_register_after_hydration_are_waited_for_or_fail_the_audit(
    page_server: PageServer, backend: BackendName
) -> None:
    url = page_server.url("audit_late.html")
    expecting = await _audit(url, backend, AuditOptions(expect_tools=("checkout",)))
    assert ("expected-tool-missing", "checkout") in _codes(expecting)
    assert expecting.tools == []
    waiting = await _audit(url, backend, AuditOptions(wait_for_tools=("checkout",)))
    assert waiting.tools == ["checkout"]
    assert not any(code == "expected-tool-missing" for code, _ in _codes(waiting))
    settled = await _audit(
        url, backend, AuditOptions(expect_tools=("checkout",)), Settle(quiet=2.5, timeout=8)
    )
    assert settled.tools == ["checkout"] and ("expected-tool-missing", "checkout") not in _codes(
        settled
    )


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_page_that_never_yields_times_the_reads_out(
    browser_pool: BrowserPool, page_server: PageServer, backend: BackendName
) -> None:
    url = page_server.url("audit_busy.html")
    async with Harness(browsers=browser_pool, backend=backend, policy=None) as harness:
        session = await harness.open(url)
        async with IsolatedWorlds(session.page, timeout=1.0) as isolated:
            [world, *_] = await isolated.worlds()
            assert await isolated.evaluate(world, "() => document.forms.length") == 1
            await session.page.evaluate("wedge()")
            with pytest.raises(PageReadTimeout):
                await isolated.evaluate(world, "() => document.forms.length")
        scan = await asyncio.wait_for(scan_page(session, url, AuditOptions(read_timeout=1.0)), 30)
        assert scan.unread
        assert ("page-unreadable", None) in {(f.code, f.tool) for f in lint(scan)}


REDIRECTING = """<!doctype html><meta charset=utf-8><script>
document.modelContext.registerTool({
  name: "get_token", description: "Returns a reference to the current API token.",
  inputSchema: {type: "object", properties: {}}, annotations: {readOnlyHint: true},
  execute: () => ({content: [{type: "secret_reference", id: "t1", label: "token",
                              redeemUrl: "/redeem/t1", ttl: 60}]}),
});
</script>"""


@pytest.fixture
async def redirecting_site() -> AsyncIterator[tuple[str, list[str]]]:
    """A page whose reference redeems at a same-origin URL that redirects to another origin,
    which answers 200 to anyone; yields the page URL and the other origin's requests."""
    elsewhere: list[str] = []

    async def secret(request: web.Request) -> web.Response:
        elsewhere.append(request.path)
        return web.json_response({"token": "not-this-sites-answer"})

    other = web.Application()
    other.router.add_get("/{tail:.*}", secret)
    other_runner = web.AppRunner(other)
    await other_runner.setup()
    other_port = await listen(other_runner)

    async def page(_: web.Request) -> web.Response:
        return web.Response(text=REDIRECTING, content_type="text/html")

    async def redeem(_: web.Request) -> web.Response:
        raise web.HTTPFound(f"http://localhost:{other_port}/secret")

    app = web.Application()
    app.router.add_get("/", page)
    app.router.add_route("*", "/redeem/{id}", redeem)
    runner = web.AppRunner(app)
    await runner.setup()
    port = await listen(runner)
    yield f"http://127.0.0.1:{port}/", elsewhere
    await runner.cleanup()
    await other_runner.cleanup()


@pytest.mark.parametrize("backend", BACKENDS)
async def test_the_redemption_probe_never_follows_a_redirect_to_another_origin(
    redirecting_site: tuple[str, list[str]], backend: BackendName
) -> None:
    url, elsewhere = redirecting_site
    audit = await _audit(url, backend, AuditOptions())
    found = {f.code: f for f in audit.findings if f.tool == "get_token"}
    assert "redeem-cross-origin" in found and "redirects" in found["redeem-cross-origin"].message
    assert "redeem-no-auth" not in found  # what answered elsewhere is not this site's answer
    assert elsewhere == []


def test_site_test_ids_keep_the_path_and_drop_host_and_port() -> None:
    targets = site_targets(
        [
            ("http://127.0.0.1:8777/app/", "shop"),
            ("http://127.0.0.1:8777/app/cart?step=2#top", "shop"),
            ("http://127.0.0.1:8777/other.html", "shop"),
            ("http://localhost:9001/", "site"),
        ]
    )
    assert [t.test for t in targets] == [
        "/shop/{index}",  # a directory's page: a file wpt.fyi can store (test_ids.py)
        "/shop/cart?step=2",
        "/shop/@root/other.html",  # outside /app/: never the id of /app/other.html
        "/site/{index}",
    ]
    moved = site_targets([("http://10.0.0.7:41234/app/", "shop")])
    assert moved[0].test == "/shop/{index}"
    with pytest.raises(ConfigError, match="both become the test"):
        site_targets(
            [(f"http://127.0.0.1:{port}/x", "site") for port in (1, 2, 3)]  # 2 and 3: /@root/x
        )
    with pytest.raises(ConfigError, match="a site name is"):
        site_targets([("http://127.0.0.1:1/", "my site/..")])


async def test_the_cli_names_the_site_and_fails_on_an_expected_tool_that_never_came(
    page_server: PageServer, tmp_path: Path
) -> None:
    out = tmp_path / "late"
    code, stdout, err = await run_script(
        "conformance",
        "site",
        page_server.url("audit_late.html"),
        "--name",
        "shop",
        "--expect-tool",
        "checkout",
        "--output",
        str(out),
        "--no-progress",
        timeout=180,
    )
    assert code == 1, err + stdout
    assert "unexpected: [polyfill] /shop/audit_late.html › expected-tool-missing · checkout" in (
        stdout
    )
    report = json.loads((out / "wptreport-polyfill.json").read_text(encoding="utf-8"))
    assert [r["test"] for r in report["results"]] == ["/shop/audit_late.html"]
    root = ET.parse(out / "junit.xml").getroot()
    names = {case.get("classname") for case in root.iter("testcase")}
    assert names == {"site.polyfill.shop.audit_late_html"}
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "127.0.0.1" not in summary.split("### Findings")[0]  # the areas read /shop
