"""The doctor, with this machine's Chromium: what a page gets with the native flags on and
off, a page that is not a secure context, a page that fakes WebMCP and hangs its readers,
and the whole report."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from harness.browser.chromium import NATIVE_WEBMCP_FLAGS, find_chromium
from harness.qa.doctor import diagnose, lines_for_people, probe, probe_server
from tests.conftest import PageServer, free_port

# A name that is not loopback: http:// there is not a secure context.
NOT_SECURE = "--host-resolver-rules=MAP insecure.test 127.0.0.1"


@pytest.fixture(scope="module")
def chromium() -> Path:
    return find_chromium()


async def test_the_native_flags_on_and_off(chromium: Path) -> None:
    async with probe_server() as url:
        on = await probe(chromium, url, flags=list(NATIVE_WEBMCP_FLAGS))
        off = await probe(chromium, url, flags=[])
    assert on.error is None and off.error is None
    assert on.secure and on.document  # Chromium's own document.modelContext
    assert off.secure and not off.document and not off.navigator


async def test_the_report_with_a_page_that_is_not_a_secure_context(chromium: Path) -> None:
    async with probe_server() as url:
        insecure = url.replace("127.0.0.1", "insecure.test")
        report = await diagnose(insecure, extra_args=[NOT_SECURE], headed=False)
    by_check = {line.check: line for line in report.lines}
    assert by_check["chromium"].status == "ok" and str(chromium) in by_check["chromium"].found
    assert by_check["native (headless, native flags)"].status == "ok"
    assert "document.modelContext" in by_check["native (headless, native flags)"].found
    plain = by_check["plain (headless, no flags)"]
    assert plain.status == "ok" and "as expected" in plain.found
    assert by_check["headed"].status == "skipped" and "xvfb-run" in by_check["headed"].fix
    assert by_check["polyfill"].status == "ok"
    secure = by_check["secure-context"]
    assert secure.status == "fail" and "not a secure context" in secure.found
    assert "https" in secure.fix and "localhost" in secure.fix
    assert by_check["url-native"].status == "warn"
    # The polyfill withholds WebMCP there too (found from outside: it was advised).
    assert "polyfill" not in by_check["url-native"].fix
    assert "secure context" in by_check["url-native"].fix
    assert not report.ok
    shown = [text for _, text in lines_for_people(report)]
    assert any(text.startswith("FAIL    secure-context: ") for text in shown)
    assert any(text.startswith("        fix: serve it over https") for text in shown)


async def test_a_page_cannot_hang_the_doctor_nor_fake_webmcp(
    chromium: Path, page_server: PageServer
) -> None:
    # Without the native flags the browser has no WebMCP, whatever the page's world says.
    url = page_server.url("x_doctor_hostile.html")
    found = await asyncio.wait_for(probe(chromium, url, flags=[]), 60)
    assert found.error is None and found.secure
    assert not found.document and not found.navigator


async def test_a_page_that_does_not_load_is_unreachable_not_a_finding(
    chromium: Path, page_server: PageServer
) -> None:
    # As the harness reads a page: an error status did not load it (the CLI exits 3).
    found = await probe(chromium, page_server.url("x_no_such_page.html"), flags=[])
    assert found.unreachable and found.error == "HTTP 404"
    refused = await probe(chromium, f"http://127.0.0.1:{free_port()}/", flags=[])
    assert refused.unreachable and "ERR_CONNECTION_REFUSED" in (refused.error or "")
