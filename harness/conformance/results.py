"""The result of a conformance run, in web-platform-tests' wptreport shape.

One :class:`Report` per product (here: per backend), as ``wpt run --log-wptreport`` writes
and wpt.fyi reads: ``run_info``, ``time_start``/``time_end`` (ms since the epoch) and
``results``, each a test (a path such as ``/seeds/sensitive/sensitive-hint.html``) with its
harness status and its subtests. A subtest or test whose status differs from the baseline's
expectation carries ``expected`` (wptreport's convention); everything else about
expectations lives in :mod:`harness.conformance.baseline`.

``run_info`` is what wpt.fyi's results processor reads: ``product`` the browser as wpt.fyi
names it (``chromium``, or ``chrome`` for Google's build), ``browser_version``, ``os`` and
``revision`` — the commit of the *tests* (the WPT checkout's for ``wpt``; the harness's own,
whose suite and rules are the tests, for ``ua`` and ``site``) — and beside them ``backend``,
the configuration that ran, so that runs of two backends sit side by side. Every test id is
a path that starts with ``/``, as wpt.fyi stores results by path.

The harness adds fields wptreport consumers ignore: a subtest's ``cites`` (the spec sentences
it checks), ``reruns`` (the statuses reruns of a failure gave: a failure that passed on a
rerun is *flaky*), and for audit findings ``severity``, ``tool``, ``evidence``, ``fix``,
``spec`` and ``lighthouse`` (Lighthouse's code for the same issue, where it has one).
"""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
from collections import Counter
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.browser.chromium import find_chromium
from harness.browser.wellformed import well_formed
from harness.errors import BrowserNotFound, ConfigError, read_input_file
from harness.harness import Harness
from harness.inputs import InputSyntaxError, parse_input

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

PRODUCT = "chromium"
"""wpt.fyi's name for the browser these runs use (Debian's Chromium)."""
PASSING = frozenset({"PASS", "OK"})
FLAKY = "FLAKY"
"""What reports call a result that failed and then passed on a rerun: never a pass."""


class Rerun:
    """What a result's reruns (``--rerun-failures``) make of it: its status first, then each
    rerun's, in ``reruns``."""

    if TYPE_CHECKING:  # the models' own fields (declared here, pydantic would own them)
        status: str
        reruns: list[str]

    @property
    def flaky(self) -> bool:
        """Whether it failed and then passed on a rerun (so it is neither a pass nor a
        consistent failure)."""
        return self.status not in PASSING and any(s in PASSING for s in self.reruns)

    @property
    def outcome(self) -> str:
        """The status reports show: :data:`FLAKY` when flaky, else its status."""
        return FLAKY if self.flaky else self.status

    @property
    def seen(self) -> list[str]:
        """Every status it gave, the first run's first."""
        return [self.status, *self.reruns]


class Subtest(Rerun, BaseModel):
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
    lighthouse: str | None = None
    duration: int | None = None
    """Milliseconds, where the runner times subtests (the user-agent suite does)."""
    reruns: list[str] = Field(default_factory=list)
    """The statuses of reruns of this subtest (``--rerun-failures``), in order."""


def keyed(subtests: list[Subtest]) -> list[tuple[str, Subtest]]:
    """Each of ``subtests`` with a name no other subtest of the test has: its own, or for
    a name the test gives more than one subtest (testharness.js allows it; wptrunner reports
    every result, wpt.fyi keeps the first) ``name [2]``, ``name [3]``… in the order they
    finished — so no view keyed by name can let a later result hide an earlier one."""
    taken = {subtest.name for subtest in subtests}
    keys: list[tuple[str, Subtest]] = []
    used: set[str] = set()
    for subtest in subtests:
        key, n = subtest.name, 1
        while key in used:
            n += 1
            key = f"{subtest.name} [{n}]"
            if key in taken:  # a subtest of its own has that name: never take it
                key = subtest.name
        used.add(key)
        keys.append((key, subtest))
    return keys


class TestResult(Rerun, BaseModel):
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
    reruns: list[str] = Field(default_factory=list)
    """The harness statuses of reruns of this test (``--rerun-failures``), in order."""

    @property
    def area(self) -> str:
        """The first two segments of the path (``/seeds/trust``), for per-area tables."""
        parts = [p for p in self.test.split("/") if p]
        return "/" + "/".join(parts[:2]) if len(parts) > 2 else "/" + "/".join(parts[:1])


def _os_name() -> str:
    """The OS as wpt.fyi names it (``linux``, ``mac``, ``windows``)."""
    name = platform.system().lower()
    return {"darwin": "mac"}.get(name, name)


class RunInfo(BaseModel):
    """What ran: the browser (as wpt.fyi reads it), the backend, the harness, the commits."""

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
    """The commit of the tests that ran (wpt.fyi's ``revision``)."""
    harness_revision: str | None = None
    """The harness's own commit (``None`` outside a git checkout)."""
    os: str = Field(default_factory=_os_name)
    python_version: str = Field(default_factory=platform.python_version)


class Report(BaseModel):
    """One product's run, as a wptreport."""

    run_info: RunInfo
    time_start: int
    time_end: int
    results: list[TestResult] = Field(default_factory=list)

    def counts(self) -> Counter[str]:
        """How many subtests ended in each outcome (tests without subtests count as one)."""
        counts: Counter[str] = Counter()
        for result in self.results:
            if result.subtests:
                counts.update(s.outcome for s in result.subtests)
            else:
                counts[result.outcome] += 1
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


def _git(directory: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(directory), *args],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def git_revision(directory: Path | None = None) -> str | None:
    """The commit of the git checkout at ``directory`` (default: the one the harness runs
    from), when there is one (``None`` otherwise)."""
    here = directory or Path(__file__).resolve().parent
    revision = _git(here, "rev-parse", "HEAD")
    return revision if revision is not None and len(revision) == 40 else None


def tree_revision(root: Path, pattern: str = "**/*") -> str:
    """The commit of ``root`` when it is the top of a git checkout; otherwise a SHA-1 of
    its files (sorted paths and contents), so that a run always names the tests it ran."""
    root = root.resolve()
    top = _git(root, "rev-parse", "--show-toplevel")
    if top is not None and Path(top).resolve() == root:
        commit = git_revision(root)
        if commit is not None:
            return commit
    digest = hashlib.sha1(usedforsecurity=False)
    for path in sorted(p for p in root.glob(pattern) if p.is_file() and ".git" not in p.parts):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


def browser_product(executable: str | Path | None) -> str:
    """The browser as wpt.fyi names it: ``chrome`` for Google's build, else ``chromium``."""
    name = Path(str(executable or "")).name.lower()
    return "chrome" if "chrome" in name and "chromium" not in name else PRODUCT


def run_info(harness: Harness, suite: Suite, **extra: Any) -> RunInfo:
    """What ran, read from a started harness: browser, backend, flags, versions, commits.

    ``revision`` is the tests' commit: a ``wpt`` run passes ``wpt_root`` (its checkout's
    commit, see :func:`tree_revision`); ``ua`` and ``site`` runs test with the harness's
    own suite and rules, so theirs is the harness's commit (or a digest of its
    ``conformance`` package outside a checkout).
    """
    harness_commit = git_revision()
    if suite == "wpt" and "wpt_root" in extra:
        revision = tree_revision(Path(str(extra["wpt_root"])), "webmcp/**/*")
    else:
        revision = harness_commit or tree_revision(Path(__file__).resolve().parent, "**/*.py")
    return RunInfo(
        product=browser_product(harness.executable_path or _found_browser()),
        suite=suite,
        backend=harness.backend,
        browser_version=harness.browser.version,
        flags=harness.launch_args(),
        harness_version=harness_version(),
        revision=revision,
        harness_revision=harness_commit,
        **extra,
    )


def _found_browser() -> str:
    try:
        return str(find_chromium())
    except BrowserNotFound:  # the harness started, so one was found; only its name matters
        return ""


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
            # A report written elsewhere may hold a lone surrogate (JSON can escape one).
            data: Any = well_formed(parse_input(text, "json", f"the previous report {file}"))
            # Strict: a JSON `true` is no timestamp, nor a number a status.
            reports.append(Report.model_validate(data, strict=True))
        except InputSyntaxError as exc:
            raise ConfigError(f"{file}: not a wptreport JSON file ({exc.detail}).") from None
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
