"""The site audit on the bundled sites: every defect the evil site plants is found with its
code; the well-behaved sites give nothing above info; the CLI's exit codes, --fail-on, the
baseline (an unexpected pass fails the run) and --diff."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import yaml
from harness.sites.evil_app import planted
from harness.sites.server import serve_sites

from harness.conformance.audit import AuditOptions, SiteAudit, SiteTarget, audit_sites
from tests.conftest import PageServer, free_port
from tests.console_script import run_script

GOOD = ["todo", "shop", "keys", "mail"]


@pytest.fixture(scope="module")
async def audits() -> AsyncIterator[dict[str, SiteAudit]]:
    async with serve_sites([*GOOD, "evil"]) as sites:
        targets = [SiteTarget(sites.url(name), f"/{name}/") for name in [*GOOD, "evil"]]
        _, found = await audit_sites(targets)
    yield {audit.test.strip("/"): audit for audit in found}


def _above_info(audit: SiteAudit) -> set[tuple[str, str | None]]:
    return {(f.code, f.tool) for f in audit.findings if f.severity != "info"}


@pytest.mark.slow
async def test_every_planted_defect_is_found_with_its_code(audits: dict[str, SiteAudit]) -> None:
    wanted = {(d["code"], d["tool"]) for d in planted()}
    found = _above_info(audits["evil"])
    assert wanted - found == set(), "planted but not found"
    assert found - wanted == set(), "found but not planted (a false positive, or a manifest gap)"


async def test_each_finding_says_how_bad_where_how_to_fix_and_why(
    audits: dict[str, SiteAudit],
) -> None:
    for finding in audits["evil"].findings:
        assert finding.severity in ("error", "warning", "info")
        assert finding.fix and finding.spec and finding.message, finding.code
        assert finding.url.startswith("http://127.0.0.1:")
        assert "HXCANARY" not in finding.model_dump_json()


@pytest.mark.parametrize("site", GOOD)
async def test_the_well_behaved_sites_give_nothing_above_info(
    audits: dict[str, SiteAudit], site: str
) -> None:
    assert _above_info(audits[site]) == set()
    assert len(audits[site].checks) > 20  # the rules ran; they found nothing


async def test_allow_writes_probes_the_keys_sites_deliberately_sloppy_legacy_token() -> None:
    """keys' create_legacy_token is sloppy on purpose (the redemption tests use it); a write,
    so only --allow-writes probes it — and then the audit finds exactly its defects."""
    async with serve_sites(["keys"]) as sites:
        _, [audit] = await audit_sites(
            [SiteTarget(sites.url("keys"), "/keys/")], options=AuditOptions(allow_writes=True)
        )
    assert _above_info(audit) == {
        ("redeem-cross-origin", "create_legacy_token"),
        ("redeem-cacheable", "create_legacy_token"),
        ("redeem-reusable", "create_legacy_token"),
        ("redeem-ttl-too-long", "create_legacy_token"),
    }


# -- the command ---------------------------------------------------------------------------


def _no_canary(directory: Path) -> None:
    for path in directory.iterdir():
        assert "HXCANARY" not in path.read_text(encoding="utf-8"), path.name


@pytest.mark.slow
async def test_the_evil_site_fails_the_run_and_the_baseline_decides_what_is_expected(
    tmp_path: Path,
) -> None:
    first = tmp_path / "first"
    code, out, err = await run_script(
        "conformance", "site", "bundled:evil", "--output", str(first), "--no-progress", timeout=300
    )
    assert code == 1, err
    assert (
        "unexpected: [polyfill] /evil/{index} › consequential-unannotated · transfer_funds" in out
    )
    findings = json.loads((first / "findings.json").read_text(encoding="utf-8"))
    codes = {(f["code"], f["tool"]) for f in findings["sites"][0]["findings"]}
    assert {(d["code"], d["tool"]) for d in planted()} <= codes
    _no_canary(first)

    # Recorded as expected, the same results pass the run.
    baseline = tmp_path / "baseline.yml"
    code, out, err = await run_script(
        "conformance",
        "site",
        "bundled:evil",
        "--baseline",
        str(baseline),
        "--update-baseline",
        "--output",
        str(tmp_path / "second"),
        "--no-progress",
        timeout=300,
    )
    assert code == 0, err + out
    assert "now expected: [polyfill] /evil/{index} › tool-shadowing · transfer_funds" in out

    # A pass the baseline does not expect fails the run as surely as a failure.
    data = yaml.safe_load(baseline.read_text(encoding="utf-8"))
    data["polyfill"]["/evil/{index}"]["subtests"]["description-long · account_summary"] = {
        "status": "FAIL",
        "reason": "pretend it was long",
    }
    baseline.write_text(yaml.safe_dump(data), encoding="utf-8")
    code, out, err = await run_script(
        "conformance",
        "site",
        "bundled:evil",
        "--baseline",
        str(baseline),
        "--fail-on",
        "warning",
        "--diff",
        str(first),
        "--output",
        str(tmp_path / "third"),
        "--no-progress",
        timeout=300,
    )
    assert code == 1, err
    assert (
        "unexpected: [polyfill] /evil/{index} › description-long · account_summary: PASS (expected FAIL)"
        in out
    )
    # --fail-on warning turns the warnings into failures: --diff lists them as regressions.
    assert "regressed" in out and "annotations-not-explicit · update_profile: PASS → FAIL" in out


@pytest.mark.slow
async def test_fail_on_sets_the_threshold(page_server: PageServer, tmp_path: Path) -> None:
    url = page_server.url("audit_warnings.html")
    code, out, _ = await run_script(
        "conformance", "site", url, "--output", str(tmp_path / "a"), "--no-progress", timeout=120
    )
    assert code == 0 and "as expected" in out
    code, out, _ = await run_script(
        "conformance",
        "site",
        url,
        "--fail-on",
        "warning",
        "--output",
        str(tmp_path / "b"),
        "--no-progress",
        timeout=120,
    )
    assert code == 1 and "annotations-not-explicit · rename_list: FAIL" in out


@pytest.mark.slow
async def test_the_harness_that_cannot_run_exits_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, _, err = await run_script(
        "conformance",
        "site",
        f"http://127.0.0.1:{free_port()}/",
        "--output",
        str(tmp_path / "a"),
        "--no-progress",
        timeout=120,
    )
    assert code == 3 and "could not run" in err and "Traceback" not in err
    monkeypatch.setenv("WEBMCP_CHROMIUM", "/nonexistent/chromium")
    code, _, err = await run_script(
        "conformance", "site", "bundled:todo", "--output", str(tmp_path / "b"), "--no-progress"
    )
    assert code == 3 and "WEBMCP_CHROMIUM" in err


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "why"),
    [
        (["site", "ftp://example.com/"], "is not an http(s) URL"),
        (["site", "bundled:nosuch"], "no bundled site nosuch"),
        (["site", "bundled:todo", "--update-baseline"], "--update-baseline needs --baseline"),
        (["site", "bundled:todo", "--diff", "/nonexistent.json"], "no wptreport here"),
        (["site", "bundled:todo", "--fail-on", "never"], "invalid choice"),
        (["wpt", "--wpt-root", "/nonexistent"], "sparse-checkout set webmcp resources common"),
        (["site", "bundled:todo", "--rerun-failures", "-1"], "--rerun-failures must be 0"),
        (["site", "http://127.0.0.1:9/", "--name", "a b"], "a site name is"),
        (["site", "bundled:todo", "--settle", "-5"], "--settle must be 0"),
        (["ua", "--tests", "/nothing/here"], "no test path starts with that"),
    ],
)
async def test_usage_errors_exit_2_with_one_clear_line(args: list[str], why: str) -> None:
    code, _, err = await run_script("conformance", *args, "--no-progress")
    assert code == 2 and why in err and "Traceback" not in err
