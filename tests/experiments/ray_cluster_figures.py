"""The closing note's Ray figures: AgentDojo's cases — the obedient agent, the default
pack — on a two-node Ray cluster started on this machine (Ray's own multi-node test cluster),
one worker per node, the worker node killed once half the episodes are done. ``run_info.json``
holds the throughput per number of live workers and the worker lost; the table is the local
whole-set run's rows for the same cases.

    # banking's 16 benign and 144 attacked cases (reports/agentdojo/ray-cluster)
    .venv/bin/python -m tests.experiments.ray_cluster_figures reports/agentdojo/ray-cluster
    # all four suites: 97 benign and 949 attacked cases (reports/agentdojo/ray-cluster-whole)
    .venv/bin/python -m tests.experiments.ray_cluster_figures reports/agentdojo/ray-cluster-whole all
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import sys
import tempfile
from pathlib import Path

from harness.experiments.grid import load_grid
from tests.experiments.studies import run_killing_the_worker_node, two_node_cluster

GRID = """
[experiment]
name = "agentdojo-{name}-ray"
description = "AgentDojo v1.2.1 {name}, obedient agent, default pack: a two-node Ray cluster, one node killed"
seeds = 1
policies = ["default"]
elicitation = ["cancel"]
suites = ["{suite}"]
episode_timeout = 300
call_timeout = 30

[agentdojo]
version = "v1.2.1"
cases = ["benign", "attacked"]
attacks = ["explicit_calls"]
annotations = ["annotated"]

[[agents]]
spec = "obedient"
options = {obey = ["results"]}
"""
SUITES = {"banking": "agentdojo:banking", "all": "agentdojo"}


def episodes_done(database: Path) -> int:
    """How many episodes the run has recorded so far."""
    if not database.is_file():
        return 0
    with contextlib.suppress(sqlite3.Error), sqlite3.connect(database, timeout=1) as db:
        (count,) = db.execute("SELECT COUNT(*) FROM episodes").fetchone()
        return int(count)
    return 0


async def main(output: Path, cases: str = "banking") -> int:
    with tempfile.TemporaryDirectory() as scratch, two_node_cluster() as cluster:
        grid = Path(scratch) / "grid.toml"
        grid.write_text(
            GRID.replace("{name}", cases).replace("{suite}", SUITES[cases]), encoding="utf-8"
        )
        episodes = len(load_grid(grid).episodes())
        study = await run_killing_the_worker_node(
            grid,
            output,
            cluster,
            lambda: episodes_done(output / "results.db") >= episodes // 2,
            report=True,
            within=3600,
        )
    failed = [r for r in study.results if r.status != "ok"]
    print(f"{len(study.results)} episodes, {len(failed)} not ok")
    return 1 if failed or len(study.results) != episodes else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(Path(sys.argv[1]), *sys.argv[2:3])))
