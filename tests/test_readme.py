"""Every code block of the README runs, against the bundled sites.

The rules, kept simple so that a new block either runs or says why not:

- A fenced block tagged ``sh`` runs in bash (``set -e``: every command must succeed),
  in a scratch directory where ``examples/`` is at hand, with the venv's commands on
  ``PATH`` and ``webmcp-harness sites`` already serving every site.
- A block tagged ``python`` is a script run with the venv's Python; one that defines
  ``test_…`` functions is a test file run with pytest. Both must pass ``ruff``'s
  pyflakes checks (no unused imports, no undefined names).
- ``yaml``, ``toml`` and ``json`` blocks must parse. Untagged blocks are prose.
- A block right after a line ``<!-- readme: not run — REASON -->`` is skipped (set-up
  steps, servers that run until stopped); the reason is required.
- A block right after ``<!-- readme: slow — REASON -->`` runs, but is marked ``slow``: a
  scenario of five seconds or more (several console scripts, or a pytest run of its own),
  which ``make test`` runs when the README or the code it exercises changed
  (``tests/slow_suites.py``); the reason is required.

The README names the sites by their fixed ports (todo 8101, keys 8102, mail 8103, shop
8104, …: each site's ``SiteSpec.port``). The test serves them on free ports instead, replaces those ports in every block,
and gives every ``webmcp-harness sites`` command the same ``--port`` options.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import tomllib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from harness.sites.server import SITES, default_sites

from tests.console_script import SCRIPT

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
BIN = Path(sys.executable).parent
DEFAULT_PORTS = {name: SITES[name].port for name in default_sites()}  # what `sites` serves
FENCE = re.compile(r"^```(?P<lang>\S*)\s*$")
NOT_RUN = re.compile(r"^<!-- readme: not run — (?P<reason>\S.*\S) -->$")
SLOW = re.compile(r"^<!-- readme: slow — (?P<reason>\S.*\S) -->$")

pytestmark = pytest.mark.timeout(900)


@dataclass(frozen=True)
class Block:
    """One fenced code block: its language tag, text, line and skip reason (if any)."""

    lang: str
    text: str
    line: int
    skip: str | None
    slow: str | None = None

    @property
    def id(self) -> str:
        return f"{self.lang or 'text'}@L{self.line}"


def blocks(text: str) -> list[Block]:
    """The fenced code blocks of a Markdown text, in order."""
    found: list[Block] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        match = FENCE.match(lines[index])
        if match is None:
            index += 1
            continue
        start = index
        index += 1
        body: list[str] = []
        while not lines[index].startswith("```"):
            body.append(lines[index])
            index += 1
        index += 1
        above = lines[start - 1] if start > 0 else ""
        marker = NOT_RUN.match(above)
        slow = SLOW.match(above)
        found.append(
            Block(
                lang=match["lang"],
                text="\n".join(body) + "\n",
                line=start + 1,
                skip=marker["reason"] if marker else None,
                slow=slow["reason"] if slow else None,
            )
        )
    return found


BLOCKS = blocks(README.read_text(encoding="utf-8"))


def test_the_rules_find_the_readme_blocks() -> None:
    langs = {b.lang for b in BLOCKS}
    assert {"sh", "python", "yaml", "toml", "json"} <= langs
    assert langs <= {"sh", "python", "yaml", "toml", "json", ""}, langs
    # Skipped blocks are few and say why: set-up, servers that never stop, runs of minutes
    # that tests elsewhere make, and what needs something the machine lacks (a WPT
    # checkout, a Ray cluster).
    skipped = [b for b in BLOCKS if b.skip]
    assert 0 < len(skipped) <= 7 and all(len(b.skip or "") > 10 for b in skipped)


def test_a_marker_skips_only_the_next_block() -> None:
    text = "<!-- readme: not run — a server that runs until stopped -->\n```sh\nx\n```\n```sh\ny\n```\n"
    first, second = blocks(text)
    assert first.skip == "a server that runs until stopped" and second.skip is None


def test_a_slow_marker_marks_only_the_next_block_and_still_runs_it() -> None:
    text = "<!-- readme: slow — a grid of a minute -->\n```sh\nx\n```\n```sh\ny\n```\n"
    first, second = blocks(text)
    assert (first.slow, first.skip) == ("a grid of a minute", None)
    assert second.slow is None
    slow = [b for b in BLOCKS if b.slow]
    assert 0 < len(slow) <= 12 and all(len(b.slow or "") > 10 for b in slow)


class Sites:
    """``webmcp-harness sites`` on free ports, and the README's text rewritten for them."""

    def __init__(self, ports: dict[str, int]) -> None:
        self.ports = ports

    @property
    def options(self) -> list[str]:
        return [f"--port={name}={port}" for name, port in self.ports.items()]

    def rewrite(self, text: str) -> str:
        for name, port in DEFAULT_PORTS.items():
            text = text.replace(f"127.0.0.1:{port}", f"127.0.0.1:{self.ports[name]}")
        return re.sub(
            r"^(\s*webmcp-harness sites\b[^#\n]*?)(\s*#.*)?$",
            lambda m: m[1] + " " + " ".join(self.options) + (m[2] or ""),
            text,
            flags=re.MULTILINE,
        )


@pytest.fixture(scope="module")
async def sites() -> AsyncIterator[Sites]:
    # `--port 0`: the server binds free ports itself and prints them. Ports picked here and
    # bound later could be taken in between (by another worker's outgoing connection).
    process = await asyncio.create_subprocess_exec(
        SCRIPT,
        "sites",
        "--port",
        "0",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    try:
        ports: dict[str, int] = {}
        for _ in DEFAULT_PORTS:
            line = (await asyncio.wait_for(process.stdout.readline(), 60)).decode()
            served = re.fullmatch(r"(\w+)\s+http://127\.0\.0\.1:(\d+)/\s*", line)
            if served is None:
                process.kill()
                error = (await process.stderr.read()).decode()
                pytest.fail(f"`webmcp-harness sites --port 0` printed {line!r}; stderr: {error}")
            ports[served[1]] = int(served[2])
        assert ports.keys() == DEFAULT_PORTS.keys(), ports
        yield Sites(ports)
    finally:
        if process.returncode is None:
            process.terminate()
        await process.wait()


async def run(args: list[str], cwd: Path, timeout: float = 600) -> tuple[int, str]:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_XDIST_WORKER", None)
    process = await asyncio.create_subprocess_exec(
        *args,
        cwd=cwd,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(process.communicate(), timeout)
    assert process.returncode is not None
    return process.returncode, out.decode(errors="replace")


@pytest.mark.parametrize(
    "block", [b for b in BLOCKS if b.lang in ("yaml", "toml", "json")], ids=lambda b: b.id
)
def test_data_blocks_parse(block: Block) -> None:
    if block.lang == "yaml":
        assert yaml.safe_load(block.text) is not None
    elif block.lang == "toml":
        assert tomllib.loads(block.text)
    else:
        assert json.loads(block.text)


@pytest.mark.parametrize(
    "block",
    [
        pytest.param(b, id=b.id, marks=[pytest.mark.slow] if b.slow else [])
        for b in BLOCKS
        if b.lang in ("sh", "python")
    ],
)
async def test_code_blocks_run(block: Block, sites: Sites, tmp_path: Path) -> None:
    if block.skip:
        pytest.skip(f"README block at line {block.line} is not run: {block.skip}")
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    text = sites.rewrite(block.text)
    if block.lang == "sh":
        script = tmp_path / "block.sh"
        script.write_text("set -euo pipefail\n" + text, encoding="utf-8")
        code, out = await run(["bash", str(script)], tmp_path)
    else:
        script = tmp_path / ("test_block.py" if "\ndef test_" in text else "block.py")
        script.write_text(text, encoding="utf-8")
        lint, findings = await run(
            [str(BIN / "ruff"), "check", "--no-cache", "--isolated", "--select", "F", str(script)],
            tmp_path,
        )
        assert lint == 0, f"README block at line {block.line}:\n{findings}"
        if script.name.startswith("test_"):
            code, out = await run(
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(script)],
                tmp_path,
            )
        else:
            code, out = await run([sys.executable, str(script)], tmp_path)
    assert code == 0, f"README block at line {block.line} failed (exit {code}):\n{out[-4000:]}"
