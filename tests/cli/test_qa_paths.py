"""Paths the QA commands write to are checked before the page is opened: a file where a
directory should be (``--output afile/cat.json``, ``--database afile/db``) is a usage error
that names it — ``snapshot`` said "File exists" after the run, and ``fuzz`` kept no
failures, silently."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli.commands import main


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            ["snapshot", "http://127.0.0.1:9/", "--output", "afile/cat.json"],
            "afile is a file, not a directory",
        ),
        (
            ["snapshot", "http://127.0.0.1:9/", "--output", "adir"],
            "adir is a directory; give a file name",
        ),
        (
            ["fuzz", "http://127.0.0.1:9/", "--database", "afile/db"],
            "afile is a file, not a directory",
        ),
        (
            ["fuzz", "http://127.0.0.1:9/", "--database", "afile"],
            "afile is a file; give a directory",
        ),
    ],
)
def test_a_path_that_cannot_be_written_is_a_usage_error_before_any_page_opens(
    args: list[str],
    says: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    (tmp_path / "adir").mkdir()
    assert main(args) == 2  # no browser started: the page (port 9) is never reached
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err
