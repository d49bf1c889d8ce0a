"""The slow-suite gate: every slow test belongs to a suite, and a suite runs again exactly
when a file it depends on changed since it last passed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests import slow_suites
from tests.slow_suites import ROOT, SUITES, Suite

MARKED = re.compile(r"pytest\.mark\.slow\b")


def test_every_slow_test_belongs_to_a_suite() -> None:
    owned = {ROOT / name for suite in SUITES for name in suite.tests}  # what the gate runs
    marked = {
        path
        for path in (ROOT / "tests").rglob("test_*.py")
        if path.name != "test_slow_suites.py" and MARKED.search(path.read_text(encoding="utf-8"))
    }
    assert marked, "no test is marked slow: the gate would have nothing to guard"
    assert marked <= owned, sorted(str(p.relative_to(ROOT)) for p in marked - owned)
    # README blocks marked slow run in tests/test_readme.py: its suite watches README.md.
    (readme,) = [s for s in SUITES if "tests/test_readme.py" in s.tests]
    assert ROOT / "README.md" in readme.files()


def test_a_suite_runs_again_exactly_when_a_file_it_depends_on_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in slow_suites.COMMON:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("shared\n")
    (tmp_path / "tests" / "test_a.py").write_text("a\n")
    (tmp_path / "src" / "deep").mkdir(parents=True)
    (tmp_path / "src" / "deep" / "x.py").write_text("x = 1\n")
    (tmp_path / "other.py").write_text("y = 1\n")
    monkeypatch.setattr(slow_suites, "ROOT", tmp_path)
    monkeypatch.setattr(slow_suites, "STAMPS", tmp_path / ".ci" / "slow-stamps.json")
    suite = Suite("a", ("tests/test_a.py",), ("src/**/*",))
    other = Suite("b", ("tests/test_a.py",), ("other.py",))

    assert slow_suites.changed((suite, other)) == [suite, other]  # never passed
    slow_suites.stamp([suite, other])
    assert slow_suites.changed((suite, other)) == []
    (tmp_path / "src" / "deep" / "x.py").write_text("x = 2\n")
    assert slow_suites.changed((suite, other)) == [suite]
    slow_suites.stamp([suite])
    (tmp_path / "src" / "deep" / "new.py").write_text("")  # a new file counts too
    (tmp_path / "tests" / "conftest.py").write_text("changed\n")  # shared: both run
    assert slow_suites.changed((suite, other)) == [suite, other]
    # What is stamped is what ran: a file edited during the run leaves the suite due.
    ran_on = {"a": suite.fingerprint()}
    (tmp_path / "src" / "deep" / "x.py").write_text("x = 3\n")
    slow_suites.stamp([suite], ran_on)
    assert suite in slow_suites.changed((suite, other))


def test_a_suite_naming_a_file_that_does_not_exist_is_an_error() -> None:
    with pytest.raises(FileNotFoundError, match=r"tests/test_gone\.py does not exist"):
        Suite("gone", ("tests/test_gone.py",), ()).fingerprint()
