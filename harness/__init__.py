"""webmcp-harness: a headless browser agent harness for WebMCP.

Playwright drives Chromium; the injected polyfill (or Chromium's native WebMCP)
provides the page API; this package plays the user agent: it collects the tools
pages register, validates and runs calls, and hands results to agents.

>>> from harness import Harness
>>> async with Harness(backend="polyfill") as h:
...     session = await h.open("http://127.0.0.1:8101/")
...     print(await session.tools())
"""

from harness.errors import (
    BrowserNotFound,
    ConfigError,
    HarnessError,
    NativeWebMCPUnavailable,
    PageUnreachable,
    SessionClosed,
    UnknownTool,
)
from harness.harness import Harness
from harness.models import CallOutcome, CatalogWarning, Tool, ToolChange
from harness.session import Session

__all__ = [
    "BrowserNotFound",
    "CallOutcome",
    "CatalogWarning",
    "ConfigError",
    "Harness",
    "HarnessError",
    "NativeWebMCPUnavailable",
    "PageUnreachable",
    "Session",
    "SessionClosed",
    "Tool",
    "ToolChange",
    "UnknownTool",
]
