"""The tool catalog: every tool the page's frames expose, kept current by events.

Backends report each frame's whole registry whenever it changes
(:meth:`Catalog.replace_frame`); the catalog merges frames into one list by name,
refuses collisions (first definition wins, the refusal is a warning naming both),
and tells subscribers what changed. While the page is somewhere the user has not allowed,
the catalog is paused (:meth:`Catalog.pause`): it offers no tool, and says why. While a call
runs, the catalog is held
(:meth:`Catalog.hold`): what frames report is kept, and published, with one change event,
once the call's result was delivered (seed 002 §6.1). A frame reports in parts: ``registry`` (what the
page's WebMCP registry holds: script tools, the spec's ``toolname`` forms) and
``tool-name`` (seed 002's declarative elements); within a frame, the tool first seen
wins a collision, whichever part it came from.

Readiness (:class:`Readiness`, :class:`Settle`) is defined here too, once for every front
end: after a document's ``load``, its catalog is *settled* when, for a quiet window, no
registration, unregistration or declarative change has been seen and the page's network
has been idle — or when the maximum wait has passed. The window ends early when the page
has nothing left that could change the catalog within it: after :data:`EARLY_QUIET_S` of
quiet, the page is asked (:attr:`Readiness.idle`), and with no timer of its due before
the window would end (and nothing waiting to be scanned), nothing can come that the
window would have waited for.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from harness.models import CatalogWarning, Tool, ToolChange

Listener = Callable[[ToolChange], None]

DEFAULT_QUIET_S = 0.5
"""The quiet window: like Playwright's ``networkidle``, 500 ms without activity."""
DEFAULT_SETTLE_TIMEOUT_S = 5.0
"""The longest a catalog is waited for (unless the quiet window asks for more)."""
_POLL_S = 0.025
EARLY_QUIET_S = 0.1
"""The quiet after which the page is asked whether anything is still to come (the page's
own continuations of what just happened — a fetch's answer read, a promise chain — run
well within it), and at most how often it is asked again."""


class Settle(BaseModel):
    """How long to wait for a catalog to settle: the quiet window and the cap.

    ``quiet`` 0 means "do not wait". The cap is at least twice the quiet window, so a
    long window still has time to be seen quiet once.
    """

    model_config = ConfigDict(frozen=True)

    quiet: float = Field(default=DEFAULT_QUIET_S, ge=0)
    timeout: float = Field(default=DEFAULT_SETTLE_TIMEOUT_S, gt=0)

    @classmethod
    def quiet_ms(cls, ms: float) -> Settle:
        """The settings for ``--settle MS``: that quiet window, a cap of max(5 s, 2 × it)."""
        quiet = ms / 1000
        return cls(quiet=quiet, timeout=max(DEFAULT_SETTLE_TIMEOUT_S, 2 * quiet))

    @property
    def enabled(self) -> bool:
        """False when settling is turned off (a quiet window of 0)."""
        return self.quiet > 0


class SettleReport(BaseModel):
    """How a wait for readiness ended: ``settled`` (quiet seen) or capped, after how long."""

    model_config = ConfigDict(frozen=True)

    settled: bool
    waited: float
    pending_requests: int = 0
    early: bool = False  # settled before the window ended: the page had nothing to come


class Readiness:
    """What the page did lately, for deciding when its catalog is settled.

    Backends call :meth:`touch` for every registration, unregistration or declarative
    change they hear of (the catalog does too, for every change it makes); the session
    reports the page's requests (:meth:`request_started`, :meth:`request_ended`) and each
    document's ``load`` (:meth:`loaded`). :meth:`wait` returns once all of it has been
    quiet for the window, or at the cap. Pure bookkeeping: no browser in here.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._last_activity = clock()
        self._loaded_at = clock()
        self._requests: set[object] = set()
        self.idle: Callable[[float], Awaitable[bool]] | None = None
        """Asks the page whether nothing is still to come within the given seconds (no
        timer due, nothing to scan); the session sets it. None: the window is waited."""

    @property
    def pending_requests(self) -> int:
        """Requests of the page that have started and not yet ended."""
        return len(self._requests)

    def touch(self) -> None:
        """A registration, unregistration or declarative change happened just now."""
        self._last_activity = self._clock()

    def loaded(self) -> None:
        """A document finished loading: its quiet window starts now at the earliest."""
        self._loaded_at = self._last_activity = self._clock()

    def request_started(self, request: object) -> None:
        """The page sent a request (any frame, any kind)."""
        self._requests.add(request)
        self._last_activity = self._clock()

    def request_ended(self, request: object) -> None:
        """A request finished or failed."""
        if request in self._requests:
            self._requests.discard(request)
            self._last_activity = self._clock()

    def quiet_for(self) -> float:
        """Seconds since the last activity; 0 while a request is pending."""
        if self._requests:
            return 0.0
        return max(0.0, self._clock() - max(self._last_activity, self._loaded_at))

    async def wait(self, settle: Settle) -> SettleReport:
        """Wait until quiet for ``settle.quiet`` seconds, or ``settle.timeout`` at most —
        or until quiet for :data:`EARLY_QUIET_S` with the page saying nothing is to come
        before the window would end (``early``)."""
        start = self._clock()
        deadline = start + max(settle.timeout, settle.quiet)
        asked = -EARLY_QUIET_S  # when the page was last asked
        while True:
            quiet = self.quiet_for()
            now = self._clock()
            if quiet >= settle.quiet:
                return SettleReport(settled=True, waited=now - start)
            if now >= deadline:
                return SettleReport(
                    settled=False, waited=now - start, pending_requests=self.pending_requests
                )
            # Asked only while ending early would save a moment: with less of the window
            # left than that, a page's next timer run (an interval's) can fall just past
            # the window's end and the page would wrongly look idle (a late-waking loop on
            # a busy machine asked with 20 ms left, between two runs of a 50 ms interval).
            left = settle.quiet - quiet
            if quiet >= EARLY_QUIET_S and left >= EARLY_QUIET_S and now - asked >= EARLY_QUIET_S:
                asked = now
                if await self._nothing_to_come(left, deadline - now):
                    return SettleReport(settled=True, waited=self._clock() - start, early=True)
                continue
            await asyncio.sleep(min(_POLL_S, max(0.0, deadline - now)))

    async def _nothing_to_come(self, window: float, limit: float) -> bool:
        """Whether the page says nothing can change its catalog within ``window`` seconds,
        and nothing happened while it was asked (it answers after what it sent before)."""
        if self.idle is None or limit <= 0:
            return False
        stamp = self._last_activity
        try:
            idle = await asyncio.wait_for(self.idle(window), limit)
        except Exception:  # no answer in time, or none at all: the window is waited
            return False
        return idle and self._last_activity == stamp and not self._requests


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
    tools: dict[str, list[Tool]] = field(default_factory=dict)  # by part
    warnings: dict[str, list[CatalogWarning]] = field(default_factory=dict)
    order: int = 0  # when the frame first reported tools: earlier frames win collisions
    seen: dict[tuple[str, str], int] = field(default_factory=dict)  # (part, name) → first seen

    def ordered(self) -> list[Tool]:
        """The frame's tools, first seen first (the later of two with one name is refused)."""
        tools = [(self.seen[(part, t.name)], t) for part, ts in self.tools.items() for t in ts]
        return [t for _, t in sorted(tools, key=lambda pair: pair[0])]


class Catalog:
    """The merged, de-duplicated list of tools, with change notification."""

    def __init__(self) -> None:
        self._frames: dict[str, _FrameEntry] = {}
        self._tools: dict[str, Tool] = {}
        self._listeners: list[Listener] = []
        self._counter = 0
        self._holds = 0
        self._held_changes = False
        self._paused: str | None = None
        self.warnings: list[CatalogWarning] = []
        self.readiness = Readiness()
        """When this catalog counts as settled (see :class:`Readiness`)."""

    # -- reading -----------------------------------------------------------
    def tools(self) -> list[Tool]:
        """The tools offered to the agent, sorted by name (none while paused)."""
        offered = self._offered()
        return [offered[name] for name in sorted(offered)]

    def get(self, name: str) -> Tool | None:
        """The tool with that name, if the agent may call it."""
        return self._offered().get(name)

    def names(self) -> list[str]:
        """The sorted names of the offered tools."""
        return sorted(self._offered())

    def _offered(self) -> dict[str, Tool]:
        return {} if self._paused is not None else self._tools

    # -- pausing -------------------------------------------------------------
    @property
    def paused(self) -> str | None:
        """Why no tool is offered or run now (None: the catalog is not paused)."""
        return self._paused

    def pause(self, reason: str | None) -> ToolChange:
        """Offer no tool until ``pause(None)`` (``reason``: why, for the calls refused
        meanwhile). Frames keep reporting; what they report is offered once it ends. Both
        edges are announced as changes at once, whether a call holds the catalog or not."""
        before = self._offered()
        self._paused = reason
        return self._announce(_diff(before, self._offered()))

    # -- subscription ------------------------------------------------------
    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(change)`` after every change; returns an unsubscribe function."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def unsubscribe_all(self) -> None:
        """Tell no listener of any later change (its session is closing: the page's tools
        going with it are no change a listener should hear of as the page's)."""
        self._listeners.clear()

    # -- holding -------------------------------------------------------------
    @property
    def changes_held(self) -> bool:
        """Whether a release (:meth:`hold`) would publish changes made meanwhile."""
        return self._held_changes

    def hold(self) -> Callable[[], ToolChange]:
        """Keep offering the tools as they are until the returned function is called.

        Seed 002 §6.1: while a call runs, the tool that runs (and every other) stays in the
        catalog, whatever the page does; its result goes to the agent first, then the catalog
        is recomputed and the change announced. Holds nest; the last release publishes what
        changed meanwhile, as one change, and returns it. Calling a release twice is harmless.
        """
        self._holds += 1
        released = False

        def release() -> ToolChange:
            nonlocal released
            if released:
                return ToolChange()
            released = True
            self._holds -= 1
            if self._holds == 0 and self._held_changes:
                self._held_changes = False
                return self._recompute()
            return ToolChange()

        return release

    # -- updating ----------------------------------------------------------
    def replace_frame(
        self,
        info: FrameInfo,
        tools: list[Tool],
        warnings: list[CatalogWarning] | None = None,
        *,
        part: str = "registry",
    ) -> ToolChange:
        """Replace one part of one frame's tools (and its warnings) with its current state."""
        entry = self._frames.get(info.key)
        warnings = list(warnings or [])
        if entry is not None and _unchanged(entry, info, part, tools, warnings):
            # The very same Tool objects again (a listing that found nothing new): nothing
            # to merge, nothing to announce.
            return ToolChange()
        if entry is None:
            self._counter += 1
            entry = _FrameEntry(info=info, order=self._counter)
            self._frames[info.key] = entry
        entry.info = info
        entry.tools[part] = list(tools)
        entry.warnings[part] = warnings
        live = {(p, t.name) for p, ts in entry.tools.items() for t in ts}
        entry.seen = {key: when for key, when in entry.seen.items() if key in live}
        for tool in tools:
            if (part, tool.name) not in entry.seen:
                self._counter += 1
                entry.seen[(part, tool.name)] = self._counter
        return self._recompute()

    def has_part(self, key: str, part: str) -> bool:
        """Whether the frame ``key`` holds tools or warnings under ``part``."""
        entry = self._frames.get(key)
        return entry is not None and bool(entry.tools.get(part) or entry.warnings.get(part))

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
        if self._holds:
            self._held_changes = True
            return ToolChange()
        merged: dict[str, Tool] = {}
        warnings: list[CatalogWarning] = []
        for entry in sorted(self._frames.values(), key=lambda e: (not e.info.is_main, e.order)):
            for part_warnings in entry.warnings.values():
                warnings.extend(part_warnings)
            if not entry.info.exposed:
                continue
            for tool in entry.ordered():
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
        before = self._offered()
        self._tools = merged
        self.warnings = warnings
        return self._announce(_diff(before, self._offered()))

    def _announce(self, change: ToolChange) -> ToolChange:
        if change:
            self.readiness.touch()
            for listener in list(self._listeners):
                listener(change)
        return change


def _unchanged(
    entry: _FrameEntry,
    info: FrameInfo,
    part: str,
    tools: list[Tool],
    warnings: list[CatalogWarning],
) -> bool:
    """Whether a frame reports exactly what it reported last (the same objects, in order)."""
    known = entry.tools.get(part)
    return (
        entry.info == info
        and known is not None
        and len(known) == len(tools)
        and all(a is b for a, b in zip(known, tools, strict=True))
        and entry.warnings.get(part) == warnings
    )


def _where(tool: Tool) -> str:
    return f"{tool.source} tool in frame {tool.frame} ({tool.frame_url or tool.origin})"


def _diff(old: dict[str, Tool], new: dict[str, Tool]) -> ToolChange:
    added = sorted(set(new) - set(old))
    removed = sorted(set(old) - set(new))
    # The same object most often (a frame reported again): no field-by-field comparison.
    changed = sorted(n for n in set(old) & set(new) if old[n] is not new[n] and old[n] != new[n])
    return ToolChange(added=added, removed=removed, changed=changed)
