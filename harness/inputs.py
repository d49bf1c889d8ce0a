"""Input files: the files a user hands the harness (policies, answers, plans, grids,
baselines), read and parsed with the same limits for every one of them.

:func:`load_input` reads a file (through :func:`~harness.errors.read_input_file`: size,
encoding) and parses it as TOML, YAML or JSON by its suffix; :func:`parse_input` parses
text already read. Both refuse, with one line that says what to do, what would cost far
more to hold than the file's size: a YAML document whose aliases expand to more than
:data:`MAX_INPUT_NODES` values (a 630-byte "billion laughs" grows to gigabytes once
anything walks it), and nesting deeper than :data:`MAX_INPUT_DEPTH`. Parse errors become
:class:`InputSyntaxError` (a :class:`~harness.errors.ConfigError`) with the line and
column, so a loader with its own wording (the policy reader names the rule) can use them.

And the output directories a run writes into: :func:`hold_directory` holds one for the
run's length, so that a second run into it is refused rather than written beside it.

May import: ``harness.errors`` only (every layer loads input files).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import tomllib
from pathlib import Path
from typing import Any, Literal

import yaml

from harness.errors import ConfigError, parse_problem, read_input_file

InputKind = Literal["toml", "yaml", "json"]

SUFFIXES: dict[str, InputKind] = {
    ".toml": "toml",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".json": "json",
}

_TOML_AT = re.compile(r"\s*\((?:at line (\d+), column (\d+)|at end of document)\)")

MAX_INPUT_NODES = 1_000_000
"""The most values (mappings, lists, scalars) a file may hold once YAML aliases are
expanded: far beyond any real input file (a 10 MB file of plain YAML holds fewer)."""
MAX_INPUT_DEPTH = 200
"""The deepest nesting an input file may have (no real file nests past a dozen)."""


class InputSyntaxError(ConfigError):
    """An input file that does not parse, or breaks a limit; ``line``/``column`` (1-based)
    say where when the parser knows, ``detail`` is the problem without the file's name."""

    def __init__(
        self, message: str, *, detail: str, line: int | None = None, column: int | None = None
    ) -> None:
        super().__init__(message)
        self.detail = detail
        self.line = line
        self.column = column


def kind_of(path: str | Path, default: InputKind | None = None) -> InputKind:
    """The format a file's suffix names (``default`` for any other suffix), or a
    :class:`~harness.errors.ConfigError` that lists the suffixes understood."""
    kind = SUFFIXES.get(Path(path).suffix.lower(), default)
    if kind is None:
        raise ConfigError(f"{path}: unknown file type; use one of {', '.join(SUFFIXES)}.")
    return kind


def load_input(
    path: str | Path,
    what: str,
    *,
    kind: InputKind | None = None,
    default: InputKind | None = None,
    error: type[ConfigError] = ConfigError,
) -> Any:
    """The parsed content of the input file ``path`` (``what`` names it in messages: "the
    plan", "the answers file"). ``kind`` forces a format; otherwise the suffix decides
    (``default`` for a suffix that names none). Problems with the file itself raise
    ``error``; parse errors and broken limits raise :class:`InputSyntaxError`."""
    text = read_input_file(path, what, error)
    return parse_input(text, kind or kind_of(path, default), f"{what} {path}")


def parse_input(text: str, kind: InputKind, what: str) -> Any:
    """``text`` parsed as ``kind``, within the limits (see the module docstring).

    ``what`` names the input in messages ("the plan plan.yaml").
    """
    try:
        if kind == "toml":
            data: Any = tomllib.loads(text)
        elif kind == "json":
            data = json.loads(text)
        else:
            data = _load_yaml(text, what)
    except InputSyntaxError:
        raise
    except RecursionError:
        raise _too_deep(what) from None
    except tomllib.TOMLDecodeError as exc:
        found = _TOML_AT.search(str(exc))
        at = (int(found.group(1)), int(found.group(2))) if found and found.group(1) else None
        if found and at is None:  # "at end of document": the file's last line
            lines = text.split("\n")
            at = (len(lines), len(lines[-1]) + 1)
        raise _syntax(what, kind, exc, _TOML_AT.sub("", str(exc)), at) from None
    except json.JSONDecodeError as exc:
        raise _syntax(what, kind, exc, exc.msg, (exc.lineno, exc.colno)) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = (mark.line + 1, mark.column + 1) if mark is not None else None
        raise _syntax(what, kind, exc, parse_problem(exc).split(" (line ")[0], at) from None
    if kind != "yaml":  # YAML was measured before it was built
        _check_depth(data, what)
    return data


def _load_yaml(text: str, what: str) -> Any:
    """YAML built only once its expanded size and depth are known to be within limits."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _measure(node, what)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _measure(root: yaml.Node, what: str) -> None:
    """Refuse a node graph whose expansion (every alias counted as the copy a reader
    makes of it) holds more than :data:`MAX_INPUT_NODES` values or nests deeper than
    :data:`MAX_INPUT_DEPTH`. Each distinct node is measured once: linear in the file."""
    sizes: dict[int, int] = {}
    depths: dict[int, int] = {}
    # Iterative post-order: a page-made file can nest deeper than Python's stack.
    stack: list[tuple[yaml.Node, bool, int]] = [(root, False, 0)]
    on_path: set[int] = set()
    while stack:
        node, expanded, level = stack.pop()
        key = id(node)
        if level > MAX_INPUT_DEPTH:
            raise _too_deep(what)
        if key in sizes:
            if level + depths[key] > MAX_INPUT_DEPTH:
                raise _too_deep(what)
            continue
        children = _children(node)
        if not expanded:
            if key in on_path:  # a recursive alias (`&a [*a]`): endless once expanded
                raise _too_big(what)
            on_path.add(key)
            stack.append((node, True, level))
            stack.extend((child, False, level + 1) for child in children)
            continue
        on_path.discard(key)
        size = 1 + sum(sizes.get(id(child), 0) for child in children)
        if size > MAX_INPUT_NODES:
            raise _too_big(what)
        sizes[key] = size
        depths[key] = 1 + max((depths.get(id(child), 0) for child in children), default=0)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _check_depth(data: Any, what: str) -> None:
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        value, level = stack.pop()
        if level > MAX_INPUT_DEPTH:
            raise _too_deep(what)
        if isinstance(value, dict):
            stack.extend((member, level + 1) for member in value.values())
        elif isinstance(value, list):
            stack.extend((member, level + 1) for member in value)


def _too_big(what: str) -> InputSyntaxError:
    detail = (
        f"its YAML aliases expand to more than {MAX_INPUT_NODES:,} values (or refer to "
        "themselves); write the values out, or use fewer aliases"
    )
    return InputSyntaxError(f"Cannot use {what}: {detail}.", detail=detail)


def _too_deep(what: str) -> InputSyntaxError:
    detail = f"it nests deeper than {MAX_INPUT_DEPTH} levels; is it the right file?"
    return InputSyntaxError(f"Cannot use {what}: {detail}", detail=detail)


def _syntax(
    what: str, kind: InputKind, exc: BaseException, detail: str, at: tuple[int, int] | None
) -> InputSyntaxError:
    detail = " ".join(detail.split()) or type(exc).__name__
    where = f" at line {at[0]}, column {at[1]}" if at else ""
    name = {"toml": "TOML", "yaml": "YAML", "json": "JSON"}[kind]
    return InputSyntaxError(
        f"{what[0].upper()}{what[1:]} is not valid {name}{where}: {detail}.",
        detail=detail,
        line=at[0] if at else None,
        column=at[1] if at else None,
    )


# -- output directories ----------------------------------------------------------------------
# A run that writes many files into one directory (a conformance run's reports, an
# experiment's episodes and results.db) holds an exclusive lock on the directory itself while
# it runs: Linux locks a directory's descriptor, so no lock file joins the output, and the
# lock goes with the process (killed or not). A second run into it is refused, not run
# beside the first.


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
