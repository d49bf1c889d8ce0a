"""Values of the string formats the harness checks, for the input generator.

The harness asserts ``format`` when it validates arguments
(:data:`harness.stages.validation.FORMAT_CHECKER`: every format jsonschema checks with the
packages installed). hypothesis-jsonschema draws values of most of them, and of a format it
does not know it draws any string — which the harness then refuses, so a tool with a
required ``uuid`` parameter had no input at all. :func:`custom_formats` gives it a strategy
for each format the harness checks and it does not draw, from :data:`OWN_GENERATORS`; a
format checked with neither is named by :func:`ungenerated_formats`, so that a tool skipped
for it says so.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING

from harness.stages.validation import FORMAT_CHECKER

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy


def _uuids() -> SearchStrategy[str]:
    """RFC 9562 UUIDs, as ``8-4-4-4-12`` hexadecimal digits."""
    from hypothesis import strategies as st

    return st.uuids().map(str)


# RFC 3339's ISO 8601 durations (appendix A): P1Y2M3DT4H5M6S and its parts, or weeks (P2W).
_SECOND = "[0-9]{1,4}S"
_MINUTE = f"[0-9]{{1,4}}M({_SECOND})?"
_HOUR = f"[0-9]{{1,4}}H({_MINUTE})?"
_TIME = f"T({_HOUR}|{_MINUTE}|{_SECOND})"
_DAY = "[0-9]{1,4}D"
_MONTH = f"[0-9]{{1,4}}M({_DAY})?"
_YEAR = f"[0-9]{{1,4}}Y({_MONTH})?"
_DURATION = f"P(({_DAY}|{_MONTH}|{_YEAR})({_TIME})?|{_TIME}|[0-9]{{1,4}}W)"


def _durations() -> SearchStrategy[str]:
    """ISO 8601 durations as RFC 3339 writes them (``P3D``, ``PT1H30M``, ``P2W``)."""
    from hypothesis import strategies as st

    return st.from_regex(_DURATION, fullmatch=True)


OWN_GENERATORS: dict[str, Callable[[], SearchStrategy[str]]] = {
    "uuid": _uuids,
    "duration": _durations,
}
"""The harness's strategies for formats hypothesis-jsonschema does not draw, by name."""


def _drawn_by_hypothesis_jsonschema() -> frozenset[str]:
    """The formats hypothesis-jsonschema draws values of itself."""
    from hypothesis_jsonschema._from_schema import STRING_FORMATS

    return frozenset(STRING_FORMATS)


def checked_formats() -> frozenset[str]:
    """The formats the harness asserts when it validates arguments."""
    return frozenset(FORMAT_CHECKER.checkers)


@lru_cache(maxsize=1)
def custom_formats() -> dict[str, SearchStrategy[str]]:
    """hypothesis-jsonschema's ``custom_formats``: a strategy for each format the harness
    checks that it does not draw, where the harness has one."""
    missing = checked_formats() - _drawn_by_hypothesis_jsonschema()
    return {name: OWN_GENERATORS[name]() for name in sorted(missing) if name in OWN_GENERATORS}


def ungenerated_formats() -> frozenset[str]:
    """The formats the harness checks that no strategy draws values of (the values drawn
    for them are any strings, which the harness refuses)."""
    return checked_formats() - _drawn_by_hypothesis_jsonschema() - custom_formats().keys()
