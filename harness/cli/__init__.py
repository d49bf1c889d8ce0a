"""The ``webmcp-harness`` command.

- ``main``: the argument parser and the dispatch to each command;
- ``render``: tools, outcomes and revealed secrets for people (rich, page text as plain text);
- ``demo``: what ``make demo`` shows.

The one front end that may import the others (to dispatch to them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """The console script ``webmcp-harness``: run one command, return its exit status."""
    from harness.cli.commands import main as run

    return run(argv)
