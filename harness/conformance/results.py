"""The result of a conformance run, in web-platform-tests' wptreport shape.

One :class:`Report` per product (here: per backend), as ``wpt run --log-wptreport`` writes
and wpt.fyi reads: ``run_info``, ``time_start``/``time_end`` (ms since the epoch) and
``results``, each a test (a path such as ``/seeds/sensitive/sensitive-hint.html``) with its
harness status and its subtests. A subtest or test whose status differs from the baseline's
expectation carries ``expected`` (wptreport's convention); everything else about
expectations lives in :mod:`harness.conformance.baseline`.

The harness adds fields wptreport consumers ignore: a subtest's ``cites`` (the spec sentences
it checks), and for audit findings ``severity``, ``tool``, ``evidence``, ``fix`` and ``spec``.
"""

from __future__ import annotations

import json
import platform
import subprocess
from collections import Counter
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.errors import ConfigError, read_input_file
from harness.harness import Harness

SubtestStatus = Literal["PASS", "FAIL", "TIMEOUT", "NOTRUN", "PRECONDITION_FAILED"]
TestStatus = Literal[
    "OK", "ERROR", "TIMEOUT", "CRASH", "PRECONDITION_FAILED", "PASS", "FAIL", "SKIP"
]
"""A test's harness status: ``OK`` when it ran (its subtests say how it went); ``ERROR``,
``TIMEOUT`` or ``CRASH`` when the harness could not finish it; ``SKIP`` (wptrunner's status
for a test it did not run) when the runner cannot run it at all — a worker scope, a reftest,
a test that needs testdriver.js — with the reason in ``message``. (``PASS``/``FAIL`` are for
tests without subtests, as in WPT's reftests.)"""

Suite = Literal["ua", "site", "wpt"]

PRODUCT = "webmcp-harness"


class Subtest(BaseModel):
    """One subtest's result."""

    model_config = ConfigDict(extra="ignore")

    name: str
    status: SubtestStatus
    message: str | None = None
    expected: str | None = None
    cites: list[str] = Field(default_factory=list)
    severity: str | None = None
    tool: str | None = None
    evidence: str | None = None
    fix: str | None = None
    spec: str | None = None


class TestResult(BaseModel):
    """One test (a page, or an audited URL) and its subtests."""

    __test__ = False  # not a pytest test class, whatever its name says
    model_config = ConfigDict(extra="ignore")

    test: str
    status: TestStatus
    message: str | None = None
    expected: str | None = None
    duration: int = 0
    subtests: list[Subtest] = Field(default_factory=list)
    title: str | None = None
    trace: str | None = None
    """A path relative to the report directory: the harness trace of the test's calls."""

    @property
    def area(self) -> str:
        """The first two segments of the path (``/seeds/trust``), for per-area tables."""
        parts = [p for p in self.test.split("/") if p]
        return "/" + "/".join(parts[:2]) if len(parts) > 2 else "/" + "/".join(parts[:1])


class RunInfo(BaseModel):
    """What ran: the product, the backend, the browser, the harness and its commit."""

    model_config = ConfigDict(extra="allow")

    product: str = PRODUCT
    suite: Suite = "wpt"  # a wptreport from elsewhere (e.g. `./wpt run`) says neither
    backend: str = ""
    configuration: str | None = None
    """``wpt`` only: the configuration that ran (``native``, ``native+layer``, ``polyfill``),
    which is also the run's ``backend`` (the column it fills)."""
    injected: list[str] | None = None
    """``wpt`` only: what the configuration put into every page; empty for ``native``
    (Chromium's own WebMCP alone)."""
    browser_version: str = ""
    flags: list[str] = Field(default_factory=list)
    harness_version: str = ""
    revision: str | None = None
    os: str = Field(default_factory=lambda: platform.system().lower())
    python_version: str = Field(default_factory=platform.python_version)


class Report(BaseModel):
    """One product's run, as a wptreport."""

    run_info: RunInfo
    time_start: int
    time_end: int
    results: list[TestResult] = Field(default_factory=list)

    def counts(self) -> Counter[str]:
        """How many subtests ended in each status (tests without subtests count as one)."""
        counts: Counter[str] = Counter()
        for result in self.results:
            if result.subtests:
                counts.update(s.status for s in result.subtests)
            else:
                counts[result.status] += 1
        return counts

    def to_json(self) -> str:
        """The wptreport JSON text."""
        return json.dumps(self.model_dump(mode="json", exclude_none=True), indent=1) + "\n"


def harness_version() -> str:
    """The installed ``webmcp-harness`` version."""
    try:
        return metadata.version("webmcp-harness")
    except metadata.PackageNotFoundError:  # running from a checkout without installing
        return "unknown"


def git_revision() -> str | None:
    """The commit of the checkout the harness runs from, when it is one (``None`` otherwise)."""
    here = Path(__file__).resolve().parent
    try:
        done = subprocess.run(
            ["git", "-C", str(here), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    revision = done.stdout.strip()
    return revision if done.returncode == 0 and len(revision) == 40 else None


def run_info(harness: Harness, suite: Suite, **extra: Any) -> RunInfo:
    """What ran, read from a started harness: its backend, browser, flags, version, commit."""
    return RunInfo(
        suite=suite,
        backend=harness.backend,
        browser_version=harness.browser.version,
        flags=harness.launch_args(),
        harness_version=harness_version(),
        revision=git_revision(),
        **extra,
    )


def load_reports(path: str | Path) -> list[Report]:
    """The wptreport(s) at ``path``: one JSON file, or every ``wptreport*.json`` in a report
    directory. Raises :class:`~harness.errors.ConfigError` saying what is wrong."""
    path = Path(path)
    files = sorted(path.glob("wptreport*.json")) if path.is_dir() else [path]
    if not files or not all(f.is_file() for f in files):
        raise ConfigError(
            f"{path}: no wptreport here; pass a wptreport JSON file or a report directory "
            "written by `webmcp-harness conformance`."
        )
    reports: list[Report] = []
    for file in files:
        text = read_input_file(file, "the previous report")
        try:
            data: Any = json.loads(text)
            # Strict: a JSON `true` is no timestamp, nor a number a status.
            reports.append(Report.model_validate(data, strict=True))
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(str(part) for part in error["loc"]) or "(top)"
            raise ConfigError(
                f"{file}: not a wptreport JSON file ({where}: {error['msg']})."
            ) from exc
        except ValueError as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise ConfigError(f"{file}: not a wptreport JSON file ({first}).") from exc
    return reports
