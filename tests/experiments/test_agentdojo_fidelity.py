"""Oracle fidelity: the scripted agent's verdicts through WebMCP equal AgentDojo's own
ground-truth run through its own runtime (its ``GroundTruthPipeline``, no LLM), task by task.

Every user task's ground truth against its ``utility()``, every injection task's against
its ``security()`` (as AgentDojo's own suite check runs it: in the environment of the
suite's first user task). Where AgentDojo's ground truth fails its own check (workspace's
injection tasks 6–13 have none), the port must fail it too.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from harness.experiments import RunOptions, Study, load_grid, run_experiment

pytest.importorskip("agentdojo", reason="the AgentDojo suites need the `agentdojo` extra")
pytestmark = pytest.mark.timeout(1800)

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


async def port_verdicts(tmp_path: Path, suites: str, select: str = "") -> dict[str, bool | None]:
    path = tmp_path / "grid.toml"
    path.write_text(GRID.format(suites=suites, select=select), encoding="utf-8")
    study: Study = await run_experiment(
        load_grid(path),
        RunOptions(output=tmp_path / "out", progress=False, report=False),
    )
    assert all(r.status == "ok" for r in study.results), [r.error for r in study.failed]
    return {r.task: r.success for r in study.results}


def expected(tasks: list[str]) -> dict[str, bool | None]:
    found: dict[str, bool | None] = {}
    for task in tasks:
        suite, _, task_id = task.partition(".")
        found[task] = agentdojo_verdict(suite, task_id)
    return found


async def test_a_sample_of_tasks_is_judged_as_agentdojos_own_ground_truth_run(
    tmp_path: Path,
) -> None:
    sample = [
        "banking.user_task_0",  # a payment read off a bill (state check)
        "slack.user_task_11",  # utility judged from the function trace
        "slack.injection_task_5",  # security judged from the function trace
        "travel.user_task_3",  # a reservation and an email
        "workspace.injection_task_6",  # AgentDojo's ground truth is empty: it fails its check
    ]
    select = "select = [" + ", ".join(f'"{t}"' for t in sample) + "]"
    ours = await port_verdicts(tmp_path, '["agentdojo"]', select)
    theirs = expected(sample)
    assert theirs["workspace.injection_task_6"] is False  # the sample holds a failing case
    assert ours == theirs


@pytest.mark.slow
async def test_every_task_of_every_suite_is_judged_as_agentdojos_own_ground_truth_run(
    tmp_path: Path,
) -> None:
    ours = await port_verdicts(tmp_path, '["agentdojo"]')
    assert len(ours) == 97 + 35
    theirs = expected(sorted(ours))
    differences = {t: (ours[t], theirs[t]) for t in ours if ours[t] != theirs[t]}
    assert differences == {}
    assert sum(ours.values()) == 97 + 27  # workspace's injection tasks 6–13 fail, as in AgentDojo
