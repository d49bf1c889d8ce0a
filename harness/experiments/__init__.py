"""Experiments for researchers: agents × sites × tasks × seeds, isolated episodes, metrics, tables.

- ``grid``: the grid file (TOML), tasks, checks and attack metadata, the episodes it expands to;
- ``episode``: one episode in a fresh browser context on freshly reset sites, and its verdict;
- ``checks``: success checks, attack criteria and canary leaks, judged from what an episode left;
- ``metrics``: an episode's result and counts; rates with standard errors over many;
- ``results``: ``results.db`` (SQLite), CSV and Markdown tables, the plot;
- ``runners``: local workers and Ray actors, progress, resume; :func:`run_experiment`;
- ``shared_sites``: the outside sites a ``reset`` URL restores, whose episodes take turns;
- ``report``: the study as an HTML page, each episode's trace as an HTML timeline;
- ``run_info``: what it takes to reproduce a run;
- ``suites/``: bundled task suites (``webmcp-attacks``: the WebMCP attack suite).

A front end: may import the core, ``harness.agents``, ``harness.trace`` and everything
below them, and the bundled sites; never another front end (cli, mcp, testing, …).

>>> grid = load_grid("examples/experiments/grid.toml")
>>> study = await run_experiment(grid, RunOptions(output=Path("runs/bundled"), workers=2))
>>> print(study.files["results.md"])
"""

from __future__ import annotations

from harness.experiments.grid import EpisodeSpec, Grid, load_grid
from harness.experiments.metrics import EpisodeResult
from harness.experiments.runners import RunOptions, RunRefused, Study, run_experiment
from harness.experiments.tasks import TaskSpec

__all__ = [
    "EpisodeResult",
    "EpisodeSpec",
    "Grid",
    "RunOptions",
    "RunRefused",
    "Study",
    "TaskSpec",
    "load_grid",
    "run_experiment",
]
