"""Files and directories the harness cannot read, for the tests of inputs a command must
refuse. A mode-000 path refuses a user; root reads it all the same, so where the tests run
as root the command is run without the two capabilities that let root pass file
permissions (``setpriv``): it meets the very ``EACCES`` a user's run meets, from the OS."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

_WITHOUT_OVERRIDE = "-dac_override,-dac_read_search"


@contextlib.contextmanager
def unreadable(path: Path) -> Iterator[Path]:
    """``path`` (a file or a directory) at mode 000 while the block runs."""
    mode = path.stat().st_mode & 0o7777
    path.chmod(0)
    try:
        yield path
    finally:
        path.chmod(mode)


def as_a_user() -> list[str]:
    """The words to put before a command so that file permissions bind it: none for a
    user, ``setpriv`` dropping root's overrides for root; the test is skipped where that
    cannot be had."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root, and no setpriv to drop root's file-permission override")
    prefix = [setpriv, "--bounding-set", _WITHOUT_OVERRIDE, "--inh-caps", _WITHOUT_OVERRIDE]
    done = subprocess.run([*prefix, "true"], capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot drop root's file-permission override: {done.stderr.decode()}")
    return prefix
