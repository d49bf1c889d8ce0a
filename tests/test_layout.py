"""The house stays in order: imports run one way, with no cycles, and the layout says so.

The layers, from the bottom (a module may import its own layer and the ones below):

    models, errors, schemas, inputs, urls  →  catalog, elicitation  →  browser  →  stages  →  declarative
    →  the core (pipeline, session, harness, agent_view, sync_api)  →  trace  →  agents, qa
    →  front ends (cli, mcp, testing, and the coming conformance, experiments, bench, …)

A front end never imports another front end; the CLI may import each, to dispatch.
``agents`` and ``trace`` sit below the front ends because three of them (the CLI, the
pytest plugin, experiments) run agents and write traces. Every import counts: at the
top of a module, inside a function, or under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

HARNESS = Path(__file__).resolve().parent.parent / "harness"

# Each top-level unit of the package (a module or a sub-package) and its layer.
LAYERS: dict[str, int] = {
    "models": 0,
    "errors": 0,
    "schemas": 0,
    "inputs": 0,
    # URLs as the browser reads them: the answers files (elicitation) decide origins too.
    "urls": 0,
    "catalog": 1,
    "elicitation": 1,
    "browser": 2,
    "stages": 3,
    "declarative": 4,
    "pipeline": 5,
    "session": 5,
    "harness": 5,
    "agent_view": 5,
    "sync_api": 5,
    "trace": 6,
    "agents": 7,
    # The QA tools' engine (fuzzing, catalog snapshots and drift, the doctor): below the
    # front ends, as `agents` is, because three of them use it (the CLI's commands, the
    # pytest plugin's `webmcp.fuzz()`, the site audit's options).
    "qa": 7,
}
FRONT_ENDS = {
    "cli",
    "mcp",
    "testing",
    "expect",
    "pytest_plugin",
    "conformance",
    "audit",
    "reports",
    "experiments",
    "bench",
    "selftest",
}
FRONT_END_LAYER = 8
DISPATCHER = "cli"
# Old public paths that are now faces of a front end.
FACES = {"expect": "testing", "pytest_plugin": "testing"}


@dataclass(frozen=True)
class Problem:
    """One broken rule: what imports what, and which rule it breaks."""

    rule: str
    detail: str


def modules(root: Path, package: str) -> dict[str, Path]:
    """Every module of ``package`` under ``root`` (a package's ``__init__`` named as the package)."""
    found: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join((package, *parts))] = path
    return found


def _imported(node: ast.AST, module: str, is_package: bool) -> Iterator[str]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            base = module.split(".")
            if not is_package:
                base = base[:-1]
            base = base[: len(base) - (node.level - 1)]
            stem = ".".join([*base, node.module] if node.module else base)
        else:
            stem = node.module or ""
        for alias in node.names:
            yield f"{stem}.{alias.name}"  # a submodule, if there is one by that name
            yield stem


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """Module → the package's modules it imports (anywhere in the file)."""
    known = modules(root, package)
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        targets: set[str] = set()
        for node in ast.walk(tree):
            candidates = list(_imported(node, name, path.name == "__init__.py"))
            # `from a.b import c`: the submodule a.b.c when it exists, else the module a.b.
            for candidate in candidates:
                if candidate in known and candidate != name:
                    targets.add(candidate)
                    if isinstance(node, ast.ImportFrom):
                        break
        graph[name] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one member (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def unit_of(module: str, package: str) -> str:
    """The top-level unit a module belongs to: ``harness.stages.policy`` → ``stages``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else package


def layer_problems(
    graph: dict[str, set[str]],
    package: str,
    layers: dict[str, int],
    front_ends: set[str],
) -> list[Problem]:
    """Every import that breaks the layering, the front-end rule or the unit-level order."""
    problems: list[Problem] = []
    unit_graph: dict[str, set[str]] = {}
    for module, targets in graph.items():
        here = unit_of(module, package)
        if here == package:
            continue  # the package's own __init__: lazy names only
        for target in targets:
            there = unit_of(target, package)
            if there in (here, package):
                continue
            unit_graph.setdefault(here, set()).add(there)
            face_here, face_there = FACES.get(here, here), FACES.get(there, there)
            if face_here in front_ends and face_there in front_ends:
                if face_here != DISPATCHER and face_here != face_there:
                    problems.append(
                        Problem("front end imports front end", f"{module} imports {target}")
                    )
                continue
            mine = FRONT_END_LAYER if face_here in front_ends else layers.get(here)
            theirs = FRONT_END_LAYER if face_there in front_ends else layers.get(there)
            if mine is None or theirs is None:
                unknown = here if mine is None else there
                problems.append(
                    Problem("unit without a layer", f"{unknown} (add it to LAYERS or FRONT_ENDS)")
                )
            elif theirs > mine:
                problems.append(
                    Problem(
                        "import upwards", f"{module} (layer {mine}) imports {target} ({theirs})"
                    )
                )
    for component in cycles(unit_graph):
        problems.append(Problem("cycle between units", " ⇄ ".join(component)))
    return problems


def check(root: Path, package: str) -> list[Problem]:
    """All problems of a package: module cycles, then the layering."""
    graph = import_graph(root, package)
    problems = [Problem("import cycle", " ⇄ ".join(c)) for c in cycles(graph)]
    return problems + layer_problems(graph, package, LAYERS, FRONT_ENDS)


# -- the harness itself -------------------------------------------------------------------------


def test_the_harness_has_no_import_cycle_and_imports_run_one_way() -> None:
    problems = check(HARNESS, "harness")
    assert problems == [], "\n".join(f"{p.rule}: {p.detail}" for p in problems)


def test_the_top_level_holds_at_most_twelve_modules() -> None:
    top = [p.name for p in HARNESS.glob("*.py") if p.name != "__init__.py"]
    assert len(top) <= 12, sorted(top)


def test_every_sub_package_says_what_it_holds_and_what_it_may_import() -> None:
    for init in sorted(HARNESS.rglob("__init__.py")):
        if init.parent == HARNESS:
            continue
        docstring = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert docstring, f"{init.relative_to(HARNESS.parent)} has no docstring"
        lowered = docstring.lower()
        assert "may import" in lowered or "front end" in lowered, (
            f"{init.relative_to(HARNESS.parent)}: the docstring does not say what it may import"
        )


def test_every_unit_has_a_layer() -> None:
    units = {unit_of(m, "harness") for m in modules(HARNESS, "harness")} - {"harness"}
    placed = set(LAYERS) | FRONT_ENDS
    assert units <= placed, sorted(units - placed)


# -- the checker, on synthetic packages -----------------------------------------------------


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "pkg"
    for name, text in {"__init__.py": "", **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if path.parent != root and not (path.parent / "__init__.py").exists():
            (path.parent / "__init__.py").write_text('"""A sub-package."""\n', encoding="utf-8")
    return root


@pytest.fixture
def layered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        "tests.test_layout.LAYERS", {"models": 0, "stages": 3, "session": 5, "agents": 7}
    )


def test_the_checker_finds_a_cycle_between_two_modules(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "models.py": "from pkg.stages.policy import Rule\n",
            "stages/policy.py": "from pkg.models import Tool\n",
        },
    )
    problems = check(root, "pkg")
    assert Problem("import cycle", "pkg.models ⇄ pkg.stages.policy") in problems


def test_the_checker_finds_a_cycle_hidden_in_a_function_or_type_checking(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "session.py": "from pkg import models\n",
            "models.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from pkg.session import Session\n"
            ),
            "stages/a.py": "def f():\n    from pkg.stages import b\n",
            "stages/b.py": "from . import a\n",
        },
    )
    rules = {(p.rule, p.detail) for p in check(root, "pkg")}
    assert ("import cycle", "pkg.models ⇄ pkg.session") in rules
    assert ("import cycle", "pkg.stages.a ⇄ pkg.stages.b") in rules


@pytest.mark.usefixtures("layered")
def test_the_checker_finds_an_upward_import_and_a_front_end_importing_another(
    tmp_path: Path,
) -> None:
    root = _package(
        tmp_path,
        {
            "models.py": "",
            "stages/policy.py": "from pkg.session import Session\n",
            "session.py": "from pkg.models import Tool\n",
            "mcp/server.py": "from pkg.testing.plugin import webmcp\n",
            "testing/plugin.py": "from pkg.session import Session\n",
            "cli/main.py": "from pkg.mcp.server import serve\nfrom pkg.testing import plugin\n",
        },
    )
    problems = check(root, "pkg")
    assert Problem("import upwards", "pkg.stages.policy (layer 3) imports pkg.session (5)") in (
        problems
    )
    assert Problem("front end imports front end", "pkg.mcp.server imports pkg.testing.plugin") in (
        problems
    )
    assert not any(p.detail.startswith("pkg.cli") for p in problems)  # the CLI dispatches


@pytest.mark.usefixtures("layered")
def test_the_checker_passes_a_package_in_order(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "models.py": "",
            "stages/policy.py": "from pkg.models import Tool\n",
            "session.py": "from pkg.stages.policy import Rule\nfrom pkg import models\n",
            "agents/loop.py": "from pkg.session import Session\n",
            "mcp/server.py": "from pkg.agents.loop import run\n",
        },
    )
    assert check(root, "pkg") == []
