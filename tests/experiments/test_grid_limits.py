"""A grid's sizes and numbers: the episodes it expands to are counted, not made, and a grid
over the limit is refused when it loads; values that would loop or allocate without bound
are capped; inf and nan are refused wherever a number goes, and no file of a run holds one."""

from __future__ import annotations

import json
import math
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from harness.errors import ConfigError
from harness.experiments.grid import load_grid
from harness.experiments.metrics import EpisodeResult
from tests.experiments.test_grid_outside import grid_text


def grid_file(directory: Path, experiment: str = "", agents: str = "", tasks: str = "") -> Path:
    """A grid of one task and the scripted agent, with more lines in each part."""
    path = directory / "grid.toml"
    path.write_text(grid_text(experiment, agents, tasks), encoding="utf-8")
    return path


def refusal(path: Path) -> str:
    """The one line a grid is refused with."""
    with pytest.raises(ConfigError) as raised:
        load_grid(path)
    message = str(raised.value)
    assert "\n" not in message.strip() and str(path) in message
    return message


def strict_json(text: str) -> Any:
    """``text`` parsed as JSON is, as JSON.parse reads it: no NaN, Infinity or -Infinity."""

    def refuse(constant: str) -> Any:
        raise ValueError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


# -- the number of episodes --------------------------------------------------------------------


def test_a_grid_of_any_size_is_refused_before_anything_is_expanded(tmp_path: Path) -> None:
    from harness.experiments.limits import MAX_EPISODES

    (tmp_path / "warm").mkdir()
    load_grid(grid_file(tmp_path / "warm"))  # the modules a grid needs, loaded beforehand
    # The largest count TOML holds (a billion seeds took 13 GB and more; listing these
    # fails at once, so the test fails fast where the count is not made first).
    path = grid_file(tmp_path, experiment="seeds = 9223372036854775807")
    tracemalloc.start()
    try:
        message = refusal(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4_000_000, peak  # counted, not listed
    assert "9,223,372,036,854,775,807 episodes" in message
    assert f"over the limit of {MAX_EPISODES:,}" in message
    assert "split the study into several grids" in message


def test_the_count_multiplies_every_axis(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.experiments import grid

    monkeypatch.setattr(grid, "MAX_EPISODES", 100)  # a small limit: nothing large is made
    # 26 seeds × 2 agents × 2 policies: each axis alone is below the limit.
    path = grid_file(
        tmp_path,
        experiment='seeds = 26\npolicies = ["none", "default"]',
        agents='[[agents]]\nspec = "obedient"',
    )
    message = refusal(path)
    assert "104 episodes (2 agents × 1 task × 2 policies × 1 backend × 1 answer × 26 seeds)" in (
        message
    )
    assert "over the limit of 100;" in message


def test_the_count_is_what_the_grid_expands_to(tmp_path: Path) -> None:
    (tmp_path / "no.yaml").write_text("answers:\n  - action: decline\n", encoding="utf-8")
    grid = load_grid(
        grid_file(
            tmp_path,
            experiment='seeds = [3, 5, 8]\npolicies = ["none", "default"]\n'
            'elicitation = ["cancel", "no.yaml"]\nbackends = ["polyfill", "native"]',
            agents='[[agents]]\nspec = "obedient"',
            tasks='[[tasks]]\nid = "u"\nsite = "todo"\ninstruction = "y"\nplan = []',
        )
    )
    assert grid.episode_count() == len(grid.episodes()) == 2 * 2 * 2 * 2 * 2 * 3


def test_agentdojos_variants_are_counted_per_case(tmp_path: Path) -> None:
    pytest.importorskip("agentdojo")
    path = tmp_path / "adojo.toml"
    path.write_text(
        """
[experiment]
name = "adojo"
policies = ["none"]
suites = ["agentdojo:slack"]
select = ["slack.user_task_0", "slack.user_task_0.injection_task_1", "slack.injection_task_2"]
[agentdojo]
cases = ["benign", "attacked", "injection"]
attacks = ["ignore_previous", "explicit_calls"]
annotations = ["annotated", "bare"]
[[agents]]
spec = "scripted"
""",
        encoding="utf-8",
    )
    grid = load_grid(path)
    # benign and injection: 2 annotations each; attacked: 2 attacks × 2 annotations.
    assert grid.episode_count() == len(grid.episodes()) == 2 + 4 + 2


# -- values that loop or allocate in proportion ------------------------------------------------


@pytest.mark.parametrize(
    ("parts", "words"),
    [
        ({"experiment": "max_steps = 9223372036854775807"}, "max_steps"),
        ({"tasks": "max_steps = 100001"}, "max_steps"),
        ({"experiment": "workers = 9223372036854775807"}, "workers"),
        ({"tasks": "settle_ms = 9223372036854775807"}, "settle_ms"),
    ],
)
def test_a_value_over_its_limit_is_refused_with_the_limit(
    tmp_path: Path, parts: dict[str, str], words: str
) -> None:
    message = refusal(grid_file(tmp_path, **parts))
    assert words in message and "limit" in message


def test_agentdojos_max_steps_has_the_same_limit(tmp_path: Path) -> None:
    from harness.experiments.agentdojo.suites import AgentDojoSettings

    with pytest.raises(ValidationError, match="limit"):
        AgentDojoSettings(max_steps=10**9)


def test_the_command_lines_workers_have_the_grids_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from harness.cli import main

    path = grid_file(tmp_path)
    code = main(["experiment", str(path), "--workers", "100000", "--output", str(tmp_path / "o")])
    assert code == 2 and "limit" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


# -- inf and nan -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("parts", "where"),
    [
        ({"experiment": "call_timeout = inf"}, "experiment.call_timeout"),
        ({"experiment": "episode_timeout = nan"}, "experiment.episode_timeout"),
        ({"experiment": "episode_timeout = -inf"}, "experiment.episode_timeout"),
        ({"agents": '[[agents]]\nspec = "openai:gpt-4o-mini"\ntemperature = inf'}, "temperature"),
        ({"agents": "options = {price = nan}"}, "agents.0.options.price"),
        ({"tasks": 'success = [{http = "/x", equals = nan}]'}, "tasks.0.success.0.equals"),
        ({"tasks": "[tasks.attack]\nsucceeded = [{call = 'x', arguments = {n = inf}}]"}, "tasks"),
    ],
)
def test_inf_and_nan_are_refused_wherever_they_are(
    tmp_path: Path, parts: dict[str, str], where: str
) -> None:
    message = refusal(grid_file(tmp_path, **parts))
    assert where in message and "finite" in message


def test_inf_in_an_included_task_file_or_a_plan_is_refused(tmp_path: Path) -> None:
    (tmp_path / "more.toml").write_text(
        '[[tasks]]\nid = "u"\nsite = "mail"\ninstruction = "u"\nplan = []\nmax_steps = 3\n'
        'success = [{answer = "x"}, {http = "/s", length = 1, equals = -inf}]\n',
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match=r"more\.toml: tasks\.0\.success\.1\.equals .*finite"):
        load_grid(grid_file(tmp_path, experiment='include = ["more.toml"]'))
    (tmp_path / "plan.yaml").write_text(
        "steps:\n  - call: add\n    args: {n: .nan}\n  - finish: done\n", encoding="utf-8"
    )
    text = grid_file(tmp_path).read_text().replace('[{finish = "first"}]', '"plan.yaml"')
    (tmp_path / "grid.toml").write_text(text, encoding="utf-8")
    message = refusal(tmp_path / "grid.toml")
    assert "plan" in message and "finite" in message


def test_the_run_options_refuse_inf(tmp_path: Path) -> None:
    from harness.experiments.runners import RunOptions

    for options in ({"episode_timeout": math.inf}, {"ray_start_timeout": math.nan}):
        with pytest.raises(ValidationError):
            RunOptions(output=tmp_path, **options)


@pytest.mark.parametrize("option", ["--episode-timeout", "--ray-start-timeout"])
def test_the_command_line_refuses_inf_seconds(
    tmp_path: Path, option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from harness.cli import main

    path = grid_file(tmp_path)
    backend = ["--backend", "ray"] if "ray" in option else []
    for value in ("inf", "nan", "Infinity"):
        code = main(["experiment", str(path), option, value, *backend, "--output", str(tmp_path)])
        assert code == 2, value
        assert "finite" in capsys.readouterr().err


# -- no file of a run holds a number JSON has not ----------------------------------------------


async def test_every_json_file_of_a_run_is_strict_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.experiments import RunOptions, run_experiment, runners

    async def stood_in(todo, grid, directory, sink, **options):  # type: ignore[no-untyped-def]
        for spec in todo:  # each episode ends at once: the run's own files are what is checked
            sink(EpisodeResult(episode=spec.id, **spec.key(), status="ok", wall_s=0.5))
        return {}

    monkeypatch.setattr(runners, "run_local", stood_in)
    grid = load_grid(grid_file(tmp_path, experiment="seeds = 2\ncall_timeout = 1e300"))
    study = await run_experiment(grid, RunOptions(output=tmp_path / "out", progress=False))
    written = list((tmp_path / "out").rglob("*.json"))
    assert written
    for file in written:
        strict_json(file.read_text(encoding="utf-8"))
    assert strict_json((tmp_path / "out" / "run_info.json").read_text())["grid"]["call_timeout"]
    assert len(study.results) == 2


def test_a_value_json_has_not_never_reaches_run_info(tmp_path: Path) -> None:
    # Past the grid's checks (a grid built in Python): writing refuses rather than writing
    # `Infinity`, which JSON.parse and every strict reader refuse.
    from harness.experiments.results import ResultStore
    from harness.experiments.runners import RunOptions, _write_run_info

    grid = load_grid(grid_file(tmp_path))
    settings = grid.experiment.model_copy(update={"call_timeout": math.inf})
    bent = grid.model_copy(update={"experiment": settings})
    store = ResultStore(tmp_path / "results.db")
    try:
        with pytest.raises(ValueError, match="JSON"):
            _write_run_info(tmp_path, bent, RunOptions(output=tmp_path), store, {}, None, 1, [])
    finally:
        store.close()
    info = tmp_path / "run_info.json"
    assert not info.exists() or "Infinity" not in info.read_text()
