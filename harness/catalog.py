"""The tool catalog: every tool the page's frames expose, kept current by events.

Backends report each frame's whole registry whenever it changes
(:meth:`Catalog.replace_frame`); the catalog merges frames into one list by name,
refuses collisions (first definition wins, the refusal is a warning naming both),
and tells subscribers what changed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from harness.models import CatalogWarning, Tool, ToolChange

Listener = Callable[[ToolChange], None]


@dataclass(frozen=True)
class FrameInfo:
    """A frame as the catalog knows it: a session-local key and where it is."""

    key: str
    url: str
    origin: str
    is_main: bool
    exposed: bool = True  # False: the frame's tools are not offered to the agent


@dataclass
class _FrameEntry:
    info: FrameInfo
    tools: list[Tool] = field(default_factory=list)
    warnings: list[CatalogWarning] = field(default_factory=list)
    order: int = 0  # when the frame first reported tools: earlier frames win collisions


class Catalog:
    """The merged, de-duplicated list of tools, with change notification."""

    def __init__(self) -> None:
        self._frames: dict[str, _FrameEntry] = {}
        self._tools: dict[str, Tool] = {}
        self._listeners: list[Listener] = []
        self._counter = 0
        self.warnings: list[CatalogWarning] = []

    # -- reading -----------------------------------------------------------
    def tools(self) -> list[Tool]:
        """The tools offered to the agent, sorted by name."""
        return [self._tools[name] for name in sorted(self._tools)]

    def get(self, name: str) -> Tool | None:
        """The tool with that name, if the agent may call it."""
        return self._tools.get(name)

    def names(self) -> list[str]:
        """The sorted names of the offered tools."""
        return sorted(self._tools)

    # -- subscription ------------------------------------------------------
    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(change)`` after every change; returns an unsubscribe function."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    # -- updating ----------------------------------------------------------
    def replace_frame(
        self, info: FrameInfo, tools: list[Tool], warnings: list[CatalogWarning] | None = None
    ) -> ToolChange:
        """Replace one frame's tools (and its warnings) with its current registry."""
        entry = self._frames.get(info.key)
        if entry is None:
            self._counter += 1
            entry = _FrameEntry(info=info, order=self._counter)
            self._frames[info.key] = entry
        entry.info = info
        entry.tools = list(tools)
        entry.warnings = list(warnings or [])
        return self._recompute()

    def drop_frame(self, key: str) -> ToolChange:
        """Forget a frame (detached, or navigated to a new document)."""
        if self._frames.pop(key, None) is None:
            return ToolChange()
        return self._recompute()

    def clear(self) -> ToolChange:
        """Forget every frame (the page is gone)."""
        self._frames.clear()
        return self._recompute()

    def _recompute(self) -> ToolChange:
        merged: dict[str, Tool] = {}
        warnings: list[CatalogWarning] = []
        for entry in sorted(self._frames.values(), key=lambda e: (not e.info.is_main, e.order)):
            warnings.extend(entry.warnings)
            if not entry.info.exposed:
                continue
            for tool in entry.tools:
                first = merged.get(tool.name)
                if first is None:
                    merged[tool.name] = tool
                    continue
                warnings.append(
                    CatalogWarning(
                        code="duplicate-name",
                        tool=tool.name,
                        message=(
                            f"Tool {tool.name!r} is defined twice: {_where(first)} and "
                            f"{_where(tool)}. The first definition is kept; the second is "
                            "refused. Give one of them another name."
                        ),
                    )
                )
        change = _diff(self._tools, merged)
        self._tools = merged
        self.warnings = warnings
        if change:
            for listener in list(self._listeners):
                listener(change)
        return change


def _where(tool: Tool) -> str:
    return f"{tool.source} tool in frame {tool.frame} ({tool.frame_url or tool.origin})"


def _diff(old: dict[str, Tool], new: dict[str, Tool]) -> ToolChange:
    added = sorted(set(new) - set(old))
    removed = sorted(set(old) - set(new))
    changed = sorted(n for n in set(old) & set(new) if old[n] != new[n])
    return ToolChange(added=added, removed=removed, changed=changed)
