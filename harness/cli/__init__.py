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

import sys

# Not typing's: nothing is imported before main() watches for Ctrl-C (typing alone is a
# few milliseconds of a loaded machine's start, and a Ctrl-C then a traceback).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import NoReturn


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command of ``webmcp-harness``, return its exit status.

    Ctrl-C ends a command the same way whenever it comes: ``interrupted`` on stderr, exit
    status 130 (README, "Exit status"). :func:`harness.cli.commands.main` turns an
    interrupt of the command into that; here are the moments around it — while the
    command's modules load (the first fraction of a second) and while an error is told —
    and the interrupts a library swallowed
    (:func:`harness.cli.interrupts.raise_if_interrupted`).
    """
    try:
        from harness.cli.interrupts import keeping_interrupts, raise_if_interrupted
    except KeyboardInterrupt as exc:
        return _interrupted(exc, argv)
    previous = sys.unraisablehook
    sys.unraisablehook = keeping_interrupts(previous)
    try:
        try:
            from harness.cli.commands import main as run

            code = run(argv)
            raise_if_interrupted()  # one swallowed after the command's last look
        except KeyboardInterrupt as exc:
            return _interrupted(exc, argv)
    finally:
        sys.unraisablehook = previous
    return code


def _interrupted(exc: KeyboardInterrupt, argv: Sequence[str] | None) -> int:
    """Say ``interrupted`` (as :func:`harness.cli.commands.main` does) and give 130."""
    words = list(sys.argv[1:] if argv is None else argv)
    try:
        from harness.cli.options import EXIT_INTERRUPTED, Interrupted, report_error

        interrupted = exc if isinstance(exc, Interrupted) else Interrupted()
        report_error(interrupted, as_json="--json" in words)
        return EXIT_INTERRUPTED
    except (ImportError, KeyboardInterrupt):  # stopped again, or as the CLI's modules loaded
        sys.stderr.write("webmcp-harness: interrupted\n")
        return 130


def console() -> NoReturn:
    """The console script ``webmcp-harness`` (and ``python -m harness.cli``): :func:`main`,
    then the process ends without tearing the interpreter down.

    A command that opened a page has loaded some 600 modules; freeing them one by one at
    exit took about 80 ms of a 1 s ``tools URL``, for nothing the process still needed.
    What an exit owes is done first: the output flushed, the ``atexit`` handlers run
    (logging's flush among them). A thread that is still working is waited for as usual.
    """
    import atexit
    import os
    import threading

    code = main()
    if any(t is not threading.main_thread() and not t.daemon for t in threading.enumerate()):
        sys.exit(code)  # the interpreter joins it, as for any program
    try:
        for stream in (sys.stdout, sys.stderr):
            # A reader that went away (`| head`): nothing more to tell it, and a command
            # that did its job says so as a pipeline's writer does (141: 128 + SIGPIPE).
            try:
                stream.flush()
            except BrokenPipeError:
                code = 141 if code == 0 and stream is sys.stdout else code
            except (OSError, ValueError):
                pass
        atexit._run_exitfuncs()
    except KeyboardInterrupt:  # Ctrl-C as the process ends: said as at any other moment
        code = _interrupted(KeyboardInterrupt(), None)
    os._exit(code)
