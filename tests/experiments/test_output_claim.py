"""An experiment holds its output directory while it runs: a second run into it (a resume,
or a fresh run that looked before the first had written) is refused, not run beside it;
options refused before the run leave no output behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.errors import ExperimentError
from harness.experiments import RunOptions, load_grid, run_experiment
from harness.inputs import hold_directory
from tests.conftest import PageServer
from tests.experiments.test_episodes import grid_file


def grid_text(page_server: PageServer) -> str:
    return f"""
[[agents]]
spec = "scripted"
[[tasks]]
id = "fine"
url = "{page_server.url("x_planted.html")}"
instruction = "Read."
plan = [{{finish = "ok"}}]
"""


async def test_a_run_into_a_directory_another_run_holds_is_refused(
    tmp_path: Path, page_server: PageServer
) -> None:
    grid = load_grid(grid_file(tmp_path, grid_text(page_server)))
    output = tmp_path / "out"
    await run_experiment(grid, RunOptions(output=output, progress=False, report=False))
    held = hold_directory(output)  # as a run under way holds it
    assert held is not None
    try:
        with pytest.raises(ExperimentError, match=r"Another run is writing into .*--resume"):
            await run_experiment(grid, RunOptions(output=output, resume=True, progress=False))
        empty = tmp_path / "empty"
        empty.mkdir()
        other = hold_directory(empty)
        assert other is not None
        try:
            with pytest.raises(ExperimentError, match="Another run is writing into"):
                await run_experiment(grid, RunOptions(output=empty, progress=False))
        finally:
            os.close(other)
        assert list(empty.iterdir()) == []  # nothing written beside the other run
    finally:
        os.close(held)
    # Released with the run: the resume goes ahead (nothing left to run).
    await run_experiment(grid, RunOptions(output=output, resume=True, progress=False, report=False))


async def test_refused_cassette_options_leave_no_output(
    tmp_path: Path, page_server: PageServer
) -> None:
    grid = load_grid(grid_file(tmp_path, grid_text(page_server)))
    output = tmp_path / "out"
    missing = tmp_path / "nowhere"
    with pytest.raises(ExperimentError, match="No cassettes to replay"):
        await run_experiment(
            grid,
            RunOptions(output=output, progress=False, cassettes=missing, cassette_mode="replay"),
        )
    assert not output.exists()
    afile = tmp_path / "afile"
    afile.write_text("x", encoding="utf-8")
    with pytest.raises(ExperimentError, match="is a file; give a directory"):
        await run_experiment(
            grid,
            RunOptions(output=output, progress=False, cassettes=afile, cassette_mode="record"),
        )
    assert not output.exists()
