"""An experiment holds its output directory while it runs: a second run into it (a resume,
or a fresh run that looked before the first had written) is refused, not run beside it;
options refused before the run (cassettes to replay that are not all there, an output
directory that cannot be written) leave no output behind."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
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


LLM_GRID = """
[experiment]
name = "llm"
seeds = 3
policies = ["none"]
[[agents]]
name = "gpt"
spec = "openai:gpt-4o-mini"
options = {base_url = "http://127.0.0.1:9/v1", api_key = "test-key"}
[[tasks]]
id = "inbox"
site = "mail"
instruction = "What is in my inbox?"
"""


def refused(capsys: pytest.CaptureFixture[str], grid: Path, output: Path, *options: str) -> str:
    """What ``experiment GRID --output OUTPUT OPTIONS`` says on stderr: a usage error (2)."""
    from harness.cli.commands import EXIT_USAGE, main

    command = ["experiment", str(grid), "--output", str(output), "--no-progress", *options]
    code = main(command)
    err = capsys.readouterr().err
    assert code == EXIT_USAGE, err
    assert "Traceback" not in err
    return err


def test_cassettes_to_replay_that_are_not_all_there_are_refused_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    grid = grid_file(tmp_path, LLM_GRID)
    cassettes = tmp_path / "cassettes"
    cassettes.mkdir()
    # Recorded with seeds = 1: the cassettes of seeds 1 and 2 are not there.
    (cassettes / "inbox.gpt.none.polyfill.cancel.s0.json").write_text("{}", encoding="utf-8")
    output = tmp_path / "out"
    err = refused(capsys, grid, output, "--replay-cassettes", str(cassettes))
    assert "no cassette for 2 of the 3 episodes" in err, err
    assert "inbox.gpt.none.polyfill.cancel.s1.json" in err and ".s2.json" in err
    assert ".s0.json" not in err and err.count("\n") == 1
    assert not output.exists()  # refused before the run: nothing left behind
    # A resume needs the cassettes of the episodes it has yet to run, no more.
    from harness.experiments.runners import _check_cassettes, _episodes

    options = RunOptions(output=output, cassettes=cassettes, cassette_mode="replay")
    episodes = _episodes(load_grid(grid), options)
    _check_cassettes(episodes, done={e.id for e in episodes if not e.id.endswith(".s0")})


@contextlib.contextmanager
def unwritable(directory: Path) -> Iterator[None]:
    """``directory`` made unwritable for this process: root writes through a chmod, so for
    root it is made immutable (chattr +i) instead."""
    if os.geteuid() != 0:
        directory.chmod(0o555)
        try:
            yield
        finally:
            directory.chmod(0o755)
        return
    made = subprocess.run(["chattr", "+i", str(directory)], capture_output=True, check=False)
    if made.returncode != 0:
        pytest.skip(f"chattr +i is not available here: {made.stderr.decode().strip()}")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(directory)], check=True)


def test_an_output_directory_that_cannot_be_written_is_said_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    grid = grid_file(tmp_path, LLM_GRID)
    output = tmp_path / "out"
    output.mkdir()
    with unwritable(output):
        err = refused(capsys, grid, output)
    assert f"--output {output}: cannot use it as the output directory (Permission denied)" in err
    assert "give a directory that can be created and written" in err
    assert "results database" not in err
    assert list(output.iterdir()) == []
    # A resume, the same: its database is there, but nothing could be written beside it.
    from harness.experiments.results import ResultStore

    ResultStore(output / "results.db").close()
    with unwritable(output):
        err = refused(capsys, grid, output, "--resume")
    assert "cannot use it as the output directory" in err, err


def test_a_results_db_that_is_no_database_is_still_said_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    grid = grid_file(tmp_path, LLM_GRID)
    output = tmp_path / "out"
    output.mkdir()
    (output / "results.db").write_text("not sqlite at all, " * 100, encoding="utf-8")
    err = refused(capsys, grid, output, "--resume")
    assert "results.db is not a results database" in err, err
