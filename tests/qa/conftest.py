"""Fixtures shared by the QA tests (fuzz, form constraints)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from harness import BrowserPool, Harness
from harness.catalog import Settle


@pytest.fixture(scope="module", params=["polyfill", "native"])
async def harness(
    browser_pool: BrowserPool, request: pytest.FixtureRequest
) -> AsyncIterator[Harness]:
    """A harness per backend for a module's tests, with a short quiet window: the QA pages
    register their tools at once (``backend_harness`` waits the default window)."""
    async with Harness(
        browsers=browser_pool, backend=request.param, call_timeout=10, settle=Settle.quiet_ms(100)
    ) as h:
        yield h
