"""Run the user-agent suite on one backend and get a wptreport.

    async with FixtureServer(all_files()) as fixtures:
        report = await run_suite("polyfill", all_files(), fixtures)

The suite runs in one browser per backend; each test file gets a fresh browser context.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from harness.conformance.results import Report, run_info
from harness.conformance.ua import (
    declarative,
    declarative_draft,
    elicitation,
    imperative,
    script_tools,
    sensitive,
    trust,
)
from harness.conformance.ua.framework import (
    Fixtures,
    ProgressCallback,
    TestFile,
    Traces,
    run_file,
)
from harness.harness import Harness
from harness.models import BackendName

AREAS = (imperative, declarative, sensitive, trust, declarative_draft, elicitation, script_tools)

BASELINE = Path(str(resources.files("harness.conformance.ua") / "baseline.yml"))
"""The expected results of this harness (the suite's default baseline)."""


def all_files() -> list[TestFile]:
    """Every test file of the suite, in area order."""
    files = [file for area in AREAS for file in area.FILES]
    paths = [f.path for f in files]
    duplicates = sorted({p for p in paths if paths.count(p) > 1})
    if duplicates:
        raise ValueError(f"test paths used twice: {', '.join(duplicates)}")
    return files


def select(files: Sequence[TestFile], patterns: Sequence[str]) -> list[TestFile]:
    """The files whose path starts with one of ``patterns`` (all of them when none is given)."""
    if not patterns:
        return list(files)
    return [f for f in files if any(f.path.startswith(p) for p in patterns)]


def subtest_count(files: Sequence[TestFile]) -> int:
    """How many subtests the files hold."""
    return sum(len(f.subtests) for f in files)


async def run_suite(
    backend: BackendName,
    files: Sequence[TestFile],
    fixtures: Fixtures,
    *,
    progress: ProgressCallback | None = None,
    executable_path: str | None = None,
    traces: Traces | None = None,
) -> Report:
    """Run ``files`` on ``backend``; a file the harness cannot run is an ``ERROR`` result.

    ``traces``: a report directory's ``traces/``, where each file's calls are traced (kept
    as it says; one the disk cannot take is said in its :attr:`~Traces.problem`). Raises
    :class:`~harness.errors.BrowserNotFound` when no browser starts.
    """
    started = int(time.time() * 1000)
    async with Harness(backend=backend, executable_path=executable_path) as harness:
        info = run_info(harness, "ua")
        results = [
            await run_file(harness, file, fixtures, progress, traces=traces) for file in files
        ]
    return Report(
        run_info=info, time_start=started, time_end=int(time.time() * 1000), results=results
    )
