"""``webmcp-harness conformance ua|site|wpt``: conformance runs for CI, with reports.

Exit status: 0 when every result is what the baseline expects; 1 for unexpected results
(a failure, or a pass the baseline did not expect — and, for ``site``, a finding at or
above ``--fail-on`` that the baseline does not list); 2 for usage errors (a bad option, a
baseline or ``--diff`` file that cannot be read, a baseline to update that cannot be
written, a ``--wpt-root`` without ``webmcp/`` or with a part the run reads that cannot
be read); 3 when the harness could not run (no browser, a page that cannot be reached) or
could not write the reports it ran for or ``ua``'s traces (a full disk: the results are
printed, and the message names the file, not "could not run"). A reader of stdout that left
(``| head``) ends the command quietly with 141, as for every command;
``$GITHUB_STEP_SUMMARY`` that cannot be written is a warning only.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.cli.options import (
    ReaderGone,
    UsageError,
    add_settle_options,
    settle_option,
    writable_file,
)
from harness.conformance.escaping import clip, one_line
from harness.elicitation.wording import plain
from harness.errors import (
    BrowserNotFound,
    ConfigError,
    HarnessError,
    NativeWebMCPUnavailable,
    PageUnreachable,
    ReportsNotWritten,
)

if TYPE_CHECKING:  # imported when the command runs: its parser (and --help) loads none of it
    from rich.console import Console
    from rich.progress import Progress

    from harness.conformance.audit import AuditOptions, SiteTarget
    from harness.conformance.baseline import Comparison, Diff
    from harness.conformance.flakes import RunAgain
    from harness.conformance.reports import View, Written
    from harness.conformance.results import Report
    from harness.conformance.ua.framework import Traces
    from harness.models import BackendName
    from harness.qa.fuzz import FuzzOptions
    from harness.qa.snapshot import CatalogSnapshot

EXIT_OK, EXIT_UNEXPECTED, EXIT_USAGE, EXIT_CANNOT_RUN = 0, 1, 2, 3
DEFAULT_OUTPUT = "conformance-reports"
BACKEND_CHOICES = ("polyfill", "native", "both")
# `conformance wpt` runs configurations: native is Chromium's own WebMCP with nothing injected.
WPT_CHOICES = ("native", "native+layer", "polyfill", "both", "all")
WPT_SETS = {"both": ("native", "polyfill"), "all": ("native", "native+layer", "polyfill")}
BUNDLED_PREFIX = "bundled:"


def add_parser(sub: Any) -> None:
    """Register ``conformance`` and its three suites."""
    conformance = sub.add_parser(
        "conformance", help="conformance runs for CI: the user agent, a site, or WPT's webmcp/"
    )
    suites = conformance.add_subparsers(dest="suite", required=True, metavar="SUITE")

    ua = suites.add_parser(
        "ua", help="does this user agent meet the WebMCP spec's and the seeds' MUSTs?"
    )
    ua.add_argument(
        "--traces",
        choices=["off", "on", "retain-on-failure"],
        default="retain-on-failure",
        help="harness traces of each test file's calls in DIR/traces/ (agent view only; "
        "default: kept for files with a failure), linked from the HTML report",
    )
    ua.add_argument(
        "--tests",
        nargs="+",
        default=[],
        metavar="PATH",
        help="only tests whose path starts with one of these (e.g. /seeds/sensitive)",
    )
    _common(ua, backends=BACKEND_CHOICES, default_backend="both")

    site = suites.add_parser("site", help="audit a site's WebMCP tools")
    site.add_argument(
        "urls",
        nargs="+",
        metavar="URL",
        help="pages to audit; bundled:NAME[/path] serves a bundled site (e.g. bundled:todo)",
    )
    site.add_argument(
        "--allow-writes",
        action="store_true",
        help="also probe tools that do not say they are read-only (they will run!)",
    )
    site.add_argument(
        "--fail-on",
        choices=["error", "warning"],
        default="error",
        help="the lowest severity of finding that fails the run (default: error)",
    )
    site.add_argument(
        "--name",
        metavar="NAME",
        help="the site's name, the first segment of its test ids (/NAME/path): what stays the "
        "same between runs (default: 'site'; a bundled site's own name)",
    )
    site.add_argument(
        "--expect-tool",
        action="append",
        default=[],
        metavar="NAME",
        help="a tool every page must offer once its catalog settled (repeatable); a missing "
        "one is an error finding",
    )
    _add_qa_options(site)
    add_settle_options(site)
    _common(site, backends=("polyfill", "native"), default_backend="polyfill")

    wpt = suites.add_parser("wpt", help="run a web-platform-tests checkout's webmcp/ tests")
    wpt.add_argument("--wpt-root", required=True, type=Path, metavar="PATH", help="the checkout")
    wpt.add_argument(
        "--tests", nargs="+", default=[], metavar="PATH", help="only paths starting with these"
    )
    wpt.add_argument(
        "--timeout", type=float, metavar="S", help="per test file (default 10 s; 60 s when long)"
    )
    _common(
        wpt,
        backends=WPT_CHOICES,
        default_backend="both",
        backend_help="which configuration: native (Chromium's own WebMCP, nothing injected), "
        "native+layer (the harness's layer on it), polyfill; both = native and polyfill; "
        "all = the three (default both)",
    )


def _add_qa_options(site: argparse.ArgumentParser) -> None:
    """The QA tools in the audit: ``--fuzz`` and its options, ``--catalog-baseline``."""
    from harness.qa import DEFAULT_EXAMPLES, PROPERTY_NAMES

    site.add_argument(
        "--fuzz",
        action="store_true",
        help="after the probes, test each tool's properties with inputs generated from its "
        "schema (as `webmcp-harness fuzz`; needs the qa extra); a broken property is a "
        "fuzz-<property> error with its reproduction. Only read-only tools unless --allow-writes",
    )
    site.add_argument(
        "--fuzz-property",
        action="append",
        default=[],
        choices=list(PROPERTY_NAMES),
        metavar="NAME",
        help="with --fuzz: only this property; repeat the option for several (--fuzz-property "
        f"no-throw --fuzz-property idempotent): {', '.join(PROPERTY_NAMES)}",
    )
    site.add_argument(
        "--fuzz-examples",
        type=int,
        metavar="N",
        help=f"with --fuzz: inputs per tool and kind of input (default {DEFAULT_EXAMPLES})",
    )
    site.add_argument(
        "--fuzz-seed",
        type=int,
        metavar="S",
        help="with --fuzz: the same inputs every run (else failures found are kept in "
        "Hypothesis's example database, .hypothesis/examples, and tried first next time)",
    )
    site.add_argument(
        "--catalog-baseline",
        action="append",
        default=[],
        type=Path,
        metavar="FILE",
        help="a catalog file (`webmcp-harness snapshot URL --output FILE`) the page must still "
        "match: each change is a catalog-<kind> finding with drift's severity (fail → error, "
        "warn → warning). Once for every URL, or repeated once per URL in the URLs' order "
        "(--catalog-baseline A.json --catalog-baseline B.json)",
    )


def _common(
    parser: argparse.ArgumentParser,
    *,
    backends: Sequence[str],
    default_backend: str,
    backend_help: str | None = None,
) -> None:
    parser.add_argument(
        "--backend",
        choices=list(backends),
        default=default_backend,
        help=backend_help or f"which implementation of WebMCP (default {default_backend})",
    )
    parser.add_argument(
        "--output",
        type=Path,
        metavar="DIR",
        help=f"the report directory (default {DEFAULT_OUTPUT}/<time>-<suite>)",
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        metavar="FILE",
        help="expected results (YAML); ua defaults to the harness's own",
    )
    parser.add_argument(
        "--update-baseline",
        action="store_true",
        help="write this run's results to the baseline (keeping the reasons there)",
    )
    parser.add_argument(
        "--diff",
        type=Path,
        metavar="PREVIOUS",
        help="an earlier run's wptreport JSON (or report directory): list what improved and regressed",
    )
    parser.add_argument(
        "--rerun-failures",
        type=int,
        default=0,
        metavar="N",
        help="rerun each test with an unexpected failure up to N times: a result that passes "
        "on a rerun is reported FLAKY (never a pass; expected only if the baseline lists it as "
        "intermittent), one that fails every time stays a failure",
    )
    parser.add_argument("--no-progress", action="store_true", help="no live progress on stderr")


def run(args: argparse.Namespace, out: Console) -> int:
    """Run the chosen suite, write its reports, compare with the baseline; the exit status."""
    from rich.console import Console

    err = Console(stderr=True, soft_wrap=True)
    try:
        return asyncio.run(_run(args, out, err))
    except ReaderGone:
        raise  # `| head`: the CLI ends the command as a pipeline's writer (141), quietly
    except (ConfigError, UsageError) as exc:
        err.print(f"webmcp-harness: {exc}", markup=False, highlight=False)
        return EXIT_USAGE
    except ReportsNotWritten as exc:
        err.print(f"webmcp-harness: {exc}", markup=False, highlight=False)
        return EXIT_CANNOT_RUN
    # What is left is the run's own: the browser, the pages, the sites' servers (the files
    # the command line names were checked before the run, and are written above).
    except (BrowserNotFound, NativeWebMCPUnavailable, PageUnreachable, OSError) as exc:
        err.print(
            f"webmcp-harness: the harness could not run: {exc}", markup=False, highlight=False
        )
        return EXIT_CANNOT_RUN
    except HarnessError as exc:
        err.print(
            f"webmcp-harness: the harness could not run: {exc}", markup=False, highlight=False
        )
        return EXIT_CANNOT_RUN


def _backends(choice: str) -> list[BackendName]:
    chosen = ["native", "polyfill"] if choice == "both" else [choice]
    return [b for b in ("native", "polyfill") if b in chosen]  # typed, in a fixed order


def _baseline_path(args: argparse.Namespace) -> Path | None:
    """The baseline to compare with; one to update is checked writable now, before the
    run (a :class:`UsageError` otherwise), not found unwritable once the run is done."""
    if args.baseline is not None:
        if args.update_baseline:
            return writable_file(args.baseline, "--baseline")
        if not Path(args.baseline).exists():
            # Without --update-baseline a missing file would silently expect every pass.
            raise ConfigError(
                f"--baseline {args.baseline}: no such file; check the path, or pass "
                "--update-baseline to write one from this run."
            )
        return Path(args.baseline)
    if args.suite == "ua":
        from harness.conformance.ua.suite import BASELINE

        if args.update_baseline:
            return writable_file(BASELINE, "--update-baseline: the ua suite's own baseline")
        return BASELINE
    if args.update_baseline:
        raise ConfigError("--update-baseline needs --baseline FILE (where to write it).")
    return None


async def _run(args: argparse.Namespace, out: Console, err: Console) -> int:
    from harness.conformance.baseline import Baseline, diff
    from harness.conformance.flakes import rerun_failures
    from harness.conformance.reports import build_view
    from harness.conformance.results import load_reports

    baseline_path = _baseline_path(args)
    baseline = Baseline.load(baseline_path) if baseline_path else Baseline()
    previous = load_reports(args.diff) if args.diff else None
    if args.suite == "wpt" and args.timeout is not None and args.timeout <= 0:
        raise ConfigError("--timeout must be a positive number of seconds.")
    if args.rerun_failures < 0:
        raise ConfigError("--rerun-failures must be 0 (no reruns) or a positive number.")
    output = Path(args.output) if args.output else _default_output(args.suite)
    fail_on = getattr(args, "fail_on", None)
    extra: dict[str, Any] = {}
    traces = _traces(args, output)
    with _claimed(output):
        with _progress(err, args.no_progress) as advance:
            if args.suite == "ua":
                reports = await _run_ua(args, advance, traces)
                title = "webmcp-harness conformance: the user agent"
            elif args.suite == "site":
                reports, extra = await _run_site(args, advance)
                title = "webmcp-harness conformance: site audit"
            else:
                reports = await _run_wpt(args, advance)
                title = "webmcp-harness conformance: web-platform-tests webmcp/"
        if args.rerun_failures:
            await rerun_failures(reports, baseline, args.rerun_failures, _run_again(args))
        update: tuple[Path, Comparison] | None = None  # where to, and what it changes
        if args.update_baseline and baseline_path is not None:
            update = baseline_path, baseline.compare(reports)
            baseline = baseline.updated(reports)
        comparison = baseline.compare(reports)
        changed = diff(previous, reports) if previous is not None else None
        view = build_view(title, reports, comparison, baseline, changed, fail_on)
        try:
            written = _write(output, view, extra, update[0] if update else None, traces)
        except ReportsNotWritten as exc:
            _print_summary(out, view, comparison, changed, exc.reports)  # the run's results
            raise
    if written.step_summary_problem is not None:
        err.print(
            f"webmcp-harness: warning: {written.step_summary_problem}; the reports are in "
            f"{written.directory}",
            markup=False,
            highlight=False,
        )
    if update is not None:
        _print_update(out, *update)
    _print_summary(out, view, comparison, changed, written.directory)
    return EXIT_OK if not comparison.unexpected else EXIT_UNEXPECTED


def _traces(args: argparse.Namespace, output: Path) -> Traces | None:
    """Where the ua suite traces each file's calls (``DIR/traces/``), as ``--traces`` says."""
    if args.suite != "ua" or args.traces == "off":
        return None
    from harness.conformance.ua.framework import Traces

    return Traces(output / "traces", args.traces)


def _write(
    output: Path,
    view: View,
    extra: dict[str, Any],
    baseline_to: Path | None,
    traces: Traces | None = None,
) -> Written:
    """The reports, then (``baseline_to``) the view's baseline, updated: both were checked
    writable before the run; should one fail now all the same (a full disk), the reports
    are written first, and a :class:`ReportsNotWritten` says what was not — as it says a
    trace the run could not write (``traces``), once the rest is written."""
    from harness.conformance.reports import write_reports

    try:
        written = write_reports(output, view, extra)
    except OSError as exc:
        where = exc.filename or output
        raise ReportsNotWritten(
            f"cannot write the reports: {where} ({exc.strerror or exc}); make room or fix "
            f"{output}'s permissions, and run again"
        ) from None
    if baseline_to is not None:
        try:
            view.baseline.save(baseline_to)
        except OSError as exc:
            raise ReportsNotWritten(
                f"cannot write the updated baseline {baseline_to} ({exc.strerror or exc}); "
                f"this run's reports are in {written.directory}",
                reports=written.directory,
            ) from None
    if traces is not None and traces.problem is not None:
        raise ReportsNotWritten(
            f"cannot write the traces: {traces.problem}; the run went on without them "
            f"(that file's half-written trace is removed) and the other reports are in "
            f"{written.directory}: make room on the disk (or fix {traces.directory}'s "
            "permissions) and run again, or run with --traces off",
            reports=written.directory,
        )
    return written


REPORT_FILES = ("wptreport-*.json", "junit.xml", "report.html", "summary.md", "findings.json")
"""The report files a run writes: an earlier run's are removed when a run claims the
directory, so that none is left beside this run's reports (a site audit's findings.json
beside a ua run's)."""


@contextlib.contextmanager
def _claimed(output: Path) -> Iterator[None]:
    """The report directory, made and held for this run before anything runs: one that
    cannot be made is a usage error now (not after the run), and one another run holds is
    refused; an earlier run's report files are removed (other files are left alone)."""
    from harness.inputs import hold_directory

    try:
        output.mkdir(parents=True, exist_ok=True)
        if not os.access(output, os.W_OK):
            raise PermissionError(13, "Permission denied")
        held = hold_directory(output)
    except OSError as exc:
        raise ConfigError(
            f"--output {output}: cannot use it as the report directory "
            f"({exc.strerror or exc}); give a directory that can be created and written."
        ) from None
    if held is None:
        raise ConfigError(
            f"--output {output}: another conformance run is writing its reports there; "
            "give each run its own --output."
        )
    try:
        for pattern in REPORT_FILES:
            for old in output.glob(pattern):
                with contextlib.suppress(FileNotFoundError, IsADirectoryError):
                    old.unlink()
        yield
    finally:
        os.close(held)  # the lock goes with it


def _default_output(suite: str) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    base = Path(DEFAULT_OUTPUT) / f"{stamp}-{suite}"
    candidate, n = base, 1
    while candidate.exists():
        n += 1
        candidate = base.with_name(f"{base.name}-{n}")
    return candidate


class _Ticker:
    """Progress for one phase: ``start(label, total)``, then ``tick(test, status)``."""

    def __init__(self, progress: Progress | None) -> None:
        self.progress = progress
        self.task: Any = None

    def start(self, label: str, total: int) -> None:
        if self.progress is not None:
            self.task = self.progress.add_task(label, total=total)

    def tick(self, test: str, status: str) -> None:
        if self.progress is not None and self.task is not None:
            from rich.markup import escape

            # A WPT file name or a URL is not rich markup.
            self.progress.update(
                self.task, advance=1, description=escape(plain(f"{test} {status}"))
            )


@contextlib.contextmanager
def _progress(err: Console, disabled: bool) -> Any:
    if disabled or not err.is_terminal:
        yield lambda: _Ticker(None)
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    progress = Progress(
        TextColumn("[bold]{task.description}", justify="left"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    )
    with progress:
        yield lambda: _Ticker(progress)


async def _run_ua(
    args: argparse.Namespace, ticker: Callable[[], _Ticker], traces: Traces | None
) -> list[Report]:
    from harness.conformance.ua.server import FixtureServer
    from harness.conformance.ua.suite import all_files, run_suite, select, subtest_count

    files = all_files()
    chosen = select(files, args.tests)
    if not chosen:
        raise ConfigError(f"--tests {' '.join(args.tests)}: no test path starts with that.")
    reports = []
    async with FixtureServer(files) as fixtures:
        for backend in _backends(args.backend):
            tick = ticker()
            tick.start(f"ua on {backend}", subtest_count(chosen))
            reports.append(
                await run_suite(
                    backend,
                    chosen,
                    fixtures,
                    progress=tick.tick,
                    traces=traces,
                )
            )
    return reports


@contextlib.asynccontextmanager
async def _site_targets(
    urls: Sequence[str], name: str | None, baselines: Sequence[CatalogSnapshot] = ()
) -> AsyncIterator[list[SiteTarget]]:
    """Serve the bundled sites named by ``bundled:NAME[/path]`` URLs; yields every URL with
    its test id (``/NAME/path``; other URLs belong to the site ``--name``, default ``site``)
    and its catalog baseline (one for every URL, or one each)."""
    from harness.conformance.audit import DEFAULT_SITE, site_targets

    names: dict[str, None] = {}
    for url in urls:
        if url.startswith(BUNDLED_PREFIX):
            names[url[len(BUNDLED_PREFIX) :].split("/", 1)[0]] = None
        elif not url.startswith(("http://", "https://")):
            raise ConfigError(f"{url!r} is not an http(s) URL or bundled:NAME (e.g. bundled:todo).")
    from harness.sites.server import SITES, serve_sites

    unknown = [name for name in names if name not in SITES]
    if unknown:
        raise ConfigError(
            f"no bundled site {', '.join(unknown)}; bundled sites: {', '.join(SITES)}."
        )
    async with serve_sites(list(names)) as sites:
        named = []
        for url in urls:
            if url.startswith(BUNDLED_PREFIX):
                site, _, path = url[len(BUNDLED_PREFIX) :].partition("/")
                named.append((sites.url(site, "/" + path), site))
            else:
                named.append((url, name or DEFAULT_SITE))
        targets = site_targets(named)
        if baselines:
            each = list(baselines) * len(targets) if len(baselines) == 1 else baselines
            targets = [replace(t, catalog_baseline=b) for t, b in zip(targets, each, strict=True)]
        yield targets


def _catalog_baselines(args: argparse.Namespace) -> list[CatalogSnapshot]:
    """The ``--catalog-baseline`` files, read (a :class:`ConfigError` says what is wrong)."""
    from harness.qa.snapshot import read_snapshot

    files = args.catalog_baseline
    if len(files) > 1 and len(files) != len(args.urls):
        raise ConfigError(
            f"{len(files)} --catalog-baseline files for {len(args.urls)} URLs: give one for "
            "every URL, or one per URL in the URLs' order."
        )
    return [read_snapshot(path) for path in files]


async def _run_site(
    args: argparse.Namespace, ticker: Callable[[], _Ticker]
) -> tuple[list[Report], dict[str, Any]]:
    from harness.conformance.audit import audit_report, audit_sites, findings_json

    started = int(time.time() * 1000)
    options = _audit_options(args)
    settle = settle_option(args)
    baselines = _catalog_baselines(args)
    async with _site_targets(args.urls, args.name, baselines) as targets:
        tick = ticker()
        tick.start("site audit", len(targets))
        info, audits = await audit_sites(
            targets, backend=args.backend, options=options, settle=settle, progress=tick.tick
        )
    report = audit_report(info, audits, args.fail_on, started)
    return [report], {"findings.json": findings_json(audits)}


def _audit_options(args: argparse.Namespace) -> AuditOptions:
    from harness.conformance.audit import AuditOptions

    return AuditOptions(
        allow_writes=args.allow_writes,
        wait_for_tools=tuple(args.wait_for_tool),
        expect_tools=tuple(args.expect_tool),
        fuzz=_fuzz_options(args),
    )


def _fuzz_options(args: argparse.Namespace) -> FuzzOptions | None:
    """``--fuzz`` and its options, checked before a browser starts (a :class:`ConfigError`
    otherwise); None without ``--fuzz``."""
    from harness.qa import DEFAULT_EXAMPLES
    from harness.qa.fuzz import FuzzOptions
    from harness.qa.strategies import require_hypothesis

    if not args.fuzz:
        given = [
            flag
            for flag, value in (
                ("--fuzz-property", args.fuzz_property),
                ("--fuzz-examples", args.fuzz_examples),
                ("--fuzz-seed", args.fuzz_seed),
            )
            if value not in (None, [])
        ]
        if given:
            raise ConfigError(f"{', '.join(given)} needs --fuzz (fuzzing is off without it).")
        return None
    require_hypothesis()
    examples = DEFAULT_EXAMPLES if args.fuzz_examples is None else args.fuzz_examples
    if examples < 1:
        raise ConfigError(f"--fuzz-examples must be at least 1, not {examples}.")
    options = FuzzOptions(
        properties=tuple(args.fuzz_property),
        examples=examples,
        allow_writes=args.allow_writes,
        seed=args.fuzz_seed,
    )
    options.check()
    return options


async def _run_wpt(args: argparse.Namespace, ticker: Callable[[], _Ticker]) -> list[Report]:
    from harness.conformance.wpt import discover, run_wpt

    root = Path(args.wpt_root)
    tests = discover(root, args.tests or None)  # a bad root is a usage error, before a browser
    if not tests:
        raise ConfigError(f"{root / 'webmcp'}: no testharness.js tests there (or under --tests).")
    reports = []
    for name in WPT_SETS.get(args.backend, (args.backend,)):
        tick = ticker()
        tick.start(f"wpt on {name}", len(tests))
        reports.append(
            await run_wpt(
                root,
                name,
                include=args.tests or None,
                timeout=args.timeout,
                progress=tick.tick,
            )
        )
    return reports


def _run_again(args: argparse.Namespace) -> RunAgain:
    """How ``--rerun-failures`` runs some of the suite's tests again, on one backend."""

    async def ua(backend: str, tests: list[str]) -> Report:
        from harness.conformance.ua.server import FixtureServer
        from harness.conformance.ua.suite import all_files, run_suite

        files = all_files()
        async with FixtureServer(files) as fixtures:
            chosen = [f for f in files if f.path in tests]
            return await run_suite(_backend(backend), chosen, fixtures)  # a rerun: untraced

    async def site(backend: str, tests: list[str]) -> Report:
        from harness.conformance.audit import audit_report, audit_sites

        started = int(time.time() * 1000)
        baselines = _catalog_baselines(args)
        async with _site_targets(args.urls, args.name, baselines) as targets:
            info, audits = await audit_sites(
                [t for t in targets if t.test in tests],
                backend=_backend(backend),
                options=_audit_options(args),
                settle=settle_option(args),
            )
        return audit_report(info, audits, args.fail_on, started)

    async def wpt(backend: str, tests: list[str]) -> Report:
        from harness.conformance.wpt import run_wpt

        # A wpt report's backend is its configuration's name (native, native+layer, polyfill).
        again = await run_wpt(Path(args.wpt_root), backend, include=tests, timeout=args.timeout)
        again.results = [r for r in again.results if r.test in tests]
        return again

    return {"ua": ua, "site": site, "wpt": wpt}[args.suite]


def _backend(name: str) -> BackendName:
    for backend in ("native", "polyfill"):
        if name == backend:
            return backend
    raise ConfigError(f"cannot rerun tests of the backend {name!r}.")


def _print_update(out: Console, path: Path, changes: Comparison) -> None:
    out.print(f"Baseline written: {path}", markup=False, highlight=False)
    if not changes.unexpected and not changes.stale:
        out.print("  no change: every result was already expected", markup=False)
    for item in changes.unexpected:
        out.print(f"  now expected: {one_line(item.describe())}", markup=False, highlight=False)
    for entry in changes.stale:
        out.print(f"  dropped: {one_line(entry)}", markup=False, highlight=False)


def _print_summary(
    out: Console,
    view: View,
    comparison: Comparison,
    changed: Diff | None,
    directory: Path | None,
) -> None:
    """The results on stdout, ending with the verdict and where the reports are (``None``:
    they could not be written)."""
    for backend in view.backends:
        cell = view.totals.get(backend)
        if cell is not None:
            out.print(
                f"{backend}: {cell.passed}/{cell.total} passed", markup=False, highlight=False
            )
    for item in comparison.unexpected[:30]:
        line = f"unexpected: {clip(one_line(item.describe()), 200)}"
        if item.message:
            line += f" — {clip(one_line(item.message), 160)}"
        out.print(line, markup=False, highlight=False)
    if len(comparison.unexpected) > 30:
        out.print(f"… and {len(comparison.unexpected) - 30} more unexpected results", markup=False)
    if changed is not None:
        counts = ", ".join(f"{len(changes)} {kind}" for kind, changes in changed.groups())
        out.print(f"since the previous run: {counts or 'no change'}", markup=False)
        shown = [change for _, changes in changed.groups() for change in changes][:30]
        for change in shown:
            out.print(f"  {clip(one_line(change.describe()), 200)}", markup=False, highlight=False)
        for backend in changed.absent:
            out.print(
                f"  {one_line(backend)}: not in the previous run (nothing to compare)",
                markup=False,
                highlight=False,
            )
    verdict = (
        "as expected" if not comparison.unexpected else f"{len(comparison.unexpected)} unexpected"
    )
    where = f"reports in {directory}" if directory is not None else "no reports written"
    out.print(f"{verdict}; {where}", markup=False, highlight=False)
