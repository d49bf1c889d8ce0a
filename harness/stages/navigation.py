"""Navigations: the agent's (leaving the start URL's origin needs the user's yes), and the
ones a tool's result asks for (seed 002's ``_meta.uiRedirect``).

A navigation is a request like any other: an agent that puts data in a URL's
query can send it anywhere. Agents (the loop, MCP clients) navigate through
:func:`navigation_refusal`, so a cross-origin move is asked of the user — and
nobody there to answer means no. A script tool's ``_meta.uiRedirect`` is applied
after its result was delivered (§6.1), within the tool's own origin only
(:func:`ui_redirect_target`): page text never sends the browser elsewhere.
"""

from __future__ import annotations

from typing import Any, Protocol
from urllib.parse import urljoin, urlsplit

from harness.browser.frames import origin_of
from harness.elicitation.base import ElicitationHandler, ElicitationRequest, ask

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


def resolve_url(start_url: str, url: str) -> str:
    """``url`` resolved against the start URL; a :class:`ValueError` unless http(s)."""
    resolved = urljoin(start_url, url.strip())
    if urlsplit(resolved).scheme not in ("http", "https"):
        raise ValueError(
            f"Only http and https pages can be opened, not {url!r}; "
            "use a path (like /archive) or a full URL."
        )
    return resolved


async def navigation_refusal(session: Navigator, start_url: str, target: str) -> str | None:
    """Why the agent may not open ``target`` (None: it may).

    Same-origin targets (with the start URL) are allowed; any other origin is put
    to the session's elicitation handler as a policy question.
    """
    home, there = origin_of(start_url), origin_of(target)
    if there == home:
        return None
    answer = await ask(
        session.elicitation,
        ElicitationRequest(
            source="policy",
            rule=RULE,
            message=f"The agent wants to leave {home} and open {target}. Allow it?",
            origin=home,
            tool="navigate",
            facts={"from": session.url, "to": target},
        ),
    )
    if answer.action == "accept":
        return None
    why = f" ({answer.reason})" if answer.reason else ""
    return (
        f"Not navigated: the user did not allow leaving {home} for {there} "
        f"(answer: {answer.action}{why})."
    )


def ui_redirect_target(meta: dict[str, Any] | None, frame_url: str, origin: str) -> str | None:
    """Where a tool result's ``_meta.uiRedirect`` points, resolved against the tool's frame;
    None when there is none, or it leaves the tool's origin (or http/https)."""
    redirect = (meta or {}).get("uiRedirect")
    if not isinstance(redirect, str) or not redirect.strip():
        return None
    target = urljoin(frame_url, redirect.strip())
    if urlsplit(target).scheme not in ("http", "https") or origin_of(target) != origin:
        return None
    return target
