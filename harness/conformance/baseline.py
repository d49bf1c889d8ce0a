"""Expected results: what a run is measured against, and what changed since the last one.

A baseline is a YAML file of the results that are *not* the default (``PASS`` for a subtest,
``OK`` for a test), per backend, each with the reason it is expected::

    polyfill:
      /webmcp/declarative/pseudo-classes.html:
        subtests:
          ":tool-form-active matches the form while a call runs":
            status: FAIL
            reason: "pseudo-classes cannot be polyfilled (the polyfill sets data-tool-form-active)"
            intermittent: [PASS]    # optional: other statuses a known race may give

A result that differs from its expectation is *unexpected* — a failure where a pass was
expected, and just as much a pass where a failure was expected (the baseline is stale: a fix
landed, so update it) — and fails the run. A *flaky* result (it failed, then passed on a
rerun) is expected only when every status it gave is listed (``status`` or
``intermittent``): it is never a pass. ``--update-baseline`` writes the current results,
keeping the reasons already there (a flaky result becomes ``status: PASS, intermittent:
[FAIL]``); ``--diff`` compares with an earlier run's wptreport: regressed, fixed, new, gone.

The file is read like the policy and answers files (:func:`harness.errors.read_input_file`:
size-capped UTF-8, then :func:`harness.inputs.parse_input`: YAML aliases and nesting within limits).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.conformance.results import (
    PASSING,
    Report,
    Subtest,
    SubtestStatus,
    TestResult,
    TestStatus,
    keyed,
)
from harness.errors import ConfigError, read_input_file
from harness.inputs import InputSyntaxError, parse_input

DEFAULT_SUBTEST: SubtestStatus = "PASS"
DEFAULT_TEST: TestStatus = "OK"
SUBTEST: tuple[str, ...] = get_args(SubtestStatus)
"""The statuses a subtest's entry may expect (and list as ``intermittent``)."""
TEST: tuple[str, ...] = get_args(TestStatus)
"""The statuses a test's entry may expect."""
NEW_REASON = "not explained yet: "  # what --update-baseline writes for a new entry
_REASON_LENGTH = 200

HEADER = """\
# Expected results that are not PASS (subtests) or OK (tests), per backend, with the reason.
# A result that differs from this file fails the run: an unexpected failure, or an
# unexpected pass (a fix landed: run again with --update-baseline, which keeps reasons).
"""


class Expected(BaseModel):
    """One expected result and why; ``intermittent`` lists other statuses a known race may
    give (wptrunner's ``known_intermittent``): they are expected too."""

    model_config = ConfigDict(extra="forbid")

    status: SubtestStatus
    reason: str = ""
    intermittent: list[SubtestStatus] = Field(default_factory=list)

    def allows(self, status: str) -> bool:
        """Whether ``status`` is what this entry expects."""
        return status == self.status or status in self.intermittent

    def allows_all(self, statuses: list[str]) -> bool:
        """Whether every status a result gave (first run and reruns) is expected."""
        return all(self.allows(status) for status in statuses)


class TestExpectation(BaseModel):
    """A test's expected harness status (default ``OK``) and its subtests' expectations."""

    model_config = ConfigDict(extra="forbid")

    status: TestStatus = DEFAULT_TEST
    reason: str = ""
    subtests: dict[str, Expected] = Field(default_factory=dict)


def _where(backend: str, test: str, subtest: str | None) -> str:
    return f"[{backend}] {test} › {subtest}" if subtest is not None else f"[{backend}] {test}"


class Unexpected(BaseModel):
    """A result that is not what the baseline expects."""

    backend: str
    test: str
    subtest: str | None = None
    status: str
    expected: str
    message: str | None = None

    @property
    def is_pass(self) -> bool:
        """An unexpected pass: the baseline expected something worse (a flaky result is
        no pass)."""
        return self.status in PASSING

    def describe(self) -> str:
        """One line: ``[native] /a.html › name: FAIL (expected PASS)``."""
        return f"{_where(self.backend, self.test, self.subtest)}: {self.status} (expected {self.expected})"


@dataclass
class Comparison:
    """The results measured against a baseline."""

    unexpected: list[Unexpected] = field(default_factory=list)
    expected_failures: int = 0
    stale: list[str] = field(default_factory=list)
    """Baseline entries no result matched (a renamed or removed subtest)."""

    @property
    def unexpected_passes(self) -> list[Unexpected]:
        """Results better than expected."""
        return [u for u in self.unexpected if u.is_pass]

    @property
    def unexpected_failures(self) -> list[Unexpected]:
        """Results worse than expected."""
        return [u for u in self.unexpected if not u.is_pass]


class Baseline:
    """Expected results per backend; see the module docstring for the file format."""

    def __init__(self, entries: dict[str, dict[str, TestExpectation]] | None = None) -> None:
        self.entries: dict[str, dict[str, TestExpectation]] = entries or {}

    @classmethod
    def load(cls, path: str | Path) -> Baseline:
        """Read a baseline file; a missing file is an empty baseline (everything should pass)."""
        path = Path(path)
        if not path.exists():
            return cls()
        text = read_input_file(path, "the baseline")
        try:
            data: Any = parse_input(text, "yaml", f"the baseline {path}")
        except InputSyntaxError as exc:
            where = f"line {exc.line}: " if exc.line is not None else ""
            raise ConfigError(f"{path}: cannot read the baseline ({where}{exc.detail}).") from None
        if data is None:  # an empty file: nothing expected to fail
            data = {}
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: a baseline maps backend names to tests; fix or delete it.")
        entries: dict[str, dict[str, TestExpectation]] = {}
        for backend, tests in data.items():
            if not isinstance(tests, dict):
                raise ConfigError(f"{path}: {backend!r} must map test paths to expectations.")
            entries[str(backend)] = {}
            for test, value in tests.items():
                try:
                    expectation = TestExpectation.model_validate({} if value is None else value)
                except ValidationError as exc:
                    raise ConfigError(f"{path}: {_invalid(str(backend), str(test), exc)}") from exc
                entries[str(backend)][str(test)] = expectation
        return cls(entries)

    def save(self, path: str | Path) -> None:
        """Write the baseline as YAML (sorted, so that diffs of the file stay small)."""
        data: dict[str, Any] = {}
        for backend in sorted(self.entries):
            tests: dict[str, Any] = {}
            for test in sorted(self.entries[backend]):
                expectation = self.entries[backend][test]
                entry: dict[str, Any] = {}
                if expectation.status != DEFAULT_TEST:
                    entry = {"status": expectation.status, "reason": expectation.reason}
                if expectation.subtests:
                    entry["subtests"] = {
                        name: _entry(expectation.subtests[name])
                        for name in sorted(expectation.subtests)
                    }
                if entry:
                    tests[test] = entry
            if tests:
                data[backend] = tests
        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(HEADER + (text if data else "{}\n"), encoding="utf-8")

    def expectation(self, backend: str, test: str) -> TestExpectation:
        """The expectation of one test (the default one when the baseline does not list it)."""
        return self.entries.get(backend, {}).get(test) or TestExpectation()

    def compare(self, reports: list[Report]) -> Comparison:
        """Measure ``reports`` against the baseline; marks each unexpected result's
        ``expected`` in the reports (wptreport's convention)."""
        comparison = Comparison()
        for report in reports:
            backend = report.run_info.backend
            seen: set[tuple[str, str | None]] = set()
            for result in report.results:
                seen.add((result.test, None))
                expectation = self.expectation(backend, result.test)
                _compare_test(comparison, backend, result, expectation)
                seen.update((result.test, s.name) for s in result.subtests)
            for test, expectation in self.entries.get(backend, {}).items():
                if expectation.status != DEFAULT_TEST and (test, None) not in seen:
                    comparison.stale.append(f"[{backend}] {test}")
                for name in expectation.subtests:
                    if (test, name) not in seen:
                        comparison.stale.append(f"[{backend}] {test} › {name}")
        return comparison

    def updated(self, reports: list[Report]) -> Baseline:
        """A baseline with the results of ``reports`` for their backends (other backends'
        entries stay); the reasons of entries that are still expected are kept."""
        entries = {backend: dict(tests) for backend, tests in self.entries.items()}
        for report in reports:
            backend = report.run_info.backend
            old = self.entries.get(backend, {})
            tests: dict[str, TestExpectation] = {}
            for result in report.results:
                before = old.get(result.test) or TestExpectation()
                expectation = TestExpectation()
                if result.status != DEFAULT_TEST:
                    expectation.status = result.status
                    expectation.reason = _reason(before.reason, result.message)
                named: dict[str, list[Subtest]] = {}
                for subtest in result.subtests:  # one entry serves every subtest of a name
                    named.setdefault(subtest.name, []).append(subtest)
                for name, group in named.items():
                    seen = [status for subtest in group for status in subtest.seen]
                    previous = before.subtests.get(name)
                    if previous is not None and previous.intermittent and previous.allows_all(seen):
                        expectation.subtests[name] = previous  # a known race: keep it
                        continue
                    if all(status == DEFAULT_SUBTEST for status in seen):
                        continue
                    expectation.subtests[name] = _expected(group, previous)
                if expectation.status != DEFAULT_TEST or expectation.subtests:
                    tests[result.test] = expectation
            entries[backend] = tests
        return Baseline(entries)


def _expected(group: list[Subtest], previous: Expected | None) -> Expected:
    """The entry that expects what the subtests of one name gave (one subtest, or several
    that share the name): one status, or — a flaky result, or subtests of one name that
    differ — ``PASS`` (else the first status) with the others as known intermittent ones."""
    first = next((s for s in group if s.status != DEFAULT_SUBTEST), group[0])
    message = first.message
    statuses = [
        cast(SubtestStatus, status)  # reruns of a subtest are subtest statuses
        for status in dict.fromkeys(status for subtest in group for status in subtest.seen)
    ]
    if len(group) > 1:
        message = f"{len(group)} subtests share this name ({', '.join(s.status for s in group)})"
    reason = _reason(previous.reason if previous else "", message)
    if len(statuses) == 1:
        return Expected(status=statuses[0], reason=reason)
    status = DEFAULT_SUBTEST if DEFAULT_SUBTEST in statuses else statuses[0]
    others = [s for s in statuses if s != status]
    return Expected(status=status, reason=reason, intermittent=others)


def _entry(expected: Expected) -> dict[str, Any]:
    entry: dict[str, Any] = {"status": expected.status, "reason": expected.reason}
    if expected.intermittent:
        entry["intermittent"] = list(expected.intermittent)
    return entry


def _invalid(backend: str, test: str, exc: ValidationError) -> str:
    """What is wrong with one test's entry: where, and what it may say instead."""
    error = exc.errors()[0]
    loc = [str(part) for part in error["loc"]]
    if loc[:1] == ["subtests"] and len(loc) > 1:
        where, rest, kind, allowed = _where(backend, test, loc[1]), loc[2:], "subtest", SUBTEST
    else:
        where, rest, kind, allowed = _where(backend, test, None), loc, "test", TEST
    if error["type"] == "literal_error" and rest[:1] in (["status"], ["intermittent"]):
        return (
            f"{where}: {rest[0]} {error['input']!r} is no {kind} status; "
            f"use one of {', '.join(allowed)} (wptreport's statuses)."
        )
    return (
        f"{where}: {'.'.join(rest) or 'the entry'}: {error['msg']}; each test takes status, "
        "reason and subtests: {name: {status, reason, intermittent}}."
    )


def _reason(kept: str, message: str | None) -> str:
    if kept:
        return kept
    first = (message or "no message").strip().splitlines()[0] if message else "no message"
    return NEW_REASON + first[:_REASON_LENGTH]


def _compare_test(
    comparison: Comparison, backend: str, result: TestResult, expectation: TestExpectation
) -> None:
    result.expected = None
    if not all(status == expectation.status for status in result.seen):
        result.expected = expectation.status
        comparison.unexpected.append(
            Unexpected(
                backend=backend,
                test=result.test,
                status=result.outcome,
                expected=expectation.status,
                message=result.message,
            )
        )
    elif result.status != DEFAULT_TEST:
        comparison.expected_failures += 1
    for subtest in result.subtests:
        entry = expectation.subtests.get(subtest.name) or Expected(status=DEFAULT_SUBTEST)
        subtest.expected = None
        if not entry.allows_all(subtest.seen):
            subtest.expected = entry.status
            comparison.unexpected.append(
                Unexpected(
                    backend=backend,
                    test=result.test,
                    subtest=subtest.name,
                    status=subtest.outcome,
                    expected=entry.status,
                    message=subtest.message,
                )
            )
        elif subtest.outcome != DEFAULT_SUBTEST:
            comparison.expected_failures += 1


ChangeKind = Literal["regressed", "fixed", "new", "gone", "changed"]


class Change(BaseModel):
    """One subtest (or test status) that differs from an earlier run."""

    backend: str
    test: str
    subtest: str | None
    before: str | None
    after: str | None
    kind: ChangeKind

    def describe(self) -> str:
        """One line: ``[polyfill] /a.html › name: FAIL → PASS`` (``new, FAIL``;
        ``gone, was PASS``)."""
        where = _where(self.backend, self.test, self.subtest)
        if self.before is None:
            return f"{where}: new, {self.after}"
        if self.after is None:
            return f"{where}: gone, was {self.before}"
        return f"{where}: {self.before} → {self.after}"


@dataclass
class Diff:
    """What changed since an earlier run (``--diff PREVIOUS``)."""

    regressed: list[Change] = field(default_factory=list)
    """Passed before, does not now — or new and not passing."""
    fixed: list[Change] = field(default_factory=list)
    new: list[Change] = field(default_factory=list)
    """Absent before, passing now."""
    gone: list[Change] = field(default_factory=list)
    changed: list[Change] = field(default_factory=list)
    """From one non-passing status to another (FAIL → TIMEOUT)."""
    absent: list[str] = field(default_factory=list)
    """Backends this run has and the earlier one had not: nothing to compare them with."""

    def __bool__(self) -> bool:
        return bool(self.regressed or self.fixed or self.new or self.gone or self.changed)

    def groups(self) -> list[tuple[ChangeKind, list[Change]]]:
        """The non-empty kinds of change, worst first."""
        kinds: list[tuple[ChangeKind, list[Change]]] = [
            ("regressed", self.regressed),
            ("fixed", self.fixed),
            ("new", self.new),
            ("gone", self.gone),
            ("changed", self.changed),
        ]
        return [(kind, changes) for kind, changes in kinds if changes]

    def of(self, backend: str, test: str, subtest: str | None) -> Change | None:
        """The change of one result, if it changed."""
        for _, changes in self.groups():
            for change in changes:
                if (change.backend, change.test, change.subtest) == (backend, test, subtest):
                    return change
        return None


def _statuses(report: Report) -> dict[tuple[str, str | None], str]:
    found: dict[tuple[str, str | None], str] = {}
    for result in report.results:
        # Each result of a repeated name is compared on its own (``name [2]``).
        found.update({(result.test, key): s.outcome for key, s in keyed(result.subtests)})
        if not result.subtests or result.status != DEFAULT_TEST:
            found[(result.test, None)] = result.outcome
    return found


def _kind(before: str | None, after: str | None) -> ChangeKind:
    if before is None:
        return "new" if after in PASSING else "regressed"
    if after is None:
        return "gone"
    if after in PASSING:
        return "fixed"
    return "regressed" if before in PASSING else "changed"


def diff(previous: list[Report], current: list[Report]) -> Diff:
    """Compare two runs subtest by subtest, backend by backend (matched by ``run_info.backend``;
    one report each is compared whatever their backends). A backend the earlier run did not
    have is listed in :attr:`Diff.absent`, not as hundreds of new results."""
    earlier = {report.run_info.backend: _statuses(report) for report in previous}
    result = Diff()
    for report in current:
        backend = report.run_info.backend
        if backend not in earlier and len(previous) == 1 and len(current) == 1:
            before_all = next(iter(earlier.values()))  # one report each: compare them
        elif backend not in earlier:
            result.absent.append(backend)
            continue
        else:
            before_all = earlier[backend]
        after_all = _statuses(report)
        for key in sorted(set(before_all) | set(after_all), key=lambda k: (k[0], k[1] or "")):
            before, after = before_all.get(key), after_all.get(key)
            if before == after:
                continue
            kind = _kind(before, after)
            change = Change(
                backend=backend, test=key[0], subtest=key[1], before=before, after=after, kind=kind
            )
            getattr(result, kind).append(change)
    return result
