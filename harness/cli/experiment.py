"""``webmcp-harness experiment GRID.toml``: run a grid of episodes and show its tables.

Exit status: 0 when every episode has a result (whatever the agents achieved), 1 when
some episode hung, crashed or failed (``--resume`` runs those again) or the run could
not start, 2 for usage errors (the grid, or an ``--output``, ``--resume`` or cassette
directory that cannot be used; a ``--resume`` whose options would change what episodes do),
130 when Ctrl-C stopped the run (the message says the ``--resume`` command that continues
it, with every option given).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import shlex
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.cli.options import Interrupted, UsageError
from harness.errors import ConfigError

if TYPE_CHECKING:  # imported when the command runs: the CLI starts without them
    from rich.console import Console
    from rich.table import Table

    from harness.experiments.metrics import EpisodeResult
    from harness.experiments.runners import RunOptions, Study

DEFAULT_EXPERIMENTS_DIR = "experiments"


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value):  # `inf` would reach run_info.json, which JSON cannot hold
        raise argparse.ArgumentTypeError(f"{text!r}: give a finite number of seconds")
    if not value > 0:
        raise argparse.ArgumentTypeError("must be a positive number of seconds")
    return value


def add_parser(sub: Any) -> None:
    """The ``experiment`` sub-command."""
    parser = sub.add_parser(
        "experiment",
        help="run a grid of agents × sites × tasks × seeds and write tables, a plot and a report",
    )
    parser.add_argument("grid", metavar="GRID.toml", help="the grid file")
    parser.add_argument(
        "--output",
        metavar="DIR",
        help=f"where the run goes (default: {DEFAULT_EXPERIMENTS_DIR}/<name>-<time>); "
        "must be new or empty unless --resume",
    )
    parser.add_argument(
        "--workers",
        type=_positive_int,
        metavar="N",
        help="episodes at a time (default: the grid's)",
    )
    parser.add_argument(
        "--backend",
        choices=["local", "ray"],
        default="local",
        help="local: workers in this process; ray: Ray actors, each with its own Chromium",
    )
    parser.add_argument(
        "--worker-mode",
        choices=["contexts", "browsers"],
        help="local workers share one Chromium (contexts, default) or have one each "
        "(browsers); not with --backend ray, whose actors each have their own",
    )
    parser.add_argument(
        "--ray-address",
        metavar="ADDRESS",
        help="an existing Ray cluster (ray://HEAD:10001, or auto); default: a local instance",
    )
    parser.add_argument(
        "--ray-start-timeout",
        type=_positive_float,
        metavar="S",
        help="how long a local Ray instance, and each Ray actor, may take to start "
        "(default 180; Ray's own node deadline, 60 s, is missed on a loaded machine)",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="complete the run in --output: run only the episodes without a result",
    )
    parser.add_argument(
        "--episode-timeout",
        type=_positive_float,
        metavar="S",
        help="cut an episode after S seconds",
    )
    cassettes = parser.add_mutually_exclusive_group()
    cassettes.add_argument(
        "--record-cassettes",
        metavar="DIR",
        help="LLM agents: record each episode's provider exchanges to DIR/<episode>.json",
    )
    cassettes.add_argument(
        "--replay-cassettes",
        metavar="DIR",
        help="LLM agents: replay them from DIR, offline (nothing leaves the machine)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--no-report", action="store_true", help="skip the HTML report")
    parser.set_defaults(experiment_parser=parser)


def options_from(args: argparse.Namespace, name: str) -> RunOptions:
    """The run options the command line asks for (usage errors exit with status 2)."""
    from harness.experiments.limits import MAX_RAY_START_S, MAX_WORKERS
    from harness.experiments.runners import RunOptions

    parser = args.experiment_parser
    if args.output == "":  # an unset variable ($OUT), not a wish for the default folder
        parser.error(
            "--output is empty; give the folder the run goes in, or leave --output out "
            f"for {DEFAULT_EXPERIMENTS_DIR}/<name>-<time>."
        )
    if args.resume and not args.output:
        parser.error("--resume needs --output DIR: the run to complete.")
    if args.ray_address and args.backend != "ray":
        parser.error("--ray-address goes with --backend ray.")
    if args.ray_start_timeout and args.backend != "ray":
        parser.error("--ray-start-timeout goes with --backend ray.")
    if args.ray_start_timeout and args.ray_start_timeout > MAX_RAY_START_S:
        parser.error(f"--ray-start-timeout: at most {MAX_RAY_START_S:,} s (a day).")
    if args.worker_mode and args.backend == "ray":  # Ray's actors would ignore it
        parser.error(
            "--worker-mode is for local workers (each Ray actor has its own Chromium); "
            "drop it, or drop --backend ray."
        )
    if args.workers is not None and args.workers > MAX_WORKERS:
        parser.error(
            f"--workers {args.workers} is over the limit of {MAX_WORKERS:,} workers (each "
            "serves its own sites and drives a Chromium)."
        )
    output = Path(args.output) if args.output else default_output(name)
    cassettes = args.record_cassettes or args.replay_cassettes
    return RunOptions(
        output=output,
        workers=args.workers,
        runner=args.backend,
        worker_mode=args.worker_mode,
        resume=args.resume,
        ray_address=args.ray_address,
        cassettes=Path(cassettes) if cassettes else None,
        cassette_mode="record" if args.record_cassettes else "replay",
        episode_timeout=args.episode_timeout,
        **({"ray_start_timeout": args.ray_start_timeout} if args.ray_start_timeout else {}),
        progress=not args.no_progress,
        report=not args.no_report,
    )


def default_output(name: str) -> Path:
    """``experiments/<name>-<UTC time>``, made unique with a counter."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in name) or "experiment"
    base = Path(DEFAULT_EXPERIMENTS_DIR) / f"{safe}-{stamp}"
    candidate, n = base, 1
    while candidate.exists():
        n += 1
        candidate = base.with_name(f"{base.name}-{n}")
    return candidate


def resume_arguments(args: argparse.Namespace) -> list[str]:
    """The options of this command line that ``--resume`` should be given again, as given:
    every one but ``--output`` and ``--resume`` themselves. Those that change what episodes
    do must be the same for a resume to be accepted; the others (``--workers``,
    ``--backend``, …) carry on the run as it was going."""
    again: list[str] = []
    for action in args.experiment_parser._actions:
        if not action.option_strings or action.dest in ("help", "output", "resume"):
            continue
        value = getattr(args, action.dest, None)
        if value is None or value == action.default:
            continue
        flag = action.option_strings[-1]
        if isinstance(value, bool):
            again.append(flag)
        else:
            again += [flag, f"{value:g}" if isinstance(value, float) else str(value)]
    return again


def interrupted(grid: str, output: Path, options: Sequence[str] = ()) -> Interrupted:
    """Ctrl-C stopped the run: the episodes that finished are kept in ``output``'s
    database, and ``--resume`` with the same ``--output`` (and ``options``: see
    :func:`resume_arguments`) runs the others."""
    from harness.experiments.results import DATABASE

    if not (output / DATABASE).is_file():  # stopped before the run began: nothing to resume
        return Interrupted()
    again = shlex.join(
        ["webmcp-harness", "experiment", grid, "--output", str(output), "--resume", *options]
    )
    return Interrupted(
        f"interrupted; the finished episodes are kept in {output}, and `{again}` runs the rest."
    )


TERMINAL_HEADERS = {
    "benign": "utility",
    "under_attack": "utility (attacked)",
    "attack": "attack success",
    "attempted": "attempted",
    "injection_tasks": "injection tasks",
}
"""Short headers for the terminal's headline table."""


def headline_table(results: list[EpisodeResult], title: str) -> Table:
    """Utility and attack success (each rate with its n; the files add 95% Wilson intervals)
    per agent and policy (and each axis the run varied), the table's caveats under it."""
    from rich.table import Table
    from rich.text import Text

    from harness.experiments.metrics import Table as Results
    from harness.experiments.results import headline_dimensions, shown_rates

    headline = Results.of(results, headline_dimensions(results))
    by, rows = headline.by, headline.rows
    rates = shown_rates(rows)
    table = Table(  # names from the grid: shown as they are, never as markup
        title=Text(title),
        caption=Text(" ".join(headline.caveats), style="yellow") if headline.caveats else None,
    )
    for column in [*by, "n", *(TERMINAL_HEADERS[r] for r in rates), "leaks", "blocks"]:
        table.add_column(column.replace("_name", ""))
    for row in rows:
        failed = f" ({row.errors} failed)" if row.errors else ""
        table.add_row(
            *(Text(row.group[d]) for d in by),
            f"{row.episodes}{failed}",
            *(getattr(row, r).brief() for r in rates),
            Text(str(row.leaks), style="red" if row.leaks else ""),
            f"{row.policy_blocks:g}",
        )
    return table


def print_study(out: Console, study: Study) -> None:
    """The headline table, where the files are, and this invocation's throughput."""
    out.print(headline_table(study.results, f"{study.name}: utility and attacks"))
    resumed = f" ({study.already_done} already done)" if study.already_done else ""
    out.print(
        f"{study.ran} episodes{resumed} in {study.seconds:.1f} s with {study.workers} "
        f"{study.runner} worker(s): {study.per_minute:.1f} episodes/minute",
        highlight=False,
    )
    if study.workers > 1:
        for site, tasks in study.one_at_a_time.items():
            out.print(
                f"{site}: its episodes ran one at a time, the workers sharing its one state "
                f"(reset URL); tasks {', '.join(tasks)}",
                markup=False,
                highlight=False,
            )
    if study.failed:
        out.print(
            f"[red]{len(study.failed)} episode(s) without a result[/] (timeout, crash or error); "
            "--resume runs them again."
        )
    written = [f"{label}: {study.files[name]}" for name, label in WRITTEN if name in study.files]
    out.print(", ".join(written), markup=False, highlight=False)


WRITTEN = (("results.md", "results"), ("plot.png", "plot"), ("report.html", "report"))
"""The files the last line names, when the run wrote them (``--no-report`` writes no
report; a run with nothing to plot, no plot)."""


def run(args: argparse.Namespace, out: Console) -> int:
    """Run the grid; 0 when every episode has a result, 1 otherwise."""
    from rich.console import Console
    from rich.markup import escape

    from harness.cli.interrupts import raise_if_interrupted
    from harness.experiments.grid import load_grid
    from harness.experiments.runners import run_experiment

    try:
        grid = load_grid(args.grid)
    except ConfigError as exc:  # the file the command line names: a usage error (status 2)
        raise UsageError(str(exc)) from None
    said = Console(stderr=True, soft_wrap=True)
    for warning in grid.warnings:  # what the run cannot do as the grid asks, said first
        said.print(f"[yellow]warning:[/] {escape(warning)}", highlight=False)
    options = options_from(args, grid.experiment.name)
    raise_if_interrupted()  # a Ctrl-C while the modules loaded stops it before any episode
    try:
        study = asyncio.run(run_experiment(grid, options, console=Console(stderr=True)))
    except ConfigError as exc:  # --output, --resume or cassettes that cannot be used (RunRefused)
        raise UsageError(str(exc)) from None
    except KeyboardInterrupt:
        raise interrupted(args.grid, options.output, resume_arguments(args)) from None
    for warning in study.served_warnings:  # a url task whose provenance is incomplete
        said.print(f"[yellow]warning:[/] {escape(warning)}", highlight=False)
    print_study(out, study)
    return 1 if study.failed else 0
