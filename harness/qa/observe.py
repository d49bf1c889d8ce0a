"""What a call did to the page: the requests it sent, the navigations, and the state it left.

:class:`PageWatch` follows one session's page while the QA tools run (and guards it: a
state-changing request is sent only when writes are allowed and only to the page's own
origin; any other is aborted before it leaves the browser). :func:`page_state` reads what
the user would lose or see changed: every frame's ``localStorage`` and ``sessionStorage``,
its form controls' values, its visible text, the cookies, and which document is loaded;
:class:`OwnChanges` keeps what the page changes by itself, which no call is blamed for.

Nothing read here is printed: a change is described by where it was (a storage key, a
control's name), never by the value.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame, Request, Route

from harness.browser.isolated import (
    READ_TIMEOUT_S,
    FrameWorld,
    IsolatedWorlds,
    PageReadTimeout,
)
from harness.session import Session
from harness.stages.secrets import secret_kind
from harness.urls import origin_of

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

_STATE_JS = """() => {
  const store = (name) => {
    try {
      const area = window[name], found = {};
      for (let i = 0; i < area.length; i++) { const k = area.key(i); found[k] = area.getItem(k); }
      return found;
    } catch (e) { return {}; }
  };
  const controls = [...document.querySelectorAll('input, select, textarea')].map((el, i) => [
    el.name || el.id || `#${i}`,
    (el.type === 'checkbox' || el.type === 'radio') ? String(el.checked) : String(el.value),
  ]);
  return {local: store('localStorage'), session: store('sessionStorage'), controls,
          text: document.body ? document.body.innerText : '',
          document: String(performance.timeOrigin)};
}"""


@dataclass(frozen=True)
class FrameState:
    """One frame's storage, form controls and text."""

    local: dict[str, str]
    session: dict[str, str]
    controls: tuple[tuple[str, str], ...]
    text: str
    document: str


Place = tuple[str, ...]
"""Where a page's state can change, for telling one change from another: a storage key
(``("localStorage", frame, key)``), a form control, a cookie, a frame's text, the URL. The
top frame is ``""`` whatever its URL, which the history API may change under it."""


@dataclass(frozen=True)
class PageState:
    """What the user would see changed: each frame's state (by URL) and the cookies."""

    url: str
    frames: dict[str, FrameState]
    cookies: tuple[tuple[str, str, str], ...]

    def differences(self, after: PageState, *, text: bool = True) -> dict[Place, str]:
        """Every place whose value differs in ``after``, with how a report names it (never
        by its value); the visible text and the URL only when ``text``."""
        found: dict[Place, str] = {}
        for frame, was, now in self._frames_in(after):
            for area in ("local", "session"):
                old, new = getattr(was, area), getattr(now, area)
                for key in sorted(old.keys() | new.keys()):
                    if old.get(key) != new.get(key):
                        found[(f"{area}Storage", frame, key)] = f"{area}Storage[{_name(key)}]"
            if was.controls != now.controls:
                before = dict(was.controls)
                names = [n for n, v in now.controls if before.get(n) != v]
                for n in names:
                    found[("control", frame, n)] = f"form control {_name(n)}"
                if not names:
                    found[("controls", frame)] = "form control '(controls)'"
            if text and was.text != now.text:
                found[("text", frame)] = "the page's text" if not frame else "a frame's text"
        old_cookies = {c[:2]: c[2] for c in self.cookies}
        new_cookies = {c[:2]: c[2] for c in after.cookies}
        for key in sorted(old_cookies.keys() | new_cookies.keys()):
            if old_cookies.get(key) != new_cookies.get(key):
                found[("cookie", *key)] = f"cookie {_name(key[1])}"
        if text and self.url != after.url:
            found[("url",)] = "the page's URL"
        return found

    def storage_changes(self, after: PageState, ignoring: Collection[Place] = ()) -> list[str]:
        """Storage, form controls and cookies that differ (names only, never values), but
        for the places ``ignoring`` names (what the page changes by itself)."""
        return _changed(self.differences(after, text=False), ignoring)

    def changes(self, after: PageState, ignoring: Collection[Place] = ()) -> list[str]:
        """Everything that differs, the visible text and the URL included, but for the
        places ``ignoring`` names."""
        return _changed(self.differences(after), ignoring)

    def document(self) -> str:
        """Which document the top frame holds (changes with every load)."""
        top = self.frames.get(self.url)
        return top.document if top else ""

    def _frames_in(self, after: PageState) -> list[tuple[str, FrameState, FrameState]]:
        """Each frame read in both states, as (its place: ``""`` for the top one, else its
        URL; before; after)."""
        pairs = []
        for url, was in self.frames.items():
            frame = "" if url == self.url else url
            now = after.frames.get(after.url if url == self.url else url)
            if now is not None:
                pairs.append((frame, was, now))
        return pairs


def _changed(found: dict[Place, str], ignoring: Collection[Place]) -> list[str]:
    return [f"{what} changed" for place, what in found.items() if place not in ignoring]


@dataclass
class OwnChanges:
    """What a page changes by itself: the places seen change between two reads of it while
    nothing was called (a clock, a heartbeat in storage). A call's changes leave them out —
    a tool's own change of such a place cannot be told from the page's."""

    places: dict[Place, str] = field(default_factory=dict)

    def seen(self, first: PageState, second: PageState) -> None:
        """Add what changed between two reads of the page with no call in between (nothing,
        when another document came in between: that is no change of the page's own)."""
        if first.document() == second.document():
            self.places.update(first.differences(second))

    def described(self) -> str:
        """The places, as a report names them (``localStorage['lastActive'], form control
        'clock'``)."""
        return ", ".join(sorted(set(self.places.values())))


def _name(text: str) -> str:
    """A key as a report may show it: quoted, and masked when it looks like a secret."""
    return "«a secret-looking name»" if secret_kind(text) else repr(text[:80])


async def page_state(session: Session, timeout: float = READ_TIMEOUT_S) -> PageState:
    """Read the page's state now (frames that cannot answer within ``timeout`` s are left
    out). Read in worlds the page cannot patch (:mod:`harness.browser.isolated`): a page
    that replaces ``Storage.prototype.getItem`` or ``querySelectorAll`` cannot hide what a
    call changed, nor one that never yields stop the fuzzing."""
    frames: dict[str, FrameState] = {}
    async with IsolatedWorlds(session.page, timeout) as isolated:
        for world in await isolated.worlds():
            state = await _frame_state(isolated, world)
            if state is not None:
                frames.setdefault(world.url, state)
    cookies: tuple[tuple[str, str, str], ...] = ()
    with contextlib.suppress(PlaywrightError):
        cookies = tuple(
            sorted(
                (str(c.get("domain", "")), str(c.get("name", "")), str(c.get("value", "")))
                for c in await session.context.cookies()
            )
        )
    return PageState(url=session.page.url, frames=frames, cookies=cookies)


async def _frame_state(isolated: IsolatedWorlds, world: FrameWorld) -> FrameState | None:
    try:
        data: dict[str, Any] = await isolated.evaluate(world, _STATE_JS) or {}
    except (PlaywrightError, PageReadTimeout):
        return None
    return FrameState(
        local=dict(data.get("local") or {}),
        session=dict(data.get("session") or {}),
        controls=tuple((str(n), str(v)) for n, v in data.get("controls") or []),
        text=str(data.get("text") or ""),
        document=str(data.get("document") or ""),
    )


@dataclass
class Window:
    """What happened while one call ran: requests that change state, navigations."""

    unsafe: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    navigations: list[str] = field(default_factory=list)


class PageWatch:
    """Follows a session's page; guards its writes (see the module's docstring).

    Use as ``async with PageWatch(session, allow_writes=…) as watch``; ``watch.window()``
    starts a new :class:`Window` for the next call.
    """

    def __init__(self, session: Session, *, allow_writes: bool) -> None:
        self.session = session
        self.allow_writes = allow_writes
        self.origin = origin_of(session.page.url)
        self.current = Window()
        self._in_flight: set[Request] = set()
        """Navigations of the top frame requested and not landed yet."""

    def window(self) -> Window:
        """A new window: what happens from now on is recorded in it."""
        self.current = Window()
        return self.current

    def _described(self, request: Request) -> str:
        origin = origin_of(request.url)
        where = "" if origin == self.origin else f" to {origin}"
        # The query is left out, and a path that looks like it carries a secret is masked:
        # reports never hold one.
        path = request.url.split("?", 1)[0].split("#", 1)[0].removeprefix(origin) or "/"
        return f"{request.method} {'«a secret-looking path»' if secret_kind(path) else path}{where}"

    async def landed(self, timeout: float) -> None:
        """Wait, at most ``timeout`` s, until no navigation of the top frame is in flight:
        one a call started (a tool sets ``location`` just after it answers, and the next
        page is slow to come) lands while that call is watched, not during the next one,
        and the page is not loaded again under it."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self._in_flight and loop.time() < deadline:
            await asyncio.sleep(0.02)

    def _on_request(self, request: Request) -> None:
        if request.method.upper() not in SAFE_METHODS:
            self.current.unsafe.append(self._described(request))
        with contextlib.suppress(PlaywrightError):  # a worker's request has no frame
            if request.is_navigation_request() and request.frame.parent_frame is None:
                self._in_flight.add(request)

    def _on_request_ended(self, request: Request) -> None:
        # Finished (after its document committed) or failed (a download, an abort, a 204).
        self._in_flight.discard(request)

    def _on_navigated(self, frame: Frame) -> None:
        if frame.parent_frame is None:
            self.current.navigations.append(frame.url)
            self._in_flight.clear()

    async def _guard(self, route: Route, request: Request) -> None:
        allowed = request.method.upper() in SAFE_METHODS or (
            self.allow_writes and origin_of(request.url) == self.origin
        )
        if allowed:
            await route.fallback()
            return
        self.current.blocked.append(self._described(request))
        await route.abort("blockedbyclient")

    async def __aenter__(self) -> PageWatch:
        page = self.session.page
        page.on("request", self._on_request)
        page.on("requestfinished", self._on_request_ended)
        page.on("requestfailed", self._on_request_ended)
        page.on("framenavigated", self._on_navigated)
        await self.session.context.route("**/*", self._guard)
        return self

    async def __aexit__(self, *exc: object) -> None:
        page = self.session.page
        page.remove_listener("request", self._on_request)
        page.remove_listener("requestfinished", self._on_request_ended)
        page.remove_listener("requestfailed", self._on_request_ended)
        page.remove_listener("framenavigated", self._on_navigated)
        with contextlib.suppress(PlaywrightError):
            await self.session.context.unroute("**/*", self._guard)
