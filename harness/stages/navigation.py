"""Navigation consent: where the session's page may be, for the session's whole life.

A navigation is a request like any other: an agent that puts data in a URL's query can
send it anywhere, and a page that takes the session to another origin gets the agent's
next calls. So consent is a standing condition, not a moment (:class:`NavigationGuard`):

- The user allows origins: the one the user opens (:meth:`Session.open`, wherever its
  redirects land; or the first one a new page goes to, however its owner sent it there)
  and each one the user says yes to.
- Every main-frame commit of the session's page is checked, whatever made it — a script
  redirect, a meta refresh, a ``location`` a tool set, a history traversal, a form, a
  redirect seconds after a consented navigation, the agent's own navigation. A commit to
  an origin the user has not allowed pauses the catalog (no tool is offered or run), and
  the user is asked (source ``navigation``); without a yes the page goes back to the last
  allowed URL. A page that keeps leaving is left on ``about:blank`` after
  :data:`MAX_RETURNS` returns.
- Agents (the loop, MCP clients) navigate through :func:`navigate_as_agent`: opening
  another origin than the start URL's is asked first, each time, and nobody there to
  answer means no.

A script tool's ``_meta.uiRedirect`` is applied after its result was delivered (§6.1),
within the tool's own origin only (:func:`ui_redirect_target`): page text never sends the
browser elsewhere. Origins are decided the way the browser decides them
(:mod:`harness.urls`, a WHATWG parser), and the page is sent the URL that parser
serialized, so a URL Python would read as same-origin cannot take Chromium elsewhere.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from harness.elicitation.base import ElicitationHandler, ElicitationRequest, Quoted, ask
from harness.elicitation.wording import (
    NAVIGATION_BY_ITSELF,
    NAVIGATION_LEAVE,
    NAVIGATION_REDIRECTED,
)
from harness.urls import http_url, origin_of, resolve, scheme_of

log = logging.getLogger("harness.navigation")

RULE = "navigate-cross-origin"

MAX_RETURNS = 2
"""How many times in a row the page is sent back to the last allowed URL; a page that
leaves again after that (no navigation of the user's or the agent's in between) is left
on ``about:blank``, so that a page that redirects as it loads cannot make a loop of it."""

BLANK = "about:blank"


class GuardedPage(Protocol):
    """What the guard reads of a session's page, and does to it (a
    :class:`~harness.session.Session`)."""

    @property
    def elicitation(self) -> ElicitationHandler:
        """Who answers the user's questions."""
        ...

    @property
    def url(self) -> str:
        """Where the page is now (its last main-frame commit)."""
        ...

    def pause_tools(self, reason: str | None) -> None:
        """Offer and run no tool, saying ``reason`` (None: offer them again)."""
        ...

    async def return_to(self, url: str) -> None:
        """Load ``url`` in the page (the guard's own navigation; it never raises)."""
        ...


def commit_origin(url: str) -> str:
    """The origin of a committed document's URL, as the browser decides it: a ``blob:``
    URL's is its creator's (the URL inside it); ``null`` for what has no http(s) origin
    (``about:blank``, an error page), where no tool can be offered."""
    if url.startswith("blob:"):
        url = url[len("blob:") :]
    return origin_of(url)


@dataclass(frozen=True)
class Refusal:
    """The user did not allow an origin the page went to; the page was sent back."""

    origin: str  # where the page went
    answer: str  # the answer, and its reason, as text
    back_at: str  # where the page is now


class NavigationGuard:
    """The user's standing consent to where one session's page is.

    :meth:`committed` hears every main-frame commit (the session calls it from Playwright's
    ``framenavigated``); :meth:`judge` decides about the page as it is, asking the user.
    Navigations the session makes itself run inside :meth:`navigation`, and decide in the
    caller's context (an MCP client's call can answer the question); everything else is
    decided by a task of the guard's own.
    """

    def __init__(self, page: GuardedPage, *, watching: bool = True) -> None:
        """``watching``: False leaves every commit alone (a page its owner drives, whose
        navigations cannot be told from the page's own)."""
        self._page = page
        self.watching = watching
        self.allowed: set[str] = set()
        """The origins the user allowed (the one opened, and every yes)."""
        self.last_allowed: str | None = None
        """The last URL the page committed on an allowed origin (where a refusal goes back)."""
        self.last_refusal: Refusal | None = None
        """The last refusal since the latest :meth:`navigation` began."""
        self._deferred = 0  # navigations under way whose caller judges where they land
        self._intent: str | None = None  # the URL the navigation under way asked for
        self._returns = 0  # returns in a row, since the user's or the agent's last navigation
        self._lock: asyncio.Lock | None = None
        self._task: asyncio.Task[None] | None = None

    def allow(self, url: str) -> None:
        """Allow the origin of ``url`` from now on."""
        origin = commit_origin(url)
        if origin != "null":
            self.allowed.add(origin)

    def allows(self, url: str) -> bool:
        """Whether the page may be at ``url`` without asking (no origin counts as allowed:
        nothing there can offer a tool)."""
        origin = commit_origin(url)
        return origin == "null" or origin in self.allowed

    def committed(self, url: str) -> None:
        """The page's main frame committed a document (or a same-document URL) at ``url``."""
        if not self.watching:
            return
        if not self.allowed:
            # The page's first origin is where its user started it (a new page, on
            # about:blank, runs no site's script that could have gone there by itself).
            self.allow(url)
        if self.allows(url):
            if commit_origin(url) != "null":
                self.last_allowed = url
            self._page.pause_tools(None)
            return
        self._page.pause_tools(
            f"The page went to {commit_origin(url)}, an origin the user has not allowed, so "
            "its tools are paused: none is offered or run until the user allows that origin "
            "or the page is back on one the user allowed. List the tools again later, or "
            "navigate back."
        )
        if not self._deferred:
            self.check()

    def check(self) -> None:
        """Decide about the page as it is now, in a task of the guard's own (unless one runs)."""
        if (
            not self.watching
            or self.allows(self._page.url)
            or (self._task is not None and not self._task.done())
        ):
            return
        self._task = asyncio.ensure_future(self.judge())

    @contextlib.contextmanager
    def navigation(self, *, allow: str | None = None, intent: str | None = None) -> Iterator[None]:
        """A navigation of the user's (``allow``: the URL the user opens) or the agent's
        (``intent``: the URL it asked for). Commits meanwhile pause the tools but wait for
        the caller's :meth:`judge`; whatever is left undecided on the way out (an error)
        is decided in the background."""
        if allow is not None:
            self.allow(allow)
        self._returns = 0
        self.last_refusal = None
        self._deferred += 1
        previous, self._intent = self._intent, intent
        try:
            yield
        finally:
            self._deferred -= 1
            self._intent = previous
            if not self._deferred:
                self.check()

    async def judge(self) -> None:
        """Decide about where the page is until it is somewhere allowed: ask the user about
        an origin not allowed; a yes allows it, anything else sends the page back."""
        if not self.watching:
            return
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            while not self.allows(url := self._page.url):
                origin = commit_origin(url)
                answered = await _consent(self._page, *self._question(url, origin))
                if answered is None:
                    self.allowed.add(origin)
                    continue
                if commit_origin(self._page.url) != origin:
                    continue  # the page moved on meanwhile: decide about where it is now
                self._returns += 1
                back = self.last_allowed if self._returns <= MAX_RETURNS else None
                await self._page.return_to(back or BLANK)
                self.last_refusal = Refusal(origin, answered, self._page.url)
                if back is None and not self.allows(self._page.url):
                    return  # not even about:blank loads: the tools stay paused
            if commit_origin(url) != "null":
                self.last_allowed = url  # allowed now (its commit may have come first)
            self._page.pause_tools(None)

    async def close(self) -> None:
        """Stop deciding (the session closes): a question still open is dropped."""
        self.watching = False
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def _question(self, url: str, origin: str) -> tuple[str, str, str, str, dict[str, str]]:
        """The question about ``url``: (the page's origin before, destination origin, tool,
        the harness's sentence, the URLs it is about, quoted as the page's)."""
        before = self.last_allowed or BLANK
        here = commit_origin(before)
        if self._intent is not None:
            urls = {"from": before, "to": self._intent, "redirected to": url}
            return here, origin, "navigate", NAVIGATION_REDIRECTED, urls
        return here, origin, "", NAVIGATION_BY_ITSELF, {"from": before, "to": url}


async def _consent(
    page: GuardedPage,
    home: str,
    destination: str,
    tool: str,
    message: str,
    urls: dict[str, str],
) -> str | None:
    """Ask the user about going to ``destination``; None for a yes, otherwise the answer
    and its reason as text.

    ``message`` is one of the harness's own sentences; the question names the destination's
    origin on a line of its own, as the browser's URL parser decides it
    (``http://A%2Fsettings@B/`` goes to B, and says so); the URLs themselves are quoted as
    the page's and the agent's words, never part of the harness's sentence.
    """
    answer = await ask(
        page.elicitation,
        ElicitationRequest(
            source="navigation",
            rule=RULE,
            message=message,
            origin=home,
            destination=destination,
            tool=tool,
            quoted=[Quoted(label=label, text=url) for label, url in urls.items()],
        ),
    )
    if answer.action == "accept":
        return None
    why = f" ({answer.reason})" if answer.reason else ""
    return f"{answer.action}{why}"


class Navigator(GuardedPage, Protocol):
    """What an agent's navigation uses of its session (a :class:`~harness.session.Session`)."""

    @property
    def guard(self) -> NavigationGuard:
        """The session's standing consent."""
        ...

    async def navigate(self, url: str) -> None:
        """Open ``url`` as a navigation the user did not make (where it lands is judged)."""
        ...


def resolve_url(start_url: str, url: str) -> str:
    """``url`` resolved against the start URL as the browser resolves it, serialized;
    a :class:`ValueError` unless http(s)."""
    resolved = resolve(start_url, url.strip())
    absolute = http_url(resolved) if resolved is not None else None
    if absolute is None:
        scheme = scheme_of(resolved) if resolved is not None else ""
        what = f"a {scheme}: URL" if scheme else "not a URL"
        raise ValueError(
            f"Only http and https pages can be opened, and {url!r} is {what}; "
            "use a path (like /archive) or a full URL."
        )
    return absolute


async def navigation_refusal(session: Navigator, start_url: str, target: str) -> str | None:
    """Why the agent may not open ``target`` (None: it may).

    The start URL's origin is allowed; any other is put to the session's elicitation
    handler first, each time (the URL the agent chose may carry data), and a yes allows
    that origin from then on for the page's own commits.
    """
    home, there = origin_of(start_url), origin_of(target)
    if there == home:
        return None
    here = commit_origin(session.url)
    answered = await _consent(
        session, here, there, "navigate", NAVIGATION_LEAVE, {"from": session.url, "to": target}
    )
    if answered is None:
        session.guard.allowed.add(there)
        return None
    return f"Not navigated: the user did not allow leaving {home} for {there} (answer: {answered})."


async def navigate_as_agent(session: Navigator, start_url: str, target: str) -> str | None:
    """Open ``target`` (from :func:`resolve_url`) for an agent; why not, or None once there.

    Opening another origin than the start URL's is asked first. Where the navigation lands
    (redirects) is judged by the session's guard in this call: another origin the user has
    not allowed is asked about, and without a yes the page goes back (the redirect's
    request was the site's own; the agent never gets that page).
    Raises :class:`~harness.errors.PageUnreachable` when the page cannot be loaded.
    """
    refusal = await navigation_refusal(session, start_url, target)
    if refusal is not None:
        return refusal
    await session.navigate(target)
    refused = session.guard.last_refusal
    if refused is None:
        return None
    return (
        f"Not navigated: {target} redirected to {refused.origin}, and the user did not allow "
        f"going there (answer: {refused.answer}); the page is back at {refused.back_at}."
    )


def ui_redirect_target(meta: dict[str, Any] | None, frame_url: str, origin: str) -> str | None:
    """Where a tool result's ``_meta.uiRedirect`` points, resolved against the tool's frame;
    None when there is none, or it leaves the tool's origin (or http/https)."""
    redirect = (meta or {}).get("uiRedirect")
    if not isinstance(redirect, str) or not redirect.strip():
        return None
    # Resolved and serialized as the browser will (a WHATWG parser), so the origin checked
    # is the one Chromium opens.
    resolved = resolve(frame_url, redirect.strip())
    target = http_url(resolved) if resolved is not None else None
    if target is None or origin_of(target) != origin:
        return None
    return target
