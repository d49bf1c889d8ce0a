"""Load: every call's result comes back once, to its own call, over 16 concurrent pages."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

import pytest

from harness import Harness
from harness.selftest.load import run_load
from harness.selftest.pages import FaultPages

# The heavy runs are the full selftest's (`make selftest`, whose report is committed).
FULL_ONLY = pytest.mark.skipif(
    os.environ.get("WEBMCP_SELFTEST_FULL") != "1",
    reason="heavy: runs in `make selftest` (the full selftest); set WEBMCP_SELFTEST_FULL=1",
)


@pytest.fixture(scope="module")
async def load_pages() -> AsyncIterator[FaultPages]:
    async with FaultPages() as pages:
        yield pages


@pytest.mark.slow
async def test_calls_over_sixteen_pages_are_neither_lost_nor_crossed(
    chromium_path: str, load_pages: FaultPages
) -> None:
    async with Harness(executable_path=chromium_path) as harness:
        result = await run_load(harness, load_pages, calls=800, concurrency=16)
    assert (result.answered, result.lost, result.duplicated, result.crossed) == (800, 0, 0, 0)
    assert result.errors == {}


@pytest.mark.slow
@FULL_ONLY
@pytest.mark.timeout(1800)
async def test_ten_thousand_calls_over_sixteen_pages(
    chromium_path: str, load_pages: FaultPages
) -> None:
    async with Harness(executable_path=chromium_path) as harness:
        result = await run_load(harness, load_pages, calls=10_000, concurrency=16)
    assert (result.answered, result.lost, result.duplicated, result.crossed) == (10_000, 0, 0, 0)
