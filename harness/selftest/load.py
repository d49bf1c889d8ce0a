"""Load: many calls over many concurrent pages; every result must come back once, to its
own call (each result carries the page and call number it answers)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from harness.harness import Harness
from harness.selftest.pages import FaultPages


class LoadResult(BaseModel):
    """What the load run saw."""

    pages: int
    calls: int
    answered: int
    errors: dict[str, int]  # results that came back as errors, by kind (e.g. a timeout)
    lost: int
    duplicated: int
    crossed: int
    seconds: float


def echoed(content: Sequence[Any]) -> dict[str, Any] | None:
    """What ``echo`` answered (``{"page", "n"}``), from a result's content (inside the
    untrusted-data framing); None when it is not there."""
    text = "".join(getattr(block, "text", "") for block in content)
    try:
        answer = json.loads(text[text.find("{") : text.rfind("}") + 1])
    except ValueError:
        return None
    return answer if isinstance(answer, dict) else None


async def run_load(
    harness: Harness, pages: FaultPages, *, calls: int, concurrency: int
) -> LoadResult:
    """``calls`` calls of ``echo`` spread over ``concurrency`` pages, all pages at once."""
    sessions = [
        await harness.open(pages.url("faults.html", id=f"page{index}"))
        for index in range(concurrency)
    ]
    seen: dict[int, int] = {}
    errors: dict[str, int] = {}
    crossed = 0
    started = time.perf_counter()

    async def worker(index: int) -> None:
        nonlocal crossed
        session = sessions[index]
        for number in range(index, calls, concurrency):
            outcome = await session.call("echo", {"n": number})
            if outcome.error_kind is not None:
                errors[outcome.error_kind] = errors.get(outcome.error_kind, 0) + 1
                continue
            answer = echoed(outcome.result.content)
            if answer is None:
                continue  # lost: counted below
            if answer.get("page") != f"page{index}" or answer.get("n") != number:
                crossed += 1
                continue
            seen[number] = seen.get(number, 0) + 1

    await asyncio.gather(*(worker(index) for index in range(concurrency)))
    seconds = time.perf_counter() - started
    for session in sessions:
        await session.close()
    answered = sum(seen.values())
    return LoadResult(
        pages=concurrency,
        calls=calls,
        answered=answered,
        errors=errors,
        lost=calls - len(seen) - crossed - sum(errors.values()),
        duplicated=sum(count - 1 for count in seen.values()),
        crossed=crossed,
        seconds=round(seconds, 1),
    )
