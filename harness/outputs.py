"""Output directories a run holds while it writes into them.

A run that writes many files into one directory (a conformance run's reports, an
experiment's episodes and ``results.db``) holds an exclusive lock on the directory itself
for as long as it runs: Linux locks a directory's descriptor, so no lock file joins the
output, and the lock goes when the process does (killed or not). A second run into the
same directory is refused with a message instead of writing beside the first.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path


def hold_directory(path: Path) -> int | None:
    """A descriptor of the directory ``path`` that holds its exclusive lock until it is
    closed (``os.close``), or None when another process holds it. Raises ``OSError`` when
    the directory cannot be opened."""
    held = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(held)
        return None
    return held
