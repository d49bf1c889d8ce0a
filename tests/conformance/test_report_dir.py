"""A conformance run claims its report directory before it runs: one it cannot use is a
usage error at once (not after the run), one another run is writing is refused, and an
earlier run's reports are not left beside this run's."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli.conformance import _claimed
from harness.errors import ConfigError
from tests.console_script import run_script


def test_a_directory_under_a_file_is_refused_before_anything_runs(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    with (
        pytest.raises(ConfigError, match=r"cannot use it as the report directory"),
        _claimed(tmp_path / "afile" / "x"),
    ):
        pass


def test_a_directory_another_run_holds_is_refused(tmp_path: Path) -> None:
    with (
        _claimed(tmp_path / "out"),
        pytest.raises(ConfigError, match="another conformance run is writing"),
        _claimed(tmp_path / "out"),
    ):
        pass
    with _claimed(tmp_path / "out"):  # released with the run
        pass


def test_an_earlier_run_s_reports_are_removed_and_nothing_else(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    for name in ("findings.json", "junit.xml", "wptreport-native.json", "summary.md", "notes.txt"):
        (out / name).write_text("old", encoding="utf-8")
    with _claimed(out):
        pass
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]


async def test_the_command_says_so_with_exit_2_and_runs_nothing(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    code, out, err = await run_script(
        "conformance",
        "site",
        "http://127.0.0.1:9/",
        "--no-progress",
        "--output",
        str(tmp_path / "afile" / "x"),
        timeout=120,
    )
    assert code == 2, out + err
    assert "cannot use it as the report directory" in err and "Traceback" not in err
