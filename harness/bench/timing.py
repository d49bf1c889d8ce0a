"""Interleaved rounds and their statistics: what makes two figures comparable.

Each round runs every variant once, in an order that rotates from round to round, so a
burst of load on a shared machine lands on all variants alike and no variant always
runs first (warm) or last. A variant's figure is the median of its rounds, with min–max.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence

from pydantic import BaseModel

Operation = Callable[[], Awaitable[object]]
"""One measured operation (a call, a navigation, …), run once per round. One that returns
a :class:`Measured` says itself how long its measured part took (e.g. without a shutdown)."""


class Measured(float):
    """Milliseconds an operation measured itself (the rest of it does not count)."""


class Sample(BaseModel):
    """A variant's measurements: median, min and max over ``n`` rounds, in ``unit``."""

    median: float
    min: float
    max: float
    n: int
    unit: str = "ms"

    @classmethod
    def of(cls, values: Sequence[float], unit: str = "ms") -> Sample:
        """The statistics of ``values`` (at least one)."""
        return cls(
            median=statistics.median(values),
            min=min(values),
            max=max(values),
            n=len(values),
            unit=unit,
        )


async def interleaved(
    variants: Mapping[str, Operation], *, rounds: int, warmup: int = 2, batch: int = 1
) -> dict[str, Sample]:
    """Run each variant ``rounds`` times, interleaved; milliseconds per operation.

    ``warmup`` rounds run first and are not counted (caches, JIT, first-use costs);
    ``batch`` operations are timed together and divided, for operations near the
    clock's resolution.
    """
    names = list(variants)
    times: dict[str, list[float]] = {name: [] for name in names}
    for number in range(warmup + rounds):
        shift = number % len(names)
        for name in names[shift:] + names[:shift]:
            operation = variants[name]
            started = time.perf_counter()
            own = 0.0
            for _ in range(batch):
                answer = await operation()
                if isinstance(answer, Measured):
                    own += answer
            elapsed = own / batch if own else (time.perf_counter() - started) * 1000 / batch
            if number >= warmup:
                times[name].append(elapsed)
    return {name: Sample.of(values) for name, values in times.items()}
