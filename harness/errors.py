"""Every exception the harness raises, in one hierarchy.

Tool failures are not exceptions: a tool that throws, times out or gets bad
arguments yields a result with ``isError``. Exceptions are for the caller's
mistakes and for the environment (no browser, unreachable page).
"""

from __future__ import annotations


class HarnessError(Exception):
    """Base class: every error the harness raises on purpose."""


class BrowserNotFound(HarnessError):
    """No Chromium executable could be found or installed."""


class NativeWebMCPUnavailable(HarnessError):
    """The ``native`` backend was asked for, but this Chromium has no native WebMCP."""


class PageUnreachable(HarnessError):
    """The page could not be loaded (connection refused, DNS error, bad URL)."""


class UnknownTool(HarnessError):
    """A call named a tool the page has not registered."""

    def __init__(self, name: str, available: list[str]) -> None:
        self.name = name
        self.available = available
        listed = ", ".join(available) if available else "none"
        super().__init__(f"No tool named {name!r} on this page (available: {listed}).")


class SessionClosed(HarnessError):
    """The session (or its page) was closed; open a new one."""


class ConfigError(HarnessError):
    """A harness option or input file is invalid; the message says which and why."""
