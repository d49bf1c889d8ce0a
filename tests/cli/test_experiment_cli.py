"""``webmcp-harness experiment``: usage errors exit 2, a run that cannot start exits 1 — one
line on stderr each, never a traceback (the successful run is in tests/experiments/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.console_script import run_script

GRID = Path(__file__).resolve().parents[2] / "examples" / "experiments" / "grid.toml"


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--resume"], 2, "--resume needs --output DIR"),
        (["--workers", "0"], 2, "--workers: must be at least 1"),
        (["--episode-timeout", "soon"], 2, "is not a number of seconds"),
        (["--ray-address", "auto"], 2, "--ray-address goes with --backend ray"),
        (["--record-cassettes", "a", "--replay-cassettes", "b"], 2, "not allowed with argument"),
    ],
)
async def test_usage_errors_exit_2(args: list[str], code: int, message: str) -> None:
    status, _, err = await run_script("experiment", str(GRID), *args)
    assert status == code, err
    assert message in err and "Traceback" not in err


async def test_a_run_that_cannot_start_says_why_in_one_line(tmp_path: Path) -> None:
    status, _, err = await run_script("experiment", str(tmp_path / "missing.toml"))
    assert status == 2 and "Cannot read" in err and "Traceback" not in err
    used = tmp_path / "used"
    used.mkdir()
    (used / "x").write_text("x")
    status, _, err = await run_script("experiment", str(GRID), "--output", str(used))
    assert status == 2 and "exists and is not empty; pass --resume" in err
    assert len(err.strip().splitlines()) == 1
    status, _, err = await run_script(
        "experiment", str(GRID), "--output", str(tmp_path / "new"), "--resume"
    )
    assert status == 2 and "Nothing to resume" in err
    status, _, err = await run_script(
        "experiment",
        str(GRID),
        "--output",
        str(tmp_path / "r"),
        "--replay-cassettes",
        str(tmp_path / "none"),
    )
    assert status == 2 and "No cassettes to replay" in err
