"""``python -m harness.cli``: the same as the ``webmcp-harness`` console script."""

from harness.cli import console

console()
