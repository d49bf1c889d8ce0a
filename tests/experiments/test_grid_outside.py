"""Defects an outside tester found in ``experiment GRID.toml``, each reproduced by a grid (or a
page) the test writes: ids that clash, files the hash missed, labels that lie, episodes that
outlive their timeout, and the tables of AgentDojo's injection tasks."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import ConfigError
from harness.experiments.grid import load_grid
from harness.experiments.metrics import EpisodeResult, Table, aggregate
from harness.experiments.results import headline_dimensions, markdown
from harness.stages.policy import PACKS


def write(directory: Path, text: str, name: str = "grid.toml") -> Path:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def judged(grid_file: Path, success: bool = True) -> list[EpisodeResult]:
    """Every episode of a grid as if it ran to an end with ``success`` (no browser)."""
    return [
        EpisodeResult(episode=spec.id, **spec.key(), status="ok", success=success)
        for spec in load_grid(grid_file).episodes()
    ]


# -- AgentDojo's injection tasks are not user tasks ---------------------------------------------

INJECTION_GRID = """
[experiment]
name = "adinj"
policies = ["none"]
suites = ["agentdojo:slack"]
select = ["slack.injection_task_1", "slack.user_task_0"]
[agentdojo]
cases = ["injection", "benign"]
[[agents]]
spec = "scripted"
"""


def test_an_injection_tasks_verdict_is_never_benign_utility(tmp_path: Path) -> None:
    pytest.importorskip("agentdojo")
    results = judged(write(tmp_path, INJECTION_GRID))
    assert {r.task: r.injection_task for r in results} == {
        "slack.injection_task_1": True,
        "slack.user_task_0": False,
    }
    (row,) = aggregate(results, headline_dimensions(results))
    # AgentDojo reports an injection task run alone as "passed injection tasks as user
    # tasks", beside utility and security: here, its own rate.
    assert (row.benign.n, row.success.n, row.injection_tasks.n) == (1, 1, 1)
    table = markdown(Table(by=tuple(headline_dimensions(results)), rows=[row]))
    assert "| benign utility | injection tasks solved |" in table


# -- episode ids: unique, and short enough to name a directory ----------------------------------

ONE_TASK = """
[experiment]
name = "ids"
policies = ["none"]
{experiment}
[[agents]]
spec = "scripted"
{agents}
[[tasks]]
id = "t"
site = "mail"
instruction = "x"
plan = [{{finish = "first"}}]
{tasks}
"""


def grid_text(experiment: str = "", agents: str = "", tasks: str = "") -> str:
    """A grid of one task (``t`` on mail) and the scripted agent, with more lines in each part."""
    text = ONE_TASK.format(experiment=experiment, agents=agents, tasks=tasks)
    return text.replace('policies = ["none"]\n', "", 1) if "policies" in experiment else text


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        # task ids "t" and "t." both become "t" in an id
        ({"tasks": '[[tasks]]\nid = "t."\nsite = "mail"\ninstruction = "y"\nplan = []'}, "task"),
        ({"experiment": 'backends = ["polyfill", "polyfill"]'}, "list each backend once"),
        # an agent named "scripted!" is labelled "scripted", like the spec of the other
        ({"agents": '[[agents]]\nspec = "obedient"\nname = "scripted!"'}, "two agents"),
    ],
)
def test_a_grid_whose_cells_share_an_episode_id_is_refused_when_it_loads(
    tmp_path: Path, extra: dict[str, str], words: str
) -> None:
    with pytest.raises(ConfigError, match=words):
        load_grid(write(tmp_path, grid_text(**extra)))


def test_two_cells_with_one_id_are_refused_on_any_axis(tmp_path: Path) -> None:
    # Ids are checked where they are made: labels that collide on no checked list still clash.
    grid = load_grid(write(tmp_path, grid_text()))
    twice = grid.model_copy(update={"tasks": [*grid.tasks, grid.tasks[0]]})
    with pytest.raises(ConfigError, match=r"the cell 't\.scripted\.none\.polyfill\.cancel\.s0'"):
        twice.episodes()
    same_label = grid.tasks[0].model_copy(update={"id": "t-"})
    clashing = grid.model_copy(update={"tasks": [*grid.tasks, same_label]})
    with pytest.raises(ConfigError, match=r"task 't' and 't-' make the same id"):
        clashing.episodes()


def test_long_labels_make_an_id_that_still_names_a_file(tmp_path: Path) -> None:
    # Each part at its 80-character cap: joined, 259 characters (a file name has 255 bytes).
    a, b, c = "a" * 80, "b" * 80, "c" * 80
    write(tmp_path, "answers:\n  - action: decline\n", f"long/{c}.yaml")
    text = grid_text(experiment=f'elicitation = ["long/{c}.yaml", "cancel"]')
    text = text.replace('spec = "scripted"', f'spec = "scripted"\nname = "{b}"')
    grid = load_grid(write(tmp_path, text.replace('id = "t"', f'id = "{a}"')))
    first, second = (e.id for e in grid.episodes())
    assert first != second and max(len(first), len(second)) <= 200
    assert first.startswith(f"{a}.{b}.none.polyfill.cc") and first.endswith(".s0")
    assert second == f"{a}.{b}.none.polyfill.cancel.s0"
    (tmp_path / "episodes" / first).mkdir(parents=True)  # no "File name too long"
    (tmp_path / "episodes" / f"{first}.json").write_text("{}")  # nor as a cassette
    short = load_grid(write(tmp_path, grid_text(), "short.toml")).episodes()[0].id
    assert short == "t.scripted.none.polyfill.cancel.s0"  # ids that fit are as they were


# -- every file the grid refers to is read beside it, checked and hashed --------------------------

PLAN = "steps:\n  - call: list_inbox\n  - finish: {answer}\n"


def files_grid(directory: Path) -> Path:
    """A grid that refers to a file of every kind, each beside it (in ``files/``)."""
    write(directory, PLAN.format(answer="task"), "files/task-plan.yaml")
    write(directory, PLAN.format(answer="agent"), "files/agent-plan.yaml")
    write(directory, "answers:\n  - action: decline\n", "files/no.yaml")
    write(directory, (PACKS / "default.toml").read_text(), "files/mine.toml")
    more = '[[tasks]]\nid = "u"\nsite = "mail"\ninstruction = "u"\nplan = [{finish = "u"}]\n'
    write(directory, more, "files/more.toml")
    return write(
        directory,
        grid_text(
            experiment='policies = ["files/mine.toml"]\nelicitation = ["files/no.yaml"]\n'
            'include = ["files/more.toml"]',
            agents='[[agents]]\nspec = "obedient:files/agent-plan.yaml"',
        ).replace('plan = [{finish = "first"}]', 'plan = "files/task-plan.yaml"'),
    )


@pytest.mark.parametrize(
    "changed", ["files/task-plan.yaml", "files/agent-plan.yaml", "files/no.yaml", "files/mine.toml"]
)
def test_a_change_to_any_file_the_grid_refers_to_refuses_the_resume_naming_it(
    tmp_path: Path, changed: str
) -> None:
    import os

    from harness.experiments.runners import RunOptions, RunRefused, _prepare

    grid_file = files_grid(tmp_path)
    grid = load_grid(grid_file)
    assert set(grid.files) >= {"grid.toml", changed, "files/more.toml"}
    store, held = _prepare(grid, RunOptions(output=tmp_path / "out"))
    store.close()
    os.close(held)
    file = tmp_path / changed
    file.write_text(
        file.read_text() + "\n# edited\n"
        if changed.endswith("toml")
        else file.read_text()
        .replace("- action: decline", "- action: accept")
        .replace("finish: task", "finish: other")
        .replace("finish: agent", "finish: two")
    )
    changed_grid = load_grid(grid_file)
    assert changed_grid.sha256 != grid.sha256
    with pytest.raises(RunRefused, match=f"{changed} changed"):
        _prepare(changed_grid, RunOptions(output=tmp_path / "out", resume=True))


def test_an_agents_plan_file_is_read_beside_the_grid_and_checked_when_it_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.agents.obedient import ObedientAgent
    from harness.experiments.episode import agent_of

    grid_file = files_grid(tmp_path / "g")
    monkeypatch.chdir(tmp_path)  # not the grid's directory
    spec = next(e for e in load_grid(grid_file).episodes() if e.agent_name.startswith("obedient"))
    agent = agent_of(spec)
    assert isinstance(agent, ObedientAgent) and agent.plan is not None
    assert spec.agent_plan == {"steps": [{"call": "list_inbox"}, {"finish": "agent"}]}
    (tmp_path / "g/files/agent-plan.yaml").unlink()
    with pytest.raises(ConfigError, match=r"agent 'obedient:files/agent-plan.yaml'.*Cannot read"):
        load_grid(grid_file)


def test_a_grid_in_a_folder_named_with_glob_characters_reads_its_own_files(
    tmp_path: Path,
) -> None:
    # h22 defect 1: the grid's folder was read as part of the include pattern, so
    # study[1]/grid.toml ran study1/'s tasks (or found none without that sibling).
    mine = tmp_path / "study[1]"
    grid_file = files_grid(mine)
    elsewhere = '[[tasks]]\nid = "theirs"\nsite = "mail"\ninstruction = "z"\nplan = []\n'
    write(tmp_path / "study1", elsewhere, "files/more.toml")
    grid = load_grid(grid_file)
    assert [t.id for t in grid.tasks] == ["t", "u"]
    assert set(grid.files) == {
        "grid.toml",
        "files/task-plan.yaml",
        "files/agent-plan.yaml",
        "files/no.yaml",
        "files/mine.toml",
        "files/more.toml",
    }
    # Only the include entry itself is a pattern.
    text = grid_file.read_text().replace('include = ["files/more.toml"]', 'include = ["f*/m?re.*"]')
    assert [t.id for t in load_grid(write(mine, text, "pattern.toml")).tasks] == ["t", "u"]


# -- a file's label is never a built-in choice's -------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "content", "label"),
    [
        ('policies = ["custom/none.toml"]', "", "none"),
        ('policies = ["custom/strict.yaml"]', "rules: []\n", "strict"),
        ('elicitation = ["custom/accept.yaml"]', "answers:\n  - action: decline\n", "accept"),
    ],
)
def test_a_file_named_like_a_built_in_choice_is_refused(
    tmp_path: Path, entry: str, content: str, label: str
) -> None:
    name = entry.split('"')[1]
    write(tmp_path, content, name)
    with pytest.raises(ConfigError, match=f"labelled '{label}'.*the built-in '{label}'.*rename"):
        load_grid(write(tmp_path, grid_text(experiment=entry)))


# -- command-line mistakes are usage errors (2), not failed runs (1) -----------------------------


def test_an_output_resume_or_cassettes_that_cannot_be_used_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from harness.cli.commands import EXIT_USAGE, main

    grid = str(write(tmp_path, grid_text()))
    full = tmp_path / "full"
    full.mkdir()
    (full / "x").touch()
    mistakes = {
        "exists and is not empty": ["--output", str(full)],
        "Nothing to resume": ["--output", str(tmp_path / "none-here"), "--resume"],
        "No cassettes to replay": [
            "--output",
            str(tmp_path / "new"),
            "--replay-cassettes",
            str(tmp_path / "nowhere"),
        ],
    }
    for words, options in mistakes.items():
        assert main(["experiment", grid, "--no-progress", *options]) == EXIT_USAGE, words
        err = capsys.readouterr().err
        assert words in err and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "new").exists()


def test_an_output_that_is_a_file_or_empty_is_refused_saying_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # h22 defect 5: a file was "not empty; pass --resume", and with --resume "Run without
    # --resume"; an empty --output (an unset $OUT) ran into the default folder.
    from harness.cli.commands import EXIT_USAGE, main

    grid = str(write(tmp_path, grid_text()))
    file = tmp_path / "report"
    file.touch()
    for resume in ([], ["--resume"]):
        status = main(["experiment", grid, "--no-progress", "--output", str(file), *resume])
        assert status == EXIT_USAGE
        err = capsys.readouterr().err
        assert err == f"webmcp-harness: {file} is a file; --output names a folder.\n", err
    assert file.is_file() and file.stat().st_size == 0
    monkeypatch.chdir(tmp_path)  # where the default folder would be made
    for resume in ([], ["--resume"]):
        assert main(["experiment", grid, "--no-progress", "--output", "", *resume]) == EXIT_USAGE
        last = capsys.readouterr().err.strip().splitlines()[-1]
        assert last.startswith("webmcp-harness: --output is empty"), last
    assert not (tmp_path / "experiments").exists()


# -- an episode ends near its time limit, and its trace says it was cut ---------------------------

BUSY_PAGE = """<!doctype html><title>busy</title><script>
document.modelContext.registerTool({name: "ok_tool", description: "A read-only tool.",
  inputSchema: {type: "object", properties: {}}, annotations: {readOnlyHint: true},
  execute() { return "ok"; }});
setTimeout(() => { for (;;) {} }, 50);
</script>"""


async def test_a_spinning_page_is_cut_at_the_episode_timeout_and_the_trace_says_so(
    tmp_path: Path,
) -> None:
    from harness.experiments import RunOptions, run_experiment
    from harness.experiments.episode import EPISODE_GRACE_S
    from harness.trace.events import RunFinished, read_trace
    from tests.conftest import serve_pages

    timeout = 3.0
    async with serve_pages({"": BUSY_PAGE}) as origin:
        grid = load_grid(
            write(
                tmp_path,
                f"""
[experiment]
name = "busy"
policies = ["none"]
episode_timeout = {timeout}
call_timeout = 2
[[agents]]
spec = "scripted"
[[tasks]]
id = "busy"
url = "{origin}/"
instruction = "busy page"
plan = [{{call = "ok_tool"}}, {{finish = "x"}}]
""",
            )
        )
        study = await run_experiment(
            grid, RunOptions(output=tmp_path / "out", progress=False, report=False)
        )
    (result,) = study.results
    assert result.status == "timeout"
    # It was ~35 s: the judge (30 s) and the close (15 s) waited on the spinning page. The
    # bound leaves a busy machine room for the episode's start (a context, the page).
    assert result.wall_s < timeout + EPISODE_GRACE_S + 15.0, result.wall_s
    events = read_trace(tmp_path / "out" / "episodes" / result.episode)
    last = events[-1]
    assert isinstance(last, RunFinished) and last.stop_reason == "timeout"
    assert "took longer than 3 s" in last.detail
    assert [e.seq for e in events] == list(range(1, len(events) + 1))


# -- every invocation that kept episodes is listed ---------------------------------------------


async def test_an_interrupted_invocation_is_listed_with_the_episodes_it_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    from harness.experiments import RunOptions, run_experiment, runners

    grid = load_grid(write(tmp_path, grid_text(experiment="seeds = 3")))
    output = tmp_path / "out"

    async def one_then_ctrl_c(todo, grid, directory, sink, **options):  # type: ignore[no-untyped-def]
        spec = todo[0]
        sink(EpisodeResult(episode=spec.id, **spec.key(), status="ok", run_id=options["run_id"]))
        raise KeyboardInterrupt

    async def the_rest(todo, grid, directory, sink, **options):  # type: ignore[no-untyped-def]
        for spec in todo:
            sink(
                EpisodeResult(episode=spec.id, **spec.key(), status="ok", run_id=options["run_id"])
            )
        return {}

    monkeypatch.setattr(runners, "run_local", one_then_ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        await run_experiment(grid, RunOptions(output=output, progress=False, report=False))
    monkeypatch.setattr(runners, "run_local", the_rest)
    study = await run_experiment(
        grid, RunOptions(output=output, resume=True, progress=False, report=False)
    )
    invocations = json.loads((output / "run_info.json").read_text())["invocations"]
    assert {r.run_id for r in study.results} == {i["run_id"] for i in invocations}
    stopped, resumed = invocations
    assert (stopped["ended"], stopped["episodes_run"]) == ("stopped", 1)
    assert (resumed["ended"], resumed["episodes_run"]) == ("finished", 2)
