"""Running a grid: local workers or Ray, a progress bar, resume, and the files at the end.

:func:`run_experiment` is the whole of ``webmcp-harness experiment``: it checks the
output directory (new, or ``resume`` of the same grid), works out which episodes
still need a result, runs them on a runner, writes each result to ``results.db``
as it arrives, and then the tables, the plot, the HTML report and ``run_info.json``.

Runners:

- ``local``: N workers in this process. Each worker serves its own instances of
  the bundled sites. ``worker_mode="contexts"`` (the default) runs the workers'
  episodes as concurrent browser contexts of one Chromium per backend;
  ``"browsers"`` gives each worker a Chromium of its own.
- ``ray``: N Ray actors, each owning its Chromium and its sites
  (:mod:`harness.experiments.ray_runner`).

Either way, the episodes of an outside site that a ``reset`` URL restores run one at a
time (one instance serves every worker: :mod:`harness.experiments.shared_sites`);
``run_info.json`` → ``runner.one_at_a_time`` lists those sites and their tasks.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import secrets
import shutil
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from harness.errors import ConfigError, ExperimentError
from harness.experiments.episode import Environment, HarnessPool, run_episode
from harness.experiments.grid import EpisodeSpec, Grid
from harness.experiments.limits import MAX_RAY_START_S, MAX_WORKERS
from harness.experiments.metrics import EpisodeResult, ResultSink
from harness.experiments.plot import plot
from harness.experiments.ray_runner import RAY_START_TIMEOUT_S, run_ray
from harness.experiments.results import DATABASE, ResultStore, suites_caption, write_tables
from harness.experiments.run_info import (
    RUN_INFO,
    chromium_info,
    environment_info,
    grid_info,
    served_info,
)
from harness.experiments.served import served_warnings
from harness.experiments.shared_sites import EpisodeQueue, shared_sites
from harness.inputs import hold_directory, load_input

EPISODES_DIR = "episodes"
GRID_COPY = "grid.toml"
EPISODE_OPTIONS = "episode_options"
"""The ``results.db`` entry that holds :meth:`RunOptions.episode_options` of the run."""

RunnerName = Literal["local", "ray"]
WorkerMode = Literal["contexts", "browsers"]


class RunOptions(BaseModel):
    """How to run a grid (the ``experiment`` command's options).

    Two kinds: those that change what the episodes do — ``episode_timeout`` and the LLM
    agents' ``cassettes`` (:meth:`episode_options`) — are recorded with the run, and a
    ``resume`` must give the same, so that one table never mixes episodes run two ways;
    the others (``workers``, ``runner``, ``worker_mode``, ``ray_address``,
    ``ray_start_timeout``, ``progress``, ``report``) change only how the run is carried out,
    and a resume may change them.
    """

    model_config = ConfigDict(frozen=True, allow_inf_nan=False)

    output: Path
    workers: int | None = Field(default=None, ge=1, le=MAX_WORKERS)
    """None: the grid's ``workers``."""
    runner: RunnerName = "local"
    worker_mode: WorkerMode | None = None
    """Local workers only (None: ``contexts``); each Ray actor has its own Chromium."""
    resume: bool = False
    ray_address: str | None = None
    cassettes: Path | None = None
    cassette_mode: Literal["record", "replay"] = "replay"
    episode_timeout: float | None = Field(default=None, gt=0)
    ray_start_timeout: float = Field(default=RAY_START_TIMEOUT_S, gt=0, le=MAX_RAY_START_S)
    """How long a local Ray instance, and each Ray actor, may take to start."""
    progress: bool = True
    report: bool = True

    @model_validator(mode="after")
    def _for_the_runner(self) -> RunOptions:
        # An option the runner would ignore is a mistake to say, not to pass over.
        if self.runner == "ray" and self.worker_mode is not None:
            raise ValueError("worker_mode is for local workers; each Ray actor has its Chromium")
        if self.runner != "ray" and self.ray_address is not None:
            raise ValueError("ray_address goes with runner='ray'")
        return self

    @property
    def local_mode(self) -> WorkerMode:
        """How local workers run: ``worker_mode``, ``contexts`` when not given."""
        return self.worker_mode or "contexts"

    def episode_options(self) -> dict[str, Any]:
        """The options that change what the episodes do, as ``run_info.json`` records them
        (``options``; None: not given — the grid's time limit, no cassettes)."""
        cassettes = None
        if self.cassettes is not None:
            cassettes = {"mode": self.cassette_mode, "directory": str(self.cassettes.resolve())}
        return {"episode_timeout": self.episode_timeout, "cassettes": cassettes}


class Study(BaseModel):
    """What a run left: where, every episode's result, and this invocation's throughput."""

    model_config = ConfigDict(frozen=True)

    output: Path
    name: str
    results: list[EpisodeResult]
    ran: int
    already_done: int
    seconds: float
    per_minute: float
    workers: int
    runner: str
    files: dict[str, str] = Field(default_factory=dict)
    one_at_a_time: dict[str, list[str]] = Field(default_factory=dict)
    """Outside sites (origins) whose episodes ran one at a time, with their tasks' ids."""

    @property
    def failed(self) -> list[EpisodeResult]:
        """Episodes without an ``ok`` result (``--resume`` runs them again)."""
        return [r for r in self.results if r.status != "ok"]

    @property
    def served_warnings(self) -> list[str]:
        """Per ``url`` task whose start document some episode could not hash, why (once)."""
        return served_warnings(self.results)


# -- the output directory --------------------------------------------------------------------


class RunRefused(ExperimentError, ConfigError):
    """The run cannot start as the options ask: an ``--output`` that is not empty or cannot
    be made, a ``--resume`` with no run or of a changed grid, cassettes that are not there.
    A :class:`ConfigError` too: the command line's mistake (exit status 2), not a failed run.
    """


def _hold(output: Path) -> int:
    """The run's hold on its output directory (see :mod:`harness.outputs`): a second run
    into it, fresh or resumed, is refused while this one runs."""
    try:
        held = hold_directory(output)
    except OSError as exc:
        raise RunRefused(
            f"--output {output}: cannot use it ({exc.strerror or exc}); give a directory "
            "that can be created and written."
        ) from None
    if held is None:
        raise ExperimentError(
            f"Another run is writing into {output}; wait for it to end (then --resume "
            "completes what it left), or choose a new --output."
        )
    return held


def _check_writable(output: Path, *paths: Path) -> None:
    """A :class:`RunRefused` when this process cannot write the output directory (or the
    files ``paths`` of it), said before ``results.db`` is opened, which would blame the
    database that is not there ("unable to open database file")."""
    for path in (output, *paths):
        if not os.access(path, os.W_OK):
            what = "" if path == output else f"; {path.name} cannot be written"
            raise RunRefused(
                f"--output {output}: cannot use it as the output directory "
                f"({os.strerror(errno.EACCES)}{what}); give a directory that can be created "
                "and written."
            )


def _prepare(grid: Grid, options: RunOptions) -> tuple[ResultStore, int]:
    """The run's result store, and its hold on the output directory (close it at the end)."""
    output = options.output
    database = output / DATABASE
    if output.exists() and not output.is_dir():  # neither a run to resume nor an empty folder
        raise RunRefused(f"{output} is a file; --output names a folder.")
    if options.resume:
        if not database.is_file():
            raise RunRefused(
                f"Nothing to resume in {output}: it has no {DATABASE}. Run without --resume."
            )
        held = _hold(output)
        try:
            _check_writable(output, database)
            return _resumed(grid, options, database), held
        except BaseException:
            os.close(held)
            raise
    if output.exists() and any(output.iterdir()):
        raise RunRefused(
            f"{output} exists and is not empty; pass --resume to complete that run, "
            "or choose a new --output."
        )
    try:
        output.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RunRefused(
            f"--output {output}: cannot create it ({exc.strerror or exc}); give a directory "
            "that can be created and written."
        ) from None
    held = _hold(output)
    try:
        _check_writable(output)
    except RunRefused:
        os.close(held)
        raise
    if any(output.iterdir()):  # another run began between the look and the hold
        os.close(held)
        raise RunRefused(
            f"{output} exists and is not empty; pass --resume to complete that run, "
            "or choose a new --output."
        )
    store = ResultStore(database)
    store.set_meta("grid_sha256", grid.sha256)
    store.set_meta("grid_files", json.dumps(grid.files, allow_nan=False))
    store.set_meta("grid_name", grid.experiment.name)
    store.set_meta(EPISODE_OPTIONS, json.dumps(options.episode_options(), allow_nan=False))
    if grid.path and Path(grid.path).is_file():
        shutil.copyfile(grid.path, output / GRID_COPY)
    return store, held


def _resumed(grid: Grid, options: RunOptions, database: Path) -> ResultStore:
    """The store of the run in ``options.output``, when it ran this very grid, with the
    same options that change what episodes do."""
    output = options.output
    store = ResultStore(database)
    if store.get_meta("grid_sha256") != grid.sha256:
        changed = _changed_files(store.get_meta("grid_files"), grid.files)
        store.close()
        raise RunRefused(
            f"The grid changed since the run in {output} started ({changed}); resume with "
            "the same grid and files, or run into a new --output."
        )
    recorded = store.get_meta(EPISODE_OPTIONS)
    now = options.episode_options()
    if recorded is None:  # a run of a harness that did not record them: from now on
        store.set_meta(EPISODE_OPTIONS, json.dumps(now, allow_nan=False))
        return store
    try:
        before = json.loads(recorded)
    except ValueError:
        before = None
    if not isinstance(before, dict):
        before = {}
    for name, value in now.items():
        if before.get(name) != value:
            store.close()
            said = _option_words(name, before.get(name), grid)
            raise RunRefused(
                f"The run in {output} was started with {said}, and this resume gives "
                f"{_option_words(name, value, grid)}: its episodes would not all have run "
                f"the same way. Resume with {said}, or run into a new --output."
            )
    return store


def _option_words(name: str, value: Any, grid: Grid) -> str:
    """One of :meth:`RunOptions.episode_options` as the command line gives it."""
    if name == "episode_timeout":
        if value is None:
            return f"no --episode-timeout (the grid's {grid.experiment.episode_timeout:g} s)"
        return f"--episode-timeout {value:g}"
    if name == "cassettes":
        if value is None:
            return "no cassettes"
        return f"--{value['mode']}-cassettes {value['directory']}"
    return f"{name} {value}"


def _changed_files(recorded: str | None, now: dict[str, str]) -> str:
    """Which of the grid's files differ from those the run started with, said in words."""
    try:
        before = json.loads(recorded) if recorded else None
    except ValueError:
        before = None
    if not isinstance(before, dict):  # a run of a harness that kept only the hash
        return "its files hash differently now"
    changed = [f for f in now if f in before and before[f] != now[f]]
    gone = [f for f in before if f not in now]
    added = [f for f in now if f not in before]
    said = [f"{f} changed" for f in changed]
    said += [f"{f} is no longer part of it" for f in gone]
    said += [f"{f} is new to it" for f in added]
    return "; ".join(said) if said else "its files hash differently now"


def _episodes(grid: Grid, options: RunOptions) -> list[EpisodeSpec]:
    episodes = grid.episodes()
    replaying = options.cassettes is not None and options.cassette_mode == "replay"
    if replaying and options.cassettes is not None and not options.cassettes.is_dir():
        raise RunRefused(
            f"No cassettes to replay at {options.cassettes}; record them first "
            "(--record-cassettes DIR)."
        )
    changed = []
    for spec in episodes:
        update: dict[str, Any] = {}
        if options.episode_timeout is not None:
            update["episode_timeout"] = options.episode_timeout
        if options.cassettes is not None and spec.agent.is_llm:
            update["cassette"] = str(options.cassettes / f"{spec.id}.json")
            update["cassette_mode"] = options.cassette_mode
        changed.append(spec.model_copy(update=update) if update else spec)
    cassettes = options.cassettes if options.cassette_mode == "record" else None
    if cassettes is not None and cassettes.exists() and not cassettes.is_dir():
        raise RunRefused(
            f"--record-cassettes {cassettes} is a file; give a directory for the cassettes "
            "(it is created if needed)."
        )
    return changed


def _check_cassettes(episodes: list[EpisodeSpec], done: set[str]) -> None:
    """A :class:`RunRefused` naming the cassettes to replay that are not there, for the
    episodes still to run (``done``: those a resumed run has): such an episode could only
    crash, and a resume would run it again to crash the same way."""
    replayed = [
        Path(spec.cassette)
        for spec in episodes
        if spec.cassette is not None and spec.cassette_mode == "replay" and spec.id not in done
    ]
    missing = [path for path in replayed if not path.is_file()]
    if not missing:
        return
    shown = ", ".join(path.name for path in missing[:MISSING_SHOWN])
    more = f" and {len(missing) - MISSING_SHOWN} more" if len(missing) > MISSING_SHOWN else ""
    raise RunRefused(
        f"--replay-cassettes {missing[0].parent}: no cassette for {len(missing)} of the "
        f"{len(replayed)} episodes to replay ({shown}{more}); record them first "
        "(--record-cassettes with this grid), or replay the grid they were recorded with."
    )


MISSING_SHOWN = 5
"""How many missing cassettes a refusal names (then how many more)."""


def _make_cassettes_directory(options: RunOptions) -> None:
    if options.cassettes is None or options.cassette_mode != "record":
        return
    try:
        options.cassettes.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RunRefused(
            f"--record-cassettes {options.cassettes}: cannot create it "
            f"({exc.strerror or exc}); give a directory that can be created."
        ) from None


def new_run_id() -> str:
    """``run-<UTC time>-<4 hex>``: names one invocation (a first run, or a resume)."""
    return f"run-{datetime.now(UTC).strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(2)}"


# -- local workers ------------------------------------------------------------------------------


async def run_local(
    episodes: list[EpisodeSpec],
    grid: Grid,
    directory: Path,
    sink: ResultSink,
    *,
    workers: int,
    mode: WorkerMode = "contexts",
    run_id: str = "",
) -> dict[str, str]:
    """Run ``episodes`` on ``workers`` workers in this process; returns the Chromium versions."""
    queue = EpisodeQueue(episodes)
    call_timeout = grid.experiment.call_timeout
    shared = HarnessPool(call_timeout) if mode == "contexts" else None
    envs = [
        Environment(
            grid.sites(),
            shared or HarnessPool(call_timeout),
            owns_pool=shared is None,
            name=f"worker-{n + 1}",
        )
        for n in range(max(1, min(workers, len(episodes))))
    ]
    versions: dict[str, str] = {}

    async def work(env: Environment) -> None:
        await env.start()
        for backend in grid.experiment.backends:  # no browser: one clear error, not N episodes
            await env.pool.get(backend)
        versions.update(env.pool.browser_versions())
        while (spec := await queue.take()) is not None:
            try:
                sink(await run_episode(spec, env, directory / spec.id, run_id=run_id))
            finally:
                await queue.finished(spec)

    try:
        await asyncio.gather(*(work(env) for env in envs))
    finally:
        for env in envs:
            await env.close()
        if shared is not None:
            await shared.close()
    return versions


# -- the whole run ----------------------------------------------------------------------------


def _progress(console: Console | None, enabled: bool) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[status]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console or Console(stderr=True),
        disable=not enabled,
        transient=False,
    )


async def run_experiment(
    grid: Grid, options: RunOptions, *, console: Console | None = None
) -> Study:
    """Run (or resume) ``grid`` into ``options.output``; every file is written at the end."""
    episodes = _episodes(grid, options)  # its options checked before anything is written
    if not options.resume:
        _check_cassettes(episodes, done=set())
    store, held = _prepare(grid, options)
    try:
        if options.resume:  # the episodes it already has need no cassette
            _check_cassettes(episodes, store.done())
        _make_cassettes_directory(options)
        return await _run(grid, options, store, episodes, console)
    finally:
        store.close()
        os.close(held)


async def _run(
    grid: Grid,
    options: RunOptions,
    store: ResultStore,
    episodes: list[EpisodeSpec],
    console: Console | None,
) -> Study:
    output = options.output
    directory = output / EPISODES_DIR
    done = store.done()
    todo = [spec for spec in episodes if spec.id not in done]
    for spec in todo:  # a half-written episode (killed mid-way) starts again from nothing
        shutil.rmtree(directory / spec.id, ignore_errors=True)
    workers = options.workers or grid.experiment.workers
    run_id = new_run_id()
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    if todo:  # listed before its first episode: a stopped run's kept episodes name it
        store.begin_run(run_id, started_at=started_at, runner=options.runner, workers=workers)
    counts = {"ok": 0, "failed": 0}
    progress = _progress(console, options.progress)
    bar = progress.add_task(escape(grid.experiment.name), total=len(todo), status="")

    def sink(result: EpisodeResult) -> None:
        store.put(result)
        counts["ok" if result.status == "ok" else "failed"] += 1
        failed = f", [red]{counts['failed']} failed[/]" if counts["failed"] else ""
        progress.update(bar, advance=1, status=f"{counts['ok']} ok{failed}")

    began = time.perf_counter()
    ray_info: dict[str, Any] | None = None
    with progress:
        if not todo:
            versions: dict[str, str] = {}
        elif options.runner == "ray":
            versions, ray_info = await run_ray(
                todo,
                grid,
                directory,
                sink,
                workers=workers,
                address=options.ray_address,
                run_id=run_id,
                start_timeout=options.ray_start_timeout,
            )
        else:
            versions = await run_local(
                todo,
                grid,
                directory,
                sink,
                workers=workers,
                mode=options.local_mode,
                run_id=run_id,
            )
    seconds = round(time.perf_counter() - began, 3)
    per_minute = round(len(todo) / seconds * 60, 2) if todo and seconds > 0 else 0.0
    store.record_run(
        run_id,
        started_at=started_at,
        finished_at=datetime.now(UTC).isoformat(timespec="seconds"),
        runner=options.runner,
        workers=workers,
        episodes_run=len(todo),
        seconds=seconds,
    )
    results = store.results()
    files = write_tables(output, results, grid.experiment.name)
    picture = plot(output, results, grid.experiment.name, suites_caption(results))
    if picture is not None:
        files[picture.name] = picture
    _write_run_info(output, grid, options, store, versions, ray_info, workers, results)
    files[RUN_INFO] = output / RUN_INFO
    if options.report:
        from harness.experiments.report import write_report

        files["report.html"] = write_report(output, results, grid.experiment.name)
    return Study(
        output=output,
        name=grid.experiment.name,
        results=results,
        ran=len(todo),
        already_done=len(episodes) - len(todo),
        seconds=seconds,
        per_minute=per_minute,
        workers=workers,
        runner=options.runner,
        files={name: str(path) for name, path in files.items()},
        one_at_a_time=shared_sites(grid.tasks),
    )


def _write_run_info(
    output: Path,
    grid: Grid,
    options: RunOptions,
    store: ResultStore,
    versions: dict[str, str],
    ray_info: dict[str, Any] | None,
    workers: int,
    results: list[EpisodeResult],
) -> None:
    path = output / RUN_INFO
    previous: dict[str, Any] = {}
    if path.is_file():
        try:  # the previous run's, in a directory the user named: within the input limits
            loaded = load_input(path, "the previous run's information", kind="json")
        except ConfigError:
            loaded = {}
        previous = loaded if isinstance(loaded, dict) else {}
    known_versions = dict(previous.get("chromium", {}).get("versions", {}))
    known_versions.update(versions)
    info = {
        "grid": grid_info(grid),
        "environment": environment_info(),
        "chromium": chromium_info(known_versions),
        "runner": {
            "backend": options.runner,
            "workers": workers,
            "worker_mode": options.local_mode if options.runner == "local" else None,
            "ray": ray_info or previous.get("runner", {}).get("ray"),
            # Episodes of these outside sites never overlapped, whatever the workers.
            "one_at_a_time": shared_sites(grid.tasks),
        },
        "options": options.episode_options(),  # a resume gives the same (_resumed)
        "served": served_info(results),
        "invocations": store.runs(),
    }
    # allow_nan=False: `Infinity` is not JSON (JSON.parse refuses it); the grid and the
    # options refuse non-finite numbers, and this keeps any other from a file.
    path.write_text(json.dumps(info, indent=2, allow_nan=False) + "\n", encoding="utf-8")
