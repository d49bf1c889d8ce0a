"""webmcp-harness: a headless browser agent harness for WebMCP.

Playwright drives Chromium; the injected polyfill (or Chromium's native WebMCP)
provides the page API; this package plays the user agent: it collects the tools
pages register, validates and runs calls, and hands results to agents.

>>> from harness import Harness
>>> async with Harness(backend="polyfill") as h:
...     session = await h.open("http://127.0.0.1:8101/")
...     print(await session.tools())

The names below are imported on first use, so that importing a submodule (the
pytest plugin is loaded into every pytest run) stays cheap.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.browser.launch import BrowserPool
    from harness.errors import (
        BrowserNotFound,
        ConfigError,
        HarnessError,
        NativeWebMCPUnavailable,
        PageUnreachable,
        RevealError,
        SessionClosed,
        UnknownTool,
    )
    from harness.harness import Harness
    from harness.models import CallOutcome, CatalogWarning, Tool, ToolChange
    from harness.session import Session

_WHERE = {
    "BrowserPool": "harness.browser.launch",
    "BrowserNotFound": "harness.errors",
    "ConfigError": "harness.errors",
    "HarnessError": "harness.errors",
    "NativeWebMCPUnavailable": "harness.errors",
    "PageUnreachable": "harness.errors",
    "RevealError": "harness.errors",
    "SessionClosed": "harness.errors",
    "UnknownTool": "harness.errors",
    "Harness": "harness.harness",
    "CallOutcome": "harness.models",
    "CatalogWarning": "harness.models",
    "Tool": "harness.models",
    "ToolChange": "harness.models",
    "Session": "harness.session",
}

__all__ = [
    "BrowserNotFound",
    "BrowserPool",
    "CallOutcome",
    "CatalogWarning",
    "ConfigError",
    "Harness",
    "HarnessError",
    "NativeWebMCPUnavailable",
    "PageUnreachable",
    "RevealError",
    "Session",
    "SessionClosed",
    "Tool",
    "ToolChange",
    "UnknownTool",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'harness' has no attribute {name!r}")
    return getattr(import_module(module), name)
