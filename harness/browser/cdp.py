"""Speaking CDP through Playwright's sessions, without its conversion of every value.

Playwright's public ``CDPSession`` walks each command's parameters, each reply and each
event's parameters object by object, converting its own types (which CDP's JSON never
holds) before a listener sees them. That walk costs more than the message itself for the
harness's hot paths: a call's command and answer on the page channel, and the registry
Chromium sends in one event (~17 000 values for a page of 600 tools). :func:`send` and
:func:`on` use the session's implementation object, which hands over the parsed JSON as
it came; a Playwright without one falls back to the public methods.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from playwright.async_api import CDPSession


def _raw(session: CDPSession) -> Any:
    impl = getattr(session, "_impl_obj", None)
    return impl if hasattr(impl, "send") and hasattr(impl, "on") else None


async def send(session: CDPSession, method: str, params: dict[str, Any] | None = None) -> Any:
    """``session.send(method, params)``: the reply, as parsed."""
    raw = _raw(session)
    if raw is None:
        return await session.send(method, params)
    return await raw.send(method, params, None)


def on(session: CDPSession, event: str, handler: Callable[[dict[str, Any]], Any]) -> None:
    """``session.on(event, handler)``: ``handler`` gets the event's parameters as parsed."""
    raw = _raw(session)
    (raw if raw is not None else session).on(event, handler)


def off(session: CDPSession, event: str, handler: Callable[[dict[str, Any]], Any]) -> None:
    """Undo :func:`on`: ``handler`` hears ``event`` no more."""
    raw = _raw(session)
    (raw if raw is not None else session).remove_listener(event, handler)
