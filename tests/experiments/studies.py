"""A grid run in a test (quietly, no report unless asked), and a run's table without the
measured columns (what deterministic agents give the same on every run)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.experiments import RunOptions, Study, load_grid, run_experiment
from harness.experiments.results import ResultStore, results_table


async def run_grid(grid: Path, output: Path, *, report: bool = False, **options: Any) -> Study:
    """Run ``grid`` into ``output``; ``options`` are further :class:`RunOptions`."""
    return await run_experiment(
        load_grid(grid), RunOptions(output=output, progress=False, report=report, **options)
    )


def table(output: Path) -> list[dict[str, object]]:
    """The results table of the run in ``output``, without wall times."""
    store = ResultStore(output / "results.db")
    try:
        return results_table(store.results(), timing=False)
    finally:
        store.close()
