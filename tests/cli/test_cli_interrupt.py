"""Ctrl-C: every command stopped by SIGINT says so in one line and exits 130 (the shell's
status for it), its browser closed; ``experiment`` says how ``--resume`` continues it."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from harness.cli.commands import EXIT_INTERRUPTED, main
from harness.cli.experiment import interrupted
from harness.cli.options import Interrupted
from tests.console_script import SCRIPT
from tests.interrupts import (
    ON_LINUX,
    SlowSite,
    assert_closed,
    browsers_below,
    restore_sigint,
    serve_slow_site,
)

pytestmark = pytest.mark.skipif(not ON_LINUX, reason="reads /proc (Linux only)")


@pytest.fixture
async def slow_site() -> AsyncIterator[SlowSite]:
    async with serve_slow_site() as site:
        yield site


async def interrupt_once(
    args: list[str], ready: Callable[[], Awaitable[object]], *, cwd: Path
) -> tuple[int, str, str, dict[int, str]]:
    """Run ``webmcp-harness ARGS``, send it one SIGINT once ``ready`` returns; its exit
    status, stdout, stderr and the Chromium processes it had when interrupted."""
    proc = await asyncio.create_subprocess_exec(
        SCRIPT,
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "COLUMNS": "200"},
        cwd=cwd,
        preexec_fn=restore_sigint,
    )
    browsers: dict[int, str] = {}
    try:
        waiting = asyncio.ensure_future(ready())
        exited = asyncio.ensure_future(proc.wait())
        await asyncio.wait({waiting, exited}, timeout=120, return_when=asyncio.FIRST_COMPLETED)
        waiting.cancel()
        if proc.returncode is not None:
            _, err = await proc.communicate()
            pytest.fail(f"exited {proc.returncode} before the interrupt: {err.decode()[-2000:]}")
        assert waiting.done() and not waiting.cancelled(), "the command never got under way"
        browsers = browsers_below(proc.pid)
        proc.send_signal(signal.SIGINT)
        out, err = await asyncio.wait_for(proc.communicate(), 60)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode(), browsers


@pytest.mark.slow  # a whole `call`, interrupted mid-call (~3 s)
@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
async def test_ctrl_c_during_a_call_exits_130_and_closes_the_browser(
    slow_site: SlowSite, tmp_path: Path, as_json: bool
) -> None:
    args = ["call", slow_site.url, "slow", "--timeout", "300", *(["--json"] if as_json else [])]
    code, out, err, browsers = await interrupt_once(args, slow_site.started.wait, cwd=tmp_path)
    assert code == EXIT_INTERRUPTED == 130, err
    assert err == "webmcp-harness: interrupted\n"
    if as_json:
        assert json.loads(out) == {"error": {"code": "interrupted", "message": "interrupted"}}
    else:
        assert out == ""
    await assert_closed(browsers)


def write_grid(directory: Path, url: str) -> Path:
    grid = directory / "grid.toml"
    grid.write_text(
        f"""
[experiment]
name = "interrupted"
seeds = 2
policies = ["none"]
elicitation = ["cancel"]
backends = ["polyfill"]
max_steps = 3
episode_timeout = 300
call_timeout = 300

[[agents]]
spec = "scripted"

[[tasks]]
id = "slow"
url = "{url}"
instruction = "be slow"
plan = [{{call = "slow", args = {{}}}}, {{finish = "done"}}]
success = [{{call = "slow", contains = "never"}}]
""",
        encoding="utf-8",
    )
    return grid


@pytest.mark.slow  # a whole `experiment`, interrupted in its first episode (~5 s)
async def test_ctrl_c_during_an_experiment_says_how_to_resume(
    slow_site: SlowSite, tmp_path: Path
) -> None:
    grid = write_grid(tmp_path, slow_site.url)
    output = tmp_path / "run"
    args = ["experiment", str(grid), "--output", str(output), "--workers", "1", "--no-progress"]
    code, _, err, browsers = await interrupt_once(args, slow_site.started.wait, cwd=tmp_path)
    assert code == 130, err
    lines = err.splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("webmcp-harness: interrupted; ")
    assert f"--output {output} --resume" in lines[0]
    assert (output / "results.db").is_file()  # what --resume continues
    await assert_closed(browsers)


def test_an_interrupt_reaching_the_entry_is_one_line_and_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from harness.cli import commands

    def stopped(args: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setitem(commands.RUNNERS, "trace", stopped)
    assert main(["trace", "show", "somewhere"]) == 130
    captured = capsys.readouterr()
    assert captured.err == "webmcp-harness: interrupted\n" and captured.out == ""


def test_an_interrupted_experiment_names_its_output_for_resume(tmp_path: Path) -> None:
    # Stopped before its database existed: nothing to resume, so no such advice.
    assert str(interrupted("grid.toml", tmp_path / "run")) == "interrupted"
    (tmp_path / "my run").mkdir()
    (tmp_path / "my run" / "results.db").touch()
    message = str(interrupted("grid.toml", tmp_path / "my run"))
    assert isinstance(interrupted("grid.toml", tmp_path / "my run"), Interrupted)
    assert message.startswith("interrupted; ")
    assert f"webmcp-harness experiment grid.toml --output '{tmp_path}/my run' --resume" in message
