"""Running the installed ``webmcp-harness`` console script from async tests.

Always through ``asyncio.create_subprocess_exec``: a blocking ``subprocess.run`` would
stall the event loop that serves the sites the command talks to.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

SCRIPT = shutil.which("webmcp-harness") or str(Path(sys.executable).parent / "webmcp-harness")


async def run_script(
    *args: str, timeout: float = 60, cwd: Path | None = None, prefix: Sequence[str] = ()
) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of ``webmcp-harness ARGS`` (wide output: no wrapping),
    run in ``cwd`` (default: this one); ``prefix``: a command that runs it (``setpriv …``)."""
    proc = await asyncio.create_subprocess_exec(
        *prefix,
        SCRIPT,
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "COLUMNS": "200"},
        cwd=cwd,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=timeout)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()
