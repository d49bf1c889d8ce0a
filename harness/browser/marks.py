"""Marks of a process's start, for the benchmark's cold-start breakdown.

``webmcp-harness bench`` starts ``webmcp-harness mcp`` with ``WEBMCP_STARTUP_MARKS`` set to
a file; each step of the start then appends ``NAME SECONDS`` to it (``time.monotonic()``,
one clock for every process of the machine), once per name: the Python command running,
Playwright's driver started, Chromium launched, the first page loaded, its catalog
settled. Without the variable a mark costs one comparison. Imports nothing of the harness
(the CLI marks its own start with it before it loads anything else).
"""

from __future__ import annotations

import os
import time

ENV_VAR = "WEBMCP_STARTUP_MARKS"

_FILE = os.environ.get(ENV_VAR) or None
_made: set[str] = set()


def mark(name: str) -> None:
    """Note that the step ``name`` is done now (the first time only)."""
    if _FILE is None or name in _made:
        return
    _made.add(name)
    with open(_FILE, "a", encoding="utf-8") as marks:
        marks.write(f"{name} {time.monotonic():.6f}\n")


def read_marks(path: str | os.PathLike[str]) -> dict[str, float]:
    """The marks a process wrote to ``path``: name → ``time.monotonic()`` seconds."""
    found: dict[str, float] = {}
    try:
        with open(path, encoding="utf-8") as marks:
            for line in marks:
                name, _, at = line.strip().partition(" ")
                try:
                    found.setdefault(name, float(at))
                except ValueError:
                    continue
    except OSError:
        pass
    return found
