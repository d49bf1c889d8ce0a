"""No test can hang the suite (tests/conftest.py): whatever a test awaits — in its body or
in a fixture's teardown after it was cut off — it ends as a failure naming the test
within its limit, on an xdist worker too, however slow pytest's report of it.

pytest-timeout alone interrupts a test once; a teardown that then awaits forever (the
browser of the test that was cut off) ran with no timer: these runs would never end.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).parent

HANGING = """
import asyncio
import pytest

@pytest.fixture
async def teardown_that_never_ends():
    yield
    await asyncio.Event().wait()

async def test_awaits_forever_then_its_teardown_too(teardown_that_never_ends):
    await asyncio.Event().wait()

async def test_runs_after_them():
    await asyncio.sleep(0)
"""

# pytest's report of a failure can be slow on a loaded machine (the traceback's source read
# back, a worker's report serialized): pytest-timeout's signal, armed for the whole test,
# must not land in it (an exception inside pytest's reporting ends the xdist worker, and
# the run). Here each report of a failure takes 1.5 s, past the signal's time.
SLOW_REPORTS = """
import time
import pytest

@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.failed:
        time.sleep(1.5)
    return report
"""

PLUGINS = ("-p", "no:cacheprovider", "-p", "slow_reports")

CONFIG = """[pytest]
asyncio_mode = auto
asyncio_default_fixture_loop_scope = session
asyncio_default_test_loop_scope = session
timeout = 5
"""


@pytest.mark.slow  # two pytest runs of their own (~17 s); tests/slow_suites.py runs it
def test_a_test_and_its_teardown_that_await_forever_end_as_failures(tmp_path: Path) -> None:
    shutil.copy(TESTS / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "pytest.ini").write_text(CONFIG)
    (tmp_path / "test_hanging.py").write_text(HANGING)
    (tmp_path / "slow_reports.py").write_text(SLOW_REPORTS)
    done = subprocess.run(
        [*(sys.executable, "-m", "pytest", "-n", "1", "-q", "-rfE"), *PLUGINS],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        # The summary's lines whole; the plugin importable.
        env={**os.environ, "COLUMNS": "400", "PYTHONPATH": str(tmp_path)},
        timeout=90,  # without the deadlines: the run never ends
    )
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    name = "test_hanging.py::test_awaits_forever_then_its_teardown_too"
    assert f"FAILED {name} - Failed: {name}: still awaiting at its deadline in call" in out
    assert f"ERROR {name} - Failed: {name}: still awaiting at its deadline in teardown" in out
    assert "1 failed, 1 passed, 1 error" in out
