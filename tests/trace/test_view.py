"""``trace show``: what it says of a trace with nothing in it, and of a directory that holds
runs rather than being one (an experiment's output)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main
from harness.trace.events import RunFinished
from harness.trace.recorder import TraceRecorder


def test_an_empty_trace_says_the_run_did_not_finish_then_its_totals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "trace.jsonl").write_text("", encoding="utf-8")
    assert main(["trace", "show", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "the run did not finish (no run-finished event)" in out
    assert "event)0" not in out  # the totals on a line of their own
    assert any(line.strip(" │").startswith("0 calls (0 isError)") for line in out.splitlines())


def test_an_experiments_output_points_to_its_episodes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "out"
    ids = [f"mail.scripted.none.polyfill.cancel.s{seed}" for seed in range(7)]
    for episode in ids:
        recorder = TraceRecorder(output / "episodes" / episode)
        recorder.record(RunFinished(stop_reason="finished", steps=1, duration_ms=1.0))
        recorder.close()
    (output / "results.md").write_text("", encoding="utf-8")
    assert main(["trace", "show", str(output)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert f"{output} holds 7 runs, not one" in err
    assert f"({output}/episodes/<id>)" in err
    assert f"e.g. {output}/episodes/{ids[0]}, " in err and "(and 2 more)" in err
    assert main(["trace", "show", str(output / "episodes" / ids[0])]) == 0  # as it says
