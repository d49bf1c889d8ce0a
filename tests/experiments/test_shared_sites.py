"""An outside site that a ``reset`` URL restores is one instance for every worker: its
episodes take turns, whatever ``--workers`` says, so the table is the same on every run;
episodes of other sites still run side by side."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from harness.errors import ConfigError
from harness.experiments import RunOptions, load_grid, run_experiment
from harness.experiments.grid import EpisodeSpec
from harness.experiments.shared_sites import EpisodeQueue, shared_sites
from tests.conftest import listen

# Whole grids of browser episodes: minutes, not seconds, on a busy machine.
pytestmark = pytest.mark.timeout(900)

PAGE = """<!doctype html><meta charset=utf-8><title>loans</title><script>
const mc = document.modelContext;
mc.registerTool({name: "borrow", description: "Borrows a book.",
  annotations: {openWorldHint: false, destructiveHint: false},
  inputSchema: {type: "object", properties: {book: {type: "string"}}, required: ["book"]},
  execute: async ({book}) => (await fetch("/api/borrow", {method: "POST", body: book})).json()});
mc.registerTool({name: "wait", description: "Waits a moment.", annotations: {readOnlyHint: true},
  inputSchema: {type: "object", properties: {}},
  execute: async () => { await new Promise((r) => setTimeout(r, 400)); return {ok: true}; }});
</script>"""


def grid_text(origins: dict[str, str], seeds: int) -> str:
    """A grid of one task per ``book → origin``; an episode succeeds when the site lent
    exactly its own book since its reset."""
    tasks = "".join(
        f"""
[[tasks]]
id = "borrow-{book}"
url = "{origin}/"
reset = "{origin}/reset"
instruction = "Borrow {book}."
plan = [{{call = "borrow", args = {{book = "{book}"}}}}, {{call = "wait"}}, {{finish = "done"}}]
success = [{{http = "/api/state", pointer = "/out", equals = ["{book}"]}}]
"""
        for book, origin in origins.items()
    )
    return f"""[experiment]
name = "loans"
seeds = {seeds}
policies = ["none"]
max_steps = 5
episode_timeout = 60
[[agents]]
spec = "scripted"
{tasks}"""


async def loans_site() -> tuple[web.AppRunner, str]:
    """A library whose state is the books lent since the last ``POST /reset``."""
    lent: list[str] = []

    async def page(request: web.Request) -> web.Response:
        return web.Response(text=PAGE, content_type="text/html")

    async def state(request: web.Request) -> web.Response:
        return web.json_response({"out": lent})

    async def borrow(request: web.Request) -> web.Response:
        lent.append(await request.text())
        return web.json_response({"ok": True})

    async def reset(request: web.Request) -> web.Response:
        lent.clear()
        return web.json_response({"ok": True})

    app = web.Application()
    app.router.add_get("/", page)
    app.router.add_get("/api/state", state)
    app.router.add_post("/api/borrow", borrow)
    app.router.add_post("/reset", reset)
    runner = web.AppRunner(app, shutdown_timeout=1.0)
    await runner.setup()
    return runner, f"http://127.0.0.1:{await listen(runner)}"


@pytest.fixture
async def site() -> AsyncIterator[str]:
    runner, origin = await loans_site()
    yield origin
    await runner.cleanup()


@pytest.mark.slow  # two runs of a grid of four browser episodes (~20 s)
async def test_a_reset_sites_episodes_give_the_same_outcomes_with_any_number_of_workers(
    tmp_path: Path, site: str
) -> None:
    grid = tmp_path / "grid.toml"
    grid.write_text(grid_text({"dune": site, "emma": site}, seeds=2), encoding="utf-8")
    outcomes = {}
    for workers in (1, 3):
        study = await run_experiment(
            load_grid(grid),
            RunOptions(output=tmp_path / f"w{workers}", workers=workers, progress=False),
        )
        outcomes[workers] = {r.episode: (r.status, r.success) for r in study.results}
        assert study.one_at_a_time == {site: ["borrow-dune", "borrow-emma"]}
        info = json.loads((tmp_path / f"w{workers}" / "run_info.json").read_text())
        assert info["runner"]["one_at_a_time"] == {site: ["borrow-dune", "borrow-emma"]}
    # Side by side, one episode's reset or borrow changed what another was judged on.
    assert outcomes[3] == outcomes[1]
    assert set(outcomes[1].values()) == {("ok", True)} and len(outcomes[1]) == 4


@pytest.mark.slow  # a local Ray instance, two actors with their Chromium (~1 min)
async def test_ray_actors_take_turns_on_a_reset_site_too(tmp_path: Path, site: str) -> None:
    pytest.importorskip("ray", reason="Ray is not installed: pip install 'webmcp-harness[ray]'")
    grid = tmp_path / "grid.toml"
    grid.write_text(grid_text({"dune": site, "emma": site}, seeds=2), encoding="utf-8")
    study = await run_experiment(
        load_grid(grid),
        RunOptions(output=tmp_path / "ray", workers=2, runner="ray", progress=False, report=False),
    )
    assert [(r.status, r.success) for r in study.results] == [("ok", True)] * 4


def specs(text: str, tmp_path: Path) -> list[EpisodeSpec]:
    path = tmp_path / "grid.toml"
    path.write_text(text, encoding="utf-8")
    return load_grid(path).episodes()


async def test_the_queue_runs_one_sites_episodes_in_turn_and_others_beside_them(
    tmp_path: Path,
) -> None:
    # Two tasks on one reset site (two reset paths: one server), one on a site of its own.
    episodes = specs(
        grid_text(
            {"a": "http://127.0.0.1:9001", "b": "http://127.0.0.1:9001/x", "c": "http://h:9002"},
            seeds=3,
        ).replace('reset = "http://127.0.0.1:9001/x/reset"', 'reset = "http://127.0.0.1:9001/r2"'),
        tmp_path,
    )
    assert shared_sites(spec.task for spec in episodes) == {
        "http://127.0.0.1:9001": ["borrow-a", "borrow-b"],
        "http://h:9002": ["borrow-c"],
    }
    queue = EpisodeQueue(episodes)
    running: dict[str, set[str]] = {"http://127.0.0.1:9001": set(), "http://h:9002": set()}
    at_once = 0
    ran: list[str] = []

    async def worker() -> None:
        nonlocal at_once
        while (spec := await queue.take()) is not None:
            site = next(s for s in running if spec.task.url and spec.task.url.startswith(s))
            assert not running[site], f"{spec.id} began while {running[site]} ran"
            running[site].add(spec.id)
            at_once = max(at_once, sum(len(r) for r in running.values()))
            await asyncio.sleep(0.01)
            running[site].discard(spec.id)
            ran.append(spec.id)
            await queue.finished(spec)

    await asyncio.gather(*(worker() for _ in range(4)))
    assert sorted(ran) == sorted(spec.id for spec in episodes)
    assert at_once == 2  # one episode of each site at a time, the two sites side by side
    assert queue.drain() == []


async def test_a_put_back_episode_runs_again_once_its_site_is_free(tmp_path: Path) -> None:
    one, two = specs(grid_text({"a": "http://127.0.0.1:9001"}, seeds=2), tmp_path)
    queue = EpisodeQueue([one, two])
    assert await queue.take() == one
    waiting = asyncio.ensure_future(queue.take())
    await asyncio.sleep(0.01)
    assert not waiting.done()  # the site is busy: `two` waits its turn
    await queue.finished(one)
    await queue.put_back(one)  # its worker died mid-episode
    assert await waiting == two
    await queue.finished(two)
    assert await queue.take() == one
    await queue.finished(one)
    assert await queue.take() is None


def test_one_site_is_one_site_however_its_urls_are_spelled(tmp_path: Path) -> None:
    # The browser reads `HTTP://127.0.0.1:80/` and `http://127.0.0.1/` as one origin (the
    # scheme's default port left out, the scheme lower case): so do the turns. Read with
    # urllib, the two were two sites, and their episodes ran side by side.
    episodes = specs(
        grid_text({"a": "HTTP://127.0.0.1:80", "b": "http://127.0.0.1"}, seeds=1), tmp_path
    )
    assert shared_sites(spec.task for spec in episodes) == {
        "http://127.0.0.1": ["borrow-a", "borrow-b"]
    }


def test_a_reset_that_is_not_an_absolute_http_url_is_refused_when_the_grid_loads(
    tmp_path: Path,
) -> None:
    # Before, "/reset" loaded, and every episode then failed on its POST.
    text = grid_text({"a": "http://127.0.0.1:9001"}, seeds=1).replace(
        'reset = "http://127.0.0.1:9001/reset"', 'reset = "/reset"'
    )
    with pytest.raises(ConfigError, match=r"reset '/reset' must be an absolute http\(s\) URL"):
        specs(text, tmp_path)
