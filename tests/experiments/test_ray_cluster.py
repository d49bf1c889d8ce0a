"""Ray at scale: a two-node cluster on this machine (Ray's own multi-node test cluster),
one node killed mid-run. No episode is lost (the one in flight runs again on the node
left), and the table equals a local run's, row for row. And a local Ray that will not start
is retried, then explained."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.errors import ExperimentError
from harness.experiments import ray_runner
from tests.experiments.studies import (
    run_grid,
    run_killing_the_worker_node,
    table,
    two_node_cluster,
    workers_seen,
)

pytestmark = pytest.mark.timeout(900)

GRID = """
[experiment]
name = "ray-cluster"
policies = ["none", "default"]
suites = ["agentdojo:banking"]
select = [
  "banking.user_task_0", "banking.user_task_1", "banking.user_task_2",
  "banking.user_task_0.injection_task_0", "banking.user_task_1.injection_task_3",
  "banking.user_task_2.injection_task_4",
]
episode_timeout = 180

[agentdojo]
attacks = ["explicit_calls"]

[[agents]]
spec = "obedient"
options = {obey = ["results"]}
"""
EPISODES = 6 * 2


def write_grid(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "grid.toml"
    path.write_text(GRID, encoding="utf-8")
    return path


@pytest.fixture
def cluster() -> Iterator[Any]:
    os.environ.setdefault(ray_runner.LOOPBACK_ONLY, "0")  # before Ray is imported
    pytest.importorskip("ray", reason="Ray is not installed: pip install 'webmcp-harness[ray]'")
    pytest.importorskip("agentdojo", reason="the AgentDojo suites need the `agentdojo` extra")
    with two_node_cluster() as made:
        yield made


@pytest.mark.slow
async def test_a_node_killed_mid_run_loses_no_episode_and_the_table_equals_a_local_runs(
    cluster: Any, tmp_path: Path
) -> None:
    output = tmp_path / "ray"
    # Killed mid-run, with an episode in flight: once both workers finished one.
    study = await run_killing_the_worker_node(
        write_grid(tmp_path / "a"),
        output,
        cluster,
        lambda: len(workers_seen(output / "results.db")) >= 2,
    )
    assert [r.status for r in study.results] == ["ok"] * EPISODES  # none lost, none crashed
    assert study.ran == EPISODES

    info = json.loads((output / "run_info.json").read_text(encoding="utf-8"))["runner"]["ray"]
    assert info["nodes"] == 2 and info["nodes_at_end"] == 1
    assert len(info["workers_lost"]) == 1
    by_workers = {s["workers"]: s for s in info["throughput_by_workers"]}
    assert set(by_workers) >= {1, 2} and by_workers[1]["episodes"] >= 1

    local = await run_grid(write_grid(tmp_path / "b"), tmp_path / "local", workers=1)
    assert table(output) == table(local.output)


def test_a_local_ray_that_does_not_start_is_retried_then_explained(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    attempts: list[dict[str, Any]] = []

    class SlowRay:
        @staticmethod
        def init(**options: Any) -> None:
            attempts.append(options)
            raise RuntimeError("The current node timed out during startup.")

        @staticmethod
        def shutdown() -> None:
            pass

    with pytest.raises(ExperimentError) as caught:
        ray_runner._start_ray(SlowRay, 2, None, deadline=600)
    assert len(attempts) == ray_runner.RAY_START_ATTEMPTS
    assert all(a["_node_ip_address"] == "127.0.0.1" for a in attempts)  # loopback only
    assert all(a["address"] == "local" for a in attempts)  # a new instance, never one found
    message = str(caught.value)
    assert "timed out during startup" in message
    assert "--ray-start-timeout" in message and "--ray-address auto" in message
