"""Run the official MCP conformance suite against ``webmcp-harness mcp --transport http``.

    .venv/bin/python conformance/run.py                      # both revisions, with the baseline
    .venv/bin/python conformance/run.py --scenario tools-list --spec-version 2026-07-28

It serves ``fixture.html`` (a page whose WebMCP tools are the suite's fixture tools,
where a page can provide them) on loopback, starts the MCP server on it over
streamable HTTP, and runs ``@modelcontextprotocol/conformance server`` once per
protocol revision (``--requirements``: the handshake era's 2025-11-25 and the
stateless 2026-07-28), with ``expected-failures.yml`` as the baseline. The suite
exits non-zero on a failure the baseline does not list, and on a baseline entry
that passes (stale); this script exits non-zero when any run does.

The suite and a Node.js new enough for it (22+) come from ``npm ci`` in this folder
(``make conformance-deps``); nothing is fetched at run time.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

from aiohttp import web

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SUITE = HERE / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
BUNDLED_NODE = HERE / "node_modules" / ".bin" / "node"
BASELINE = HERE / "expected-failures.yml"
REVISIONS = ("2025-11-25", "2026-07-28")
READY_TIMEOUT_S = 90.0
MIN_NODE_MAJOR = 22  # the suite imports fs.globSync


class SetupError(Exception):
    """The suite cannot run here; the message says what to do."""


def find_node() -> str:
    """The Node.js that runs the suite: the one ``npm ci`` put here, else a new enough one on PATH."""
    candidates = [str(BUNDLED_NODE)] if BUNDLED_NODE.exists() else []
    candidates += [path for path in [shutil.which("node")] if path]
    for node in candidates:
        try:
            version = subprocess.run(
                [node, "--version"], capture_output=True, text=True, check=True
            ).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            continue
        if int(version.lstrip("v").split(".")[0]) >= MIN_NODE_MAJOR:
            return node
    raise SetupError(
        f"No Node.js >= {MIN_NODE_MAJOR} to run the conformance suite; run `make conformance-deps` "
        "(npm ci in conformance/ installs one)."
    )


def check_suite() -> None:
    if not SUITE.exists():
        raise SetupError(
            "The MCP conformance suite is not installed; run `make conformance-deps` "
            "(npm ci in conformance/)."
        )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.asynccontextmanager
async def fixture_site() -> AsyncIterator[str]:
    """``fixture.html`` at ``http://127.0.0.1:PORT/``."""

    async def page(_request: web.Request) -> web.StreamResponse:
        return web.FileResponse(HERE / "fixture.html")

    app = web.Application()
    app.router.add_get("/", page)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        await runner.cleanup()


@contextlib.asynccontextmanager
async def mcp_server(page_url: str, backend: str) -> AsyncIterator[str]:
    """``webmcp-harness mcp PAGE --transport http`` on a free loopback port; its MCP URL."""
    port = free_port()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "harness.cli",
        "mcp",
        page_url,
        "--transport",
        "http",
        "--port",
        str(port),
        "--backend",
        backend,
        # The logging scenarios: the page's console during a call, as MCP log messages.
        "--forward-console",
        cwd=ROOT,
        stdin=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stderr is not None
    seen: list[str] = []
    try:
        async with asyncio.timeout(READY_TIMEOUT_S):
            while not seen or "streamable HTTP at" not in seen[-1]:
                line = (await process.stderr.readline()).decode(errors="replace")
                if not line:
                    raise SetupError("The MCP server did not start:\n" + "".join(seen))
                seen.append(line)
        drain = asyncio.ensure_future(_relay(process.stderr))
        try:
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            drain.cancel()
    finally:
        if process.returncode is None:
            process.terminate()
            try:
                await asyncio.wait_for(process.wait(), 15)
            except TimeoutError:
                process.kill()
                await process.wait()


async def _relay(stream: asyncio.StreamReader) -> None:
    """The server's stderr, passed on (so a pipe that fills up cannot stall it)."""
    while line := await stream.readline():
        sys.stderr.write(line.decode(errors="replace"))


async def run_suite(node: str, mcp_url: str, options: Sequence[str]) -> int:
    """One run of ``conformance server``; its exit status."""
    command = [node, str(SUITE), "server", "--url", mcp_url, *options]
    print("$", " ".join(command[1:]), flush=True)
    process = await asyncio.create_subprocess_exec(*command, cwd=HERE)
    return await process.wait()


async def main_async(args: argparse.Namespace) -> int:
    check_suite()
    node = find_node()
    output = Path(args.output) if args.output else HERE / "results" / time.strftime("%Y%m%d-%H%M%S")
    common = ["--expected-failures", str(args.baseline)]
    if args.scenario:
        runs = [["--scenario", args.scenario, "--spec-version", args.spec_version]]
    else:
        runs = [["--requirements", revision] for revision in args.requirements or REVISIONS]
    failed: list[str] = []
    started = time.perf_counter()
    async with fixture_site() as page_url, mcp_server(page_url, args.backend) as mcp_url:
        for options in runs:
            label = " ".join(options)
            code = await run_suite(
                node, mcp_url, [*options, *common, "-o", str(output / label.replace(" ", "-"))]
            )
            print(
                f"conformance {label}: {'ok' if code == 0 else f'FAILED (exit {code})'}", flush=True
            )
            if code != 0:
                failed.append(label)
    elapsed = time.perf_counter() - started
    print(
        f"conformance: {len(runs) - len(failed)}/{len(runs)} runs ok in {elapsed:.0f} s; results in {output}"
    )
    return 1 if failed else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default=str(BASELINE), help="expected-failures YAML")
    parser.add_argument(
        "--requirements",
        action="append",
        choices=REVISIONS,
        help="run this revision's required scenarios (repeatable; default: both)",
    )
    parser.add_argument("--scenario", help="run one scenario instead")
    parser.add_argument(
        "--spec-version", default=REVISIONS[0], help="with --scenario: the protocol revision"
    )
    parser.add_argument("--backend", default="polyfill", choices=["polyfill", "native"])
    parser.add_argument("--output", help="where the suite writes checks.json files")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return asyncio.run(main_async(args))
    except SetupError as exc:
        print(f"conformance: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
