"""The QA commands: ``fuzz``, ``snapshot``, ``diff`` and ``doctor`` (see :mod:`harness.qa`).

Exit status, for CI to gate on: 0 when every property held / no change reaches
``--fail-on`` / the doctor found nothing wrong; 1 when a property failed / a change
reaches ``--fail-on`` / the doctor found a problem (a missing browser is one: finding it is
the doctor's job); 2 for usage errors (a bad option, a catalog file that cannot be read);
3 when the harness could not run (no browser, no native WebMCP, a page that cannot be
reached — the doctor's URL too).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from harness.cli.options import (
    HTML_SUFFIXES,
    URL_HELP,
    UsageError,
    add_page_options,
    error_code,
    page_url,
    report_error,
    settle_option,
)
from harness.errors import (
    BrowserNotFound,
    ConfigError,
    NativeWebMCPUnavailable,
    PageUnreachable,
    UnknownTool,
    file_in_the_way,
)

if TYPE_CHECKING:
    from rich.console import Console

    from harness.catalog import Settle
    from harness.qa.drift import Severity
    from harness.qa.fuzz import FuzzOptions, FuzzReport
    from harness.qa.snapshot import CatalogSnapshot

EXIT_OK, EXIT_FOUND, EXIT_USAGE, EXIT_CANNOT_RUN = 0, 1, 2, 3
SEVERITY_CHOICES = ("fail", "warn", "info", "never")


def add_fuzz_parser(sub: Any) -> None:
    """``fuzz URL``: property-based tests of a page's tools."""
    from harness.qa import DEFAULT_DATABASE, DEFAULT_EXAMPLES, PROPERTY_NAMES

    fuzz = sub.add_parser(
        "fuzz",
        help="test a page's tools with inputs generated from their schemas (exit 1 when a "
        "property fails)",
    )
    fuzz.add_argument("url", type=page_url, help=URL_HELP)
    fuzz.add_argument(
        "--tool", action="append", default=[], metavar="NAME", help="only this tool (repeatable)"
    )
    fuzz.add_argument(
        "--property",
        action="append",
        default=[],
        choices=list(PROPERTY_NAMES),
        metavar="NAME",
        help=f"only this property (repeatable): {', '.join(PROPERTY_NAMES)}",
    )
    fuzz.add_argument(
        "--examples",
        type=int,
        default=DEFAULT_EXAMPLES,
        metavar="N",
        help=f"inputs per tool and kind of input (default {DEFAULT_EXAMPLES})",
    )
    fuzz.add_argument(
        "--allow-writes",
        action="store_true",
        help="also call tools not declared readOnlyHint, and let them write to the page's own "
        "origin (a state-changing request elsewhere is always blocked)",
    )
    fuzz.add_argument(
        "--seed", type=int, metavar="S", help="the same inputs every run (no example database)"
    )
    fuzz.add_argument(
        "--example",
        metavar="JSON",
        help="check this one input instead of searching (what a reproduction runs)",
    )
    fuzz.add_argument(
        "--database",
        default=str(DEFAULT_DATABASE),
        metavar="DIR|none",
        help="Hypothesis's example database: failures found are kept there and tried first "
        f"next time (default {DEFAULT_DATABASE}, Hypothesis's own)",
    )
    fuzz.add_argument(
        "--timeout", type=float, default=10.0, metavar="S", help="seconds a call may take"
    )
    add_page_options(fuzz)


def add_snapshot_parser(sub: Any) -> None:
    """``snapshot URL``: the catalog as a reviewable file."""
    snapshot = sub.add_parser(
        "snapshot", help="write a page's catalog as a stable file to review and diff"
    )
    snapshot.add_argument("url", type=page_url, help=URL_HELP)
    snapshot.add_argument(
        "--output", metavar="FILE", help="where to write it (default: standard output)"
    )
    add_page_options(snapshot, json_output=False)


def add_diff_parser(sub: Any) -> None:
    """``diff OLD NEW``: what changed between two catalogs."""
    diff = sub.add_parser(
        "diff",
        help="what changed between two catalogs, with severities CI can gate on",
    )
    diff.add_argument("old", metavar="OLD", type=catalog_source, help=CATALOG_HELP)
    diff.add_argument("new", metavar="NEW", type=catalog_source, help=CATALOG_HELP)
    diff.add_argument(
        "--fail-on",
        choices=SEVERITY_CHOICES,
        default="fail",
        help="exit 1 when a change is at least this severe (default: fail; never: always 0)",
    )
    add_page_options(diff)


CATALOG_HELP = (
    "a catalog file, or a page to snapshot now: a URL (http://…, file://…) or the path of "
    "an HTML file"
)


class CatalogSource(NamedTuple):
    """One side of ``diff``: a catalog file, or a page (its URL) to snapshot now."""

    text: str
    page: str | None = None


def catalog_source(text: str) -> CatalogSource:
    """``diff``'s OLD or NEW (argparse's ``type=``), decided by what it is: text with a
    scheme or a port before its first ``/`` is a page's address and the path of an HTML
    file is a page, each read as every command reads ``URL`` (:func:`page_url`: refused
    before a browser starts when it is not one); anything else is a catalog file."""
    head = text.partition("/")[0]
    if ":" in head or Path(text).suffix.lower() in HTML_SUFFIXES:
        return CatalogSource(text, page=page_url(text))
    return CatalogSource(text)


def add_doctor_parser(sub: Any) -> None:
    """``doctor [URL]``: why WebMCP is (not) there."""
    doctor = sub.add_parser(
        "doctor", help="which Chromium, which flags, and whether WebMCP is in a page (and why not)"
    )
    doctor.add_argument(
        "url", nargs="?", type=page_url, help="also check this page (a secure context?)"
    )
    doctor.add_argument("--json", action="store_true", help="print JSON for machines")


def run(args: argparse.Namespace, out: Console) -> int:
    """Run one of the QA commands; errors of the environment exit 3."""
    try:
        if args.command == "fuzz":
            return _fuzz(args, out)
        if args.command == "snapshot":
            return _snapshot(args, out)
        if args.command == "diff":
            return _diff(args, out)
        return _doctor(args, out)
    except (BrowserNotFound, NativeWebMCPUnavailable, PageUnreachable) as exc:
        report_error(exc, as_json=getattr(args, "json", False))
        return EXIT_CANNOT_RUN


# -- fuzz ------------------------------------------------------------------------------------


def usable_path(path: Path, option: str, *, directory: bool) -> Path:
    """``path``, when a file (or, ``directory``, a directory) can be made there: no part of
    it on the way is a file, and it is not of the other kind already; else a
    :class:`UsageError` that names what is in the way."""
    blocked = file_in_the_way(path)
    if blocked is not None:
        raise UsageError(
            f"{option} {path}: {blocked} is a file, not a directory; give a path in a directory."
        )
    if directory and path.exists() and not path.is_dir():
        raise UsageError(f"{option} {path} is a file; give a directory.")
    if not directory and path.is_dir():
        raise UsageError(f"{option} {path} is a directory; give a file name.")
    return path


def fuzz_options(args: argparse.Namespace) -> FuzzOptions:
    """The command line's fuzz options, checked (a :class:`UsageError` otherwise)."""
    from harness.qa.fuzz import FuzzOptions

    example = None
    if args.example is not None:
        try:
            example = json.loads(args.example)
        except ValueError as exc:
            raise UsageError(f"--example is not valid JSON ({exc}); pass an object.") from None
        if not isinstance(example, dict):
            raise UsageError("--example must be a JSON object (the tool's arguments).")
    database = None
    if args.database.lower() != "none":
        database = usable_path(Path(args.database), "--database", directory=True)
    options = FuzzOptions(
        tools=args.tool,
        properties=args.property,
        examples=args.examples,
        allow_writes=args.allow_writes,
        seed=args.seed,
        database=database,
        example=example,
        timeout=args.timeout,
    )
    try:
        options.check()
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    return options


def _fuzz(args: argparse.Namespace, out: Console) -> int:
    from harness.qa.strategies import require_hypothesis

    options = fuzz_options(args)
    settle = settle_option(args)
    try:
        require_hypothesis()
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    report = asyncio.run(_run_fuzz(args.url, args.backend, options, settle, args.wait_for_tool))
    if args.json:
        print(json.dumps(report.model_dump(mode="json"), indent=2))
    else:
        from harness.cli.render import page_text

        for line in report.describe().splitlines():
            style = "red" if ": failed" in line else ""
            out.print(page_text(line, style), highlight=False)
    return EXIT_OK if report.ok else EXIT_FOUND


async def _run_fuzz(
    url: str, backend: str, options: FuzzOptions, settle: Settle, wait_for: list[str]
) -> FuzzReport:
    from harness.harness import Harness
    from harness.qa.fuzz import fuzz

    # (The fuzzer runs the session without a policy or anyone to say yes.)
    harness = Harness(
        backend=backend,  # type: ignore[arg-type]
        call_timeout=options.timeout,
        settle=settle,
    )
    async with harness:
        session = await harness.open(url)
        try:
            for name in wait_for:
                await session.wait_for_tool(name, timeout=session.settle.timeout)
            return await fuzz(session, options)
        except UnknownTool as exc:
            raise UsageError(str(exc)) from None
        except ConfigError as exc:
            raise UsageError(str(exc)) from None


# -- snapshot and diff -----------------------------------------------------------------------


async def take_snapshot(
    url: str, backend: str, settle: Settle, wait_for: list[str]
) -> CatalogSnapshot:
    """The catalog of ``url`` once it settled."""
    from harness.harness import Harness
    from harness.qa.snapshot import snapshot_of

    async with Harness(backend=backend, policy=None, settle=settle) as harness:  # type: ignore[arg-type]
        session = await harness.open(url)
        for name in wait_for:
            await session.wait_for_tool(name, timeout=session.settle.timeout)
        return snapshot_of(await session.tools(), session.url)


def _snapshot(args: argparse.Namespace, out: Console) -> int:
    settle = settle_option(args)
    if args.output is not None:  # checked before the page is opened, not after
        usable_path(Path(args.output), "--output", directory=False)
    snapshot = asyncio.run(take_snapshot(args.url, args.backend, settle, args.wait_for_tool))
    text = snapshot.to_json()
    if args.output is None:
        sys.stdout.write(text)
        return EXIT_OK
    path = Path(args.output)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(
            f"--output {path}: cannot write it ({exc.strerror or exc}); give a writable path."
        ) from None
    print(
        f"wrote the catalog of {args.url} ({len(snapshot.tools)} tools) to {path}", file=sys.stderr
    )
    return EXIT_OK


def _catalog(source: CatalogSource, args: argparse.Namespace) -> CatalogSnapshot:
    """A catalog file, or the live catalog of a page."""
    from harness.qa.snapshot import read_snapshot

    if source.page is not None:
        return asyncio.run(
            take_snapshot(source.page, args.backend, settle_option(args), args.wait_for_tool)
        )
    try:
        return read_snapshot(source.text)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def _diff(args: argparse.Namespace, out: Console) -> int:
    from harness.qa.drift import diff_catalogs, render_drift

    old, new = _catalog(args.old, args), _catalog(args.new, args)
    drift = diff_catalogs(old, new)
    threshold: Severity = "fail" if args.fail_on == "never" else args.fail_on
    gating = [] if args.fail_on == "never" else drift.gating(threshold)
    if args.json:
        payload = {
            "old": args.old.text,
            "new": args.new.text,
            "failOn": args.fail_on,
            "gating": len(gating),
            "changes": [c.model_dump(mode="json") for c in drift.changes],
        }
        print(json.dumps(payload, indent=2))
    else:
        from harness.cli.render import page_text

        styles = {"FAIL": "red", "WARN": "yellow"}
        for line in render_drift(drift, threshold):
            out.print(page_text(line, styles.get(line[:4], "")), highlight=False)
    return EXIT_FOUND if gating else EXIT_OK


# -- doctor ------------------------------------------------------------------------------------


def _doctor(args: argparse.Namespace, out: Console) -> int:
    from harness.cli.render import page_text
    from harness.qa.doctor import diagnose, lines_for_people

    report = asyncio.run(diagnose(args.url))
    # A URL it could not load is a check not made, not a finding: exit 3, as for a gate
    # command's page; the report is printed all the same (the other lines hold).
    unreachable = PageUnreachable(report.unreachable) if report.unreachable else None
    if args.json:
        payload = report.model_dump(mode="json")
        if unreachable is not None:
            payload["error"] = {"code": error_code(unreachable), "message": str(unreachable)}
        print(json.dumps(payload, indent=2))
    else:
        styles = {"ok": "green", "warn": "yellow", "fail": "red", "skipped": "dim"}
        for status, line in lines_for_people(report):
            out.print(page_text(line, styles.get(status, "")), highlight=False)
    if unreachable is not None:
        report_error(unreachable, as_json=False)
        return EXIT_CANNOT_RUN
    return EXIT_OK if report.ok else EXIT_FOUND
