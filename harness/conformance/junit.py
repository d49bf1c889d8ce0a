"""``junit.xml``: a run's results for CI test views (Jenkins, GitLab, GitHub Actions' test
reporters), derived from the wptreport.

What every common reader accepts, and the rules it holds to (``tests/conformance`` feeds
every report the project writes to junitparser, xunitparser and junit2html, and checks the
Jenkins/Ant schema ``junit-10.xsd`` and GitLab's rules):

- ``<testsuites>`` carries only ``name``, ``tests``, ``failures``, ``errors`` and ``time``
  (``junit-10.xsd`` has no ``skipped`` there: Jenkins' xUnit plugin skips such a file).
- One ``<testsuite>`` per (backend, test). Run properties (browser, versions, commits) are in
  each backend's first suite, named ``<backend>.<key>``: readers that merge every suite's
  properties into one table (xunitparser) need each name once per file.
- One ``<testcase>`` per subtest, with its ``time``: its own where the runner measures it,
  else its test's time shared evenly (testharness.js times files, not subtests). The
  ``classname`` is ``<suite>.<backend>.<path segments>`` with dots in a segment made ``_``:
  Jenkins reads the last dot as the class and the rest as packages, so a file's ``.html`` or
  an IP address must not add packages. Two test ids that would share a classname that way
  (``/a/x.html?v=1.2`` and ``/a/x.html?v=1_2``) each get ``~`` and a digest of the id at its
  end; every other classname stays as it was (CI histories key on them). ``(classname,
  name)`` is unique (GitLab keeps only the first of two cases with one key): the second of
  two subtests of one name is ``name [2]``, as in every report.
- An unexpected result is a ``failure`` (an ``error`` for a timeout or crash; type
  ``UNEXPECTED_PASS`` for a pass the baseline did not expect, ``FLAKY`` for a result that
  passed only on a rerun); an expected one is ``skipped`` with the baseline's reason, so a
  run that went as expected is green.
- Text passes :func:`~harness.conformance.escaping.xml_text` (characters XML 1.0 cannot hold
  become escapes) and is capped (:data:`MAX_DETAIL`), so one page cannot make the file
  ill-formed or push it past GitLab's 30 MB.

Written with the standard library's ElementTree: the format is a handful of elements, and
ElementTree escapes text and attributes correctly.
"""

from __future__ import annotations

import hashlib
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from harness.conformance.baseline import Baseline, TestExpectation
from harness.conformance.escaping import clip, xml_text
from harness.conformance.results import FLAKY, PASSING, Report, Subtest, TestResult, keyed

MAX_MESSAGE = 1000
"""Characters of a failure's ``message`` attribute."""
MAX_DETAIL = 8000
"""Characters of a failure's text (the message, citations, evidence, fix)."""
MAX_NAME = 500
"""Characters of a case's ``name`` (a ``[2]`` added to make it unique comes after)."""
ERROR_STATUSES = frozenset({"TIMEOUT", "ERROR", "CRASH"})
HARNESS_STATUS_CASE = "(harness status)"


def classname(suite: str, backend: str, test: str) -> str:
    """The JUnit ``classname`` of a test: ``ua.polyfill.seeds.sensitive.x-sensitive_html``
    for ``/seeds/sensitive/x-sensitive.html`` (a ``/`` ends a package; a dot inside a
    segment does not)."""
    parts = [part.replace(".", "_") for part in test.split("/") if part]
    return ".".join([suite or "run", backend or "run", *(parts or ["_"])])


def classnames(suite: str, backend: str, tests: list[str]) -> dict[str, str]:
    """The classname of each of one run's ``tests``: :func:`classname`, unless two distinct
    ids would share it — then each of those ends in ``~`` and the start of a SHA-1 of its
    id, the same in every run, so that each keeps its own history."""
    plain: dict[str, set[str]] = defaultdict(set)
    for test in tests:
        plain[classname(suite, backend, test)].add(test)
    names = {test: name for name, ids in plain.items() for test in ids}
    for name, ids in plain.items():
        if len(ids) > 1:
            for test in ids:
                digest = hashlib.sha1(test.encode("utf-8", "surrogatepass")).hexdigest()
                size = 8
                while f"{name}~{digest[:size]}" in plain:  # never another test's plain name
                    size += 4
                names[test] = f"{name}~{digest[:size]}"
    return names


def _unique(name: str, taken: set[str]) -> str:
    """``name``, or ``name [2]``, ``name [3]``… when a case of the class already has it."""
    found, n = name, 1
    while found in taken:
        n += 1
        found = f"{name} [{n}]"
    taken.add(found)
    return found


@dataclass
class _Case:
    name: str
    status: str
    seen: list[str]
    expected: str | None
    detail: str
    seconds: float
    reason: str = ""


def junit_xml(title: str, reports: list[Report], baseline: Baseline) -> str:
    """The JUnit XML text of ``reports`` (after ``baseline.compare`` marked them)."""
    root = ET.Element("testsuites", name=xml_text(title))
    totals: Counter[str] = Counter()
    total_seconds = 0.0
    for report in reports:
        info = report.run_info
        backend = info.backend
        owners = classnames(info.suite, backend, [result.test for result in report.results])
        taken: dict[str, set[str]] = defaultdict(set)
        for index, result in enumerate(report.results):
            suite = ET.SubElement(root, "testsuite", name=xml_text(f"[{backend}] {result.test}"))
            if index == 0:
                properties = ET.SubElement(suite, "properties")
                for key in ("product", "browser_version", "os", "revision", "harness_version"):
                    value = getattr(info, key) or ""
                    ET.SubElement(
                        properties,
                        "property",
                        name=f"{backend}.{key}",
                        value=xml_text(str(value)),
                    )
            counts: Counter[str] = Counter()
            owner = owners[result.test]
            for case in _cases(result, baseline.expectation(backend, result.test)):
                # Unique as written: clipped and escaped names can meet.
                name = _unique(xml_text(clip(case.name, MAX_NAME)), taken[owner])
                _write_case(suite, owner, name, case, counts)
            seconds = result.duration / 1000
            suite.set("tests", str(counts["tests"]))
            suite.set("failures", str(counts["failures"]))
            suite.set("errors", str(counts["errors"]))
            suite.set("skipped", str(counts["skipped"]))
            suite.set("time", f"{seconds:.3f}")
            totals.update(counts)
            total_seconds += seconds
    for key in ("tests", "failures", "errors"):
        root.set(key, str(totals[key]))
    root.set("time", f"{total_seconds:.3f}")
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _cases(result: TestResult, expectation: TestExpectation) -> Iterator[_Case]:
    subtests = result.subtests
    measured = sum(s.duration for s in subtests if s.duration is not None)
    unmeasured = [s for s in subtests if s.duration is None]
    share = max(result.duration - measured, 0) / 1000 / max(len(unmeasured), 1)
    for key, subtest in keyed(subtests):
        entry = expectation.subtests.get(subtest.name)
        yield _Case(
            name=key,
            status=subtest.outcome,
            seen=subtest.seen,
            expected=subtest.expected,
            detail=_detail(subtest),
            seconds=subtest.duration / 1000 if subtest.duration is not None else share,
            reason=entry.reason if entry else "",
        )
    if not subtests or result.expected is not None or result.outcome not in PASSING:
        # The harness status itself (a test without subtests, or one that timed out or
        # crashed): its own case.
        yield _Case(
            name=HARNESS_STATUS_CASE,
            status=result.outcome,
            seen=result.seen,
            expected=result.expected,
            detail=result.message or "",
            seconds=0.0 if subtests else result.duration / 1000,
            reason=expectation.reason,
        )


def _detail(subtest: Subtest) -> str:
    parts = [
        subtest.message or "",
        *(f"cites {cite}" for cite in subtest.cites),
        f"evidence: {subtest.evidence}" if subtest.evidence else "",
        f"fix: {subtest.fix}" if subtest.fix else "",
        f"reruns: {', '.join(subtest.reruns)}" if subtest.reruns else "",
    ]
    return "\n".join(part for part in parts if part)


def _statuses(case: _Case) -> str:
    """``FAIL``; ``FAIL, then PASS on rerun 1`` for a flaky result."""
    if len(case.seen) == 1:
        return case.status
    first, reruns = case.seen[0], case.seen[1:]
    again = ", ".join(f"{s} on rerun {n}" for n, s in enumerate(reruns, 1))
    return f"{first}, then {again}"


def _write_case(
    suite: ET.Element, owner: str, name: str, case: _Case, counts: Counter[str]
) -> None:
    element = ET.SubElement(
        suite,
        "testcase",
        classname=xml_text(owner),
        name=name,
        time=f"{case.seconds:.3f}",
    )
    counts["tests"] += 1
    detail = xml_text(clip(case.detail, MAX_DETAIL))
    if case.expected is not None:
        if case.status in PASSING:
            kind, tag = "UNEXPECTED_PASS", "failure"
            message = (
                f"unexpected {case.status} (the baseline expects {case.expected}): "
                "a fix landed; update the baseline"
            )
        elif case.status == FLAKY:
            kind, tag = FLAKY, "failure"
            message = f"FLAKY: {_statuses(case)} (the baseline expects {case.expected})"
        else:
            kind = case.status
            tag = "error" if case.status in ERROR_STATUSES else "failure"
            message = f"{_statuses(case)} (expected {case.expected})"
        counts["errors" if tag == "error" else "failures"] += 1
        ET.SubElement(element, tag, message=xml_text(clip(message, MAX_MESSAGE)), type=kind)
        element[-1].text = detail
    elif case.status not in PASSING:
        what = "FLAKY (known intermittent)" if case.status == FLAKY else case.status
        message = f"expected {what}: {case.reason or 'in the baseline'}"
        ET.SubElement(element, "skipped", message=xml_text(clip(message, MAX_MESSAGE)))
        element[-1].text = detail
        counts["skipped"] += 1
