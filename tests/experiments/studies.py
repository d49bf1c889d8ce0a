"""A grid run in a test (quietly, no report unless asked), a run's table without the
measured columns (what deterministic agents give the same on every run), and a two-node Ray
cluster on this machine."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from harness.experiments import RunOptions, Study, load_grid, ray_runner, run_experiment
from harness.experiments.results import ResultStore, results_table


async def run_grid(grid: Path, output: Path, *, report: bool = False, **options: Any) -> Study:
    """Run ``grid`` into ``output``; ``options`` are further :class:`RunOptions`."""
    return await run_experiment(
        load_grid(grid), RunOptions(output=output, progress=False, report=report, **options)
    )


async def run_killing_the_worker_node(
    grid: Path,
    output: Path,
    cluster: Any,
    when: Callable[[], bool],
    *,
    report: bool = False,
    within: float = 400,
) -> Study:
    """Run ``grid`` on ``cluster``'s two nodes with 2 workers, and kill its worker node (no
    grace: an episode in flight) once ``when()`` holds (at most ``within`` s); the run's
    study."""
    [worker_node] = list(cluster.worker_nodes)
    run = asyncio.create_task(
        run_grid(grid, output, report=report, workers=2, runner="ray", ray_address=cluster.address)
    )
    deadline = time.monotonic() + within
    while not when() and not run.done():
        assert time.monotonic() < deadline, "the moment to kill the worker node never came"
        await asyncio.sleep(0.2)
    cluster.remove_node(worker_node, allow_graceful=False)
    return await run


async def replayed(grid: Path, output: Path, cassettes: Path, recorded: Study) -> Study:
    """``grid`` replayed from ``cassettes`` (no provider needed): every episode ok, and the
    table ``recorded`` gave."""
    replay = await run_grid(grid, output, cassettes=cassettes, cassette_mode="replay")
    assert all(r.status == "ok" for r in replay.results), [r.error for r in replay.results]
    assert results_table(replay.results, timing=False) == results_table(
        recorded.results, timing=False
    )
    return replay


def table(output: Path) -> list[dict[str, object]]:
    """The results table of the run in ``output``, without wall times."""
    store = ResultStore(output / "results.db")
    try:
        return results_table(store.results(), timing=False)
    finally:
        store.close()


def workers_seen(database: Path) -> set[str]:
    """The workers that have recorded an episode in a run's ``results.db`` so far."""
    if not database.is_file():
        return set()
    with contextlib.suppress(sqlite3.Error), sqlite3.connect(database, timeout=1) as db:
        return {w for (w,) in db.execute("SELECT DISTINCT worker FROM episodes")}
    return set()


def _forget_recorded_address(address: str) -> None:
    """Ray records a test cluster's address machine-wide (``ray.init()`` without an address
    would join it): forget it, so no other run on this machine joins this one."""
    import ray._private.utils as ray_utils

    recorded = Path(ray_utils.get_ray_address_file(None))
    with contextlib.suppress(OSError):
        if recorded.read_text().strip() == address:
            recorded.unlink()


@contextlib.contextmanager
def two_node_cluster() -> Iterator[Any]:
    """Ray's own multi-node test cluster on loopback: a head and a worker node, one CPU each
    (``cluster.worker_nodes`` holds the one to kill)."""
    # Before Ray is imported: its servers then listen on loopback only.
    os.environ.setdefault(ray_runner.LOOPBACK_ONLY, "0")
    from ray.cluster_utils import Cluster

    node = {"num_cpus": 1, "node_ip_address": "127.0.0.1", "include_dashboard": False}
    # A dead node is noticed in a couple of seconds rather than Ray's default half minute.
    system = {"health_check_period_ms": 500, "health_check_failure_threshold": 3}
    made = Cluster(initialize_head=True, head_node_args={**node, "_system_config": system})
    made.add_node(**node)
    made.wait_for_nodes()
    assert made.address.startswith("127.0.0.1:")
    _forget_recorded_address(made.address)
    try:
        yield made
    finally:
        made.shutdown()
