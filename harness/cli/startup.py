"""How a command that opens a page starts: Chromium first, the harness while it launches.

The command line is checked first (a usage error costs no browser). Then Chromium's launch
begins — Playwright's driver, then the browser: processes of their own, on other cores —
and the harness's modules (and whatever else the command names) are imported in a thread
meanwhile; the harness made from them takes the launched browser over
(:meth:`harness.harness.Harness.adopt_launch`). Importing the harness's stack costs about
as long as launching the browser, so the two overlap rather than add up.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.harness import Harness


def _load(modules: Sequence[str]) -> None:
    for module in modules:
        importlib.import_module(module)


async def early_harness(
    backend: str,
    make: Callable[[], Harness],
    *,
    headless: bool = True,
    modules: Sequence[str] = (),
) -> Harness:
    """A harness from ``make`` (called once the core is imported), whose browser began
    launching before the core was imported; ``modules``: more to import meanwhile.

    The caller enters the harness (``async with``), as any other; when ``make`` raises,
    the launched browser is closed.
    """
    from harness.browser.launch import discard, launch, launch_flags

    launching = asyncio.ensure_future(launch(None, headless=headless, args=launch_flags(backend)))
    try:
        await asyncio.to_thread(_load, ["harness.harness", *modules])
        harness = make()
    except BaseException:
        await discard(launching)
        raise
    harness.adopt_launch(launching)
    return harness
