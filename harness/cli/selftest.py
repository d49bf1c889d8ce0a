"""``webmcp-harness selftest``: the reliability selftest (:mod:`harness.selftest`)."""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from harness.cli.options import output_directory

if TYPE_CHECKING:  # imported when the command runs: its parser (and --help) loads none of it
    from harness.selftest.report import ReliabilityReport


def add_parser(sub: Any) -> None:
    """Register ``selftest`` on the CLI's sub-parsers."""
    parser = sub.add_parser(
        "selftest",
        help="survive hostile pages, bad input and load; write reports/reliability.{md,json}",
        description="Run the reliability selftest: fault scenarios, malformed inputs and a "
        "load run against pages the project writes. Exit 0 when everything was survived.",
    )
    modes = parser.add_mutually_exclusive_group()
    modes.add_argument("--quick", action="store_true", help="the CI run (default)")
    modes.add_argument("--full", action="store_true", help="10^5 tools, 10 000 calls")
    parser.add_argument(
        "--soak-minutes",
        type=_minutes,
        metavar="M",
        help="the memory soak's length (default: 30 with --full, 0.25 otherwise; 0: none)",
    )
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument(
        "--out", type=Path, default=Path("reports"), help="where to write the report (reports/)"
    )


def _minutes(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of minutes") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError("must be 0 or a positive number of minutes")
    return value


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Run the selftest, write the report, print the verdict; 0 when it passed."""
    from harness.selftest.runner import run_selftest

    directory = output_directory(args.out, "--out")
    report = asyncio.run(
        run_selftest("full" if args.full else "quick", soak_minutes=args.soak_minutes)
    )
    json_path, md_path = report.write(directory)
    summary = {
        "ok": report.ok,
        "faults_survived": report.faults_survived,
        "fault_kinds": len(report.faults),
        "inputs_clear": report.inputs_clear,
        "inputs_tried": len(report.inputs),
        "calls": report.load.calls if report.load else 0,
        "lost": report.load.lost if report.load else 0,
        "crossed": report.load.crossed if report.load else 0,
        "leaks": report.leaks,
        "memory_bounded": report.soak.bounded if report.soak and report.soak.judged else None,
        "report": str(md_path),
    }
    if args.json:
        out.write(json.dumps(summary) + "\n")
    else:
        out.write(
            f"selftest {'PASSED' if report.ok else 'FAILED'}: {summary['faults_survived']}/"
            f"{summary['fault_kinds']} faults survived, {summary['inputs_clear']}/"
            f"{summary['inputs_tried']} bad inputs answered clearly, {summary['calls']} calls "
            f"({summary['lost']} lost, {summary['crossed']} crossed), {report.leaks} leaks, "
            f"memory {_bounded(report)}; "
            f"report: {md_path} and {json_path}\n"
        )
    return 0 if report.ok else 1


def _bounded(report: ReliabilityReport) -> str:
    if report.soak is None:
        return "not soaked"
    return report.soak.verdict()
