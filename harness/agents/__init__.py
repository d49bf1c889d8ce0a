"""Agents: what decides the next step, given the task, the tools and the history.

``base`` defines the protocol and the actions; each agent is one module
(``scripted``, ``replay``, ``obedient``, ``openai``, ``anthropic``).

:func:`make_agent` builds an agent from a spec as the CLI's ``--agent`` takes
it, ``KIND`` or ``KIND:ARGUMENT`` (``scripted:plan.yaml``, ``replay:runs/a``,
``obedient``, ``obedient:plan.yaml``, ``openai:MODEL``, ``anthropic:MODEL``).
:data:`AGENT_FACTORIES` maps each kind to a factory ``(argument, **options) ->
Agent``; a factory imports its module when called, so an agent's optional
dependencies load only when it is used. ``loop`` runs an agent against a session.

Below the front ends (the CLI, the pytest plugin and experiments all run agents):
may import the core, ``harness.trace`` and everything below them; never a front end.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.agents.base import Agent
from harness.errors import ConfigError

AgentFactory = Callable[..., Agent]


def _scripted(argument: str, **options: Any) -> Agent:
    from harness.agents.scripted import ScriptedAgent

    if not argument:
        raise ConfigError("scripted needs a plan file: --agent scripted:PLAN.yaml")
    return ScriptedAgent.from_file(argument)


def _replay(argument: str, **options: Any) -> Agent:
    from harness.agents.replay import ReplayAgent

    if not argument:
        raise ConfigError("replay needs a recorded run directory: --agent replay:DIR")
    return ReplayAgent.from_dir(argument, ignore=options.get("ignore"))


def _obedient(argument: str, **options: Any) -> Agent:
    from harness.agents.obedient import SOURCES, ObedientAgent

    obey = options.get("obey", SOURCES)
    return ObedientAgent.from_file(argument, obey=obey) if argument else ObedientAgent(obey=obey)


def _openai(argument: str, **options: Any) -> Agent:
    from harness.agents.providers import llm_agent

    return llm_agent("openai", argument, **options)


def _anthropic(argument: str, **options: Any) -> Agent:
    from harness.agents.providers import llm_agent

    return llm_agent("anthropic", argument, **options)


AGENT_FACTORIES: dict[str, AgentFactory] = {
    "scripted": _scripted,
    "replay": _replay,
    "obedient": _obedient,
    "openai": _openai,
    "anthropic": _anthropic,
}
"""Each agent kind and its factory ``(argument, **options) -> Agent``."""


def make_agent(spec: str, **options: Any) -> Agent:
    """The agent for ``KIND`` or ``KIND:ARGUMENT``; ``options`` go to the factory."""
    kind, _, argument = spec.partition(":")
    factory = AGENT_FACTORIES.get(kind.strip())
    if factory is None:
        known = ", ".join(sorted(AGENT_FACTORIES))
        raise ConfigError(f"Unknown agent {kind!r} in --agent {spec!r}; agents: {known}.")
    return factory(argument.strip(), **options)
