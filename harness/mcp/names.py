"""Page tool names as MCP tool names: deterministic, collision-free, reversible.

MCP tool names must match ``^[A-Za-z0-9_./-]{1,64}$`` here, and the MCP spec
(SEP-986) says they SHOULD use only ``[A-Za-z0-9_.-]``. WebMCP names match
``^[A-Za-z0-9_.-]{1,128}$``, and older page surfaces accept still other names. The
MCP server therefore hands out names from ``^[A-Za-z0-9_.-]{1,64}$`` (both rules
hold) by these rules:

1. A page name is kept as it is when it already matches that pattern, unless it
   is reserved: it starts with ``harness.`` (the harness's own tools), or it ends
   in ``--`` and ten or more lowercase hex digits (the shape of rule 2's names).
2. Any other name becomes ``<stem>--<hash>``: the hash is the first 10 hex digits
   of the SHA-256 of the name (UTF-8); the stem is the name with every character
   outside ``[A-Za-z0-9_.-]`` replaced by ``_``, cut so the whole fits in 64
   characters (``tool`` when the name is empty). If two names of one catalog still
   get the same string, both get longer hashes (16, 24, 32, 48, then 62 digits)
   until they differ.
3. The harness's own tools are ``harness.navigate`` and ``harness.reload``.

No two tools ever share a name: a kept name never ends like a rule-2 name and
never starts with ``harness.``; every rule-2 name does end like one; and two rule-2
names of different hash lengths differ in where their last ``--`` is. Within one
catalog a page name always maps to the same MCP name, and a :class:`NameMap` maps
MCP names back.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

MAX_LENGTH = 64
MCP_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
HASHED_SUFFIX = re.compile(r"--[0-9a-f]{10,}$")
HARNESS_PREFIX = "harness."
_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9_.-]")

HASH_DIGITS = (10, 16, 24, 32, 48, 62)
"""Hash lengths tried in turn while two names of one catalog still collide."""

NAVIGATE = HARNESS_PREFIX + "navigate"
"""The harness tool that navigates the page."""
RELOAD = HARNESS_PREFIX + "reload"
"""The harness tool that reloads the page."""


class NameCollision(ValueError):
    """Two page names map to one MCP name even with the longest hash (SHA-256 collided)."""


def keeps_its_name(page_name: str) -> bool:
    """Whether a page name is used as its MCP name unchanged (rule 1)."""
    return (
        MCP_NAME.match(page_name) is not None
        and not page_name.startswith(HARNESS_PREFIX)
        and HASHED_SUFFIX.search(page_name) is None
    )


def mcp_name(page_name: str, *, digits: int = HASH_DIGITS[0]) -> str:
    """The MCP name of one page tool name (rules 1 and 2 of the module docstring)."""
    if keeps_its_name(page_name):
        return page_name
    digest = hashlib.sha256(page_name.encode("utf-8")).hexdigest()[:digits]
    room = MAX_LENGTH - digits - 2
    stem = _NOT_ALLOWED.sub("_", page_name)[:room]
    if not stem and room >= len("tool"):
        stem = "tool"
    return f"{stem}--{digest}"


class NameMap:
    """The two-way mapping between the page names of one catalog and MCP names."""

    def __init__(self, page_names: Iterable[str]) -> None:
        names = sorted(set(page_names))
        self._to_mcp = _assign(names)
        self._to_page = {mapped: page for page, mapped in self._to_mcp.items()}

    def to_mcp(self, page_name: str) -> str:
        """The MCP name of a page tool in this catalog."""
        return self._to_mcp[page_name]

    def to_page(self, name: str) -> str | None:
        """The page tool an MCP name stands for, or None when there is none."""
        return self._to_page.get(name)


def _assign(names: list[str]) -> dict[str, str]:
    """Map every name, lengthening the hash of names that still collide."""
    digits = dict.fromkeys(names, 0)  # index into HASH_DIGITS
    while True:
        mapped = {name: mcp_name(name, digits=HASH_DIGITS[digits[name]]) for name in names}
        owners: dict[str, list[str]] = {}
        for name, target in mapped.items():
            owners.setdefault(target, []).append(name)
        clashes = [group for group in owners.values() if len(group) > 1]
        if not clashes:
            return mapped
        # Only hashed names can clash: kept names are unique and never look hashed.
        for group in clashes:
            for name in group:
                if digits[name] + 1 >= len(HASH_DIGITS):
                    raise NameCollision(f"Tool names {group!r} cannot be told apart.")
                digits[name] += 1
