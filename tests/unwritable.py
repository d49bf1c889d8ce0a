"""A directory nothing can be written into, for the tests of outputs a command must refuse
before it runs (root writes into a mode-555 directory: for root, only an immutable one)."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def unwritable_directory(path: Path) -> Iterator[Path]:
    """``path`` made as a directory that refuses new files (mode 555, and ``chattr +i``
    when that is not enough); the test is skipped where neither can be had."""
    path.mkdir()
    path.chmod(0o555)
    immutable = False
    try:
        if os.access(path, os.W_OK):
            try:
                done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, check=False)
            except OSError:
                pytest.skip("no unwritable directory here: writable at mode 555, and no chattr")
            if done.returncode != 0:
                pytest.skip(f"no unwritable directory here: chattr +i: {done.stderr.decode()}")
            immutable = True
        yield path
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(path)], capture_output=True, check=False)
        path.chmod(0o755)
