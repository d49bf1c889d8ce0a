"""``webmcp-harness selftest --quick --json``: the CI run, with its report and verdict."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.console_script import run_script


@pytest.mark.slow
@pytest.mark.timeout(1200)
async def test_the_quick_selftest_passes_and_writes_its_report(tmp_path: Path) -> None:
    code, out, err = await run_script(
        "selftest", "--quick", "--json", "--out", str(tmp_path), timeout=1100
    )
    summary = json.loads(out)
    assert code == 0, (summary, err[-2000:])
    assert summary["ok"] is True
    assert summary["faults_survived"] == summary["fault_kinds"] >= 25
    assert summary["inputs_clear"] == summary["inputs_tried"] >= 300
    assert (summary["lost"], summary["crossed"], summary["leaks"]) == (0, 0, 0)
    report = json.loads((tmp_path / "reliability.json").read_text())
    assert report["summary"]["ok"] is True
    text = (tmp_path / "reliability.md").read_text()
    assert "PASS" in text and "HXCANARY" not in text
