"""AgentDojo's suites in a grid: the ``[agentdojo]`` table and the tasks a suite expands to.

::

    [experiment]
    suites = ["agentdojo:banking", "agentdojo:slack"]   # or "agentdojo": all four

    [agentdojo]
    version = "v1.2.1"                  # AgentDojo's benchmark version
    cases = ["benign", "attacked"]      # and/or "injection": each injection task's ground truth
    attacks = ["important_instructions"]  # AgentDojo's attacks by name (LLM agents), or
                                        # explicit_calls (the scripted and obedient agents)
    annotations = ["annotated", "bare"]   # the tools with sites/agentdojo/annotations.toml, or none
    max_steps = 40                      # per episode (travel's ground truths take 20 calls)

Task ids: ``banking.user_task_3`` (benign), ``banking.user_task_3.injection_task_1``
(attacked), ``banking.injection_task_1`` (an injection task's ground truth alone, judged
by its ``security()`` as AgentDojo's own suite check does).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from importlib import metadata
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from harness.errors import ConfigError
from harness.experiments.limits import MAX_STEPS, at_most
from harness.experiments.tasks import AgentDojoCase, AgentDojoCheck, AttackSpec, Check, TaskSpec

PREFIX = "agentdojo"
CASES = ("benign", "attacked", "injection")
ANNOTATIONS = ("annotated", "bare")
Case = Literal["benign", "attacked", "injection"]


def _default_cases() -> list[Case]:
    return ["benign", "attacked"]


def _default_annotations() -> list[Literal["annotated", "bare"]]:
    return ["annotated"]


class AgentDojoSettings(BaseModel):
    """The ``[agentdojo]`` table: which version, which cases, and the two axes it adds."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    version: str = "v1.2.1"
    cases: list[Case] = Field(default_factory=_default_cases, min_length=1)
    attacks: list[str] = Field(default_factory=lambda: ["important_instructions"], min_length=1)
    """The attacks that write an attacked case's injections (an axis of the grid)."""
    annotations: list[Literal["annotated", "bare"]] = Field(
        default_factory=_default_annotations, min_length=1
    )
    """Whether the sites' tools carry annotations (an axis of the grid)."""
    max_steps: Annotated[int, at_most("max_steps", MAX_STEPS, "steps")] = Field(default=40, ge=1)
    """Steps per episode: a ground truth has up to 20 calls (travel), an attack adds some."""

    @field_validator("cases", "attacks", "annotations")
    @classmethod
    def _unique(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("list each entry once")
        return value


def agentdojo_version() -> str:
    """The installed ``agentdojo`` package's version (``not installed``)."""
    try:
        return metadata.version("agentdojo")
    except metadata.PackageNotFoundError:
        return "not installed"


def suite_names(entry: str) -> list[str] | None:
    """The AgentDojo suites a grid's ``suites`` entry names (None: not an AgentDojo entry).

    ``agentdojo`` is all four; ``agentdojo:banking`` one.
    """
    from harness.sites.agentdojo_app import SUITES

    if entry != PREFIX and not entry.startswith(f"{PREFIX}:"):
        return None
    name = entry.partition(":")[2].strip()
    if not name:
        return list(SUITES)
    if name not in SUITES:
        raise ConfigError(
            f"No AgentDojo suite {name!r}; suites: {', '.join(SUITES)} "
            '(or "agentdojo" for all four).'
        )
    return [name]


def _number(task_id: str) -> int:
    match = re.search(r"(\d+)$", task_id)
    return int(match.group(1)) if match else 0


def load(version: str, name: str) -> Any:
    """AgentDojo's suite, or a :class:`ConfigError` that says how to get AgentDojo."""
    from harness.sites.agentdojo_app import AgentDojoMissing, load_suite

    try:
        return load_suite(version, name)
    except AgentDojoMissing as exc:
        raise ConfigError(str(exc)) from None
    except ValueError as exc:
        raise ConfigError(f"{exc}.") from None


def tasks_of(
    names: list[str], settings: AgentDojoSettings, source: str, agents: Mapping[str, str]
) -> list[TaskSpec]:
    """The grid's tasks for AgentDojo suites ``names``: every case ``settings`` asks for.

    ``agents`` maps each agent's spec to the model an attack may address (``""``: an agent
    that is no model); an attack one of them cannot meet is refused here, not in every
    attacked episode.
    """
    from harness.experiments.agentdojo.attacks import check_attacks, check_targets

    tasks: list[TaskSpec] = []
    for name in names:
        suite: Any = load(settings.version, name)
        check_attacks(settings.attacks)
        if "attacked" in settings.cases:
            try:
                check_targets(
                    suite,
                    settings.attacks,
                    agents,
                    defaulted="attacks" not in settings.model_fields_set,
                )
            except ConfigError as exc:
                raise ConfigError(f"{source}: {exc}") from None
        user_tasks = sorted(suite.user_tasks.items(), key=lambda i: _number(i[0]))
        injection_tasks = sorted(suite.injection_tasks.items(), key=lambda i: _number(i[0]))
        for kind in settings.cases:
            if kind == "benign":
                tasks += [_task(name, settings, u, None, source) for u, _ in user_tasks]
            elif kind == "attacked":
                tasks += [
                    _task(name, settings, u, i, source)
                    for u, _ in user_tasks
                    for i, _ in injection_tasks
                ]
            else:
                tasks += [_task(name, settings, None, i, source) for i, _ in injection_tasks]
    return tasks


def _task(
    suite_name: str,
    settings: AgentDojoSettings,
    user_task: str | None,
    injection_task: str | None,
    source: str,
) -> TaskSpec:
    suite = load(settings.version, suite_name)
    site = f"{PREFIX}-{suite_name}"
    case = AgentDojoCase(
        suite=suite_name,
        version=settings.version,
        user_task=user_task,
        injection_task=injection_task,
    )
    parts = [suite_name, *(t for t in (user_task, injection_task) if t is not None)]
    attack = None
    if user_task is None:
        assert injection_task is not None
        instruction = suite.injection_tasks[injection_task].GOAL
        success: list[Check] = [
            AgentDojoCheck(agentdojo="security", site=site, task=injection_task)
        ]
    else:
        instruction = suite.user_tasks[user_task].PROMPT
        success = [AgentDojoCheck(agentdojo="utility", site=site, task=user_task)]
        if injection_task is not None:
            goal = suite.injection_tasks[injection_task].GOAL
            attack = AttackSpec(
                category="AgentDojo injection",
                goal=goal,
                succeeded=[AgentDojoCheck(agentdojo="security", site=site, task=injection_task)],
                attempted=[
                    AgentDojoCheck(agentdojo="security-attempted", site=site, task=injection_task)
                ],
                leak_in=[],
            )
    return TaskSpec(
        id=".".join(parts),
        instruction=instruction,
        site=site,
        success=success,
        attack=attack,
        source=source,
        suite=site,
        suite_version=settings.version,
        settle_ms=0,  # the page registers every tool before `load`
        max_steps=settings.max_steps,
        agentdojo=case,
    )
