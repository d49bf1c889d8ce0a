"""What the tests of Ctrl-C share: a page whose tool says it started and then never
answers, SIGINT's default restored in a child, and the Chromium processes below a process
(read from Linux's ``/proc``), which must not outlive it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from tests.conftest import listen

ON_LINUX = Path("/proc/self/stat").exists()

# A tool that tells the test it is running (a request to /started), then never answers.
SLOW_PAGE = """<!doctype html><title>slow</title><script>
const mc = document.modelContext || navigator.modelContext;
mc.registerTool({
  name: "slow",
  description: "Tells the server it started, then takes forever.",
  inputSchema: {type: "object", properties: {}},
  execute: async () => { await fetch("/started"); return new Promise(() => {}); },
});
</script>"""


class SlowSite:
    """Serves :data:`SLOW_PAGE`; ``started`` is set once a call of its tool began."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.url = ""

    async def page(self, _request: web.Request) -> web.Response:
        return web.Response(text=SLOW_PAGE, content_type="text/html")

    async def begun(self, _request: web.Request) -> web.Response:
        self.started.set()
        return web.Response(text="ok")


@contextlib.asynccontextmanager
async def serve_slow_site() -> AsyncIterator[SlowSite]:
    """:class:`SlowSite` on a free loopback port."""
    site = SlowSite()
    app = web.Application()
    app.router.add_get("/", site.page)
    app.router.add_get("/started", site.begun)
    runner = web.AppRunner(app, shutdown_timeout=1.0)
    await runner.setup()
    site.url = f"http://127.0.0.1:{await listen(runner)}/"
    try:
        yield site
    finally:
        await runner.cleanup()


def restore_sigint() -> None:
    """For ``preexec_fn``: a background job (`make test &`, nohup) starts with SIGINT
    ignored, which children inherit; with the default back, the child's Python installs
    its Ctrl-C handler."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def command_line(pid: int) -> str:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    return ""


def alive(pid: int) -> bool:
    """Running, not a zombie waiting to be reaped."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def browsers_below(pid: int) -> dict[int, str]:
    """The Chromium processes descended from ``pid``, with their command lines."""
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                tree.setdefault(parent, []).append(int(entry.name))
    found, below = {}, list(tree.get(pid, []))
    while below:
        child = below.pop()
        line = command_line(child)
        if "--remote-debugging-pipe" in line or "--type=" in line:
            found[child] = line
        below += tree.get(child, [])
    return found


async def assert_closed(browsers: dict[int, str], what: str = "the command") -> None:
    """None of ``browsers`` outlives ``what`` (they may take a moment to go); any left are
    killed, and the test fails."""
    assert browsers, f"{what} had no Chromium when interrupted"
    deadline = time.monotonic() + 10
    left = list(browsers)
    while left and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
        left = [p for p, line in browsers.items() if alive(p) and command_line(p) == line]
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    if left:
        pytest.fail(f"Chromium outlived {what}: {left}")
