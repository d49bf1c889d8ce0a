"""Files and directories the CLI reads or makes: a trace it cannot use is a usage error in
one line, and the default run directories of runs started together are each their own."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from harness.cli import commands
from harness.cli.commands import DEFAULT_RUNS_DIR, EXIT_USAGE, default_trace_dir, main

UNUSABLE_TRACES = {
    "not-utf8": (b"\xff\xfe\x00garbage", "it is not UTF-8 text (byte 0 is 0xff)"),
    "not-json": (b"nonsense\n", "trace.jsonl:1 is not a trace event (Invalid JSON"),
    "wrong-shape": (b'{"type": "nope"}\n', "trace.jsonl:1 is not a trace event (Input tag"),
}


def unusable_trace(directory: Path, kind: str) -> Path:
    """A run directory whose ``trace.jsonl`` is ``kind`` (or is a directory)."""
    directory.mkdir()
    if kind == "directory":
        (directory / "trace.jsonl").mkdir()
    elif kind != "missing":
        (directory / "trace.jsonl").write_bytes(UNUSABLE_TRACES[kind][0])
    return directory


def expected_words(kind: str) -> str:
    return {
        "directory": "trace.jsonl: it is a directory",
        "missing": "No such file or directory",
    }.get(kind) or UNUSABLE_TRACES[kind][1]


KINDS = [*UNUSABLE_TRACES, "directory", "missing"]


def assert_one_line_usage_error(
    code: int, capsys: pytest.CaptureFixture[str], words: str, *, as_json: bool = False
) -> None:
    captured = capsys.readouterr()
    assert code == EXIT_USAGE, captured.err
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err, captured.err
    assert captured.err.startswith("webmcp-harness: ") and words in captured.err
    if as_json:
        assert json.loads(captured.out)["error"]["code"] == "usage"
    else:
        assert captured.out == ""


@pytest.mark.parametrize("kind", KINDS)
def test_trace_show_of_an_unusable_trace_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    run = unusable_trace(tmp_path / "run", kind)
    assert_one_line_usage_error(main(["trace", "show", str(run)]), capsys, expected_words(kind))


@pytest.mark.parametrize("kind", KINDS)
def test_replaying_an_unusable_trace_is_a_usage_error_before_any_browser(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    run = unusable_trace(tmp_path / "run", kind)
    # An address nothing listens on: the command must stop before it opens a page.
    argv = ["agent", "http://127.0.0.1:9/", "--agent", f"replay:{run}", "--json"]
    assert_one_line_usage_error(main(argv), capsys, expected_words(kind), as_json=True)
    assert not (tmp_path / DEFAULT_RUNS_DIR).exists()  # and it made no run directory


class _Frozen(datetime):
    """A clock stopped at one second: runs started within it."""

    @classmethod
    def now(cls, tz: object = None) -> _Frozen:
        return cls(2030, 1, 2, 3, 4, 5, tzinfo=UTC)


def test_default_trace_dirs_within_one_second_are_each_made_and_distinct(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(commands, "datetime", _Frozen)
    first = default_trace_dir("scripted:plan.yaml")
    second = default_trace_dir("scripted:other.yaml")
    assert first == Path(DEFAULT_RUNS_DIR, "20300102-030405-scripted")
    assert second == Path(DEFAULT_RUNS_DIR, "20300102-030405-scripted-2")
    assert first.is_dir() and second.is_dir()  # taken: the next run cannot choose them


def test_default_trace_dirs_chosen_at_once_never_collide(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(commands, "datetime", _Frozen)
    chosen: list[Path] = []
    start = threading.Barrier(8)

    def choose() -> None:
        start.wait()
        chosen.append(default_trace_dir("replay:run"))

    threads = [threading.Thread(target=choose) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(chosen)) == 8
    assert sorted(p.name for p in (tmp_path / DEFAULT_RUNS_DIR).iterdir()) == sorted(
        p.name for p in chosen
    )


def test_a_usage_error_leaves_no_default_trace_dir(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    plan = tmp_path / "plan.yaml"
    plan.write_text("task: t\nsteps:\n  - finish: done\n", encoding="utf-8")
    argv = ["agent", "http://127.0.0.1:9/", "--agent", f"scripted:{plan}", "--elicit-timeout", "-1"]
    assert main(argv) == EXIT_USAGE
    assert "--elicit-timeout" in capsys.readouterr().err
    assert not (tmp_path / DEFAULT_RUNS_DIR).exists()
