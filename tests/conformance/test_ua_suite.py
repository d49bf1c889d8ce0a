"""The user-agent suite: its shape (≥ 150 subtests, each citing its source; every MUST of the
seeds cited), a representative file of every area on both backends against the bundled
baseline, and how the runner reports what goes wrong (FAIL, TIMEOUT, ERROR/NOTRUN, CRASH).

The whole suite on both backends is ``make reports`` (it regenerates the committed reference
run in ``reports/`` and fails on any unexpected result); here one file per area runs.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import yaml

from harness.conformance.baseline import Baseline
from harness.conformance.reports import build_view, write_reports
from harness.conformance.results import Report
from harness.conformance.ua.framework import (
    SessionSetup,
    TestContext,
    TestFile,
    check,
    run_file,
    spec,
)
from harness.conformance.ua.requirements import REQUIREMENTS
from harness.conformance.ua.server import FixtureServer
from harness.conformance.ua.suite import AREAS, BASELINE, all_files, run_suite
from harness.harness import Harness
from tests.console_script import run_script

REPRESENTATIVE = [
    "/webmcp/imperative/register-tool.html",
    "/webmcp/declarative/forms.html",
    "/seeds/sensitive/x-sensitive.html",
    "/seeds/trust/request-annotations.html",
    "/seeds/declarative-draft/invocation.html",
    "/seeds/elicitation/tool-elicit.html",
    "/seeds/script-tools/security.html",
]


def _seeds_dir() -> Path | None:
    here = Path(__file__).resolve()
    # $WEBMCP_SEEDS, or shared/seeds beside the checkout (or beside the folder of worktrees).
    for candidate in (
        os.environ.get("WEBMCP_SEEDS"),
        *(p / "shared" / "seeds" for p in here.parents[2:5]),
    ):
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    return None


# -- the suite's shape ---------------------------------------------------------------------


def test_at_least_150_subtests_each_citing_its_source() -> None:
    files = all_files()
    subtests = [s for f in files for s in f.subtests]
    assert len(subtests) >= 150
    for file in files:
        names = [s.name for s in file.subtests]
        assert len(names) == len(set(names)), file.path
        for subtest in file.subtests:
            assert subtest.cites, f"{file.path} › {subtest.name}"
            for cite in subtest.cites:
                assert cite.source and cite.quote, f"{file.path} › {subtest.name}"


def test_the_tests_are_laid_out_like_web_platform_tests() -> None:
    areas = {"/".join(f.path.split("/")[:3]) for f in all_files()}
    assert areas == {
        "/webmcp/imperative",
        "/webmcp/declarative",
        "/seeds/sensitive",
        "/seeds/trust",
        "/seeds/declarative-draft",
        "/seeds/elicitation",
        "/seeds/script-tools",
    }
    assert len(AREAS) == len(areas)
    assert all(f.path.endswith(".html") for f in all_files())


def test_every_must_of_the_seeds_is_cited_by_a_subtest() -> None:
    cited = {c.requirement for f in all_files() for s in f.subtests for c in s.cites}
    assert set(REQUIREMENTS) - cited == set()


def _normalized(text: str) -> str:
    text = text.replace("**", "").replace("`", "").replace("’", "'").replace("“", '"')
    return " ".join(text.replace("”", '"').split())


def test_every_must_sentence_is_in_the_requirements_and_every_quote_in_its_seed() -> None:
    seeds = _seeds_dir()
    if seeds is None:
        pytest.skip(
            "the seeds (shared/seeds beside the project, or $WEBMCP_SEEDS) are not on this machine"
        )
    texts = {
        path.name[:3]: _normalized(path.read_text(encoding="utf-8"))
        for path in seeds.glob("0*.txt")
    }
    for requirement in REQUIREMENTS.values():
        text = texts[requirement.seed]
        position = 0
        for part in _normalized(requirement.quote).split("…"):
            found = text.find(part.strip(), position)
            assert found >= 0, (
                f"{requirement.id}: {part.strip()!r} is not in seed {requirement.seed}"
            )
            position = found
    # Every upper-case MUST sentence of the seeds is one of the requirements.
    quoted = " ".join(_normalized(r.quote) for r in REQUIREMENTS.values())
    for seed, text in texts.items():
        for sentence in re.findall(r"[^.:]*\bMUST\b[^.:]*", text):
            if (
                "MUST requirements" in sentence
                or "a MUST for" in sentence
                or "strict MUST" in sentence
            ):
                continue  # sentences about MUSTs (the SEP's note, the draft's open questions)
            core = sentence.strip().split(" MUST", 1)[1][:20]
            assert core.strip() in quoted, f"seed {seed}: {sentence.strip()!r} is not cited"


# -- a representative file of every area, on both backends ---------------------------------------


@pytest.fixture(scope="module")
async def fixtures() -> AsyncIterator[FixtureServer]:
    async with FixtureServer(all_files()) as server:
        yield server


@pytest.fixture(scope="module")
async def representative(fixtures: FixtureServer) -> list[Report]:
    files = [f for f in all_files() if f.path in REPRESENTATIVE]
    assert len(files) == len(REPRESENTATIVE)
    return [await run_suite(backend, files, fixtures) for backend in ("native", "polyfill")]


@pytest.mark.slow
@pytest.mark.timeout(900)  # about 90 subtests per backend, on a machine that may be busy
async def test_a_file_of_every_area_on_both_backends_is_what_the_baseline_expects(
    representative: list[Report],
) -> None:
    comparison = Baseline.load(BASELINE).compare(representative)
    assert [u.describe() + f" — {u.message}" for u in comparison.unexpected] == []
    for report in representative:
        assert sorted(r.test for r in report.results) == sorted(REPRESENTATIVE)
        assert report.run_info.browser_version and report.run_info.flags
    native = {s.name: s.status for r in representative[0].results for s in r.subtests}
    polyfill = {s.name: s.status for r in representative[1].results for s in r.subtests}
    # The pattern the README explains: pseudo-classes and trusted events are native-only.
    assert native[":tool-form-active matches the form while its call runs"] == "PASS"
    assert polyfill[":tool-form-active matches the form while its call runs"] == "FAIL"
    assert native["toolparamtitle becomes the parameter's title"] == "FAIL"
    assert polyfill["toolparamtitle becomes the parameter's title"] == "PASS"
    # The seeds' semantics are the harness's, layered on both backends alike.
    assert native["an x-sensitive field never reaches the agent"] == "PASS"
    assert polyfill["an x-sensitive field never reaches the agent"] == "PASS"


@pytest.mark.slow
@pytest.mark.timeout(900)
async def test_the_reports_of_a_run_carry_no_fixture_secret(
    representative: list[Report], fixtures: FixtureServer, tmp_path: Path
) -> None:
    baseline = Baseline.load(BASELINE)
    view = build_view("ua", representative, baseline.compare(representative), baseline)
    write_reports(tmp_path, view)
    assert fixtures.secrets, "the fixtures made no secrets: the check would prove nothing"
    for path in tmp_path.iterdir():
        text = path.read_text(encoding="utf-8")
        assert "HXCANARY" not in text, path.name
        for value in fixtures.secrets.values():
            assert value not in text, path.name


# -- how the runner reports what goes wrong ------------------------------------------------------

BROKEN = TestFile("/broken.html", "blank.html", "what goes wrong", setup=SessionSetup())


@BROKEN.subtest("a passing check", spec("—", "—"))
async def _(t: TestContext) -> None:
    check(await t.js("1 + 1") == 2, "arithmetic")


@BROKEN.subtest("a failing check", spec("—", "—"))
async def _(t: TestContext) -> None:
    check(False, "the reason it failed")


@BROKEN.subtest("an exception", spec("—", "—"))
async def _(t: TestContext) -> None:
    await t.js("() => { throw new TypeError('from the page'); }")


@BROKEN.subtest("past its time", spec("—", "—"), timeout=0.5)
async def _(t: TestContext) -> None:
    await asyncio.sleep(5)


@BROKEN.subtest("the renderer crashes", spec("—", "—"))
async def _(t: TestContext) -> None:
    await t.js(
        "() => setTimeout(() => { const a = []; while (true) a.push(new Array(1e5).fill(Math.random())); })"
    )
    await asyncio.sleep(10)


@BROKEN.subtest("after the crash, on a fresh page", spec("—", "—"))
async def _(t: TestContext) -> None:
    check(await t.js("document.title") == "A page with no tools", "the fixture page is back")


class _Fixtures(FixtureServer):
    def url(self, path: str, origin: int = 0) -> str:
        return super().url("/pages/blank.html" if path == "/broken.html" else path, origin)


async def test_fail_timeout_and_crash_are_reported_and_the_next_subtest_runs(
    tmp_path: Path,
) -> None:
    # A small V8 heap makes the page's runaway allocation crash the renderer at once.
    async with (
        _Fixtures([BROKEN]) as fixtures,
        Harness(launch_args=["--js-flags=--max-old-space-size=32"]) as harness,
    ):
        result = await run_file(harness, BROKEN, fixtures)
    statuses = {s.name: (s.status, s.message) for s in result.subtests}
    assert statuses["a passing check"] == ("PASS", None)
    assert statuses["a failing check"] == ("FAIL", "the reason it failed")
    assert statuses["an exception"][0] == "FAIL" and "from the page" in (
        statuses["an exception"][1] or ""
    )
    assert statuses["past its time"] == ("TIMEOUT", "no verdict within 0.5 s")
    assert statuses["the renderer crashes"] == ("FAIL", "the renderer crashed during this subtest")
    assert statuses["after the crash, on a fresh page"] == ("PASS", None)
    assert result.status == "CRASH" and "the renderer crashes" in (result.message or "")


async def test_a_fixture_that_cannot_open_is_an_error_and_its_subtests_notrun() -> None:
    missing = TestFile("/missing.html", "no_such_page.html", "missing", ready=None)

    @missing.subtest("never runs", spec("—", "—"))
    async def _(t: TestContext) -> None:
        raise AssertionError("ran")

    async with FixtureServer([missing]) as fixtures, Harness() as harness:
        result = await run_file(harness, missing, fixtures)
    assert result.status == "ERROR" and "cannot open the fixture" in (result.message or "")
    assert [(s.name, s.status) for s in result.subtests] == [("never runs", "NOTRUN")]


# -- the command ---------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.timeout(600)
async def test_the_command_follows_the_baseline_and_an_unexpected_pass_fails_it(
    tmp_path: Path,
) -> None:
    args = [
        "conformance",
        "ua",
        "--backend",
        "polyfill",
        "--tests",
        "/seeds/script-tools/security",
        "--no-progress",
    ]
    code, out, err = await run_script(*args, "--output", str(tmp_path / "a"), timeout=300)
    assert code == 0, out + err
    assert "polyfill: 7/7 passed" in out and "as expected" in out
    assert not (tmp_path / "a" / "traces").exists()  # retain-on-failure: nothing failed
    # Expect a failure where the harness passes: the run fails on the unexpected pass.
    data = yaml.safe_load(BASELINE.read_text(encoding="utf-8"))
    security = data.setdefault("polyfill", {}).setdefault("/seeds/script-tools/security.html", {})
    security.setdefault("subtests", {})["a result's text reaches the agent as untrusted data"] = {
        "status": "FAIL",
        "reason": "pretend",
    }
    edited = tmp_path / "baseline.yml"
    edited.write_text(yaml.safe_dump(data), encoding="utf-8")
    code, out, _ = await run_script(
        *args,
        "--baseline",
        str(edited),
        "--traces",
        "on",
        "--output",
        str(tmp_path / "b"),
        timeout=300,
    )
    assert code == 1
    assert "a result's text reaches the agent as untrusted data: PASS (expected FAIL)" in out
    report_dir = tmp_path / "b"
    assert {p.name for p in report_dir.iterdir()} == {
        "wptreport-polyfill.json",
        "junit.xml",
        "report.html",
        "summary.md",
        "traces",
    }
    # With --traces on, the file keeps its harness trace (the agent view of its calls), linked
    # from the HTML report and readable by `trace show`.
    trace = "traces/polyfill/seeds/script-tools/security/trace.jsonl"
    assert (report_dir / trace).is_file()
    assert f'href="{trace}"' in (report_dir / "report.html").read_text(encoding="utf-8")
    code, shown, err = await run_script("trace", "show", str((report_dir / trace).parent))
    assert code == 0 and "precondition" in shown, err
