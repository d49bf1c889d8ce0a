"""Item 7: episodes per minute of the experiment runner: 1, 2 and 4 local workers, local Ray.

The runner is another front end, so it runs as what a user runs: ``webmcp-harness
experiment GRID --workers N`` in a process of its own, on the bundled grid
(``examples/experiments/grid.toml``: deterministic agents on the bundled sites). The
figure is the runner's own count (its ``runs`` table in ``results.db``: episodes run
over the seconds they took), and the wall time of the whole command beside it.
"""

from __future__ import annotations

import asyncio
import importlib.util
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

from harness.bench.report import Item
from harness.bench.timing import Sample

GRID = Path(__file__).resolve().parents[2] / "examples" / "experiments" / "grid.toml"
WORKERS = (1, 2, 4)
RAY_WORKERS = 2  # Ray actors, each with its own Chromium, on a local Ray instance
RUN_TIMEOUT_S = 900.0


async def _run(workers: int, output: Path, backend: str = "local") -> tuple[float, float]:
    """The runner's episodes per minute and the command's wall time (s) for one run."""
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "harness.cli",
        "experiment",
        str(GRID),
        "--workers",
        str(workers),
        "--backend",
        backend,
        "--output",
        str(output),
        "--no-progress",
        "--no-report",
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(process.communicate(), RUN_TIMEOUT_S)
    wall = time.perf_counter() - started
    if process.returncode != 0:
        raise RuntimeError(
            f"the experiment run failed (exit {process.returncode}): {err.decode()[-500:]}"
        )
    with sqlite3.connect(output / "results.db") as db:
        row = db.execute("SELECT per_minute FROM runs ORDER BY started_at DESC LIMIT 1").fetchone()
    return float(row[0]), wall


async def episodes_item(*, quick: bool) -> Item:
    """Episodes per minute with 1, 2 and 4 workers (the full run only)."""
    item = Item(
        key="episodes",
        title="7. Experiments: episodes per minute (the bundled grid, 40 episodes)",
        anchor="1 worker",
        anchor_is="the same grid with one local worker; the ratio is the speed-up.",
    )
    if quick:
        item.skipped = "the quick run does not run experiments (a grid takes a minute or more)."
        return item
    if not GRID.is_file():
        item.skipped = f"the bundled grid is not in this checkout ({GRID})."
        return item
    walls = []
    with tempfile.TemporaryDirectory(prefix="webmcp-bench-episodes-") as tmp:
        for workers in WORKERS:
            rate, wall = await _run(workers, Path(tmp) / f"w{workers}")
            walls.append(f"{workers}: {wall:.0f} s")
            item.add(
                f"{workers} worker{'s' if workers > 1 else ''}",
                Sample(median=rate, min=rate, max=rate, n=1, unit="episodes/min"),
                higher_is_better=True,
            )
        if importlib.util.find_spec("ray") is None:
            item.skipped = "local Ray: the `ray` extra is not installed on this machine."
        else:
            try:
                rate, wall = await _run(RAY_WORKERS, Path(tmp) / "ray", backend="ray")
            except (RuntimeError, TimeoutError, OSError, sqlite3.Error) as exc:
                item.skipped = f"local Ray: the run did not finish ({str(exc)[:200]})."
            else:
                walls.append(f"Ray: {wall:.0f} s")
                item.add(
                    f"local Ray, {RAY_WORKERS} workers",
                    Sample(median=rate, min=rate, max=rate, n=1, unit="episodes/min"),
                    higher_is_better=True,
                )
    item.note = (
        "One run each (a run is 40 episodes); the command's wall time, start-up included: "
        + ", ".join(walls)
        + "."
    )
    return item.finish()
