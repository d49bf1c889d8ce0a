"""Navigations: the agent's (leaving the start URL's origin needs the user's yes), and the
ones a tool's result asks for (seed 002's ``_meta.uiRedirect``).

A navigation is a request like any other: an agent that puts data in a URL's
query can send it anywhere. Agents (the loop, MCP clients) navigate through
:func:`navigate_as_agent`, so a cross-origin move is asked of the user — and
nobody there to answer means no. A script tool's ``_meta.uiRedirect`` is applied
after its result was delivered (§6.1), within the tool's own origin only
(:func:`ui_redirect_target`): page text never sends the browser elsewhere.

Origins are decided the way the browser will decide them (:mod:`harness.browser.urls`,
a WHATWG parser), and the page is sent the URL that parser serialized, so a URL Python
would read as same-origin cannot take Chromium elsewhere. A redirect is checked again
once the navigation has ended: a same-origin URL that lands on another origin is asked
about too, and without a yes the page goes back to where it was.
"""

from __future__ import annotations

from typing import Any, Protocol

from harness.browser.urls import http_url, origin_of, resolve, scheme_of
from harness.elicitation.base import ElicitationHandler, ElicitationRequest, Quoted, ask
from harness.elicitation.wording import NAVIGATION_LEAVE, NAVIGATION_REDIRECTED

RULE = "navigate-cross-origin"


class Navigator(Protocol):
    """What the check reads of the agent's session (a :class:`~harness.session.Session`)."""

    @property
    def elicitation(self) -> ElicitationHandler:
        """Who answers the user's questions."""
        ...

    @property
    def url(self) -> str:
        """Where the page is now."""
        ...

    async def navigate(self, url: str) -> None:
        """Open ``url`` in the page."""
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


async def _consent(
    session: Navigator, home: str, destination: str, message: str, urls: dict[str, str]
) -> str | None:
    """Ask the user; None for a yes, otherwise the answer and its reason as text.

    The question names the destination's origin on a line of its own, as the browser's
    URL parser decides it (``http://A%2Fsettings@B/`` goes to B, and says so); the URLs
    themselves are quoted as the page's and the agent's words, never part of the
    harness's sentence.
    """
    answer = await ask(
        session.elicitation,
        ElicitationRequest(
            source="navigation",
            rule=RULE,
            message=message,
            origin=home,
            destination=destination,
            tool="navigate",
            quoted=[Quoted(label=label, text=url) for label, url in urls.items()],
        ),
    )
    if answer.action == "accept":
        return None
    why = f" ({answer.reason})" if answer.reason else ""
    return f"{answer.action}{why}"


async def navigation_refusal(session: Navigator, start_url: str, target: str) -> str | None:
    """Why the agent may not open ``target`` (None: it may).

    Same-origin targets (with the start URL) are allowed; any other origin is put
    to the session's elicitation handler as a policy question.
    """
    home, there = origin_of(start_url), origin_of(target)
    if there == home:
        return None
    answered = await _consent(
        session, home, there, NAVIGATION_LEAVE, {"from": session.url, "to": target}
    )
    if answered is None:
        return None
    return f"Not navigated: the user did not allow leaving {home} for {there} (answer: {answered})."


async def navigate_as_agent(session: Navigator, start_url: str, target: str) -> str | None:
    """Open ``target`` (from :func:`resolve_url`) for an agent; why not, or None once there.

    Leaving the start URL's origin is asked first. Where redirects lead is checked once
    the page has loaded: another origin than the start URL's and the one the user
    allowed is asked about, and without a yes the page goes back to where it was (the
    redirect's request was the site's own; the agent never gets that page).
    Raises :class:`~harness.errors.PageUnreachable` when the page cannot be loaded.
    """
    refusal = await navigation_refusal(session, start_url, target)
    if refusal is not None:
        return refusal
    home, allowed = origin_of(start_url), origin_of(target)
    before = session.url
    await session.navigate(target)
    landed = session.url
    there = origin_of(landed)
    if there in (home, allowed):
        return None
    answered = await _consent(
        session,
        home,
        there,
        NAVIGATION_REDIRECTED,
        {"from": before, "to": target, "redirected to": landed},
    )
    if answered is None:
        return None
    await session.navigate(before if http_url(before) else "about:blank")
    return (
        f"Not navigated: {target} redirected to {there}, and the user did not allow leaving "
        f"{home} for it (answer: {answered}); the page is back at {session.url}."
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
