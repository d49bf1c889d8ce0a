"""The example suite (`examples/`) passes on two pytest-xdist workers, each with its own browser."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_examples_pass_on_two_workers(tmp_path: Path) -> None:
    output = tmp_path / "test-results"
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "examples", "-n", "2", "-v", "--output", str(output)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=840,
    )
    summary = run.stdout.strip().splitlines()[-1]
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert re.fullmatch(r"=+ \d+ passed(, \d+ warnings?)? in .*", summary), summary
    collected = len(re.findall(r"^def test_", _examples_source(), flags=re.MULTILINE))
    assert f" {collected} passed" in summary
    # Both workers ran tests; each is a pytest process with its own pytest-playwright browser.
    workers = set(re.findall(r"^\[(gw\d+)\] .* PASSED ", run.stdout, flags=re.MULTILINE))
    assert workers == {"gw0", "gw1"}, run.stdout[-3000:]


def _examples_source() -> str:
    return "\n".join(
        p.read_text(encoding="utf-8") for p in sorted((ROOT / "examples").glob("test_*.py"))
    )
