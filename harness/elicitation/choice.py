"""The ``--elicit`` option: which handler answers the user's questions."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from harness.elicitation.answers import ScriptedHandler
from harness.elicitation.base import AutoHandler, ElicitationHandler, TimeLimit
from harness.errors import ConfigError

if TYPE_CHECKING:
    from rich.console import Console

    from harness.elicitation.browser import BrowserSource

ELICIT_CHOICES = ("accept", "decline", "cancel", "terminal", "browser")


def handler_from_option(
    text: str | None,
    *,
    browser: BrowserSource | None = None,
    stdin: TextIO | None = None,
    console: Console | None = None,
    timeout: float | None = None,
) -> ElicitationHandler:
    """The handler ``--elicit accept|decline|cancel|terminal|browser|FILE`` names.

    Without a value: the terminal handler when standard input is a terminal,
    ``cancel`` otherwise. ``browser`` needs the harness's browser (``browser=``,
    e.g. ``lambda: harness.browser``); ``timeout`` caps every request's time limit.
    """
    handler: ElicitationHandler
    if not text:
        source = stdin if stdin is not None else sys.stdin
        text = "terminal" if source is not None and source.isatty() else "cancel"
    if text in ("accept", "decline", "cancel"):
        handler = AutoHandler(text)  # type: ignore[arg-type]
    elif text == "terminal":
        from harness.elicitation.terminal import TerminalHandler

        handler = TerminalHandler(console=console, stream=stdin)
    elif text == "browser":
        if browser is None:
            raise ConfigError("--elicit browser needs the harness's browser to open its tab in.")
        from harness.elicitation.browser import BrowserHandler

        handler = BrowserHandler(browser)
    elif Path(text).is_file():
        handler = ScriptedHandler.from_file(text)
    else:
        raise ConfigError(
            f"--elicit {text!r}: not one of {', '.join(ELICIT_CHOICES)}, and no answers file "
            "by that name."
        )
    return handler if timeout is None else TimeLimit(handler, timeout)
