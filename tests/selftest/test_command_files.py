"""Malformed plan, grid, baseline, report, policy and answers files given to the commands:
exit status 2, one line naming the file, no traceback, nothing written."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from harness.selftest.command_files import FileCase, command_files, judge
from tests.console_script import run_script


def test_every_malformed_command_line_file_is_refused_clearly() -> None:
    results = command_files()
    unclear = [f"{r.family} {r.case}: {r.answer}" for r in results if not r.clear]
    assert not unclear, unclear
    families = Counter(r.family for r in results)
    assert set(families) == {
        "plan-file",
        "grid-file",
        "baseline-file",
        "report-file",
        "policy-file (command)",
        "answers-file (command)",
    }
    assert len(results) >= 500 and min(families.values()) >= 15, families


CASE = FileCase("plan-file", "probe", ".yaml", "", [])


@pytest.mark.parametrize(
    ("answer", "verdict"),
    [
        ({"code": 2, "stderr": "webmcp-harness: bad plan.yaml: no\n", "left": []}, "refused"),
        (
            {"code": None, "stderr": "", "raised": "Traceback...\nUnicodeDecodeError: x"},
            "traceback",
        ),
        ({"code": 1, "stderr": "webmcp-harness: plan.yaml: x\n", "left": []}, "exit 1"),
        ({"code": 2, "stderr": "webmcp-harness: plan.yaml:\n  line 2\n", "left": []}, "2 lines"),
        (
            {"code": 2, "stderr": "webmcp-harness: --task is required\n", "left": []},
            "does not name",
        ),
        ({"code": 2, "stderr": "webmcp-harness: plan.yaml: x\n", "left": ["runs"]}, "wrote"),
    ],
)
def test_the_judge_refuses_every_way_of_answering_unclearly(
    answer: dict[str, object], verdict: str
) -> None:
    clear, said = judge(CASE, Path("/tmp/plan.yaml"), answer)
    assert clear is (verdict == "refused")
    assert said.startswith(verdict)


@pytest.mark.parametrize(
    ("name", "content", "command"),
    [
        ("plan.yaml", b"\x00\xff\xfe", ["agent", "http://127.0.0.1:9/", "--agent", "scripted:{f}"]),
        ("grid.toml", b"\x00\xff\xfe", ["experiment", "{f}"]),
        (
            "grid.toml",
            b'[experiment]\nworkers = true\n[[agents]]\nspec = "obedient"\n',
            ["experiment", "{f}"],
        ),
        ("baseline.yaml", b"\x00\xff\xfe", ["conformance", "ua", "--baseline", "{f}"]),
        ("baseline.yaml", None, ["conformance", "ua", "--baseline", "{f}"]),
        (
            "report.json",
            b'{"run_info": {}, "time_start": true, "time_end": 1}',
            ["conformance", "ua", "--diff", "{f}"],
        ),
    ],
    ids=[
        "binary-plan",
        "binary-grid",
        "bool-for-int-grid",
        "binary-baseline",
        "no-baseline",
        "bool-report",
    ],
)
async def test_the_console_script_refuses_a_bad_file_in_one_line_with_status_2(
    tmp_path: Path, name: str, content: bytes | None, command: list[str]
) -> None:
    # Each of these answered with a traceback, status 1, or silently ran with no baseline.
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    code, _, err = await run_script(*(a.replace("{f}", str(path)) for a in command))
    assert code == 2, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert name in err
