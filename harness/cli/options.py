"""The options every command that opens a page shares, read the same way everywhere.

- page options: ``--backend``, ``--json``, ``--settle MS``, ``--wait-for-tool NAME``;
- the user agent's options: ``--policy FILE|default|strict|none``, ``--elicit …``,
  ``--elicit-timeout S`` (the Python API's ``policy=``, ``elicitation=``);
- the parser itself: no prefix abbreviations, and a mistyped flag shows the usage of
  the sub-command it was given to;
- errors: one line on stderr, and with ``--json`` a ``{"error": {"code", "message"}}``
  object on stdout; usage errors exit 2, an interrupt (Ctrl-C) 130.

Loaded for every command, ``--help`` included: at module level it imports the standard
library and :mod:`harness.errors` only; the checks that need the core (a policy file, an
answers file) import it when they run (tests/cli/test_cli_imports.py).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from harness.elicitation.wording import plain
from harness.errors import ConfigError, HarnessError, file_in_the_way

if TYPE_CHECKING:
    from harness.catalog import Settle
    from harness.stages.policy import PolicyOption

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT: what a shell reports for a command Ctrl-C stopped
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: what a shell reports for a writer whose reader left

# The core's names and defaults as the parsers show them, written out here so that parsing
# a command line (and --help) loads none of the core; tests/cli/test_cli_imports.py checks
# that each is the core's own.
BACKEND_CHOICES = ("native", "polyfill")  # harness.harness.BACKENDS
ELICIT_CHOICES = ("accept", "decline", "cancel", "terminal", "browser")  # elicitation.choice
DEFAULT_CALL_TIMEOUT_S = 30.0  # harness.harness.DEFAULT_CALL_TIMEOUT_S
POLICY_PACKS = ("default", "strict")  # harness.stages.policy.PACK_NAMES


class UsageError(HarnessError):
    """Something on the command line cannot be used (exit status 2); ``usage`` is the
    sub-command's usage line, when argparse found the problem."""

    def __init__(self, message: str, usage: str | None = None) -> None:
        super().__init__(message)
        self.usage = usage


class ReaderGone(BrokenPipeError):
    """The reader of the command's output went away (``| head``): the command ends as a
    pipeline's writer does, quietly with 141. Raised by the CLI's console, so that a command
    can tell it from a pipe of its own run that broke (one to the browser, to a page)."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (SIGINT) stopped a command, with what the user can do about it: exit status
    130, error code ``interrupted``. Still a :class:`KeyboardInterrupt`, so everything
    between the command and the CLI's entry unwinds as for one (browsers are closed)."""

    def __init__(self, message: str = "interrupted") -> None:
        super().__init__(message)


class Parser(argparse.ArgumentParser):
    """An argument parser that takes no abbreviations and raises :class:`UsageError`.

    Sub-parsers are of this class too (argparse makes them with the parent's class).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def parse_known_args(  # type: ignore[override]
        self, args: Any = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        """Parse, and remember the innermost (sub-)parser that ran as ``usage_parser``:
        argparse parses a sub-command's arguments first, so the deepest one sets it."""
        parsed, extras = super().parse_known_args(args, namespace)
        if getattr(parsed, "usage_parser", None) is None:
            parsed.usage_parser = self
        return parsed, extras

    def error(self, message: str) -> NoReturn:
        """Raise, rather than print and exit: the caller decides how errors look."""
        raise UsageError(message, usage=self.format_usage())


def parse(parser: Parser, argv: list[str]) -> argparse.Namespace:
    """Parse ``argv``; arguments nobody knows are an error of the sub-command they were
    given to, shown with that sub-command's usage."""
    args, extras = parser.parse_known_args(argv)
    if extras:
        owner: Parser = getattr(args, "usage_parser", parser)
        hint = _one_value_each(owner, argv, extras[0])
        owner.error(f"unrecognized arguments: {' '.join(extras)}{hint}")
    return args


def _one_value_each(owner: Parser, argv: list[str], extra: str) -> str:
    """When ``extra`` follows the value of a repeatable option that takes one value
    (``--catalog-baseline A B``), how to give several; empty otherwise."""
    for index, token in enumerate(argv):
        if token != extra:
            continue
        start = index - 1
        while start >= 0 and not argv[start].startswith("-"):
            start -= 1
        action = owner._option_string_actions.get(argv[start]) if start >= 0 else None
        if isinstance(action, argparse._AppendAction) and index - start >= 2:
            option, value = argv[start], action.metavar or "VALUE"
            return (
                f" ({option} takes one {value}: repeat it for each, "
                f"{option} {value} {option} {value})"
            )
    return ""


# What a page's address on the command line may be (anything else is a usage error):
# Chromium opens these, and the harness's guarantees are written for them.
PAGE_SCHEMES = ("http", "https", "file", "data", "about")
HTML_SUFFIXES = (".html", ".htm", ".xhtml")  # a path that names a page, not another file
URL_HELP = "the page: a URL (http://…, https://…, file://…) or the path of an HTML file"


def page_url(text: str) -> str:
    """A page's address from the command line (argparse's ``type=``): a URL of one of
    :data:`PAGE_SCHEMES`, or the path of an HTML file, given back as its ``file:`` URL.

    Anything else is refused before a browser starts, saying what would work:
    ``localhost:8000`` or ``example.com`` are not URLs to Chromium (no scheme), and
    ``javascript:`` or ``ftp:`` are not pages.
    """
    scheme, has_scheme, rest = text.partition(":")
    scheme = scheme.lower()
    if has_scheme and scheme in PAGE_SCHEMES:
        web = scheme in ("http", "https")
        if (web and not rest.startswith("//")) or rest.strip("/") == "":
            like = "http://127.0.0.1:8000/page" if web else f"{scheme}:///path/to/page.html"
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole URL; like {like}")
        return text
    path = Path(text).expanduser()
    if path.is_file():
        return path.resolve().as_uri()
    what = "neither a URL (with its scheme, like http://127.0.0.1:8000/page) nor a file"
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a directory; give an HTML file or a URL")
    if text.startswith(("/", ".", "~")) or path.suffix.lower() in HTML_SUFFIXES:
        raise argparse.ArgumentTypeError(f"{text!r} is {what}: there is no such file")
    host, _, _ = text.partition("/")
    if re.fullmatch(r"[\w.-]+(:\d+)?", host, re.ASCII) and (
        "." in host or ":" in host or host == "localhost"
    ):
        raise argparse.ArgumentTypeError(f"{text!r} is {what}; did you mean http://{text} ?")
    if has_scheme and re.fullmatch(r"[a-z][a-z0-9+.-]*", scheme):
        raise argparse.ArgumentTypeError(
            f"{text!r}: {scheme}: pages cannot be opened; give an "
            f"{', '.join(PAGE_SCHEMES)} URL or the path of an HTML file"
        )
    raise argparse.ArgumentTypeError(f"{text!r} is {what}")


def add_page_options(parser: argparse.ArgumentParser, *, json_output: bool = True) -> None:
    """``--backend``, ``--json`` (with ``json_output``), ``--settle`` and ``--wait-for-tool``."""
    parser.add_argument(
        "--backend",
        choices=BACKEND_CHOICES,
        default="polyfill",
        help="polyfill: the injected JS (any Chromium); native: Chromium's own WebMCP",
    )
    if json_output:
        parser.add_argument("--json", action="store_true", help="print JSON for machines")
    add_settle_options(parser)


def add_settle_options(parser: argparse.ArgumentParser) -> None:
    """``--settle MS`` and ``--wait-for-tool NAME``: when a page's catalog is ready."""
    parser.add_argument(
        "--settle",
        type=float,
        default=None,
        metavar="MS",
        help="the catalog is ready once quiet (no tool registered or removed, network idle) "
        "for MS milliseconds after load — sooner when the page has nothing scheduled within "
        "them — at most max(5 s, 2 × MS) (default 500; 0: no wait)",
    )
    parser.add_argument(
        "--wait-for-tool",
        action="append",
        default=[],
        metavar="NAME",
        help="also wait until a tool of this name is offered (repeatable); one that never "
        "comes within the settle cap is an error",
    )


def add_user_agent_options(parser: argparse.ArgumentParser) -> None:
    """``--policy``, ``--elicit`` and ``--elicit-timeout``."""
    parser.add_argument(
        "--policy",
        default="default",
        metavar="FILE|default|strict|none",
        help="trust policy: the default pack (default), another bundled pack, none, or a "
        "TOML/YAML/JSON rule file",
    )
    add_elicit_options(parser)


def add_elicit_options(parser: argparse.ArgumentParser) -> None:
    """``--elicit`` and ``--elicit-timeout``, for every command that runs tools."""
    parser.add_argument(
        "--elicit",
        metavar="accept|decline|cancel|terminal|browser|FILE",
        help="who answers the user's questions: the same answer every time, a person at "
        "this terminal, a person in a browser tab (headed), or an answers file "
        "(default: terminal when stdin is a terminal, cancel otherwise)",
    )
    parser.add_argument(
        "--elicit-timeout",
        type=float,
        metavar="S",
        help="an unanswered question is cancelled after S seconds",
    )


def check_settle(args: argparse.Namespace) -> None:
    """``--settle MS``, checked before the browser starts."""
    if args.settle is not None and args.settle < 0:
        raise UsageError("--settle must be 0 or a positive number of milliseconds.")


def settle_option(args: argparse.Namespace) -> Settle:
    """``--settle MS`` as :class:`Settle` (the default when not given)."""
    check_settle(args)
    return settle_from_ms(args.settle)


def settle_from_ms(ms: float | None) -> Settle:
    """``--settle MS`` (checked already; None: not given) as :class:`Settle`."""
    from harness.catalog import Settle

    return Settle() if ms is None else Settle.quiet_ms(ms)


def check_elicit(text: str | None, timeout: float | None) -> None:
    """``--elicit`` and ``--elicit-timeout``, checked before the browser starts."""
    if timeout is not None and timeout <= 0:
        raise UsageError("--elicit-timeout must be a positive number of seconds.")
    if text is None or text in ELICIT_CHOICES:
        return
    if not Path(text).is_file():
        raise UsageError(
            f"--elicit {text!r}: not one of {', '.join(ELICIT_CHOICES)}, and no answers file "
            "by that name."
        )
    from harness.elicitation.answers import load_answers

    try:
        load_answers(text)
    except ConfigError as exc:
        raise UsageError(str(exc)) from exc


def policy_option(text: str) -> PolicyOption:
    """``--policy``: a bundled pack by name (the harness loads it), None for ``none``, or
    a policy file, loaded now: a bad file is a usage error, before the browser starts."""
    if text == "none":
        return None
    if text in POLICY_PACKS:
        return text
    from harness.stages.policy import policy_from_argument

    try:
        return policy_from_argument(text)
    except ConfigError as exc:
        raise UsageError(str(exc)) from exc


LATE_TOOL_HINT = (
    "If the page registers it late, wait for it: --wait-for-tool NAME, or a longer quiet "
    "window, --settle MS."
)
"""What ``tools`` says when a page has none yet, and ``call`` when the tool is not there."""

POLICY_META_KEY = "webmcp-harness/policy"  # harness.stages.trust.POLICY_META, the harness's own


def unanswered_hint(records: Iterable[Any]) -> str | None:
    """What to do when a question other than the policy's went unanswered (records:
    :class:`~harness.elicitation.base.ElicitationRecord`): a form waiting for the user to
    submit it, a tool's own question — answer it, or let every question be answered yes;
    or, when an answer broke the form's rules, give one within them."""
    from harness.elicitation.base import unanswered

    found = unanswered(records)
    if found is None:
        return None
    if found.broken_rules is not None:  # the rules are the page's words: shown, never obeyed
        return (
            f"hint: {found.what}, and the answer given breaks its rules "
            f"({plain(found.broken_rules)}), so the harness cancelled it and nothing was sent. "
            "Give a value within those rules (in an answers file: the matching entry's "
            "`values`), or leave the field out to keep the value the form shows."
        )
    if found.cancelled_by is not None:
        return (
            f"hint: {found.what}, and {found.cancelled_by} answers cancel, so nothing was "
            "sent. To send it, make that entry `action: accept` (or put an entry that "
            "accepts before it)."
        )
    return (
        f"hint: {found.what}, and nobody answered. Answer yourself (--elicit terminal), or answer "
        "every question yes (--elicit accept) to test your own site."
    )


def refusal_hint(results: Iterable[dict[str, Any] | None]) -> str | None:
    """What to do when the policy stopped a call (results: agent views, MCP JSON): let
    someone say yes, or run without a policy — for testing one's own site's tools."""
    stops = [
        r["_meta"][POLICY_META_KEY]
        for r in results
        if isinstance(r, dict)
        and isinstance(r.get("_meta"), dict)
        and isinstance(r["_meta"].get(POLICY_META_KEY), dict)
        and r["_meta"][POLICY_META_KEY].get("effect") in ("escalate", "block")
    ]
    if not stops:
        return None
    if any(stop.get("effect") == "escalate" for stop in stops):
        return (
            "hint: the policy asked the user to confirm a call and nobody said yes. Testing "
            "your own site's tools? Answer yourself (--elicit terminal), always say yes "
            "(--elicit accept), or run without a policy (--policy none)."
        )
    return (
        "hint: the policy blocked a call. Testing your own site's tools? Run without a "
        "policy (--policy none), or with a policy file without that rule (--policy FILE)."
    )


def error_code(error: BaseException) -> str:
    """A stable, machine-readable code for an error: its class name in kebab case
    (``UnknownTool`` → ``unknown-tool``; a usage error is ``usage``)."""
    if isinstance(error, UsageError):
        return "usage"
    return re.sub(r"(?<!^)(?=[A-Z])", "-", type(error).__name__).lower()


def report_error(error: BaseException, *, as_json: bool) -> None:
    """One line on stderr (after the sub-command's usage, for argparse's errors), and with
    ``as_json`` the error object on stdout."""
    message = str(error)
    usage = error.usage if isinstance(error, UsageError) else None
    # Messages may quote the page (a URL, a tool name): control characters are shown.
    line = f"webmcp-harness: {plain(message)}"
    sys.stderr.write((usage or "") + line + "\n")
    if as_json:
        payload = {"error": {"code": error_code(error), "message": message}}
        sys.stdout.write(json.dumps(payload, indent=2) + "\n")


def output_directory(path: str | Path, option: str = "--output") -> Path:
    """Make the directory a command will write its reports to, before the run: a path that
    cannot hold them is a usage error at once, not a failure after minutes of work."""
    directory = Path(path)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(
            f"{option} {directory}: cannot make that directory ({exc.strerror or exc}); "
            "give a writable path."
        ) from exc
    refused = _write_refused(directory)
    if refused is not None:
        raise UsageError(
            f"{option} {directory}: cannot write into that directory ({refused}); "
            "give a writable path."
        )
    return directory


def writable_file(path: str | Path, option: str) -> Path:
    """``path``, a file a command writes once its run is done (``--baseline`` with
    ``--update-baseline``), checked before the run: one that could not be written then is
    a usage error now, and the run's results are not lost to it. Nothing is made (the
    directories on the way are made when the file is written)."""
    file = Path(path)
    blocked = file_in_the_way(file)
    if blocked is not None:
        raise UsageError(
            f"{option} {file}: {blocked} is a file, not a directory; give a path whose "
            "directories exist or can be made."
        )
    if file.is_dir():
        raise UsageError(f"{option} {file} is a directory; give the file's path.")
    # The file itself when it is there, else the directory it (or its first missing
    # parent) would be made in.
    target = next(p for p in (file, *file.parents) if p.exists())
    refused = _write_refused(target)
    if refused is not None:
        where = "it" if target == file else f"into {target}"
        raise UsageError(
            f"{option} {file}: cannot write {where} ({refused}); give a path that can be written."
        )
    return file


def _write_refused(path: Path) -> str | None:
    """Why nothing can be written at ``path`` — into it when it is a directory, over it
    when it is a file — or None. Tried, not guessed from the mode (root, read-only mounts,
    immutable files), and nothing is left: a file made in a directory is unnamed or
    removed at once, an existing file is opened without truncating it."""
    import tempfile

    try:
        if path.is_dir():
            with tempfile.TemporaryFile(dir=path):
                pass
        else:
            os.close(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK))
    except OSError as exc:
        return exc.strerror or str(exc)
    return None
