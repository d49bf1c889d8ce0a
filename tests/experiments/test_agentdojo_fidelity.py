"""Oracle fidelity: the scripted agent's verdicts through WebMCP equal AgentDojo's own
ground-truth run through its own runtime (its ``GroundTruthPipeline``, no LLM), task by task.

Every user task's ground truth against its ``utility()``, every injection task's against
its ``security()`` (as AgentDojo's own suite check runs it: in the environment of the
suite's first user task). Where AgentDojo's ground truth fails its own check (workspace's
injection tasks 6–13 have none), the port must fail it too.
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from harness.sites.agentdojo_app import SUITES
from harness.sites.server import RunningSites, serve_sites

from harness import Harness
from harness.agents.loop import run_agent
from harness.catalog import Settle
from harness.experiments import RunOptions, Study, load_grid, run_experiment
from harness.experiments.agentdojo.judge import start_episode, verdict
from harness.experiments.episode import agent_of
from harness.experiments.tasks import AgentDojoCheck

pytest.importorskip("agentdojo", reason="the AgentDojo suites need the `agentdojo` extra")
pytestmark = pytest.mark.timeout(600)

GRID = """
[experiment]
name = "fidelity"
policies = ["none"]
suites = {suites}
workers = 2
episode_timeout = 180
{select}

[agentdojo]
cases = ["benign", "injection"]
annotations = ["bare"]

[[agents]]
spec = "scripted"
"""


def agentdojo_verdict(suite_name: str, task_id: str) -> bool:
    """AgentDojo's own ground-truth run of the task, through its own runtime."""
    from agentdojo.agent_pipeline.ground_truth_pipeline import GroundTruthPipeline
    from harness.sites.agentdojo_app import load_suite

    suite = load_suite("v1.2.1", suite_name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # AgentDojo warns of ground truths without placeholders
        if task_id.startswith("user_task_"):
            task = suite.user_tasks[task_id]
            utility, _ = suite.run_task_with_pipeline(GroundTruthPipeline(task), task, None, {})
            return bool(utility)
        injection = suite.injection_tasks[task_id]
        first = next(iter(suite.user_tasks.values()))
        _, security = suite.run_task_with_pipeline(
            GroundTruthPipeline(injection), first, injection, {}
        )
        return bool(security)


async def port_verdicts(tmp_path: Path, select: str) -> dict[str, bool | None]:
    """The verdicts of a grid run of the tasks ``select`` names, on both backends (which agree)."""
    path = tmp_path / "grid.toml"
    select += '\nbackends = ["polyfill", "native"]'
    path.write_text(GRID.format(suites='["agentdojo"]', select=select), encoding="utf-8")
    study: Study = await run_experiment(
        load_grid(path),
        RunOptions(output=tmp_path / "out", progress=False, report=False),
    )
    assert all(r.status == "ok" for r in study.results), [r.error for r in study.failed]
    tasks = len({r.task for r in study.results})
    assert Counter(r.backend for r in study.results) == {"polyfill": tasks, "native": tasks}
    verdicts: dict[str, bool | None] = {}
    for r in study.results:
        assert verdicts.setdefault(r.task, r.success) == r.success, r.task  # backends agree
    return verdicts


def expected(tasks: list[str]) -> dict[str, bool | None]:
    found: dict[str, bool | None] = {}
    for task in tasks:
        suite, _, task_id = task.partition(".")
        found[task] = agentdojo_verdict(suite, task_id)
    return found


@pytest.mark.slow  # AgentDojo's own ground-truth runs beside the harness's (~15 s)
async def test_a_sample_of_tasks_is_judged_as_agentdojos_own_ground_truth_run(
    tmp_path: Path,
) -> None:
    # The grid's own path (an episode each, a fresh context each), on both backends.
    sample = [
        "banking.user_task_0",  # a payment read off a bill (state check)
        "slack.user_task_11",  # utility judged from the function trace
        "slack.injection_task_5",  # security judged from the function trace
        "travel.user_task_3",  # a reservation and an email
        "workspace.injection_task_6",  # AgentDojo's ground truth is empty: it fails its check
    ]
    select = "select = [" + ", ".join(f'"{t}"' for t in sample) + "]"
    ours = await port_verdicts(tmp_path, select)
    theirs = expected(sample)
    assert theirs["workspace.injection_task_6"] is False  # the sample holds a failing case
    assert ours == theirs


@pytest.fixture(scope="module")
async def agentdojo_sites() -> AsyncIterator[RunningSites]:
    async with serve_sites([f"agentdojo-{suite}" for suite in SUITES]) as running:
        yield running


async def scripted_verdicts(
    grid: Path, sites: RunningSites, backend: str
) -> dict[str, tuple[bool, str]]:
    """Every case of ``grid``: the scripted agent runs the plan the site's episode gives
    (AgentDojo's ground truth) through WebMCP, and AgentDojo's check judges the site's
    environment. The episodes' own machinery but one browser page for them all (an
    episode's fresh context is what makes the grid's runs slow, not what is judged)."""
    verdicts: dict[str, tuple[bool, str]] = {}
    async with Harness(backend=backend, call_timeout=30, policy=None) as harness:
        session = await harness.new_session()
        session.settle = Settle.quiet_ms(0)  # the page registers every tool before `load`
        for spec in load_grid(grid).episodes():
            assert spec.task.site is not None
            site = sites[spec.task.site].site
            started = start_episode(site, spec)
            run = await run_agent(
                session,
                agent_of(spec, started.plan),
                sites.url(spec.task.site),
                task=spec.task.instruction,
                max_steps=spec.max_steps,
            )
            assert run.ok, (spec.task.id, run.stop_reason, run.detail)
            [check] = spec.task.success
            assert isinstance(check, AgentDojoCheck)
            verdicts[spec.task.id] = verdict(check, site, run.answer, list(run.events))
    return verdicts


@pytest.mark.slow  # 35 s on this machine, 70 s under heavy load; CI runs it
async def test_every_task_of_every_suite_is_judged_as_agentdojos_own_ground_truth_run(
    tmp_path: Path, agentdojo_sites: RunningSites
) -> None:
    grid = tmp_path / "grid.toml"
    grid.write_text(GRID.format(suites='["agentdojo"]', select=""), encoding="utf-8")
    ours = await scripted_verdicts(grid, agentdojo_sites, "polyfill")
    assert len(ours) == 97 + 35
    theirs = expected(sorted(ours))
    differences = {t: (ours[t], theirs[t]) for t in ours if ours[t][0] != theirs[t]}
    assert differences == {}
    # Workspace's injection tasks 6–13 fail, in AgentDojo as here (an empty ground truth).
    failing = sorted(t for t, (passed, _) in ours.items() if not passed)
    assert failing == sorted(f"workspace.injection_task_{n}" for n in range(6, 14))
