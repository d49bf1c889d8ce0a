"""A run's trace directory must be new or empty, and makeable: what is wrong with one given
on the command line is named (a file where a directory should be was reported as 'exists
and is not empty', or failed after the browser started with exit 1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli.commands import main
from harness.errors import ConfigError
from harness.trace.recorder import check_run_dir


def test_what_is_wrong_with_a_trace_directory_is_named(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"cannot be made: .*afile is a file, not a directory"):
        check_run_dir(tmp_path / "afile" / "x")
    with pytest.raises(ConfigError, match=r"afile is a file; give a new or empty directory"):
        check_run_dir(tmp_path / "afile")
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "trace.jsonl").write_text("{}", encoding="utf-8")
    with pytest.raises(ConfigError, match="exists and is not empty"):
        check_run_dir(tmp_path / "used")
    check_run_dir(tmp_path / "new" / "run")  # fine: made when the run starts


def test_the_agent_command_says_so_with_exit_2_before_any_browser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    (tmp_path / "plan.yaml").write_text("task: t\nsteps:\n  - finish: done\n", encoding="utf-8")
    args = ["agent", "http://127.0.0.1:9/", "--agent", "scripted:plan.yaml"]
    assert main([*args, "--trace-dir", "afile/x"]) == 2
    assert "afile is a file, not a directory" in capsys.readouterr().err
