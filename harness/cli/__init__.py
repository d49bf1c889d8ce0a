"""The ``webmcp-harness`` command.

- ``commands``: the argument parser and the dispatch to each command (``main``);
- ``options``: the options commands share, read the same way everywhere;
- ``startup``: a command that opens a page launches Chromium while the harness loads;
- ``render``: tools, outcomes and revealed secrets for people (rich, page text as plain text);
- ``demo``: what ``make demo`` shows; one module per bigger command (``bench``, …).

The one front end that may import the others (to dispatch to them).

Every command starts fast, so a command's stack is imported only once it runs. A command
is two functions: its parser (registered in ``commands.COMMANDS``) and its runner
(``commands.RUNNERS``). The parser, and the module it lives in, import nothing beyond the
standard library and :mod:`harness.cli.options` at module level (the defaults it shows
are constants of ``options``, checked equal to the core's by a test); the runner imports
what the command needs in its body::

    def add_parser(sub):                       # at module level: stdlib imports only
        doctor = sub.add_parser("doctor", help="…")
        add_page_options(doctor)

    def run(args, out):
        from harness.harness import Harness    # here, when the command runs
        ...

``tests/cli/test_cli_imports.py`` checks that ``--help``, every ``COMMAND --help`` and a
usage error load nothing else, and that ``mcp`` loads no other front end.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """The console script ``webmcp-harness``: run one command, return its exit status."""
    from harness.cli.commands import main as run

    return run(argv)
