"""A fresh virtual environment with only the package installed runs an example test.

No dev extras, no editable install: the sources are copied, built and installed
with pip (its cache and the machine's configured indexes are used), so the test
sees exactly what a user's `pip install webmcp-harness` gets — the plugin's entry
point, the injected JS and the bundled sites as package data — and no
`playwright install`. It takes a few minutes (most of it pip), so it is marked
`slow`; `-m "not slow"` leaves it out.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
SOURCES = ("harness", "sites", "injected_js", "pyproject.toml", "README.md")
DEV_ONLY = ("pytest-asyncio", "pytest-xdist", "pytest-timeout", "hypothesis", "ruff", "mypy")


def _run(args: list[str | Path], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    # A fresh install: none of this run's Python path, venv or pytest options (e.g. -n 2).
    outer = ("PYTHONPATH", "VIRTUAL_ENV", "PYTEST_ADDOPTS")
    env = {k: v for k, v in os.environ.items() if k not in outer}
    return subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_an_example_runs_with_only_the_package_installed(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=ignore)
        else:
            shutil.copy2(ROOT / name, source / name)

    venv = tmp_path / "venv"
    python = venv / "bin" / "python"
    created = _run([sys.executable, "-m", "venv", venv], tmp_path, 300)
    assert created.returncode == 0, created.stderr
    installed = _run([python, "-m", "pip", "install", "--quiet", source], tmp_path, 1500)
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
    listed = _run([python, "-m", "pip", "list", "--format=freeze"], tmp_path, 120).stdout.lower()
    assert "webmcp-harness==" in listed
    assert [name for name in DEV_ONLY if f"{name}==" in listed] == []

    suite = tmp_path / "suite"
    shutil.copytree(ROOT / "examples", suite, ignore=ignore)
    where = _run([python, "-c", "import harness; print(harness.__file__)"], suite, 120)
    assert where.stdout.strip().startswith(str(venv)), where.stdout + where.stderr
    tests = ["test_todo.py::test_a_tool_call_shows_on_the_page", "test_keys.py"]
    ran = _run([python, "-m", "pytest", "-p", "no:cacheprovider", *tests], suite, 600)
    assert ran.returncode == 0, ran.stdout[-4000:] + ran.stderr[-2000:]
    assert "2 passed" in ran.stdout.strip().splitlines()[-1]
