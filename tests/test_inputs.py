"""Input files are loaded with one set of limits (issue 24, point 6): a 630-byte plan whose
YAML aliases expand to gigabytes, a file nested beyond reason, a file over the size limit,
or a syntax error is one clear line from every loader — plans, grids, policies, answers,
price files, baselines, catalog files, previous reports, an episode's answers — never
memory, time or a traceback."""

from __future__ import annotations

import resource
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness.agents.scripted import load_plan
from harness.agents.usage import PriceTable
from harness.conformance.baseline import Baseline
from harness.conformance.results import load_reports
from harness.elicitation.answers import load_answers
from harness.errors import MAX_INPUT_FILE_BYTES, ConfigError, PolicyError
from harness.experiments.episode import answers_of
from harness.experiments.grid import NamedSource, load_grid
from harness.inputs import MAX_INPUT_DEPTH, InputSyntaxError, load_input, parse_input
from harness.qa.snapshot import read_snapshot
from harness.stages.policy import Policy


def laughs(key: str, levels: int = 9) -> str:
    """A "billion laughs": each level nine aliases of the one before (9**9 strings)."""
    lines = [f"{key}:", "  - &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for level in range(1, levels):
        lines.append(f"  - &l{level} [" + ", ".join([f"*l{level - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


BOMB = laughs("steps")


def episode_answers(path: Path) -> Any:
    """The answers an experiment's episode reads: the file's text, carried with the episode."""
    return answers_of(NamedSource(name="a", path=str(path), text=path.read_text(), sha256=""))


LOADERS: dict[str, tuple[str, Callable[[Path], Any], str]] = {
    "plan": ("plan.yaml", load_plan, BOMB),
    "answers": ("answers.yaml", load_answers, laughs("answers")),
    "policy": ("policy.yaml", Policy.load, laughs("rules")),
    "price file": ("prices.yaml", PriceTable.load, laughs("gpt-4o")),
    "baseline": ("baseline.yml", Baseline.load, laughs("polyfill")),
    "episode answers": ("answers.yaml", episode_answers, laughs("answers")),
    "grid plan": (
        "grid.toml",
        load_grid,
        '[[agents]]\nspec = "scripted"\n[[tasks]]\nid = "t"\nsite = "todo"\nplan = "p.yaml"\n',
    ),
}


JSON_LOADERS: dict[str, tuple[str, Callable[[Path], Any]]] = {
    "catalog file": ("catalog.json", read_snapshot),
    "previous report": ("wptreport.json", load_reports),
}
"""The loaders of JSON files a user hands the harness (no aliases: size and nesting)."""

EVERY_LOADER = {
    **{name: (file, load) for name, (file, load, _) in LOADERS.items()},
    **JSON_LOADERS,
}
del EVERY_LOADER["episode answers"]  # its text was read (and measured) with the grid


def test_the_bomb_is_small() -> None:
    assert len(BOMB.encode()) < 700  # the size of the issue's: 630 bytes


@pytest.mark.parametrize("loader", list(LOADERS))
def test_every_loader_refuses_yaml_aliases_that_expand_beyond_the_limit(
    loader: str, tmp_path: Path
) -> None:
    name, load, text = LOADERS[loader]
    (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "p.yaml").write_text(BOMB, encoding="utf-8")  # the grid's plan file
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(ConfigError, match="aliases expand to more than"):
        load(tmp_path / name)
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 50_000  # refused before anything was built


@pytest.mark.parametrize("loader", list(JSON_LOADERS))
def test_every_json_loader_refuses_nesting_beyond_the_limit(loader: str, tmp_path: Path) -> None:
    name, load = JSON_LOADERS[loader]
    (tmp_path / name).write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    with pytest.raises(ConfigError, match=f"deeper than {MAX_INPUT_DEPTH} levels"):
        load(tmp_path / name)


@pytest.mark.parametrize("loader", list(EVERY_LOADER))
def test_every_loader_refuses_a_file_over_the_size_limit(loader: str, tmp_path: Path) -> None:
    name, load = EVERY_LOADER[loader]
    with (tmp_path / name).open("wb") as file:
        file.truncate(MAX_INPUT_FILE_BYTES + 1)  # sparse: nothing is written
    with pytest.raises(ConfigError, match=r"over the .* an input file may have"):
        load(tmp_path / name)


def test_a_recursive_alias_is_refused() -> None:
    with pytest.raises(InputSyntaxError, match="refer to themselves"):
        parse_input("steps: &s [*s]\n", "yaml", "the plan p.yaml")


def test_aliases_within_the_limit_still_work(tmp_path: Path) -> None:
    file = tmp_path / "answers.yaml"
    file.write_text(
        "answers:\n  - &yes {tool: a, action: accept}\n  - *yes\n  - {source: policy, action: decline}\n",
        encoding="utf-8",
    )
    assert [a.action for a in load_answers(file)] == ["accept", "accept", "decline"]


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        ("yaml", "[" * (MAX_INPUT_DEPTH + 5) + "]" * (MAX_INPUT_DEPTH + 5)),
        ("json", "[" * 5000 + "]" * 5000),
        ("toml", "a = " + "[" * (MAX_INPUT_DEPTH + 5) + "]" * (MAX_INPUT_DEPTH + 5)),
    ],
)
def test_nesting_beyond_the_limit_is_refused(kind: str, text: str) -> None:
    with pytest.raises(InputSyntaxError, match=f"deeper than {MAX_INPUT_DEPTH} levels"):
        parse_input(text, kind, "the grid g")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("suffix", "text", "where"),
    [
        (".yaml", "a: [1, 2\n", "line 2, column 1"),
        (".json", '{"a": 1,,}', "line 1, column 9"),
        (".toml", "a = [1,\nb", "line 2, column 1"),
        # tomllib says "at end of document": the file's end is where.
        (".toml", "rules = [\n", "line 2, column 1"),
        (".toml", "a = [1,\n  2", "line 2, column 4"),
    ],
)
def test_syntax_errors_name_the_file_and_where(
    suffix: str, text: str, where: str, tmp_path: Path
) -> None:
    file = tmp_path / f"f{suffix}"
    file.write_text(text, encoding="utf-8")
    with pytest.raises(InputSyntaxError) as raised:
        load_input(file, "the grid")
    assert str(file) in str(raised.value) and where in str(raised.value)


def test_the_policy_reader_keeps_its_own_wording_for_limits(tmp_path: Path) -> None:
    file = tmp_path / "policy.yaml"
    file.write_text(laughs("rules"), encoding="utf-8")
    with pytest.raises(PolicyError, match=rf"^{file}: its YAML aliases expand"):
        Policy.load(file)


def test_a_policy_file_cut_short_is_a_toml_syntax_error_that_says_where(tmp_path: Path) -> None:
    file = tmp_path / "policy.toml"
    file.write_text("rules = [\n", encoding="utf-8")
    with pytest.raises(PolicyError, match=rf"^{file}: TOML syntax error at line 2, column 1: "):
        Policy.load(file)
