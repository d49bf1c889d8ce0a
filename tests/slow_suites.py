"""The slow scenario suites, and the gate that runs them when what they exercise changed.

``make test`` runs every test not marked ``slow`` (``pytest -m 'not slow'``), then this gate:
each suite below names its test files (their ``slow`` tests) and the sources it exercises;
``.ci/slow-stamps.json`` holds, per suite, a fingerprint of those files as they were when the
suite last passed. A suite whose fingerprint differs (a source, a test or the shared test
fixtures changed since) runs again; when every suite run passes, their new fingerprints are
written. So a fresh clone whose slow suites passed on exactly its files runs none of them,
and a change to, say, ``harness/selftest/`` runs the selftest's scenarios in CI.

    python -m tests.slow_suites            # run the suites that changed (make test)
    python -m tests.slow_suites --all      # run every slow test, then stamp (make slow)
    python -m tests.slow_suites --check    # list what would run; exit 1 if any would

Every ``slow`` test must belong to a suite (``tests/test_slow_suites.py`` checks it).
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import subprocess
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STAMPS = ROOT / ".ci" / "slow-stamps.json"

# Every suite depends on these too: the shared fixtures, the dependencies' pins, the Makefile.
COMMON = ("tests/conftest.py", "tests/console_script.py", "pyproject.toml", "Makefile")


@functools.cache  # one `git ls-files` per checkout per run, not one per suite and use
def _tracked(root: Path) -> frozenset[str] | None:
    try:
        listing = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z"], capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return frozenset(listing.decode().split("\0")) - {""}


@dataclass(frozen=True)
class Suite:
    """Slow tests (the ``slow``-marked tests of ``tests``) and the files they exercise."""

    name: str
    tests: tuple[str, ...]
    sources: tuple[str, ...]

    def files(self) -> list[Path]:
        """The files the suite depends on: those git tracks (what a clone has), or every
        file that matches outside a git checkout."""
        tracked = _tracked(ROOT)
        found: set[Path] = set()
        for pattern in (*COMMON, *self.tests, *self.sources):
            matches = [
                p
                for p in ROOT.glob(pattern)
                if p.is_file() and (tracked is None or p.relative_to(ROOT).as_posix() in tracked)
            ]
            if not matches and not any(c in pattern for c in "*?["):
                raise FileNotFoundError(
                    f"slow suite {self.name!r}: {pattern} does not exist (or git does not track it)"
                )
            found.update(p for p in matches if "__pycache__" not in p.parts)
        return sorted(found)

    def fingerprint(self) -> str:
        digest = hashlib.sha256()
        for path in self.files():
            digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())
        return digest.hexdigest()


BROWSER = (
    *("harness/browser/**/*", "injected_js/**/*", "harness/urls.py"),
    *("harness/session.py", "harness/catalog.py"),
)
PIPELINE = (
    "harness/stages/**/*",
    "harness/schemas/**/*",
    "harness/pipeline.py",
    "harness/harness.py",
)

SUITES = (
    Suite(
        "selftest",
        (
            "tests/selftest/test_selftest_cli.py",
            "tests/selftest/test_soak.py",
            "tests/selftest/test_load.py",
            "tests/selftest/test_faults.py",
            "tests/selftest/test_inputs.py",
        ),
        ("harness/selftest/**/*", "harness/cli/selftest.py", *BROWSER, *PIPELINE),
    ),
    Suite(
        "experiments",
        (
            "tests/experiments/test_runners.py",
            "tests/experiments/test_shared_sites.py",
            "tests/experiments/test_ray_cluster.py",
            "tests/experiments/test_agentdojo_fidelity.py",
            "tests/experiments/test_agentdojo_llm.py",
            "tests/experiments/test_llm_episodes.py",
            "tests/experiments/test_attack_suite.py",
            "tests/experiments/studies.py",
            "examples/experiments/**/*",
        ),
        (
            "harness/experiments/**/*",
            "harness/agents/**/*",
            "harness/sites/**/*",
            *BROWSER,
            *PIPELINE,
        ),
    ),
    Suite(
        "conformance",
        (
            "tests/conformance/test_wpt.py",
            "tests/conformance/test_ua_suite.py",
            "tests/conformance/test_audit.py",
            "tests/conformance/test_audit_pages.py",
            "tests/conformance/test_audit_qa.py",
            "tests/conformance/test_flakes.py",
            "tests/conformance/test_report_outputs.py",
            "tests/conformance/wpt/**/*",
        ),
        ("harness/conformance/**/*", "harness/qa/**/*", *BROWSER, *PIPELINE),
    ),
    Suite(
        "mcp-conformance",
        ("tests/mcp/test_conformance.py",),
        ("harness/mcp/**/*", "conformance/run.py", "conformance/package-lock.json"),
    ),
    # The suite's own limits and its report of Chromium's fault: pytest runs of their own
    # against the shared fixtures (COMMON) and the native backend's warning they read.
    Suite(
        "suite-limits",
        ("tests/test_suite_limits.py", "tests/test_chromium_fault.py"),
        ("harness/browser/backends/native.py",),
    ),
    Suite(
        "install-and-examples",
        ("tests/test_fresh_install.py", "tests/test_examples.py", "examples/**/*"),
        ("harness/testing/**/*", "harness/pytest_plugin.py", "harness/__init__.py"),
    ),
    Suite(
        "front-ends",
        (
            "tests/test_readme.py",
            "tests/cli/test_demo.py",
            "tests/bench/test_bench.py",
            "tests/testing/test_pytest_qa.py",
            "tests/testing/test_pytest_plugin.py",
            "tests/cli/test_cli.py",
            "tests/cli/test_cli_contract.py",
            "tests/cli/test_cli_hints.py",
            "tests/cli/test_cli_terminal.py",
            "tests/cli/test_qa_cli.py",
            "tests/cli/test_experiment_cli.py",
            "tests/cli/test_cli_interrupt.py",
            "tests/test_shop_site.py",
            "tests/agents/test_llm_agents.py",
            "tests/agents/test_agents_replay.py",
        ),
        (
            "README.md",
            "harness/pytest_plugin.py",
            "harness/agent_view.py",
            "harness/errors.py",
            "harness/inputs.py",
            "harness/mcp/**/*",
            "harness/sites/**/*",
            "harness/cli/**/*",
            "harness/bench/**/*",
            "harness/qa/**/*",
            "harness/testing/**/*",
            "harness/experiments/**/*",
            "harness/conformance/**/*",
            "harness/agents/**/*",
            *BROWSER,  # the README's blocks and the commands drive pages through both
            *PIPELINE,
        ),
    ),
)


def load_stamps() -> dict[str, dict[str, str]]:
    if not STAMPS.is_file():
        return {}
    return dict(json.loads(STAMPS.read_text(encoding="utf-8")))


def changed(
    suites: tuple[Suite, ...] = SUITES, fingerprints: dict[str, str] | None = None
) -> list[Suite]:
    """The suites whose fingerprint (``fingerprints``, or taken now) is not their stamp's."""
    stamps = load_stamps()
    now = fingerprints or {s.name: s.fingerprint() for s in suites}
    return [s for s in suites if stamps.get(s.name, {}).get("fingerprint") != now[s.name]]


def stamp(suites: list[Suite], fingerprints: dict[str, str] | None = None) -> None:
    """Record ``suites`` as green on ``fingerprints`` (taken before their run, so a file
    edited while it ran is not stamped as passed), or on the files as they are now."""
    stamps = load_stamps()
    when = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    for suite in suites:
        fingerprint = (fingerprints or {}).get(suite.name) or suite.fingerprint()
        stamps[suite.name] = {"fingerprint": fingerprint, "passed": when}
    STAMPS.parent.mkdir(exist_ok=True)
    STAMPS.write_text(json.dumps(stamps, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def run(suites: list[Suite], workers: int) -> int:
    files = sorted(
        {
            pattern
            for s in suites
            for pattern in s.tests
            if pattern.startswith("tests/") and Path(pattern).name.startswith("test_")
        }
    )
    command = [sys.executable, "-m", "pytest", "-m", "slow", "-n", str(workers), *files]
    print("running:", " ".join(command[1:]), flush=True)
    code = subprocess.call(command, cwd=ROOT)
    return 0 if code == 5 else code  # 5: these files hold no slow test (nothing to fail)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.slow_suites",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--all", action="store_true", help="run every suite, changed or not")
    parser.add_argument("--check", action="store_true", help="only list what would run")
    parser.add_argument("-n", "--workers", type=int, default=2, help="pytest-xdist workers")
    args = parser.parse_args(argv)
    stamps = load_stamps()
    # Taken once, before any suite runs: what is due, and what a green run is stamped on.
    before = {suite.name: suite.fingerprint() for suite in SUITES}
    due = list(SUITES) if args.all else changed(SUITES, before)
    for suite in SUITES:
        passed = stamps.get(suite.name, {}).get("passed", "never")
        state = "runs" if suite in due else "unchanged"
        print(f"slow suite {suite.name:<22} {state:<10} (last passed on these files: {passed})")
    if not due:
        print("no slow suite changed since it last passed; `make slow` runs them all")
        return 0
    if args.check:
        return 1
    code = run(due, args.workers)
    if code == 0:
        stamp(due, before)
        print(f"stamped {', '.join(s.name for s in due)} in {STAMPS.relative_to(ROOT)}")
    return code


if __name__ == "__main__":
    sys.exit(main())
