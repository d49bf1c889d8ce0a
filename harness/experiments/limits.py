"""The grid's limits: how many episodes, workers and steps a grid may ask for, and the
numbers it may hold (finite ones: every file of a run is JSON, and JSON has no inf or nan).

A value past a limit is refused when the grid loads, with the value, the limit and what to
do — before anything is expanded, allocated or started.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import AfterValidator

MAX_EPISODES = 1_000_000
"""The most episodes one grid may expand to. Its episode specs are made in memory at the
start (about 1.5 KB each: 1.5 GB at the limit), and its results read back at the end. The
largest study in view — AgentDojo's whole benchmark, 1 046 cases, under a few attacks,
policies and agents — is a few tens of thousands; a million episodes at the bundled grid's
37 a minute is some nineteen days of one machine. Split a bigger study into grids."""

MAX_WORKERS = 1_000
"""The most workers (local workers, or Ray actors) a run may ask for: each serves its own
bundled sites and drives a Chromium (as many as there are episodes, up to this), and a
local Ray instance gets a CPU for each. A thousand is a large Ray cluster; more would
start servers and browsers by the thousand on a typo."""

MAX_STEPS = 10_000
"""The most steps an episode may take (``max_steps``): AgentDojo's longest ground truth
takes 20 calls, its default is 40; the agent's loop runs until this count (within the
episode's time limit), and a count past it is a typo."""

MAX_SETTLE_MS = 600_000
"""The longest quiet window a task may ask for (``settle_ms``: ten minutes). The page's
load is then waited for twice as long, a Playwright timeout in milliseconds: Node cannot
hold a timer past 2³¹ ms, and fires it at once."""

MAX_RAY_START_S = 86_400
"""The longest start a Ray instance or actor may be given (``--ray-start-timeout``: a day).
It goes to Ray as whole seconds in an environment variable its C++ side reads as a 64-bit
count; a start that takes longer than a day is not a start."""

SPLIT = (
    "split the study into several grids (by suite, agent or policy, or with fewer seeds), "
    "each run into its own --output"
)
"""What to do about a grid over :data:`MAX_EPISODES`."""


def over(what: str, value: int, limit: int, unit: str) -> str:
    """A value past its limit, said with both."""
    return f"{what} {value:,} is over the limit of {limit:,} {unit}"


def at_most(what: str, limit: int, unit: str) -> AfterValidator:
    """A field's bound (``Annotated[int, at_most(...)]``): a value past ``limit`` is refused,
    said with both; None (not set) passes."""

    def check(value: int | None) -> int | None:
        if value is not None and value > limit:
            raise ValueError(over(what, value, limit, unit))
        return value

    return AfterValidator(check)


def non_finite(data: Any, where: str = "") -> str | None:
    """Where in ``data`` (a file's parsed tables, lists and values) a number is inf or
    nan, said as ``experiment.call_timeout is inf`` (indices from 0); None: nowhere."""
    if isinstance(data, float) and not math.isfinite(data):
        return f"{where or 'the value'} is {data}"
    if isinstance(data, dict):
        items: Any = data.items()
    elif isinstance(data, list | tuple):
        items = enumerate(data)
    else:
        return None
    for key, value in items:
        found = non_finite(value, f"{where}.{key}" if where else str(key))
        if found is not None:
            return found
    return None


def finite_only(data: Any) -> str | None:
    """The problem of ``data`` holding inf or nan, as a grid's message says it; None: none."""
    found = non_finite(data)
    if found is None:
        return None
    return (
        f"{found}; give a finite number (a grid's numbers are written to JSON files, "
        "which hold no inf or nan)"
    )
