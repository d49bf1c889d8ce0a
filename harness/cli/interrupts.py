"""Ctrl-C that Python could not raise where it arrived: kept while a command runs, and
raised where the command can stop (stdlib only: imported before anything else)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_swallowed: list[KeyboardInterrupt] = []
"""Ctrl-Cs Python could not raise where they arrived (see :func:`keeping_interrupts`)."""


def keeping_interrupts(previous: Callable[[Any], object]) -> Callable[[Any], None]:
    """A ``sys.unraisablehook`` for while a command runs: a Ctrl-C that arrived while Python
    ran code that cannot raise — pydantic-core building a model's validator as a module
    loads, a ``__del__`` — is kept for :func:`raise_if_interrupted` rather than printed as a
    traceback while the command went on; anything else goes to ``previous``."""
    _swallowed.clear()

    def hook(unraisable: Any) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            _swallowed.append(unraisable.exc_value)
        else:
            previous(unraisable)

    return hook


def raise_if_interrupted() -> None:
    """Raise the Ctrl-C that Python could not raise where it arrived, if one did: a
    command calls this once its modules are loaded, before its work starts, so that an
    interrupt while they loaded stops it there, as one at any other moment would."""
    if _swallowed:
        _swallowed.clear()
        raise KeyboardInterrupt
