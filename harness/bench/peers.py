"""Item 4: the MCP bridge against Playwright MCP, over stdio and HTTP.

Both servers run as processes, driven by the official MCP SDK client, calling the same
page tool. ``webmcp-harness mcp`` serves the page it is given; Playwright MCP
(``@playwright/mcp``, pinned in ``bench/package.json``, ``make bench-deps``) is told to
navigate there first and then offers the page's tools as ``webmcp_<name>``. It runs with
Debian's Chromium and the WebMCP flags, with its default settle wait after each action
and with ``--timeout-settle 0``.

Cold start: from spawning the process to the first ``tools/list`` that lists the page's
tool — for Playwright MCP that includes the ``browser_navigate`` it needs first.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from harness.bench.cli_start import bare_command
from harness.bench.cpu import TreeCpu, descendants, process_cpu_ms, started_since
from harness.bench.report import Item, Target
from harness.bench.timing import Measured, Sample, interleaved
from harness.browser.chromium import find_chromium
from harness.browser.launch import launch_flags
from harness.browser.marks import ENV_VAR, read_marks

PLAYWRIGHT_MCP = (
    Path(__file__).resolve().parents[2] / "bench" / "node_modules" / "@playwright" / "mcp"
)
START_TIMEOUT_S = 60.0


def playwright_mcp() -> tuple[Path, str] | None:
    """Playwright MCP's CLI and version, when ``make bench-deps`` installed it."""
    manifest = PLAYWRIGHT_MCP / "package.json"
    cli = PLAYWRIGHT_MCP / "cli.js"
    if not (manifest.is_file() and cli.is_file()):
        return None
    return cli, str(json.loads(manifest.read_text(encoding="utf-8")).get("version", ""))


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


PORT = "{port}"
"""In an HTTP server's command: the port, picked as the server starts (a port picked
earlier, when the servers are listed, could be taken by the time one starts)."""


@dataclass
class Server:
    """How to start one MCP server, and how to reach the page's echo tool through it."""

    label: str
    command: list[str]  # over HTTP, it holds PORT where the port goes
    http: bool = False  # False: stdio
    navigate_to: str | None = None  # Playwright MCP: browser_navigate here first
    tool: str = "echo"


def harness_server(url: str, *, http: bool) -> Server:
    """``webmcp-harness mcp`` on ``url`` (the default backend and policy)."""
    command = [sys.executable, "-m", "harness.cli", "mcp", url]
    if not http:
        return Server("webmcp-harness mcp, stdio", command)
    return Server(
        "webmcp-harness mcp, HTTP", [*command, "--transport", "http", "--port", PORT], http=True
    )


def playwright_server(cli: Path, url: str, config: Path, *, http: bool, settle: bool) -> Server:
    """Playwright MCP on Debian's Chromium with the WebMCP flags."""
    command = [
        "node",
        str(cli),
        "--headless",
        "--isolated",
        "--no-sandbox",
        "--executable-path",
        str(find_chromium()),
        "--config",
        str(config),
    ]
    if not settle:
        command += ["--timeout-settle", "0"]
    label = "Playwright MCP, " + ("HTTP" if http else "stdio")
    label += "" if settle else ", --timeout-settle 0"
    if http:
        # Bound to loopback; its host check would refuse the 127.0.0.1 Host header otherwise.
        command += ["--port", PORT, "--host", "127.0.0.1", "--allowed-hosts", "*"]
    return Server(label, command, http=http, navigate_to=url, tool="webmcp_echo")


def playwright_config(directory: Path) -> Path:
    """Playwright MCP's config: the launch flags the harness's native backend uses."""
    path = directory / "playwright-mcp.json"
    config = {"browser": {"launchOptions": {"args": launch_flags("native")}}}
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


class Connected:
    """A running server with a connected client: ``call()`` is one round trip."""

    def __init__(self, server: Server, client: Client) -> None:
        self.server = server
        self.client = client

    async def call(self) -> None:
        """One ``tools/call`` of the page's echo tool."""
        result = await self.client.call_tool(self.server.tool, {"text": "hello"})
        if result.is_error:
            raise RuntimeError(f"{self.server.label}: the echo tool failed")

    async def listed(self) -> bool:
        """Whether ``tools/list`` lists the page's tool."""
        listing = await self.client.list_tools()
        return any(tool.name == self.server.tool for tool in listing.tools)


@contextlib.asynccontextmanager
async def connect(server: Server, env: dict[str, str] | None = None) -> AsyncIterator[Connected]:
    """Start ``server`` (with ``env`` added to its environment), connect, navigate if it
    needs to, and wait for the page's tool."""
    with contextlib.ExitStack() as stack:
        # A scratch working directory: Playwright MCP writes its console logs into
        # `.playwright-mcp/` there, which must not land in the user's directory.
        scratch = stack.enter_context(tempfile.TemporaryDirectory(prefix="webmcp-bench-"))
        if not server.http:
            params = StdioServerParameters(
                command=server.command[0],
                args=server.command[1:],
                env={**os.environ, **(env or {})},
                cwd=scratch,
            )
            errlog = stack.enter_context(open(os.devnull, "w"))
            transport: Any = stdio_client(params, errlog=errlog)
        else:
            port = _free_port()
            command = [str(port) if arg == PORT else arg for arg in server.command]
            process = subprocess.Popen(
                command,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd=scratch,
                env={**os.environ, **(env or {})},
            )
            stack.callback(_stop, process)
            await _wait_for_port(port, process)
            transport = streamable_http_client(f"http://127.0.0.1:{port}/mcp")
        async with Client(transport, mode="legacy") as client:
            connected = Connected(server, client)
            if server.navigate_to is not None:
                await client.call_tool("browser_navigate", {"url": server.navigate_to})
            with anyio.fail_after(START_TIMEOUT_S):
                while not await connected.listed():
                    await anyio.sleep(0.02)
            yield connected


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


async def _wait_for_port(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the MCP server exited with status {process.returncode}")
        with contextlib.suppress(OSError):
            stream = await anyio.connect_tcp("127.0.0.1", port)
            await stream.aclose()
            return
        await anyio.sleep(0.02)
    raise RuntimeError(f"the MCP server did not listen on port {port}")


# The steps of webmcp-harness's start (harness.browser.marks), in order, as the report names them.
START_STEPS = {
    "python": "the command running (Python and the CLI loaded)",
    "driver": "Playwright's driver started",
    "chromium": "Chromium launched",
    "loaded": "the page loaded",
    "settled": "its catalog settled",
    "listed": "the first tools/list with the page's tool",
}


async def cold_start(
    server: Server,
    steps: dict[str, list[float]] | None = None,
    cpu: dict[str, list[TreeCpu]] | None = None,
) -> Measured:
    """Spawn, connect, reach a ``tools/list`` with the page's tool (measured), and stop;
    with ``steps``, the milliseconds from the spawn to each of the server's start marks
    (:mod:`harness.browser.marks`) are added to it; with ``cpu``, the CPU time its
    processes had used by then (:mod:`harness.bench.cpu`), under the server's label."""
    with tempfile.TemporaryDirectory(prefix="webmcp-marks-") as scratch:
        marks = Path(scratch) / "marks"
        env = {ENV_VAR: str(marks)} if steps is not None else None
        before = descendants()
        since = time.monotonic()
        started = time.perf_counter()
        async with connect(server, env):
            took = Measured((time.perf_counter() - started) * 1000)
            used = started_since(before)
        if cpu is not None and used is not None:
            cpu.setdefault(server.label, []).append(used)
        if steps is not None:
            for name, at in read_marks(marks).items():
                steps.setdefault(name, []).append((at - since) * 1000)
            steps.setdefault("listed", []).append(took)
        return took


# A start on Playwright for Python with nothing else: the bare script of item 8, timed from
# its spawn until it printed the page's getTools() (its browser's closing and exit not).
BARE_START = "a bare Playwright-for-Python script: spawn to the page's getTools() (no MCP)"


async def bare_start(url: str, cpu: dict[str, list[TreeCpu]] | None = None) -> Measured:
    """Spawn :func:`~harness.bench.cli_start.bare_command` on ``url``; the milliseconds until
    it printed the page's tool names (with ``cpu``: its processes' CPU time by then)."""
    before = descendants()
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        *bare_command(url),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None
    line = await process.stdout.readline()
    took = Measured((time.perf_counter() - started) * 1000)
    used = started_since(before)
    if cpu is not None and used is not None:
        cpu.setdefault(BARE_START, []).append(used)
    _, err = await process.communicate()
    if process.returncode != 0 or "echo" not in line.decode():
        raise RuntimeError(f"the bare script failed ({process.returncode}): {err.decode()[-300:]}")
    return took


class Holder:
    """Keeps each connection open in a task of its own (the SDK client's task group must be
    left by the task that entered it), for the interleaved round trips."""

    def __init__(self) -> None:
        self._stack = contextlib.AsyncExitStack()
        self.connections: dict[str, Connected] = {}

    async def open(self, server: Server) -> None:
        """Start and connect ``server``."""
        self.connections[server.label] = await self._stack.enter_async_context(connect(server))

    async def close(self) -> None:
        """Stop every server."""
        await self._stack.aclose()


async def mcp_items(
    url: str,
    *,
    rounds: int,
    cold_rounds: int,
    peers: bool,
    round_trip: bool = True,
    cold: bool = True,
) -> list[Item]:
    """Item 4: the MCP round trip and the cold start (either may be left out), against
    Playwright MCP when installed."""
    found = playwright_mcp() if peers else None
    skipped = None
    if not peers:
        skipped = "Playwright MCP (the quick run measures webmcp-harness only)."
    elif found is None:
        skipped = "Playwright MCP is not installed (run `make bench-deps`)."
    items: list[Item] = []
    with tempfile.TemporaryDirectory(prefix="webmcp-bench-") as tmp:
        config = playwright_config(Path(tmp))
        servers = [harness_server(url, http=False), harness_server(url, http=True)]
        if found is not None:
            servers += [
                playwright_server(found[0], url, config, http=False, settle=True),
                playwright_server(found[0], url, config, http=False, settle=False),
                playwright_server(found[0], url, config, http=True, settle=False),
            ]
        peers_started = True
        if round_trip:
            holder = Holder()
            try:
                for server in servers:
                    try:
                        await holder.open(server)
                    except Exception as exc:  # a peer that cannot start is reported, not fatal
                        if server.label.startswith("webmcp-harness"):
                            raise
                        skipped = f"{server.label}: it did not start ({_first_line(exc)})."
                samples = await interleaved(
                    {label: conn.call for label, conn in holder.connections.items()},
                    rounds=rounds,
                    batch=3,
                )
            finally:
                await holder.close()
            peers_started = all(s.label in holder.connections for s in servers)
            items.append(
                _item(
                    "mcp",
                    "4a. MCP round trip: tools/call of the page's echo tool",
                    samples,
                    skipped,
                )
            )
        if cold:
            cold_servers = [harness_server(url, http=False)]
            if found is not None and peers_started:
                cold_servers += [
                    playwright_server(found[0], url, config, http=False, settle=True),
                    playwright_server(found[0], url, config, http=False, settle=False),
                ]
            steps: dict[str, list[float]] = {}
            cpu: dict[str, list[TreeCpu]] = {}
            starts = {
                server.label: _cold(server, steps if i == 0 else None, cpu)
                for i, server in enumerate(cold_servers)
            }
            if found is not None:
                starts[BARE_START] = lambda: bare_start(url, cpu)
            cold_samples = await interleaved(
                starts,
                rounds=cold_rounds,
                warmup=0 if cold_rounds == 1 else 1,
            )
            item = _item(
                "cold_start",
                "4b. Cold start: spawn to the first tools/list with the page's tool (stdio)",
                cold_samples,
                skipped,
            )
            item.note = bare_start_note(item)
            # Where webmcp-harness's start goes (the warm-up round's marks included).
            for name, what in START_STEPS.items():
                if steps.get(name):
                    item.add(
                        f"webmcp-harness mcp, stdio: {what}",
                        Sample.of(steps[name]),
                        note="since the spawn",
                    )
            await add_cpu_bound(item, cpu, rounds=cold_rounds)
            items.append(item)
    return items


def bare_start_note(item: Item) -> str:
    """Where a bare start on Playwright for Python stands, from this run's medians."""
    anchor = item.figure(item.anchor or "")
    bare, ours = item.figure(BARE_START), item.figure("webmcp-harness mcp, stdio")
    if anchor is None or bare is None or ours is None or anchor.sample.median <= 0:
        return ""
    return (
        f"A bare Playwright-for-Python script (launch Chromium, load the page, read "
        f"`getTools()`: no readiness contract, no MCP) reaches the page's tools at "
        f"{bare.sample.median / anchor.sample.median:.2f}× Playwright MCP's time; "
        f"webmcp-harness is {ours.sample.median / bare.sample.median:.2f}× that script."
    )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _cold(
    server: Server, steps: dict[str, list[float]] | None, cpu: dict[str, list[TreeCpu]]
) -> Callable[[], Awaitable[Measured]]:
    return lambda: cold_start(server, steps, cpu)


# What a start's CPU time is read against: importing the official MCP SDK's stdio server
# (what any MCP server in Python built on it loads), and the `mcp` command's whole stack.
SDK_IMPORT = "import mcp.server.lowlevel, mcp.server.stdio"
STACK_IMPORT = "import harness.cli.commands, harness.harness, harness.mcp.server"
CPU_ROW = "CPU time of all its processes to the first tools/list: "
SDK_ROW = "CPU time of importing the official MCP SDK's stdio server alone (no browser)"
STACK_ROW = "CPU time of importing the mcp command's modules (no browser)"


async def add_cpu_bound(item: Item, cpu: dict[str, list[TreeCpu]], *, rounds: int) -> None:
    """The CPU time each start's processes used (Python, Node, Chromium; all cores), the
    imports alone, and in the note what they bound on this machine's cores."""
    if not cpu:
        return  # nothing measurable on this system
    for label, used in cpu.items():
        item.add(CPU_ROW + label, Sample.of([u.total for u in used]), note=_kinds(used))
    for name, code in ((SDK_ROW, SDK_IMPORT), (STACK_ROW, STACK_IMPORT)):
        argv = [sys.executable, "-c", code]
        used_ms = [await asyncio.to_thread(process_cpu_ms, argv) for _ in range(rounds)]
        item.add(name, Sample.of(used_ms), note=f"`python -c '{code}'`")
    item.note = " ".join(filter(None, [item.note, cpu_bound_note(item, os.cpu_count() or 1)]))


def _kinds(used: list[TreeCpu]) -> str:
    """The median start's CPU by kind of process."""
    middle = sorted(used, key=lambda u: u.total)[len(used) // 2]
    return ", ".join(f"{k} {ms:.0f} ms" for k, ms in middle.by_kind.items() if ms > 0)


def cpu_bound_note(item: Item, cores: int) -> str:
    """What the CPU figures bound: no start takes less wall time than its CPU time over the
    cores, so Playwright MCP's time allows ``cores`` × its wall time of CPU."""
    anchor = item.figure(item.anchor or "")
    ours = item.figure(CPU_ROW + "webmcp-harness mcp, stdio")
    if anchor is None or ours is None:
        return ""
    wall, used = anchor.sample.median, ours.sample.median
    budget = cores * wall
    text = (
        f"No start takes less wall time than its CPU time over the machine's {cores} "
        f"core(s): Playwright MCP's {wall:.0f} ms allows {budget:.0f} ms of CPU; "
        f"webmcp-harness's start used {used:.0f} ms ({used / budget:.2f}× that)."
    )
    bare, sdk = item.figure(CPU_ROW + BARE_START), item.figure(SDK_ROW)
    if bare is not None and sdk is not None:
        floor = bare.sample.median + sdk.sample.median
        text += (
            f" A bare Playwright-for-Python start ({bare.sample.median:.0f} ms) plus "
            f"importing the official MCP SDK's server ({sdk.sample.median:.0f} ms) is "
            f"{floor:.0f} ms, {floor / budget:.2f}× the allowance"
        )
        if floor >= budget:
            text += ": no Python server on the official SDK starts within it on this machine."
        else:
            text += (
                f"; the rest of webmcp-harness's start ({used - floor:.0f} ms: its own "
                f"modules, the page's polyfill, its work) would have to fit in "
                f"{budget - floor:.0f} ms."
            )
    return text


def _item(key: str, title: str, samples: dict[str, Sample], skipped: str | None) -> Item:
    anchor = "Playwright MCP, stdio, --timeout-settle 0"
    item = Item(
        key=key,
        title=title,
        anchor=anchor if anchor in samples else None,
        anchor_is="Playwright MCP 0.0.x (`@playwright/mcp`, native WebMCP on the same "
        "Chromium) with `--timeout-settle 0`, its fastest setting; its default (a 500 ms "
        "settle after each action) is measured too. The official MCP SDK client drives "
        "both. webmcp-harness serves with its defaults (polyfill backend, default policy).",
        skipped=skipped,
    )
    for label, sample in samples.items():
        targets = []
        if label.startswith("webmcp-harness"):
            transport = "HTTP" if "HTTP" in label else "stdio"
            peer = f"Playwright MCP, {transport}, --timeout-settle 0"
            if peer in samples:
                targets = [Target(text=f"below {peer}", against=peer, max_ratio=1.0)]
        item.add(label, sample, targets=targets)
    return item.finish()
