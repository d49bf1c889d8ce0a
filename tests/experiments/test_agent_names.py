"""An agent's name is the researcher's label: tables, CSV and reports show it as written,
while episode ids and file names use a safe label of it, one per name, that no name can
turn into a path."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from harness.errors import ConfigError
from harness.experiments.grid import load_grid

GRID = """
[experiment]
name = "names"
policies = ["none"]
{agents}
[[tasks]]
id = "t"
site = "mail"
instruction = "x"
plan = [{{finish = "done"}}]
"""


def agents(*names: str) -> str:
    """``[[agents]]`` entries of the scripted agent, one per name."""
    return "\n".join(f'[[agents]]\nspec = "scripted"\nname = {json.dumps(n)}' for n in names)


def write(directory: Path, *names: str) -> Path:
    path = directory / "grid.toml"
    path.write_text(GRID.format(agents=agents(*names)), encoding="utf-8")
    return path


def cells(path: Path) -> dict[str, str]:
    """By name as the tables show it: the episode id of the agent's one episode."""
    return {e.agent_name: e.id for e in load_grid(path).episodes()}


def test_names_in_any_script_are_distinct_agents_with_safe_ids(tmp_path: Path) -> None:
    ids = cells(write(tmp_path, "агент", "модель", "智能体 v2"))
    assert set(ids) == {"агент", "модель", "智能体 v2"}
    assert len(set(ids.values())) == 3
    for episode in ids.values():
        assert episode.isascii() and "/" not in episode and episode.endswith(".s0")
    # The readable part is kept where there is one.
    assert ids["智能体 v2"].startswith("t.v2-")


def test_ascii_names_keep_the_ids_they_had(tmp_path: Path) -> None:
    ids = cells(write(tmp_path, "gpt", "GPT-4o mini (T=0)"))
    assert ids == {
        "gpt": "t.gpt.none.polyfill.cancel.s0",
        "GPT-4o mini (T=0)": "t.GPT-4o-mini-T-0.none.polyfill.cancel.s0",
    }


def test_the_same_name_twice_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="two agents share the name 'агент'"):
        load_grid(write(tmp_path, "агент", "агент"))


def test_names_whose_labels_in_ids_collide_are_refused_naming_both(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"two agents, 'gpt 4' and 'gpt-4', .*'gpt-4'"):
        load_grid(write(tmp_path, "gpt 4", "gpt-4"))
    # A name written as another's label in ids: the labels collide, the names do not.
    label = cells(write(tmp_path, "агент"))["агент"].split(".")[1]
    with pytest.raises(ConfigError, match="two agents"):
        load_grid(write(tmp_path, "агент", label))


@pytest.mark.parametrize("name", ["../../escape", "/etc/passwd", "a/../../b", "..", "C:\\x"])
def test_a_name_never_steers_a_path(tmp_path: Path, name: str) -> None:
    (episode,) = cells(write(tmp_path, name)).values()
    episodes = tmp_path / "out" / "episodes"
    assert (episodes / episode).resolve().parent == episodes.resolve()
    assert "/" not in episode and "\\" not in episode


def test_long_names_that_differ_late_are_distinct(tmp_path: Path) -> None:
    a, b = "a" * 90 + "1", "a" * 90 + "2"
    ids = cells(write(tmp_path, a, b))
    assert len(set(ids.values())) == 2 and max(map(len, ids.values())) <= 200


# -- a run shows the name as written -----------------------------------------------------------


def rows(file: Path) -> list[dict[str, Any]]:
    with file.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def strict_json(text: str) -> Any:
    def refuse(constant: str) -> Any:
        raise ValueError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


async def test_a_run_shows_a_non_ascii_name_as_written(tmp_path: Path) -> None:
    from harness.experiments import RunOptions, run_experiment

    name = "агент | №1"
    study = await run_experiment(
        load_grid(write(tmp_path, name)),
        RunOptions(output=tmp_path / "out", progress=False, report=True),
    )
    (result,) = study.results
    assert result.status == "ok", result.error
    assert result.agent == name
    out = tmp_path / "out"
    assert [r["agent"] for r in rows(out / "episodes.csv")] == [name]
    assert [r["agent"] for r in rows(out / "results.csv")] == [name]
    # Markdown: through the cell function, so the pipe stays in the cell.
    assert "| агент \\| №1 |" in (out / "results.md").read_text(encoding="utf-8")
    assert "| агент \\| №1 |" in (out / "headline.md").read_text(encoding="utf-8")
    assert "агент | №1" in (out / "report.html").read_text(encoding="utf-8")
    info = strict_json((out / "run_info.json").read_text(encoding="utf-8"))
    assert [a["name"] for a in info["grid"]["agents"]] == [name]
    # The episode's directory is the safe id; its files are strict JSON too.
    directory = out / "episodes" / result.episode
    assert result.episode.isascii() and directory.is_dir()
    assert strict_json((directory / "summary.json").read_text(encoding="utf-8"))["agent"] == name
    for line in (directory / "trace.jsonl").read_text(encoding="utf-8").splitlines():
        strict_json(line)
