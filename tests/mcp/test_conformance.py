"""The official MCP conformance suite against ``webmcp-harness mcp --transport http``.

``conformance/run.py`` serves ``conformance/fixture.html``, starts the MCP server on it
and runs ``@modelcontextprotocol/conformance`` (installed by ``npm ci`` in
``conformance/``; ``make test`` does it) for the 2025-11-25 and the 2026-07-28
revisions, with ``conformance/expected-failures.yml`` as the baseline. It needs no
network. The whole run takes about a minute (``-m "not slow"`` leaves it out).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

CONFORMANCE = Path(__file__).resolve().parent.parent.parent / "conformance"
RUNNER = CONFORMANCE / "run.py"
BASELINE = CONFORMANCE / "expected-failures.yml"
ENTRY = re.compile(r"^\s+- (?P<entry>[^\s#]+)(?:\s+# (?P<reason>.*))?$")

pytestmark = pytest.mark.timeout(600)


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(RUNNER), *args], capture_output=True, text=True, timeout=540
    )


def output_of(result: subprocess.CompletedProcess[str]) -> str:
    return f"exit {result.returncode}\n{result.stdout[-6000:]}\n{result.stderr[-3000:]}"


def baseline_entries() -> dict[str, str]:
    entries = {}
    for line in BASELINE.read_text(encoding="utf-8").splitlines():
        match = ENTRY.match(line)
        if match:
            entries[match["entry"]] = (match["reason"] or "").strip()
    return entries


@pytest.mark.slow
def test_the_suite_passes_both_revisions_with_the_baseline(tmp_path: Path) -> None:
    result = run("--output", str(tmp_path))
    assert result.returncode == 0, output_of(result)
    assert "conformance --requirements 2025-11-25: ok" in result.stdout
    assert "conformance --requirements 2026-07-28: ok" in result.stdout
    assert list(tmp_path.rglob("checks.json")), "the suite wrote no results"


@pytest.mark.slow
def test_a_failure_the_baseline_does_not_list_fails_the_run(tmp_path: Path) -> None:
    entries = baseline_entries()
    assert "tools-call-sampling" in entries
    reduced = tmp_path / "baseline.yml"
    kept = [f"  - {entry}" for entry in entries if entry != "tools-call-sampling"]
    reduced.write_text("server:\n" + "\n".join(kept) + "\n", encoding="utf-8")
    result = run(
        "--baseline",
        str(reduced),
        "--scenario",
        "tools-call-sampling",
        "--output",
        str(tmp_path / "results"),
    )
    assert result.returncode == 1, output_of(result)
    unexpected = result.stdout.split("Unexpected failures (not in baseline)", 1)
    assert len(unexpected) == 2 and "tools-call-sampling" in unexpected[1], output_of(result)


def test_every_baseline_entry_says_why() -> None:
    entries = baseline_entries()
    assert len(entries) > 10
    missing = [entry for entry, reason in entries.items() if len(reason) < 20]
    assert not missing, f"baseline entries without a reason beside them: {missing}"
