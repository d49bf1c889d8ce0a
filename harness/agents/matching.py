"""Comparing JSON results: the scripted agent's ``expect``, the replay agent's diff, and
the vault handles in what two runs recorded.

Both comparisons report :class:`Mismatch` values, each at a JSON pointer into the
result, so a failure reads as "at /isError: expected false, got true". A recording
and its replay compare vault handles by role (:class:`HandleNumbering`): the handles
are random per session, so no two runs share one.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

from harness.stages.scrubbing import HANDLE

MISSING = "(missing)"


class Mismatch(BaseModel):
    """One place where two JSON values differ; values are shown as JSON text."""

    model_config = ConfigDict(frozen=True)

    path: str  # JSON pointer ("" is the whole value)
    expected: str
    actual: str

    def describe(self, expected_word: str = "expected", actual_word: str = "got") -> str:
        """One line: ``at /a/0: expected 1, got 2``."""
        return (
            f"at {self.path or '/'}: {expected_word} {self.expected}, {actual_word} {self.actual}"
        )


def show(value: Any) -> str:
    """A JSON value as short JSON text."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 200 else text[:199] + "…"


def _pointer(path: str, key: str | int) -> str:
    escaped = str(key).replace("~", "~0").replace("/", "~1")
    return f"{path}/{escaped}"


def _same_scalar(a: Any, b: Any) -> bool:
    # JSON has no int/bool confusion: true is not 1, and 1 equals 1.0.
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return bool(a == b)


def subset_mismatches(expected: Any, actual: Any, path: str = "") -> list[Mismatch]:
    """Where ``actual`` does not contain ``expected``.

    Objects match when every expected key is present and matches (extra keys in
    ``actual`` are fine); arrays match element by element and must have the same
    length; anything else must be equal.
    """
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [Mismatch(path=path, expected=show(expected), actual=show(actual))]
        found: list[Mismatch] = []
        for key, value in expected.items():
            where = _pointer(path, key)
            if key not in actual:
                found.append(Mismatch(path=where, expected=show(value), actual=MISSING))
            else:
                found.extend(subset_mismatches(value, actual[key], where))
        return found
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [Mismatch(path=path, expected=show(expected), actual=show(actual))]
        found = []
        for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
            found.extend(subset_mismatches(want, got, _pointer(path, index)))
        return found
    if _same_scalar(expected, actual):
        return []
    return [Mismatch(path=path, expected=show(expected), actual=show(actual))]


def differences(recorded: Any, replayed: Any, path: str = "") -> list[Mismatch]:
    """Every place where two JSON values differ (keys missing on either side included)."""
    if isinstance(recorded, dict) and isinstance(replayed, dict):
        found: list[Mismatch] = []
        for key in sorted(set(recorded) | set(replayed)):
            where = _pointer(path, key)
            if key not in replayed:
                found.append(Mismatch(path=where, expected=show(recorded[key]), actual=MISSING))
            elif key not in recorded:
                found.append(Mismatch(path=where, expected=MISSING, actual=show(replayed[key])))
            else:
                found.extend(differences(recorded[key], replayed[key], where))
        return found
    if isinstance(recorded, list) and isinstance(replayed, list):
        found = []
        for index in range(max(len(recorded), len(replayed))):
            where = _pointer(path, index)
            if index >= len(replayed):
                found.append(Mismatch(path=where, expected=show(recorded[index]), actual=MISSING))
            elif index >= len(recorded):
                found.append(Mismatch(path=where, expected=MISSING, actual=show(replayed[index])))
            else:
                found.extend(differences(recorded[index], replayed[index], where))
        return found
    if _same_scalar(recorded, replayed):
        return []
    return [Mismatch(path=path, expected=show(recorded), actual=show(replayed))]


def unified_diff(expected: Any, actual: Any) -> str:
    """``expected`` against the part of ``actual`` it talks about, as a unified diff.

    Keys ``expected`` does not mention are left out of ``actual``, so the diff
    shows only what the expectation is about.
    """
    projected = _project(expected, actual)
    want = json.dumps(expected, indent=2, sort_keys=True, ensure_ascii=False).splitlines()
    got = json.dumps(projected, indent=2, sort_keys=True, ensure_ascii=False).splitlines()
    return "\n".join(
        difflib.unified_diff(want, got, fromfile="expect", tofile="result", lineterm="")
    )


def _project(expected: Any, actual: Any) -> Any:
    if isinstance(expected, dict) and isinstance(actual, dict):
        return {k: _project(v, actual[k]) for k, v in expected.items() if k in actual}
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        return [_project(w, g) for w, g in zip(expected, actual, strict=True)]
    return actual


class HandleNumbering:
    """Vault handles read by their role in a conversation or a trace, not by their digits.

    A handle (``wmh-secret-…``, ``wmh-result-…``, ``wmh-ref-…``, ``wmh-user-…``; see
    :data:`~harness.stages.scrubbing.HANDLE`) is random per session, so a recording and
    its replay never share one. Read through a numbering, each handle becomes
    ``wmh-<kind>-#N``, N the order of its first appearance (its kind kept): the same
    handles in the same places read alike in both runs, and a handle where the other
    run had another one (a known handle where the other showed a new one, or the
    reverse; another kind) still reads differently. Use one numbering per side, for as
    long as handles must stay the same (one request of a cassette, a whole trace).
    """

    def __init__(self) -> None:
        self._placeholders: dict[str, str] = {}  # handle -> "wmh-secret-#1"
        self._handles: dict[str, str] = {}  # "wmh-secret-#1" -> handle

    def read(self, value: Any) -> Any:
        """``value`` (JSON, or a text) with each handle replaced by its placeholder.

        Handles new to the numbering are numbered in a fixed order: arrays in order,
        objects by key (keys are read too: a withheld key is a handle), so two runs
        that built the same object in another order still number alike.
        """
        for text in _texts_in_order(value):
            for match in HANDLE.finditer(text):
                handle = match.group(0)
                if handle not in self._placeholders:
                    placeholder = f"{_kind(handle)}-#{len(self._placeholders) + 1}"
                    self._placeholders[handle] = placeholder
                    self._handles[placeholder] = handle
        return substitute_handles(value, self._placeholders)

    def correspondence(self, other: HandleNumbering) -> dict[str, str]:
        """Each handle read here → the handle ``other`` read with the same number."""
        return {
            handle: other._handles[placeholder]
            for handle, placeholder in self._placeholders.items()
            if placeholder in other._handles
        }


def substitute_handles(value: Any, replacements: Mapping[str, str]) -> Any:
    """``value`` (JSON, or a text) with each handle in ``replacements`` replaced, in every
    string and key (inside JSON text too: a handle has nothing to escape)."""
    if not replacements:
        return value
    if isinstance(value, str):
        return HANDLE.sub(lambda m: replacements.get(m.group(0), m.group(0)), value)
    if isinstance(value, list):
        return [substitute_handles(item, replacements) for item in value]
    if isinstance(value, dict):
        return {
            substitute_handles(key, replacements): substitute_handles(item, replacements)
            for key, item in value.items()
        }
    return value


def _kind(handle: str) -> str:
    return handle.rsplit("-", 1)[0]  # "wmh-secret"


def _texts_in_order(value: Any) -> Iterator[str]:
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            yield node
        elif isinstance(node, list):
            stack.extend(reversed(node))
        elif isinstance(node, dict):
            # By key with its handles' digits masked (sorting by the digits would be random);
            # keys that read alike keep the object's order.
            items = sorted(node.items(), key=lambda item: HANDLE.sub(_masked, str(item[0])))
            for key, item in reversed(items):
                stack.extend((item, key))


def _masked(match: re.Match[str]) -> str:
    return f"{_kind(match.group(0))}-"
