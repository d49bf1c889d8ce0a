"""``webmcp-harness doctor``: why WebMCP is (or is not) in a page, and what to do about it.

The most common report in every WebMCP tool's tracker is "there is no modelContext": the
flags were not given (or given to a Chromium that ignores them), the page is not a secure
context, or the browser was Chrome for Testing, which turns WebMCP on by itself and hides
the mistake until a user's Chrome does not. The doctor launches the Chromium the harness
would use and looks, once with the native flags and once without, headless and (with a
display) headed, at what a page on a loopback origin gets: ``document.modelContext``,
``navigator.modelContext``, ``navigator.modelContextTesting`` and the DevTools protocol's
``WebMCP`` domain; whether the harness's polyfill injects and sees a tool the page
registers; and, given a URL, whether that page is a secure context WebMCP is exposed to.

Every line says what was found and, when that is not what the harness needs, what to do.
A URL that cannot be loaded is not a finding but a check the doctor could not make:
:attr:`DoctorReport.unreachable` says so, and the CLI exits 3 for it, as every gate command
does for a page it cannot reach.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

from aiohttp import web
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Playwright, async_playwright
from pydantic import BaseModel, Field

from harness.browser.chromium import (
    ENV_VAR,
    NATIVE_WEBMCP_FLAGS,
    QUIET_FLAGS,
    chromium_args,
    find_chromium,
)
from harness.browser.isolated import IsolatedWorlds, PageReadTimeout
from harness.catalog import Settle
from harness.errors import BrowserNotFound, HarnessError

Status = Literal["ok", "warn", "fail", "info", "skipped"]
DOCTOR_TIMEOUT_MS = 15_000

PROBE_JS = """() => ({
  secure: window.isSecureContext,
  document: !!document.modelContext,
  navigator: !!navigator.modelContext,
  testing: !!navigator.modelContextTesting,
})"""

_PAGE = """<!doctype html><title>webmcp-harness doctor</title>
<script>
const mc = document.modelContext || navigator.modelContext;
if (mc && mc.registerTool) {
  try {
    mc.registerTool({name: "doctor_probe", description: "The doctor's probe tool.",
                     inputSchema: {type: "object"}, execute: async () => "ok"});
  } catch (e) {}
}
</script>"""


class Line(BaseModel):
    """One finding: what was checked, what was found, and what to do when it is not ok."""

    check: str
    status: Status
    found: str
    fix: str = ""


class DoctorReport(BaseModel):
    """Every line of one doctor run."""

    lines: list[Line] = Field(default_factory=list)
    unreachable: str | None = Field(default=None, exclude=True)
    """Why the URL given could not be loaded: its checks could not be made."""

    @property
    def ok(self) -> bool:
        """Whether nothing failed."""
        return not any(line.status == "fail" for line in self.lines)

    def add(self, check: str, status: Status, found: str, fix: str = "") -> Line:
        """Append a line and return it."""
        line = Line(check=check, status=status, found=found, fix=fix)
        self.lines.append(line)
        return line


class Probe(BaseModel):
    """What one page got, in one launch."""

    secure: bool = False
    document: bool = False
    navigator: bool = False
    testing: bool = False
    cdp: bool = False
    error: str | None = None
    unreachable: bool = False
    """Whether the error is the page's: it did not load (a network error, HTTP 4xx/5xx)."""


def chromium_version(path: Path) -> str:
    """``Chromium 156.0…`` as the executable says it (empty when it does not)."""
    try:
        done = subprocess.run(
            [str(path), "--version"], capture_output=True, text=True, timeout=20, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    lines = [line.strip() for line in done.stdout.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def is_chrome_for_testing(path: Path, version: str) -> bool:
    """Chrome for Testing (what ``playwright install`` fetches) turns WebMCP on by itself."""
    return "for Testing" in version or "ms-playwright" in str(path)


@asynccontextmanager
async def probe_server() -> AsyncIterator[str]:
    """A loopback page (a secure context) that registers one tool; yields its URL."""

    async def page(_request: web.Request) -> web.Response:
        return web.Response(text=_PAGE, content_type="text/html")

    app = web.Application()
    app.router.add_get("/", page)
    runner = web.AppRunner(app, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[-1][1]
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        await runner.cleanup()


async def probe(
    executable: Path,
    url: str,
    *,
    flags: Sequence[str],
    headless: bool = True,
    playwright: Playwright | None = None,
) -> Probe:
    """Launch ``executable`` with the quiet flags and ``flags``, open ``url``, and look
    (with ``playwright``'s driver, or a driver of its own)."""
    if playwright is None:
        async with async_playwright() as own:
            return await probe(executable, url, flags=flags, headless=headless, playwright=own)
    try:
        browser = await playwright.chromium.launch(
            executable_path=str(executable),
            headless=headless,
            args=chromium_args(QUIET_FLAGS, flags),
            timeout=DOCTOR_TIMEOUT_MS,
        )
    except PlaywrightError as exc:
        return Probe(error=_first_line(exc))
    try:
        page = await browser.new_page()
        try:
            response = await page.goto(url, timeout=DOCTOR_TIMEOUT_MS)
        except PlaywrightError as exc:
            return Probe(error=_first_line(exc), unreachable=True)
        if response is not None and response.status >= 400:
            # As the harness reads a page (Session.goto): an error status did not load it.
            return Probe(error=f"HTTP {response.status}", unreachable=True)
        # In a world the page cannot patch (a getter of its own on `document.modelContext`
        # that never returns), within a time limit.
        async with IsolatedWorlds(page, DOCTOR_TIMEOUT_MS / 1000) as isolated:
            found: dict[str, Any] = await isolated.evaluate(await isolated.top(), PROBE_JS) or {}
        result = Probe(
            **{k: bool(found.get(k)) for k in ("secure", "document", "navigator", "testing")}
        )
        cdp = await page.context.new_cdp_session(page)
        try:
            await cdp.send("WebMCP.enable")
            result.cdp = True
        except PlaywrightError:
            result.cdp = False
        return result
    except (PlaywrightError, PageReadTimeout) as exc:
        return Probe(error=_first_line(exc))
    finally:
        await browser.close()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _apis(found: Probe) -> str:
    names = [
        name
        for name, there in (
            ("document.modelContext", found.document),
            ("navigator.modelContext", found.navigator),
            ("navigator.modelContextTesting", found.testing),
            ("CDP WebMCP", found.cdp),
        )
        if there
    ]
    return ", ".join(names) if names else "no WebMCP API"


def has_display() -> bool:
    """Whether a headed Chromium can open a window here."""
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


async def diagnose(
    url: str | None = None,
    *,
    executable: Path | None = None,
    extra_args: Sequence[str] = (),
    headed: bool | None = None,
) -> DoctorReport:
    """Run every check. ``extra_args`` go to every launch (e.g. a ``--host-resolver-rules``);
    ``headed``: also look headed (default: when there is a display)."""
    report = DoctorReport()
    try:
        path = executable or find_chromium()
    except BrowserNotFound as exc:
        report.add("chromium", "fail", str(exc), _chromium_fix())
        return report
    where = f"${ENV_VAR}" if os.environ.get(ENV_VAR) else "found"
    version = chromium_version(path)
    report.add("chromium", "ok", f"{path} ({where}): {version or 'version unknown'}")
    testing_build = is_chrome_for_testing(path, version)
    if testing_build:
        report.add(
            "chrome-for-testing",
            "warn",
            "this is Chrome for Testing, which turns WebMCP on by itself",
            "a page that works here may get no WebMCP in a user's Chrome; check with Debian's "
            f"Chromium too (${ENV_VAR}=/usr/bin/chromium)",
        )
    report.add("flags", "info", "always: " + " ".join(chromium_args(QUIET_FLAGS)))
    report.add("flags", "info", "--backend native adds: " + " ".join(NATIVE_WEBMCP_FLAGS))
    async with probe_server() as probe_url, async_playwright() as driver:
        native = [*NATIVE_WEBMCP_FLAGS, *extra_args]
        on = await probe(path, probe_url, flags=native, playwright=driver)
        _native_lines(report, on, "headless, native flags")
        off = await probe(path, probe_url, flags=list(extra_args), playwright=driver)
        _plain_lines(report, off, "headless, no flags", testing_build)
        if headed is None:
            headed = has_display()
        if headed:
            shown = await probe(path, probe_url, flags=native, headless=False, playwright=driver)
            _native_lines(report, shown, "headed, native flags")
        else:
            report.add(
                "headed",
                "skipped",
                "no display ($DISPLAY, $WAYLAND_DISPLAY): only headless was looked at",
                "run it under a display (e.g. xvfb-run webmcp-harness doctor) to look headed too",
            )
        await _polyfill_line(report, path, probe_url, extra_args)
        if url is not None:
            await _url_lines(report, path, url, extra_args, driver)
    return report


def _chromium_fix() -> str:
    return (
        "install Debian's package (apt-get install -y chromium), or point "
        f"${ENV_VAR} at a Chromium executable; `make setup` does the first as root"
    )


def _native_lines(report: DoctorReport, found: Probe, how: str) -> None:
    if found.error:
        report.add(
            f"native ({how})",
            "fail",
            f"Chromium did not start: {found.error}",
            "check that the executable runs (`chromium --version`) and the flags",
        )
        return
    if found.document and found.cdp:
        report.add(f"native ({how})", "ok", f"a loopback page has {_apis(found)}")
        return
    report.add(
        f"native ({how})",
        "warn",
        f"a loopback page has {_apis(found)}",
        "this Chromium has no native WebMCP (Chromium ≥ 146 with "
        "--enable-experimental-web-platform-features has): --backend native will not work; "
        "the polyfill backend (the default) does",
    )


def _plain_lines(report: DoctorReport, found: Probe, how: str, testing_build: bool) -> None:
    if found.error:
        report.add(f"plain ({how})", "fail", f"Chromium did not start: {found.error}")
        return
    if found.document or found.navigator:
        report.add(
            f"plain ({how})",
            "warn",
            f"without any WebMCP flag a page still has {_apis(found)}",
            "WebMCP is on by default in this build"
            + (" (Chrome for Testing)" if testing_build else "")
            + ": users' browsers may not have it; test with the polyfill backend and with "
            "--backend native",
        )
        return
    report.add(
        f"plain ({how})",
        "ok",
        f"without flags a page has {_apis(found)}"
        + (" (only the testing API)" if found.testing else "")
        + ": as expected; the polyfill provides document.modelContext",
    )


async def _polyfill_line(
    report: DoctorReport, path: Path, url: str, extra_args: Sequence[str]
) -> None:
    from harness.harness import Harness

    try:
        async with Harness(
            backend="polyfill",
            executable_path=path,
            policy=None,
            launch_args=extra_args,
            settle=Settle.quiet_ms(100),
        ) as harness:
            session = await harness.open(url)
            names = [t.name for t in await session.tools()]
    except HarnessError as exc:
        report.add(
            "polyfill",
            "fail",
            f"the harness could not open a page: {exc}",
            "see the lines above; `webmcp-harness tools URL` shows the same error",
        )
        return
    if "doctor_probe" in names:
        report.add("polyfill", "ok", "injected: a page's registerTool() reaches the harness")
    else:
        report.add(
            "polyfill",
            "fail",
            "injected, but the probe page's tool did not reach the harness",
            "report it with `webmcp-harness tools URL --json` output",
        )


async def _url_lines(
    report: DoctorReport, path: Path, url: str, extra_args: Sequence[str], driver: Playwright
) -> None:
    found = await probe(path, url, flags=[*NATIVE_WEBMCP_FLAGS, *extra_args], playwright=driver)
    if found.error:
        report.add(
            "url",
            "fail",
            f"{url} could not be opened: {found.error}",
            "check the URL, and that the site is running",
        )
        if found.unreachable:
            report.unreachable = f"Could not open {url}: {found.error}"
        return
    if not found.secure:
        report.add(
            "secure-context",
            "fail",
            f"{url} is not a secure context: WebMCP is exposed only to secure contexts",
            "serve it over https, or from http://localhost / 127.0.0.1 (loopback counts as "
            "secure); an http page on another host gets no document.modelContext",
        )
    else:
        report.add("secure-context", "ok", f"{url} is a secure context")
    status: Status = "ok" if found.document else "warn"
    if found.document:
        fix = ""
    elif not found.secure:  # the polyfill withholds it there too, as Chromium does
        fix = "make it a secure context (above): neither backend gives WebMCP to any other page"
    else:
        fix = "the polyfill backend still gives it document.modelContext"
    report.add("url-native", status, f"with the native flags, {url} has {_apis(found)}", fix)


def lines_for_people(report: DoctorReport) -> list[tuple[Status, str]]:
    """Each line as ``status  check: found`` with its fix indented below."""
    shown: list[tuple[Status, str]] = []
    for line in report.lines:
        shown.append((line.status, f"{line.status.upper():7} {line.check}: {line.found}"))
        if line.fix and line.status not in ("ok", "info"):
            shown.append((line.status, f"        fix: {line.fix}"))
    return shown
