"""Running a grid's episodes on Ray: actors that each own a Chromium and the sites.

Without an address a local Ray instance is started (loopback only; retried within a
deadline, since a loaded machine can miss Ray's own 60 s per-node one); with one
(``ray://host:10001``, ``auto``, a test cluster's address) the episodes run on that
cluster. Episodes are actor tasks; their results and files stream back to the driver,
so workers need no shared file system. The driver hands the episodes out, so those of
one outside site that ``reset`` restores run one at a time on any node
(:mod:`harness.experiments.shared_sites`). An actor that dies — its process, or its whole
node — loses no episode: the episode goes back in the queue for another worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.errors import ExperimentError
from harness.experiments.episode import Environment, HarnessPool, run_episode
from harness.experiments.grid import EpisodeSpec, Grid
from harness.experiments.metrics import EpisodeResult, ResultSink
from harness.experiments.shared_sites import EpisodeQueue

RAY_START_TIMEOUT_S = 180.0
"""The default deadline for a local Ray instance to start, and for an actor to start (its
Chromium, its sites): Ray's own per-node deadline is 60 s, which a loaded machine misses."""
EPISODE_ATTEMPTS = 3
"""How many times an episode runs before its worker's deaths count as its own crash."""
RAY_START_ATTEMPTS = 3
"""How many times a local Ray instance is started before giving up (within the deadline)."""


class EpisodeWorker:
    """A Ray actor's state: its own sites and its own Chromium, reused across episodes.

    Episodes run in a temporary directory on the worker's machine; their files go
    back to the driver with the result, so workers need no shared file system.
    """

    def __init__(self, sites: list[str], call_timeout: float, backends: list[str], name: str):
        self.backends = backends
        self.env = Environment(sites, HarnessPool(call_timeout), owns_pool=True, name=name)

    async def start(self) -> dict[str, str]:
        """Serve the sites and launch the browsers; the Chromium versions."""
        await self.env.start()
        for backend in self.backends:
            await self.env.pool.get(backend)
        return self.env.pool.browser_versions()

    async def run(self, spec_json: str, run_id: str) -> tuple[str, dict[str, bytes]]:
        """One episode: its result (JSON) and its files by relative path."""
        spec = EpisodeSpec.model_validate_json(spec_json)
        with tempfile.TemporaryDirectory(prefix="webmcp-episode-") as tmp:
            directory = Path(tmp) / "episode"
            result = await run_episode(spec, self.env, directory, run_id=run_id)
            files = {
                str(path.relative_to(directory)): path.read_bytes()
                for path in sorted(directory.rglob("*"))
                if path.is_file()
            }
        return result.model_dump_json(), files

    async def close(self) -> None:
        """Stop the sites and the browsers."""
        await self.env.close()


LOOPBACK_ONLY = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
"""Set to 0 before Ray is imported, a local Ray instance listens on loopback only."""


def _import_ray(address: str | None) -> Any:
    if address is None:
        # A single-machine instance: Ray's servers then bind the loopback address only.
        os.environ.setdefault(LOOPBACK_ONLY, "0")
    try:
        import ray
    except ModuleNotFoundError as err:
        if err.name != "ray":
            raise
        raise ExperimentError(
            "--backend ray needs Ray: pip install 'webmcp-harness[ray]'."
        ) from None
    return ray


def _crashed(spec: EpisodeSpec, error: str, run_id: str, worker: str) -> EpisodeResult:
    return EpisodeResult(
        episode=spec.id,
        **spec.key(),
        status="crashed",
        error=error,
        run_id=run_id,
        worker=worker,
        finished_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )


def _write_files(directory: Path, files: dict[str, bytes]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for relative, data in files.items():
        target = (directory / relative).resolve()
        if directory.resolve() not in target.parents:
            continue  # a worker's file name never leaves the episode's directory
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def _start_ray(ray: Any, workers: int, address: str | None, deadline: float) -> None:
    """``ray.init``: a local instance (retried within ``deadline``) or the cluster at ``address``."""
    if address is not None:
        try:
            ray.init(address=address, log_to_driver=False)
        except Exception as exc:  # Ray raises many kinds; each is "could not connect"
            raise ExperimentError(
                f"Could not connect to the Ray cluster at {address}: {exc}"
            ) from None
        return
    began = time.monotonic()
    problem = ""
    for attempt in range(1, RAY_START_ATTEMPTS + 1):
        try:
            ray.init(
                address="local",  # a new instance: never a cluster another run left recorded
                num_cpus=workers,
                include_dashboard=False,
                log_to_driver=False,
                _node_ip_address="127.0.0.1",
            )
            return
        except Exception as exc:  # Ray raises many kinds; each is "could not start"
            problem = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
            with contextlib.suppress(Exception):
                ray.shutdown()
        if time.monotonic() - began > deadline or attempt == RAY_START_ATTEMPTS:
            break
    raise ExperimentError(
        f"A local Ray instance did not start ({RAY_START_ATTEMPTS} attempts, "
        f"{time.monotonic() - began:.0f} s; last: {problem}). Under load Ray's nodes can miss "
        "their start deadline: give it longer (--ray-start-timeout 600), use fewer --workers, "
        "or start Ray yourself (`ray start --head --num-cpus N`) and pass --ray-address auto."
    )


class RaySegments:
    """Throughput per number of live workers: a run that loses a node changes it midway."""

    def __init__(self, workers: int) -> None:
        self.alive = workers
        self._since = time.perf_counter()
        self._episodes = 0
        self.segments: list[dict[str, Any]] = []

    def episode(self) -> None:
        """One more episode finished with the current number of workers."""
        self._episodes += 1

    def change(self, alive: int) -> None:
        """The number of live workers changed (a worker lost, or one more started)."""
        self._close()
        self.alive = alive

    def _close(self) -> None:
        now = time.perf_counter()
        seconds = now - self._since
        if self._episodes or seconds > 0.5:
            self.segments.append(
                {
                    "workers": self.alive,
                    "seconds": round(seconds, 2),
                    "episodes": self._episodes,
                    "per_minute": round(self._episodes / seconds * 60, 2) if seconds > 0 else 0.0,
                }
            )
        self._since, self._episodes = now, 0

    def finish(self) -> list[dict[str, Any]]:
        """The segments, the last one closed."""
        self._close()
        return self.segments


async def run_ray(
    episodes: list[EpisodeSpec],
    grid: Grid,
    directory: Path,
    sink: ResultSink,
    *,
    workers: int,
    address: str | None = None,
    run_id: str = "",
    start_timeout: float = RAY_START_TIMEOUT_S,
) -> tuple[dict[str, str], dict[str, Any]]:
    """Run ``episodes`` as tasks of ``workers`` Ray actors; Chromium versions and Ray's info.

    An actor that dies (its process, or its node) takes no episode with it: the episode it
    was running goes back in the queue (up to :data:`EPISODE_ATTEMPTS` runs), and a new
    actor takes its place if the cluster has room for one; otherwise the other workers go
    on. Episodes no worker is left to run are recorded as crashed (``--resume`` runs them).
    """
    if address is None:
        # Ray's per-node start deadline (60 s by default), for a machine under load.
        os.environ.setdefault("RAY_gcs_server_request_timeout_seconds", str(int(start_timeout)))
    ray = _import_ray(address)
    started_here = not ray.is_initialized()
    count = max(1, min(workers, len(episodes)))
    if started_here:  # a local instance gets a CPU per actor it will run, no more
        _start_ray(ray, count, address, start_timeout)
    info: dict[str, Any] = {
        "version": ray.__version__,
        "address": address or "local",
        "nodes": len(ray.nodes()),
        "cluster_resources": {k: v for k, v in ray.cluster_resources().items() if "CPU" in k},
    }
    remote = ray.remote(num_cpus=1, max_restarts=0)(EpisodeWorker)
    queue = EpisodeQueue(episodes)  # the driver hands out each shared site's turns
    versions: dict[str, str] = {}
    sites, call_timeout, backends = (
        grid.sites(),
        grid.experiment.call_timeout,
        grid.experiment.backends,
    )
    actors: list[Any] = []
    attempts: dict[str, int] = {}
    segments = RaySegments(0)
    lost: list[str] = []

    async def new_actor(name: str, first: bool) -> Any:
        """A started actor, or None when the cluster has no room for one in time."""
        if not first and ray.available_resources().get("CPU", 0) < 1:
            return None
        actor = remote.remote(sites, call_timeout, backends, name)
        actors.append(actor)
        try:
            versions.update(await asyncio.wait_for(actor.start.remote(), start_timeout))
        except (TimeoutError, ray.exceptions.RayError) as exc:
            lost.append(f"{name}: no actor started ({type(exc).__name__})")
            with contextlib.suppress(Exception):
                ray.kill(actor)
            return None
        segments.change(segments.alive + 1)
        return actor

    async def work(name: str) -> None:
        actor = await new_actor(name, first=True)
        while actor is not None:
            spec = await queue.take()
            if spec is None:
                break
            try:
                result_json, files = await actor.run.remote(spec.model_dump_json(), run_id)
            except ray.exceptions.RayError as exc:
                # The actor (its Chromium, perhaps its node) is gone; the episode is not.
                await queue.finished(spec)
                segments.change(segments.alive - 1)
                lost.append(f"{name}: {type(exc).__name__} during {spec.id}")
                attempts[spec.id] = attempts.get(spec.id, 0) + 1
                if attempts[spec.id] < EPISODE_ATTEMPTS:
                    await queue.put_back(spec)
                else:
                    sink(
                        _crashed(
                            spec,
                            f"the Ray worker failed {attempts[spec.id]} times: {type(exc).__name__}",
                            run_id,
                            name,
                        )
                    )
                with contextlib.suppress(Exception):
                    ray.kill(actor)
                actor = await new_actor(name, first=False)
                continue
            await queue.finished(spec)
            _write_files(directory / spec.id, files)
            segments.episode()
            sink(EpisodeResult.model_validate_json(result_json))
        if actor is not None:
            segments.change(segments.alive - 1)

    try:
        await asyncio.gather(*(work(f"ray-worker-{n + 1}") for n in range(count)))
        for spec in queue.drain():  # every worker is gone: say so for each episode left
            sink(_crashed(spec, "no Ray worker was left to run it", run_id, "ray"))
    finally:
        for actor in actors:
            with contextlib.suppress(ray.exceptions.RayError):
                await actor.close.remote()
            with contextlib.suppress(Exception):
                ray.kill(actor)
        info["nodes_at_end"] = len([n for n in ray.nodes() if n.get("Alive")])
        if started_here:
            ray.shutdown()
    info["workers_lost"] = lost
    info["throughput_by_workers"] = segments.finish()
    return versions, info
