"""``harness.browser.chromium.chromium_args``: the features Playwright switches stay
switched when the harness adds its own (Chromium keeps only the last `--disable-features`
and `--enable-features` of its command line), and every browser context the harness opens
does without the omnibox's hidden WebUI pages and the spare renderer."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import playwright
import pytest

from harness.browser.chromium import (
    HARNESS_DISABLED_FEATURES,
    PLAYWRIGHT_DISABLED_FEATURES,
    PLAYWRIGHT_ENABLED_FEATURES,
    QUIET_FLAGS,
    chromium_args,
)
from harness.browser.launch import launch, launch_flags
from tests.conftest import PageServer

DISABLE, ENABLE = "--disable-features=", "--enable-features="


def features(args: list[str], switch: str) -> list[list[str]]:
    """Each ``switch`` on the command line ``args``, as its list of features."""
    return [arg[len(switch) :].split(",") for arg in args if arg.startswith(switch)]


def driver_switches() -> str:
    """The source of Playwright's chromiumSwitches in the installed driver."""
    lib = Path(playwright.__file__).parent / "driver/package/lib"
    bundle = lib / "coreBundle.js"
    if bundle.is_file():
        text = bundle.read_text(encoding="utf-8")
        start = text.index("chromium/chromiumSwitches.ts")
        return text[start : text.index("--disable-features=", start)]
    return (lib / "server/chromium/chromiumSwitches.js").read_text(encoding="utf-8")


def listed(source: str, opening: str) -> list[str]:
    """The string literals of the array that follows ``opening`` in ``source``."""
    body = source[source.index(opening) :]
    body = body[body.index("[") + 1 : body.index("]")]
    body = re.sub(r"//[^\n]*", "", body)
    return [name for name in re.findall(r'"([^"]*)"', body) if name]


def test_the_features_playwright_switches_are_the_installed_drivers() -> None:
    source = driver_switches()
    assert listed(source, "disabledFeatures = ") == list(PLAYWRIGHT_DISABLED_FEATURES), (
        "Playwright's driver disables other features than harness/browser/chromium.py "
        "lists: copy its list into PLAYWRIGHT_DISABLED_FEATURES"
    )
    assert listed(source, "enabledFeatures = ") == list(PLAYWRIGHT_ENABLED_FEATURES), (
        "Playwright's driver enables other features than harness/browser/chromium.py "
        "lists: copy its list into PLAYWRIGHT_ENABLED_FEATURES"
    )


def test_feature_switches_merge_into_one_of_each_and_a_callers_choice_wins() -> None:
    args = chromium_args(
        ["--no-sandbox", "--disable-features=Foo"],
        ["--enable-features=WebMCP,WebMCPTesting", "--lang=en"],
        [f"--enable-features={HARNESS_DISABLED_FEATURES[0]}", "--disable-features=Foo,Bar"],
        ["--disable-features=CDPScreenshotNewSurface"],
    )
    assert args[:2] == ["--no-sandbox", "--lang=en"]  # the rest, in order
    [disabled] = features(args, DISABLE)
    [enabled] = features(args, ENABLE)
    assert disabled == [
        *PLAYWRIGHT_DISABLED_FEATURES,
        *HARNESS_DISABLED_FEATURES[1:],  # the first was enabled by a caller
        "Foo",
        "Bar",
        "CDPScreenshotNewSurface",
    ]
    assert enabled == [
        *(f for f in PLAYWRIGHT_ENABLED_FEATURES if f != "CDPScreenshotNewSurface"),
        "WebMCP",
        "WebMCPTesting",
        HARNESS_DISABLED_FEATURES[0],
    ]
    assert chromium_args(QUIET_FLAGS) == [
        *QUIET_FLAGS,
        DISABLE + ",".join([*PLAYWRIGHT_DISABLED_FEATURES, *HARNESS_DISABLED_FEATURES]),
        ENABLE + ",".join(PLAYWRIGHT_ENABLED_FEATURES),
    ]


def _children() -> dict[int, list[int]]:
    """Every process's children, by parent pid, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    return children


def _command_line(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode().rstrip("\0").split("\0")
    except OSError:
        return []


def browser_processes(marker: str) -> list[tuple[int, list[str]]]:
    """The pid and command line of each Chromium browser process below this one that holds
    ``marker``: the topmost only (a process Chromium has just forked, before it execs a
    helper, still shows its parent's command line)."""
    children = _children()
    found, below = [], [(pid, False) for pid in children.get(os.getpid(), [])]
    while below:
        pid, under_a_match = below.pop()
        args = _command_line(pid)
        match = "--remote-debugging-pipe" in args and marker in args
        if match and not under_a_match:
            found.append((pid, args))
        below += [(child, under_a_match or match) for child in children.get(pid, [])]
    return found


def browser_command_lines(marker: str) -> list[list[str]]:
    """The command lines of :func:`browser_processes`."""
    return [args for _, args in browser_processes(marker)]


def renderers_below(pid: int) -> int:
    """How many renderer processes run below the browser process ``pid``."""
    children, count, below = _children(), 0, [pid]
    while below:
        process = below.pop()
        # A zygote's child writes its title over its arguments: one string, spaces between.
        count += "--type=renderer" in " ".join(_command_line(process))
        below += children.get(process, [])
    return count


FORKS = """
import os, sys, time
if os.fork() == 0:  # a child not yet exec'd: its command line is its parent's
    time.sleep(30)
    os._exit(0)
print("forked", flush=True)
time.sleep(30)
"""


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux only)")
def test_a_process_forked_from_the_browser_is_not_taken_for_a_second_browser() -> None:
    # Run 4 of stop 38's series found two command lines for one launch: the browser's and,
    # read at the wrong moment, one Chromium had forked and not yet exec'd.
    marker = f"--webmcp-harness-test={uuid.uuid4()}"
    command = [sys.executable, "-c", FORKS, "--remote-debugging-pipe", marker]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as process:
        try:
            assert process.stdout is not None and process.stdout.readline() == "forked\n"
            assert [args[-2:] for args in browser_command_lines(marker)] == [
                ["--remote-debugging-pipe", marker]
            ]
        finally:
            children = Path(f"/proc/{process.pid}/task/{process.pid}/children")
            for child in children.read_text().split():
                os.kill(int(child), signal.SIGKILL)
            process.kill()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux only)")
async def test_chromium_runs_with_every_feature_playwright_and_the_harness_switch(
    page_server: PageServer,
) -> None:
    marker = f"--webmcp-harness-test={uuid.uuid4()}"  # a switch Chromium ignores
    launched = await launch(None, headless=True, args=[*launch_flags("native"), marker])
    try:
        found = browser_processes(marker)
        assert len(found) == 1, "the launched Chromium's process was not found below this one"
        [(browser_pid, command_line)] = found
        # Chromium keeps the last of each switch: it must hold every feature of the others.
        *earlier_off, last_off = features(command_line, DISABLE)
        *earlier_on, last_on = features(command_line, ENABLE)
        assert earlier_off, "Playwright no longer passes --disable-features: simplify this"
        assert {f for each in earlier_off for f in each} <= set(last_off)
        assert {f for each in earlier_on for f in each} <= set(last_on)
        assert set(HARNESS_DISABLED_FEATURES) <= set(last_off)
        assert {"WebMCP", "WebMCPTesting"} <= set(last_on)

        context = await launched.browser.new_context()
        page = await context.new_page()
        await page.goto(page_server.url("s_tools.html"))
        cdp = await launched.browser.new_browser_cdp_session()
        targets = (await cdp.send("Target.getTargets"))["targetInfos"]
        assert [t["url"] for t in targets if t["url"].startswith("chrome://")] == []
        # One renderer for the context's page, and no spare one started beside it.
        await page.evaluate("new Promise(r => requestAnimationFrame(() => setTimeout(r, 300)))")
        assert renderers_below(browser_pid) == 1
        # Chromium's WebMCP is there: its feature is on
        assert await page.evaluate("typeof document.modelContext") == "object"
    finally:
        await launched.close()
