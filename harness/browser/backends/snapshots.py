"""Turning the page's tool snapshots (plain JSON, page-provided) into :class:`Tool`.

Snapshots arrive through the private channel, so the page cannot forge *who*
sent them, but their content (names, descriptions, schemas) is the page's own
and untrusted: anything malformed is dropped with a warning, never guessed at.

One reading is made on the way in, for annotations written against seed 004 (the
Script Tools proposal): its hint names without ``Hint`` (``readOnly``, ``destructive``,
``idempotent``, ``openWorld``) and its own example's ``readOnlyHint: "true"`` are read as
the seed means them (:func:`annotations_as_meant`), with a catalog warning that tells the
site today's spelling — so a ``destructive: true`` tool is confirmed like any other.

Each snapshot comes as its own JSON text, the same text for as long as the tool is
unchanged; :class:`ToolBuilds` keeps the Tool built from a text, so re-reading a large,
mostly unchanged registry (every change and every listing sends it whole) builds only
what changed. A script tool's text ends with its registration number, which every
document counts afresh: the text without it is the key (:func:`split_registration`), so
the same page loaded again builds nothing again either.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Hashable, Iterable
from typing import Any

from pydantic import ValidationError

from harness.browser.frames import exposed_to
from harness.browser.wellformed import TooDeep, loads, well_formed_text
from harness.catalog import FrameInfo
from harness.models import BOOLEAN_HINTS, CatalogWarning, Tool


def tools_from_snapshots(
    snapshots: Any, info: FrameInfo, top_origin: str
) -> tuple[list[Tool], list[CatalogWarning]]:
    """The tools of one frame that may be offered, and warnings for the rest."""
    tools: list[Tool] = []
    warnings: list[CatalogWarning] = []
    if not isinstance(snapshots, list):
        return tools, warnings
    for snap in snapshots:
        tool, said = _from_snapshot(snap, info, top_origin)
        if tool is not None:
            tools.append(tool)
        warnings.extend(said)
    return tools, warnings


def _from_snapshot(
    snap: Any, info: FrameInfo, top_origin: str
) -> tuple[Tool | None, list[CatalogWarning]]:
    """One snapshot's tool (None: not offered, or malformed) and what to warn about it."""
    cross_origin = not info.is_main and info.origin != top_origin
    if isinstance(snap, Unreadable) and not cross_origin:  # (another origin's: as unexposed)
        warning = CatalogWarning(
            code="malformed-tool",
            tool=snap.name,
            message=f"Ignored tool {snap.name!r} from frame {info.key}: {snap.reason}"
            if snap.name is not None
            else f"Ignored a tool from frame {info.key}: {snap.reason}",
        )
        return None, [warning]
    if not isinstance(snap, dict):
        return None, []
    if cross_origin and not exposed_to(snap, top_origin):
        return None, []
    try:
        tool = tool_from_snapshot(snap, info)
    except (ValidationError, TypeError, ValueError, KeyError) as exc:
        name = snap.get("name") if isinstance(snap.get("name"), str) else None
        warning = CatalogWarning(
            code="malformed-tool",
            tool=name,
            message=f"Ignored a malformed tool from frame {info.key}: {exc}",
        )
        return None, [warning]
    raw = snap.get("annotations")
    warnings = [
        CatalogWarning(
            code="annotation-spelling", tool=tool.name, message=f"Tool {tool.name!r}: {reading}."
        )
        for reading in annotations_as_meant(raw if isinstance(raw, dict) else {})[1]
    ]
    return tool, warnings


def parse_answer(answer: Any) -> Any:
    """An answer the page sends as JSON text (``list``; each tool's snapshot), parsed once.

    None when the text is not JSON; any other answer (an error object) as it came.
    """
    if not isinstance(answer, str):
        return answer
    try:
        return loads(answer)
    except ValueError:
        return None


def read_listing(answer: Any) -> dict[str, Any] | None:
    """The ``list`` answer as plain data, each tool snapshot parsed (None: not a listing)."""
    listing = parse_answer(answer)
    if not isinstance(listing, dict):
        return None
    tools = listing.get("tools")
    texts = tools if isinstance(tools, list) else []
    return {**listing, "tools": [parse_answer(t) for t in texts if isinstance(t, str)]}


# How the layer ends a script tool's snapshot (channel.js, toolSnapshotText): its
# registration number is the text's last member, after every page-provided value.
_REGISTRATION_MEMBER = ',"registration":'


def split_registration(text: str) -> tuple[str, int | None]:
    """A snapshot's text without its registration number, and that number; a text that
    does not end with one (a form's, whose number is null) comes back whole, with None.

    Page-provided strings are JSON-escaped in the text, so an unescaped ``"registration":``
    can come before the layer's own member (in a raw schema), never after it: the last one
    is the layer's."""
    head, member, tail = text.rpartition(_REGISTRATION_MEMBER)
    number = tail[:-1]
    if member and tail.endswith("}") and 0 < len(number) <= 17 and number.isascii():
        return (head + "}", int(number)) if number.isdigit() else (text, None)
    return text, None


Entry = tuple[Hashable, Callable[[], Any], int | None]
"""A :meth:`ToolBuilds.build` entry: the key that stands for everything the snapshot says
but its registration number, a way to read the snapshot, and that number (None: as the
snapshot says)."""


def snapshot_texts(tools: Any) -> list[Entry]:
    """A frame's ``tools`` as the channel sends them (each snapshot its own JSON text),
    as :meth:`ToolBuilds.build` entries: keyed by the text (less its registration
    number), parsed only when needed."""
    if not isinstance(tools, list):
        return []
    entries: list[Entry] = []
    for text in tools:
        if isinstance(text, str):
            key, registration = split_registration(text)
            entries.append((key, _parser(text), registration))
    return entries


class Unreadable:
    """A snapshot the harness cannot read: nested deeper than its JSON reader follows (a
    schema of some hundreds of levels). Its tool is left out with a warning naming it."""

    def __init__(self, text: str) -> None:
        self.reason = "its snapshot (the schema, most likely) is nested too deeply to be read"
        self.name: str | None = None
        with contextlib.suppress(ValueError):  # the name is the text's first member
            name, _ = _STRING.raw_decode(text, len(_NAME_MEMBER))
            if text.startswith(_NAME_MEMBER) and isinstance(name, str):
                self.name = well_formed_text(name)


_NAME_MEMBER = '{"name":'
_STRING = json.JSONDecoder()


def read_snapshot(text: str) -> Any:
    """One tool's snapshot text, parsed (None: not JSON; :class:`Unreadable`: too deep)."""
    try:
        return loads(text)
    except TooDeep:
        return Unreadable(text)
    except ValueError:
        return None


def _parser(text: str) -> Callable[[], Any]:
    return lambda: read_snapshot(text)


Built = tuple[Tool | None, list[CatalogWarning]]
"""What one snapshot became: its tool (None: not offered) and the warnings about it."""


class ToolBuilds:
    """The :class:`Tool` models built from each frame's snapshots, reused while unchanged.

    A frame reports its whole registry at every change, and each listing reads it whole
    again, but from one report to the next most tools are the very same: a snapshot that
    comes back under the same key (its exact JSON text; on native, with the same CDP record)
    in the same frame, at the same URL and under the same top-level origin, gets the Tool
    (and the warnings) built from it the first time, without being parsed or checked again.
    The entries of a frame's last two reports are kept (on native, the layer's own listing
    after a navigation and the merged publication alternate).
    """

    def __init__(self) -> None:
        # frame key → (its FrameInfo, the top-level origin, the last two reports' entries)
        self._frames: dict[str, tuple[FrameInfo, str, list[dict[Hashable, Built]]]] = {}
        self.built = 0
        """How many snapshots were parsed and built (not reused); tests count them."""

    def build(
        self, info: FrameInfo, top_origin: str, entries: Iterable[Entry]
    ) -> tuple[list[Tool], list[CatalogWarning]]:
        """The frame's tools that may be offered, and warnings, from its :data:`Entry`
        list; a reused tool takes its entry's registration number."""
        known = self._frames.get(info.key)
        last, before = (
            known[2] if known is not None and known[:2] == (info, top_origin) else ({}, {})
        )
        current: dict[Hashable, Built] = {}
        tools: list[Tool] = []
        warnings: list[CatalogWarning] = []
        for key, read, registration in entries:
            built = current.get(key) or last.get(key) or before.get(key)
            if built is None:
                self.built += 1
                built = _from_snapshot(read(), info, top_origin)
            current[key] = built
            tool = built[0]
            if tool is not None:
                if registration is not None and tool.registration != registration:
                    tool = tool.model_copy(update={"registration": registration})
                tools.append(tool)
            warnings.extend(built[1])
        self._frames[info.key] = (info, top_origin, [current, last])
        return tools, warnings

    def forget(self, frame_key: str) -> None:
        """The frame went away: drop what was built for it."""
        self._frames.pop(frame_key, None)


# Seed 004 names MCP's hints without "Hint" (its `AnnotationsDict` and hint list).
SEED_SPELLINGS: dict[str, str] = {
    "readOnly": "readOnlyHint",
    "destructive": "destructiveHint",
    "idempotent": "idempotentHint",
    "openWorld": "openWorldHint",
}


# ToolAnnotations' own members: the browser registers them converted by Web IDL, and the
# harness reads them the same way (one registration, one set of annotations).
WEBIDL_HINTS: tuple[str, ...] = (
    "consequentialHint",
    "debugging",
    "readOnlyHint",
    "untrustedContentHint",
)


def annotations_as_meant(raw: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A page's annotations read as its author meant them, and what was read so.

    Seed 004's ``readOnly``/``destructive``/``idempotent``/``openWorld`` become the ``…Hint``
    names (when both are given, the ``…Hint`` one stands); a hint the spec's ToolAnnotations
    does not have, written as the string ``"true"`` or ``"false"`` (seed 004's own example),
    becomes that boolean. A string given for one of ToolAnnotations' own members is read as
    the browser registered it (Web IDL: true unless empty), with a warning. Every other key
    and value is left exactly as the page gave it.
    """
    annotations = dict(raw)
    readings: list[str] = []
    read_by_the_browser: set[str] = set()
    for key in WEBIDL_HINTS:
        value = annotations.get(key)
        if isinstance(value, str):
            # The browser registered it as Web IDL converts it: any non-empty string is true.
            annotations[key] = value != ""
            read_by_the_browser.add(key)
            readings.append(
                f"annotation `{key}: {value!r}` is a string; the browser reads it as "
                f"{str(annotations[key]).lower()}, and so does the harness. Write a JSON boolean"
            )
    for old, new in SEED_SPELLINGS.items():
        if old not in annotations:
            continue
        value = annotations.pop(old)
        if new in annotations:
            readings.append(
                f"annotations give both `{old}` (seed 004's spelling) and `{new}`; `{new}` is "
                f"used. Remove `{old}`"
            )
        else:
            annotations[new] = value
            readings.append(
                f"annotation `{old}` (seed 004's spelling) is read as `{new}`; write `{new}`"
            )
    for key in (*BOOLEAN_HINTS, "sensitiveHint"):
        value = annotations.get(key)
        if key in read_by_the_browser:
            continue
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            annotations[key] = value.strip().lower() == "true"
            readings.append(
                f"annotation `{key}: {value!r}` is a string; it is read as "
                f"{str(annotations[key]).lower()}. Write a JSON boolean"
            )
    return annotations, readings


# The spec's rule for a tool's name; the page refuses others at registerTool, and the user
# agent refuses them again here (a name with confusables, bidi controls or zero-width
# characters would show the agent one name and mean another).
TOOL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")


def tool_from_snapshot(snap: dict[str, Any], info: FrameInfo) -> Tool:
    """One snapshot as a :class:`Tool` (raises on malformed data)."""
    name = snap["name"]
    if not isinstance(name, str) or TOOL_NAME.fullmatch(name) is None:
        raise ValueError(f"the name {ascii(name)[:140]} is not [A-Za-z0-9_.-]{{1,128}}")
    schema = snap.get("inputSchema")
    output = snap.get("outputSchema")
    annotations = snap.get("annotations")
    title = snap.get("title")
    return Tool(
        name=name,
        title=title if isinstance(title, str) and title else None,
        description=snap["description"],
        inputSchema=schema if isinstance(schema, dict) else {"type": "object"},
        outputSchema=output if isinstance(output, dict) else None,
        annotations=annotations_as_meant(annotations)[0] if isinstance(annotations, dict) else {},
        source=snap.get("source", "script"),
        origin=info.origin,
        frame=info.key,
        frameUrl=info.url,
        surface=str(snap.get("surface") or "document.modelContext"),
        hasResolve=bool(snap.get("hasResolve")),
        registration=_registration(snap.get("registration")),
    )


def _registration(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def refused_warnings(refused: Any, info: FrameInfo) -> list[CatalogWarning]:
    """Warnings for tools the page's registry refused over a name another tool holds.

    ``refused`` is the channel's list of ``{name, source, holder, where}``: a
    ``<form toolname>`` (``where``) whose name a script tool or an earlier form holds, or
    a script tool refused over the name of the form ``where``. Never a silent overwrite:
    the warning names both definitions.
    """
    warnings: list[CatalogWarning] = []
    if not isinstance(refused, list):
        return warnings
    for entry in refused:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            continue
        name = entry["name"]
        where = entry.get("where") if isinstance(entry.get("where"), str) else "<form>"
        if entry.get("source") == "script":
            what = (
                f"the form {where} holds the name, so registerTool() of a script tool was refused"
            )
        elif entry.get("holder") == "script":
            what = f"a script tool holds the name, so the form {where} is refused"
        else:
            what = f"an earlier form holds the name, so the form {where} is refused"
        warnings.append(
            CatalogWarning(
                code="duplicate-name",
                tool=name,
                message=(
                    f"Tool {name!r} is defined twice in frame {info.key} ({info.url}): {what}. "
                    "Give one of them another name."
                ),
            )
        )
    return warnings
