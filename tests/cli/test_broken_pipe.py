"""A reader that stops reading (`webmcp-harness tools --json URL | head`) ends the command
quietly, as it ends any command of a shell pipeline: exit status 141 (128 + SIGPIPE), no
traceback, no "check the path and its permissions" — whichever output was cut short."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path

import pytest

from harness.cli.commands import _console
from tests.console_script import SCRIPT

PAGE = """<!doctype html><meta charset="utf-8"><title>many words</title>
<script>
for (let i = 0; i < 3000; i++) {
  document.modelContext.registerTool({
    name: "tool_" + i, description: "word ".repeat(50), inputSchema: {type: "object"},
    execute: () => "ran",
  });
}
</script>
"""


async def test_a_reader_that_left_ends_the_command_quietly(tmp_path: Path) -> None:
    page = tmp_path / "many.html"
    page.write_text(PAGE, encoding="utf-8")
    proc = await asyncio.create_subprocess_exec(
        SCRIPT,
        "tools",
        page.as_uri(),
        "--json",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = await asyncio.wait_for(proc.stdout.read(100), 120)
    assert first, "the command wrote nothing"
    proc.stdout.feed_eof()
    transport = proc._transport  # type: ignore[attr-defined]
    transport.get_pipe_transport(1).close()  # the reader leaves, as `head` does
    err = await asyncio.wait_for(proc.stderr.read(), 120)
    code = await asyncio.wait_for(proc.wait(), 120)
    assert code == 141, err.decode()
    assert b"Traceback" not in err and b"permissions" not in err, err.decode()


def test_the_tables_console_leaves_the_same_way(monkeypatch: pytest.MonkeyPatch) -> None:
    # rich's own answer to a closed pipe is SystemExit(1): a silent failure to a script.
    reading, writing = os.pipe()
    os.close(reading)
    with os.fdopen(writing, "w") as closed:
        monkeypatch.setattr("sys.stdout", closed)
        console = _console()
        with pytest.raises(BrokenPipeError):
            for _ in range(100):
                console.print("x" * 100)
        monkeypatch.undo()
        with contextlib.suppress(BrokenPipeError):  # what is still buffered goes nowhere
            closed.close()
