"""``experiment``'s options that only one runner reads: given to the other, they would be
ignored, so they are refused (exit 2, one line naming the fix) — in this process, with the
episodes stood in for (no browser)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from harness.cli import main
from tests.cli.test_experiment_cli import MAIL_GRID, StoodIn


@pytest.fixture
def grid(tmp_path: Path) -> Path:
    path = tmp_path / "grid.toml"
    path.write_text(MAIL_GRID, encoding="utf-8")
    return path


@pytest.fixture
def modes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The worker mode each local run was given (its episodes stood in for: ``ok`` at once)."""
    from harness.experiments import runners

    stood_in = StoodIn(monkeypatch)
    given: list[str] = []

    async def run_local(*args: Any, **kw: Any) -> Any:
        given.append(kw["mode"])
        return await stood_in.run_local(*args, **kw)

    monkeypatch.setattr(runners, "run_local", run_local)
    return given


@pytest.mark.parametrize("mode", ["contexts", "browsers"])
def test_a_worker_mode_with_ray_is_refused_naming_the_fix(
    grid: Path, tmp_path: Path, mode: str, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "out"
    args = ["experiment", str(grid), "--backend", "ray", "--worker-mode", mode]
    assert main([*args, "--output", str(output)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    # After the sub-command's usage, as for every mistake argparse finds: one line.
    last = err.strip().splitlines()[-1]
    assert last.startswith("webmcp-harness: --worker-mode is for local workers"), err
    assert "drop it, or drop --backend ray" in last
    assert not output.exists()


def test_a_worker_mode_is_what_local_workers_run_with(
    grid: Path, tmp_path: Path, modes: list[str]
) -> None:
    quiet = ["--no-progress", "--no-report"]
    assert main(["experiment", str(grid), "--output", str(tmp_path / "a"), *quiet]) == 0
    browsers = ["--worker-mode", "browsers", *quiet]
    assert main(["experiment", str(grid), "--output", str(tmp_path / "b"), *browsers]) == 0
    assert modes == ["contexts", "browsers"]


def test_the_run_options_refuse_what_their_runner_would_ignore(tmp_path: Path) -> None:
    from harness.experiments.runners import RunOptions

    with pytest.raises(ValidationError, match="worker_mode is for local workers"):
        RunOptions(output=tmp_path, runner="ray", worker_mode="contexts")
    with pytest.raises(ValidationError, match="ray_address goes with runner='ray'"):
        RunOptions(output=tmp_path, ray_address="auto")
    assert RunOptions(output=tmp_path).local_mode == "contexts"


def test_a_ray_start_timeout_past_a_day_is_refused(
    grid: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Ray reads it as whole seconds in an environment variable: 1e30 overflowed there.
    output = tmp_path / "out"
    args = ["experiment", str(grid), "--backend", "ray", "--ray-start-timeout", "1e30"]
    assert main([*args, "--output", str(output)]) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last == "webmcp-harness: --ray-start-timeout: at most 86,400 s (a day).", last
    assert not output.exists()
    from harness.experiments.runners import RunOptions

    with pytest.raises(ValidationError, match="less than or equal to 86400"):
        RunOptions(output=tmp_path, runner="ray", ray_start_timeout=1e30)
