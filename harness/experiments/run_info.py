"""``run_info.json``: what it takes to reproduce a run.

Package versions, Python and the platform, the Chromium each backend ran (version,
executable, launch flags), the harness's git commit (when it runs from a checkout),
the grid file and the hash of everything it includes, the seeds, the agents with
their sampling options (temperature, seed), the policies and answers by name and
hash, the suites with their versions (``agentdojo-banking`` ``v1.2.1``, from package
``agentdojo`` 0.1.35), what each ``url`` task's site served (hashes), and each
invocation (a first run, then every resume) with its throughput.
"""

from __future__ import annotations

import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from harness.browser.chromium import QUIET_FLAGS, chromium_args, find_chromium
from harness.errors import HarnessError
from harness.experiments.grid import Grid
from harness.harness import BACKENDS

RUN_INFO = "run_info.json"

PACKAGES = (
    "webmcp-harness",
    "playwright",
    "pydantic",
    "aiohttp",
    "jsonschema",
    "mcp",
    "openai",
    "anthropic",
    "ray",
    "agentdojo",
    "matplotlib",
    "jinja2",
)


def package_versions() -> dict[str, str | None]:
    """The installed version of each package that shapes a run (None: not installed)."""
    return {name: _package_version(name) for name in PACKAGES}


def git_commit() -> dict[str, Any] | None:
    """The harness checkout's commit and whether it had uncommitted changes (None: no git)."""
    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists():
        return None
    try:
        commit = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        status = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": commit, "dirty": bool(status.strip())}


def chromium_info(versions: dict[str, str]) -> dict[str, Any]:
    """The executable, and each backend's version and launch flags."""
    try:
        executable: str | None = str(find_chromium())
    except HarnessError:
        executable = None
    return {
        "executable": executable,
        "versions": dict(sorted(versions.items())),
        "flags": {
            name: chromium_args(QUIET_FLAGS, backend.launch_args())
            for name, backend in BACKENDS.items()
        },
    }


def grid_info(grid: Grid) -> dict[str, Any]:
    """The grid: its file, hash (and each file it refers to, hashed), seeds, agents (with sampling options), policies and answers."""
    return {
        "name": grid.experiment.name,
        "path": grid.path,
        "sha256": grid.sha256,
        "files": grid.files,
        "seeds": grid.experiment.seed_list(),
        "agents": [
            {
                "name": grid.agent_name(agent),
                "id_label": grid.agent_slug(agent),  # its part of episode ids and directories
                "spec": agent.spec,
                "temperature": agent.temperature,
                "seed": "the episode's seed" if agent.is_llm and agent.seeded else None,
                "max_tokens": agent.max_tokens,
                "options": sorted(agent.options),  # names only: values may hold keys
            }
            for agent in grid.agents
        ],
        "tasks": [task.id for task in grid.tasks],
        "suites": suites_info(grid),
        "agentdojo": grid.agentdojo.model_dump() if grid.agentdojo is not None else None,
        "policies": [{"name": p.name, "sha256": p.sha256} for p in grid.policies],
        "elicitation": [{"name": a.name, "sha256": a.sha256} for a in grid.answers],
        "backends": grid.experiment.backends,
        "max_steps": grid.experiment.max_steps,
        "episode_timeout": grid.experiment.episode_timeout,
        "call_timeout": grid.experiment.call_timeout,
    }


def suites_info(grid: Grid) -> list[dict[str, Any]]:
    """Each suite the grid's tasks come from: its name, version, and the package that has it."""
    found: dict[str, str] = {}
    for task in grid.tasks:
        if task.suite:
            found.setdefault(task.suite, task.suite_version)
    return [
        {
            "name": name,
            "version": version,
            "package": _package_version(
                "agentdojo" if name.startswith("agentdojo-") else "webmcp-harness"
            ),
        }
        for name, version in sorted(found.items())
    ]


def _package_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def environment_info() -> dict[str, Any]:
    """Python, the platform, package versions and the git commit."""
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": package_versions(),
        "git": git_commit(),
    }


def served_info(results: list[Any]) -> dict[str, dict[str, list[str]]]:
    """Per ``url`` task, every hash its site served (document, tools) and every URL a
    redirect took its start document to (document_url): compare across runs."""
    served: dict[str, dict[str, set[str]]] = {}
    for result in results:
        for kind, digest in result.served.items():
            served.setdefault(result.task, {}).setdefault(kind, set()).add(digest)
    return {
        task: {kind: sorted(hashes) for kind, hashes in sorted(kinds.items())}
        for task, kinds in sorted(served.items())
    }
