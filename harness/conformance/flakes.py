"""``--rerun-failures N``: telling a flaky result from a consistent failure.

After a run, every test with an unexpected failure (a subtest, or its harness status) is run
again, up to N times, until each of its unexpected failures has passed once. Each rerun's
status is kept in the result's ``reruns``, never in place of the first status:

- a failure that passes on a rerun is **flaky** (:attr:`~harness.conformance.results.Subtest.outcome`
  ``FLAKY``): not a pass — it fails the run unless the baseline lists both statuses
  (``status: PASS, intermittent: [FAIL]``, wptrunner's ``known_intermittent``);
- a failure that fails every rerun stays the failure it was, with its reruns listed: a rerun
  never hides a consistent failure.

This module only decides what to rerun and merges what came back; each suite says how to
run a list of its tests again (:data:`RunAgain`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from harness.conformance.baseline import Baseline
from harness.conformance.results import PASSING, Report, Subtest, TestResult, keyed

RunAgain = Callable[[str, list[str]], Awaitable[Report]]
"""How a suite reruns tests: ``(backend, test ids) → a report of those tests``."""


def _still_failing(item: Subtest | TestResult) -> bool:
    """An unexpected failure that no rerun has passed yet."""
    return (
        item.expected is not None
        and item.status not in PASSING
        and not any(status in PASSING for status in item.reruns)
    )


def to_rerun(report: Report, baseline: Baseline) -> list[str]:
    """The tests of ``report`` with an unexpected failure no rerun has passed yet."""
    baseline.compare([report])
    return [
        result.test
        for result in report.results
        if _still_failing(result) or any(_still_failing(s) for s in result.subtests)
    ]


def merge(result: TestResult, again: TestResult) -> None:
    """Record ``again``'s statuses as reruns of ``result``'s failures that have not passed."""
    if _still_failing(result):
        result.reruns.append(again.status)
    # Matched by key, so a rerun of the first of two subtests of one name is its own.
    rerun = dict(keyed(again.subtests))
    for key, subtest in keyed(result.subtests):
        if _still_failing(subtest):
            subtest.reruns.append(rerun[key].status if key in rerun else "NOTRUN")


async def rerun_failures(
    reports: Sequence[Report], baseline: Baseline, times: int, run_again: RunAgain
) -> int:
    """Rerun the unexpected failures of ``reports`` up to ``times`` times, in place;
    returns how many test runs were made."""
    runs = 0
    for report in reports:
        for _ in range(times):
            tests = to_rerun(report, baseline)
            if not tests:
                break
            again = {
                result.test: result
                for result in (await run_again(report.run_info.backend, tests)).results
            }
            runs += len(tests)
            for result in report.results:
                if result.test in again:
                    merge(result, again[result.test])
    return runs
