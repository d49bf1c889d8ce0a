"""A native test that Chromium's unanswered-frame fault broke is reported skipped, naming
the fault and the failure (tests/conftest.py), and only such a test: one that fails
without the fault, or that makes the fault itself, fails as before."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).parent

CASES = """
import logging
import pytest
from harness.browser.backends.native import UNANSWERED_LOG

log = logging.getLogger("harness.browser.native")

def hear_the_fault():
    log.warning(UNANSWERED_LOG, "getTools()", "http://127.0.0.1/child.html")

def test_broken_by_the_fault():
    hear_the_fault()
    assert "the child's tool ran" == "not run"

def test_heard_the_fault_and_passed():
    hear_the_fault()

def test_fails_on_its_own_right_after():
    assert 1 == 2, "a failure of the test's own"

@pytest.mark.chromium_fault_simulated
def test_makes_the_fault_itself():
    hear_the_fault()
    assert False, "what the harness does then is wrong"

def test_a_like_warning_from_elsewhere():
    logging.getLogger("harness.browser.native").warning("Chromium's WebMCP did not answer")
    assert False, "not the harness's own warning"
"""

CONFIG = """[pytest]
markers =
    chromium_fault_simulated: makes the fault itself
"""


@pytest.mark.slow  # a pytest run of its own (~7 s); tests/slow_suites.py runs it
def test_only_a_failure_the_fault_caused_is_reported_skipped(tmp_path: Path) -> None:
    shutil.copy(TESTS / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "pytest.ini").write_text(CONFIG)
    (tmp_path / "test_cases.py").write_text(CASES)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-rfs",
            "-p",
            "no:randomly",
            "-p",
            "no:cacheprovider",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "1000"},
        timeout=120,
    )
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert "3 failed, 1 passed, 1 skipped" in out, out
    skipped = next(line for line in out.splitlines() if line.startswith("SKIPPED"))
    assert "test_cases.py" in skipped
    assert "Chromium left a frame's WebMCP unanswered" in skipped
    assert "heard: Chromium's WebMCP did not answer getTools() in the frame at " in skipped
    assert "assert \"the child's tool ran\" == 'not run'" in skipped
    for name in (
        "test_fails_on_its_own_right_after",
        "test_makes_the_fault_itself",
        "test_a_like_warning_from_elsewhere",
    ):
        assert f"FAILED test_cases.py::{name}" in out
