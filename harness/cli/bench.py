"""``webmcp-harness bench [--quick] [--json] [--only ITEM[,ITEM]]``: the benchmark
against the anchors.

Writes ``bench.json`` and ``bench.md`` into ``--output``: by default ``reports/`` for the
full run (the committed reference), ``bench-results/`` for ``--quick`` and ``--only`` runs,
which must not overwrite it. Exit
status 0 when the run finished — a missed target is a finding in the report, not a
failure — 1 when it could not run (no browser), 2 for usage errors.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import TYPE_CHECKING, Any

from harness.bench import ITEMS

if TYPE_CHECKING:
    from rich.console import Console
from harness.cli.options import EXIT_OK, output_directory

DEFAULT_OUTPUT = "reports"
PARTIAL_OUTPUT = "bench-results"
"""Where a ``--quick`` or ``--only`` run goes unless ``--output`` says otherwise."""


def add_parser(sub: Any) -> None:
    """Register ``bench``."""
    bench = sub.add_parser(
        "bench", help="measure the harness against its anchors (writes bench.json, bench.md)"
    )
    bench.add_argument(
        "--quick",
        action="store_true",
        help="a small run that shows the command works (CI); no Playwright MCP",
    )
    bench.add_argument("--json", action="store_true", help="print the report as JSON on stdout")
    bench.add_argument(
        "--only",
        type=_items,
        default=(),
        metavar="ITEM[,ITEM]",
        help="measure only these items: " + ", ".join(ITEMS),
    )
    bench.add_argument(
        "--output",
        metavar="DIR",
        help=f"where bench.json and bench.md go (default: {DEFAULT_OUTPUT}/ for the full run, "
        f"{PARTIAL_OUTPUT}/ for --quick and --only)",
    )


def _items(text: str) -> tuple[str, ...]:
    """``--only``: item keys, comma-separated; an unknown one is a usage error naming them."""
    wanted = tuple(key.strip() for key in text.split(",") if key.strip())
    unknown = [key for key in wanted if key not in ITEMS]
    if unknown or not wanted:
        raise argparse.ArgumentTypeError(
            f"unknown item {', '.join(unknown) or repr(text)}; choose from {', '.join(ITEMS)}"
        )
    return wanted


def run(args: argparse.Namespace, out: Console) -> int:
    """Run the benchmark, write both reports, and print one of them."""
    # Imported here: the other commands (and `mcp`'s cold start) need not pay for them.
    from harness.bench.report import markdown, to_json, write
    from harness.bench.runner import run_bench

    default = PARTIAL_OUTPUT if args.quick or args.only else DEFAULT_OUTPUT
    directory = output_directory(args.output or default)
    progress = None if args.json else (lambda text: out.print(f"[dim]bench: {text}…[/]"))
    report = asyncio.run(run_bench(quick=args.quick, only=args.only, progress=progress))
    as_json, as_md = write(report, directory)
    if args.json:
        print(json.dumps(to_json(report), indent=2))
    else:
        out.print(markdown(report), markup=False, highlight=False)
        out.print(f"wrote {as_json} and {as_md}", markup=False, highlight=False)
    return EXIT_OK
