"""What a conformance run writes besides its results, and where its output goes: a baseline
to update that cannot be written is a usage error before the run (2, nothing left behind),
one that fails after the run never costs the reports; a ua trace the disk cannot take costs
no result and no report, and leaves no half-written trace; ``$GITHUB_STEP_SUMMARY`` is best
effort (a warning, never the run's exit status); a reader of stdout that left ends the run
as a pipeline's writer (141, quietly).

The in-process tests stand a canned audit in for the browser (``_run_site``): what they
check is what the command does with a run's results, not the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import os
from pathlib import Path
from typing import Any

import pytest

from harness.cli import conformance
from harness.cli.commands import main
from harness.conformance.baseline import Baseline
from harness.conformance.reports import build_view, write_reports
from harness.conformance.results import Report, RunInfo, Subtest, TestResult
from tests.console_script import SCRIPT, run_script
from tests.unwritable import unwritable_directory

REPORT_FILES = {"wptreport-polyfill.json", "junit.xml", "report.html", "summary.md"}


def _canned_audit(monkeypatch: pytest.MonkeyPatch) -> None:
    """``conformance site`` audits without a browser: one page, one finding above info."""

    async def audit(args: Any, ticker: Any) -> tuple[list[Report], dict[str, Any]]:
        report = Report(
            run_info=RunInfo(suite="site", backend="polyfill"),
            time_start=1_700_000_000_000,
            time_end=1_700_000_001_000,
            results=[
                TestResult(
                    test="/todo/{index}",
                    status="OK",
                    subtests=[
                        Subtest(name="description-missing · add_todo", status="FAIL"),
                        Subtest(name="name-invalid · add_todo", status="PASS"),
                    ],
                )
            ],
        )
        return [report], {"findings.json": {"sites": []}}

    monkeypatch.setattr(conformance, "_run_site", audit)


def _site(output: Path, *more: str) -> list[str]:
    return ["conformance", "site", "bundled:todo", "--no-progress", "--output", str(output), *more]


def _reports(output: Path) -> set[str]:
    return {p.name for p in output.iterdir()} if output.is_dir() else set()


# -- the baseline to update ---------------------------------------------------------------


@pytest.mark.parametrize("where", ["under a file", "an unwritable directory"])
async def test_a_baseline_that_cannot_be_written_is_refused_before_the_run(
    tmp_path: Path, where: str
) -> None:
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    baseline, said = tmp_path / "afile" / "baseline.yml", "is a file, not a directory"
    refusing: contextlib.AbstractContextManager[Path] = contextlib.nullcontext(tmp_path)
    if where == "an unwritable directory":
        baseline, said = tmp_path / "ro" / "baseline.yml", "cannot write"
        refusing = unwritable_directory(tmp_path / "ro")
    output = tmp_path / "reports"
    with refusing:
        code, out, err = await run_script(
            "conformance",
            "site",
            "http://127.0.0.1:9/",  # never opened: the command stops before any browser
            "--no-progress",
            "--output",
            str(output),
            "--baseline",
            str(baseline),
            "--update-baseline",
            timeout=120,
        )
    assert code == 2, out + err
    assert f"--baseline {baseline}" in err and said in err, err
    assert "give" in err and "Traceback" not in err  # what to do
    assert not output.exists(), "a refused run leaves no report directory"
    assert not baseline.exists()


def test_a_baseline_that_fails_to_save_after_the_run_costs_no_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _canned_audit(monkeypatch)

    def disk_full(self: Baseline, path: str | Path) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(Baseline, "save", disk_full)
    baseline, output = tmp_path / "baseline.yml", tmp_path / "reports"
    code = main(_site(output, "--baseline", str(baseline), "--update-baseline"))
    out, err = capsys.readouterr()
    assert code == 3, out + err
    assert _reports(output) >= REPORT_FILES, "the reports are written before the baseline"
    assert f"baseline {baseline}" in err and "No space left on device" in err, err
    assert str(output) in err and "could not run" not in err, err  # where the reports are
    assert f"as expected; reports in {output}" in out  # the results, against the update


# -- $GITHUB_STEP_SUMMARY -----------------------------------------------------------------


@pytest.mark.parametrize("kind", ["in a missing directory", "a directory"])
def test_a_step_summary_that_cannot_be_written_is_a_warning_and_nothing_else(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    kind: str,
) -> None:
    _canned_audit(monkeypatch)
    step = tmp_path / "no-such-dir" / "summary.md" if kind != "a directory" else tmp_path
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    output = tmp_path / "reports"
    code = main(_site(output))
    out, err = capsys.readouterr()
    assert code == 1, out + err  # the finding, not "could not run"
    assert "unexpected: [polyfill] /todo/{index} › description-missing · add_todo" in out
    assert _reports(output) >= REPORT_FILES
    assert "warning" in err and "GITHUB_STEP_SUMMARY" in err and str(step) in err, err
    assert ("No such file or directory" if kind != "a directory" else "Is a directory") in err


# -- the ua suite's traces -----------------------------------------------------------------


class _FillingDisk:
    """A file on a disk that fills once ``room`` writes are down: the next one puts half its
    text on the disk and fails with ENOSPC, as a full disk's write does."""

    def __init__(self, file: Any, room: int = 1) -> None:
        self.file = file
        self.room = room
        self.lines = 0

    def write(self, text: str) -> int:
        if self.lines >= self.room:
            self.file.write(text[: len(text) // 2])
            self.file.flush()
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.lines += 1
        return int(self.file.write(text))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.file, name)

    def __enter__(self) -> _FillingDisk:
        return self

    def __exit__(self, *exc: object) -> None:
        self.file.close()


@pytest.mark.timeout(180)
def test_traces_that_fill_the_disk_are_said_and_cost_no_result_nor_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "reports"
    traces = output / "traces" / "polyfill" / "seeds" / "script-tools"
    full = traces / "security" / "trace.jsonl"  # the second file's: the disk fills in its calls
    opened = Path.open

    def open_(path: Path, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        file = opened(path, mode, *args, **kwargs)
        return _FillingDisk(file) if path == full and "w" in mode else file

    monkeypatch.setattr(Path, "open", open_)
    code = main(
        ["conformance", "ua", "--backend", "polyfill", "--traces", "on", "--no-progress",
         "--tests", "/seeds/script-tools/annotations", "/seeds/script-tools/security",
         "--output", str(output)]
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 3, out + err  # the reports it ran for, not all written: as for a report
    assert "could not run" not in err and "Traceback" not in err, err
    assert f"cannot write the traces: {full} (No space left on device)" in err, err
    assert f"the other reports are in {output}" in err, err
    # The results stand: a trace that could not be written fails no subtest of the user agent.
    assert "polyfill: 10/10 passed" in out and f"as expected; reports in {output}" in out, out
    assert _reports(output) >= REPORT_FILES | {"traces"}
    # The trace written before is whole and linked; the half-written one is gone, unlinked.
    kept = traces / "annotations" / "trace.jsonl"
    assert '"type":"run-finished"' in kept.read_text(encoding="utf-8").splitlines()[-1]
    assert not full.parent.exists()
    linked = json.loads((output / "wptreport-polyfill.json").read_text(encoding="utf-8"))
    assert {r["test"]: r.get("trace") for r in linked["results"]} == {
        "/seeds/script-tools/annotations.html": (
            "traces/polyfill/seeds/script-tools/annotations/trace.jsonl"
        ),
        "/seeds/script-tools/security.html": None,
    }


def test_a_trace_the_scrub_pass_cannot_rewrite_is_left_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Writing the reports scrubs every trace again: on a full disk, a rewrite in place
    # would leave a trace cut short, that reads as a run that stopped there.
    output = tmp_path / "reports"
    trace = output / "traces" / "polyfill" / "t" / "trace.jsonl"
    trace.parent.mkdir(parents=True)
    whole = '{"seq":1,"type":"run-started"}\n{"seq":2,"type":"run-finished"}\n'
    trace.write_text(whole, encoding="utf-8")
    report = Report(
        run_info=RunInfo(suite="ua", backend="polyfill"),
        time_start=1_700_000_000_000,
        time_end=1_700_000_001_000,
        results=[TestResult(test="/t.html", status="OK", trace="traces/polyfill/t/trace.jsonl")],
    )
    view = build_view("t", [report], Baseline().compare([report]), Baseline())
    opened = Path.open

    def open_(path: Path, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        file = opened(path, mode, *args, **kwargs)
        return _FillingDisk(file, room=0) if "w" in mode and "traces" in path.parts else file

    monkeypatch.setattr(Path, "open", open_)
    with pytest.raises(OSError, match="No space left on device"):
        write_reports(output, view)
    assert trace.read_text(encoding="utf-8") == whole
    assert list(trace.parent.iterdir()) == [trace]  # and nothing beside it


# -- stdout into a pipe -------------------------------------------------------------------


def test_a_reader_of_stdout_that_left_ends_the_run_quietly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _canned_audit(monkeypatch)
    reading, writing = os.pipe()
    os.close(reading)
    closed = os.fdopen(writing, "w")
    monkeypatch.setattr("sys.stdout", closed)
    code = main(_site(tmp_path / "reports"))
    monkeypatch.undo()
    with contextlib.suppress(BrokenPipeError):  # what is still buffered goes nowhere
        closed.close()
    assert code == 141
    assert capsys.readouterr().err == ""
    assert _reports(tmp_path / "reports") >= REPORT_FILES


def test_a_broken_pipe_of_the_run_itself_is_a_run_that_could_not_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A pipe to the browser or a page that broke is not the reader of stdout leaving.
    async def broken(args: Any, ticker: Any) -> Any:
        raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))

    monkeypatch.setattr(conformance, "_run_site", broken)
    code = main(_site(tmp_path / "reports"))
    assert code == 3
    assert "could not run" in capsys.readouterr().err


@pytest.mark.slow
async def test_conformance_into_a_pipe_whose_reader_left_exits_141(tmp_path: Path) -> None:
    reading, writing = os.pipe()
    os.close(reading)  # `| head -1` that has gone before the first line
    try:
        proc = await asyncio.create_subprocess_exec(
            SCRIPT,
            *_site(tmp_path / "reports"),
            stdout=writing,
            stderr=asyncio.subprocess.PIPE,
        )
    finally:
        os.close(writing)
    _, err = await asyncio.wait_for(proc.communicate(), 300)
    assert proc.returncode == 141, err.decode()
    assert err == b""
    assert _reports(tmp_path / "reports") >= REPORT_FILES
