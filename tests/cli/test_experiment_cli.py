"""``webmcp-harness experiment``: usage errors exit 2, a run that cannot start exits 1 — one
line on stderr each, never a traceback (the successful run is in tests/experiments/)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from tests.console_script import run_script

GRID = Path(__file__).resolve().parents[2] / "examples" / "experiments" / "grid.toml"


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--resume"], 2, "--resume needs --output DIR"),
        (["--workers", "0"], 2, "--workers: must be at least 1"),
        (["--episode-timeout", "soon"], 2, "is not a number of seconds"),
        (["--ray-address", "auto"], 2, "--ray-address goes with --backend ray"),
        (["--record-cassettes", "a", "--replay-cassettes", "b"], 2, "not allowed with argument"),
    ],
)
async def test_usage_errors_exit_2(args: list[str], code: int, message: str) -> None:
    status, _, err = await run_script("experiment", str(GRID), *args)
    assert status == code, err
    assert message in err and "Traceback" not in err


@pytest.mark.slow  # four `experiment` runs (~5 s)
async def test_a_run_that_cannot_start_says_why_in_one_line(tmp_path: Path) -> None:
    status, _, err = await run_script("experiment", str(tmp_path / "missing.toml"))
    assert status == 2 and "Cannot read" in err and "Traceback" not in err
    used = tmp_path / "used"
    used.mkdir()
    (used / "x").write_text("x")
    status, _, err = await run_script("experiment", str(GRID), "--output", str(used))
    assert status == 2 and "exists and is not empty; pass --resume" in err
    assert len(err.strip().splitlines()) == 1
    status, _, err = await run_script(
        "experiment", str(GRID), "--output", str(tmp_path / "new"), "--resume"
    )
    assert status == 2 and "Nothing to resume" in err
    status, _, err = await run_script(
        "experiment",
        str(GRID),
        "--output",
        str(tmp_path / "r"),
        "--replay-cassettes",
        str(tmp_path / "none"),
    )
    assert status == 2 and "No cassettes to replay" in err


# -- in this process, with the episodes stood in for (no browser) ------------------------------

MAIL_GRID = """
[experiment]
name = "stood-in"
seeds = 2
policies = ["none"]
elicitation = ["cancel"]
episode_timeout = 120

[[agents]]
spec = "scripted"

[[tasks]]
id = "mail"
site = "mail"
instruction = "Check my inbox."
plan = [{call = "list_inbox"}, {finish = "done"}]
"""


class StoodIn:
    """Stands in for the runners (``run_local``, ``run_ray``): each episode gets an ``ok``
    result at once; ``stop_after`` results, then Ctrl-C. Keeps what the episodes were given."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from harness.experiments import runners

        self.timeouts: list[float] = []
        self.stop_after: int | None = None
        self.served_note = ""
        monkeypatch.setattr(runners, "run_local", self.run_local)
        monkeypatch.setattr(runners, "run_ray", self.run_ray)

    async def run_local(self, todo: list[Any], grid: Any, directory: Path, sink: Any, **kw: Any):  # type: ignore[no-untyped-def]
        from harness.experiments.metrics import EpisodeResult

        for number, spec in enumerate(todo):
            if number == self.stop_after:
                raise KeyboardInterrupt
            self.timeouts.append(spec.episode_timeout)
            note = self.served_note
            result = EpisodeResult(
                episode=spec.id, **spec.key(), status="ok", run_id=kw["run_id"], served_note=note
            )
            sink(result)
        return {}

    async def run_ray(self, *args: Any, **kw: Any):  # type: ignore[no-untyped-def]
        return await self.run_local(*args, **kw), None


def experiment(grid: Path, output: Path, *options: str) -> list[str]:
    return ["experiment", str(grid), "--output", str(output), *options]


@pytest.fixture
def stood_in(monkeypatch: pytest.MonkeyPatch) -> StoodIn:
    return StoodIn(monkeypatch)


@pytest.fixture
def mail_grid(tmp_path: Path) -> Path:
    path = tmp_path / "grid.toml"
    path.write_text(MAIL_GRID, encoding="utf-8")
    return path


def test_an_episode_option_is_recorded_and_a_resume_must_give_it_again(
    mail_grid: Path,
    tmp_path: Path,
    stood_in: StoodIn,
    capsys: pytest.CaptureFixture[str],
) -> None:
    stood_in.stop_after = 1
    output = tmp_path / "out"
    given = ["--episode-timeout", "1.5", "--workers", "2", "--no-progress", "--no-report"]
    assert main(experiment(mail_grid, output, *given)) == 130
    err = capsys.readouterr().err
    # The resume command says every option given, so that it resumes the same run.
    again = shlex.split(err.split("`")[1])
    assert again == [
        "webmcp-harness",
        *experiment(mail_grid, output, "--resume"),
        *["--workers", "2", "--episode-timeout", "1.5", "--no-progress", "--no-report"],
    ]

    for other, says in (
        (
            [],
            "was started with --episode-timeout 1.5, and this resume gives no --episode-"
            "timeout (the grid's 120 s)",
        ),
        (["--episode-timeout", "3"], "this resume gives --episode-timeout 3"),
    ):
        code = main(experiment(mail_grid, output, "--resume", "--no-progress", *other))
        err = capsys.readouterr().err
        assert code == 2 and says in err and "Resume with --episode-timeout 1.5" in err, err
    assert stood_in.timeouts == [1.5]  # no episode of either refused resume ran

    assert main(again[1:]) == 0
    assert stood_in.timeouts == [1.5, 1.5]  # what the episodes were cut at …
    info = json.loads((output / "run_info.json").read_text(encoding="utf-8"))
    assert info["options"] == {"episode_timeout": 1.5, "cassettes": None}  # … is recorded
    assert info["grid"]["episode_timeout"] == 120  # beside the grid's own
    # How the run is carried out may change on a resume (nothing is left to run here).
    resumed = experiment(mail_grid, output, "--resume", "--episode-timeout", "1.5")
    assert main([*resumed, "--no-progress", "--workers", "1", "--backend", "ray"]) == 0


def test_a_start_document_left_unhashed_is_said_once_with_why(
    mail_grid: Path, tmp_path: Path, stood_in: StoodIn, capsys: pytest.CaptureFixture[str]
) -> None:
    # h22 defect 3: a url task's episodes went without their document's hash, silently.
    stood_in.served_note = "the browser received no document for http://127.0.0.1:9/"
    output = tmp_path / "out"
    assert main(experiment(mail_grid, output, "--no-progress", "--no-report")) == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert warnings == [
        "warning: task mail: no SHA-256 of the start document in 2 episode(s): the browser "
        "received no document for http://127.0.0.1:9/."
    ]


def test_a_resume_must_give_the_cassettes_the_run_began_with(
    mail_grid: Path,
    tmp_path: Path,
    stood_in: StoodIn,
    capsys: pytest.CaptureFixture[str],
) -> None:
    stood_in.stop_after = 1
    output = tmp_path / "out"
    cassettes = tmp_path / "cassettes"
    recording = ["--record-cassettes", str(cassettes), "--no-progress", "--no-report"]
    assert main(experiment(mail_grid, output, *recording)) == 130
    assert f"--resume --record-cassettes {cassettes}" in capsys.readouterr().err
    assert main(experiment(mail_grid, output, "--resume", "--no-progress")) == 2
    err = capsys.readouterr().err
    said = f"--record-cassettes {cassettes.resolve()}"
    assert f"was started with {said}, and this resume gives no cassettes" in err
    replaying = ["--replay-cassettes", str(cassettes)]
    assert main(experiment(mail_grid, output, "--resume", "--no-progress", *replaying)) == 2
    assert "this resume gives --replay-cassettes" in capsys.readouterr().err
    assert main(experiment(mail_grid, output, "--resume", *recording)) == 0
    info = json.loads((output / "run_info.json").read_text(encoding="utf-8"))
    assert info["options"]["cassettes"] == {"mode": "record", "directory": str(cassettes.resolve())}


def test_the_resume_command_carries_the_backend_and_the_workers(
    mail_grid: Path,
    tmp_path: Path,
    stood_in: StoodIn,
    capsys: pytest.CaptureFixture[str],
) -> None:
    stood_in.stop_after = 1
    output = tmp_path / "my out"
    args = ["--backend", "ray", "--workers", "3", "--ray-start-timeout", "90", "--no-progress"]
    assert main(experiment(mail_grid, output, *args)) == 130
    err = capsys.readouterr().err
    assert err.startswith("webmcp-harness: interrupted; ") and len(err.splitlines()) == 1
    again = shlex.split(err.split("`")[1])
    assert again == [
        "webmcp-harness",
        *experiment(mail_grid, output, "--resume"),
        "--workers",
        "3",
        "--backend",
        "ray",
        "--ray-start-timeout",
        "90",
        "--no-progress",
    ]


def test_the_last_line_names_only_the_files_written(
    mail_grid: Path,
    tmp_path: Path,
    stood_in: StoodIn,
    capsys: pytest.CaptureFixture[str],
) -> None:
    output = tmp_path / "out"
    assert main(experiment(mail_grid, output, "--no-progress", "--no-report")) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith(f"results: {output}/results.md"), last
    named = [Path(part.split(": ", 1)[1]) for part in last.split(", ")]
    assert all(path.is_file() for path in named), last
    assert "report" not in last and not (output / "report.html").exists()


def test_a_run_says_which_outside_sites_episodes_ran_one_at_a_time(
    tmp_path: Path, stood_in: StoodIn, capsys: pytest.CaptureFixture[str]
) -> None:
    grid = tmp_path / "grid.toml"
    grid.write_text(
        MAIL_GRID
        + """
[[tasks]]
id = "loan"
url = "http://127.0.0.1:9/"
reset = "http://127.0.0.1:9/reset"
instruction = "Borrow a book."
plan = [{finish = "done"}]
""",
        encoding="utf-8",
    )
    for workers, said in (("2", True), ("1", False)):
        output = tmp_path / f"w{workers}"
        assert (
            main(experiment(grid, output, "--no-progress", "--no-report", "--workers", workers))
            == 0
        )
        out = capsys.readouterr().out
        line = "http://127.0.0.1:9: its episodes ran one at a time"
        assert (line in out) is said, out
        assert "tasks loan" in out or not said
        info = json.loads((output / "run_info.json").read_text(encoding="utf-8"))
        assert info["runner"]["one_at_a_time"] == {"http://127.0.0.1:9": ["loan"]}


# -- Ctrl-C at any moment: `interrupted`, 130, never a traceback --------------------------------


def test_ctrl_c_a_library_swallowed_while_the_modules_loaded_stops_the_run(
    mail_grid: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    stood_in: StoodIn,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # pydantic-core builds a model's validator in code that cannot raise: a Ctrl-C that
    # arrives then is printed as "Exception ignored in" with a traceback, and the command
    # went on to run every episode. A __del__ is such code too.
    from harness.experiments import grid as grids

    class Unraisable:
        def __del__(self) -> None:
            raise KeyboardInterrupt

    load_grid = grids.load_grid

    def loading(*args: Any, **kw: Any) -> Any:
        Unraisable()  # gone at once: its __del__ runs, and its Ctrl-C cannot be raised
        return load_grid(*args, **kw)

    monkeypatch.setattr(grids, "load_grid", loading)
    output = tmp_path / "out"
    assert main(experiment(mail_grid, output, "--no-progress", "--no-report")) == 130
    captured = capsys.readouterr()
    assert captured.err == "webmcp-harness: interrupted\n" and captured.out == ""
    assert stood_in.timeouts == [] and not output.exists()  # stopped before any episode


# A real SIGINT, as the CLI's own modules load (the command's are loaded inside the
# command's handling; these before it): what a Ctrl-C in the first fraction of a second met.
SIGINT_ON_IMPORT = """
import os, signal, sys

class Interrupt:
    def __init__(self, module):
        self.module = module

    def find_spec(self, name, path=None, target=None):
        if name == self.module:
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, Interrupt(sys.argv[1]))
sys.argv = ["webmcp-harness", *sys.argv[2:]]
from harness.cli import console
console()
"""


@pytest.mark.parametrize("module", ["harness.cli.commands", "harness.cli.options"])
async def test_ctrl_c_as_the_cli_loads_is_one_line_and_130(module: str, tmp_path: Path) -> None:
    import asyncio
    import sys

    from tests.interrupts import restore_sigint

    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        SIGINT_ON_IMPORT,
        module,
        # No grid: were the interrupt lost, the command would end at once all the same (2).
        *experiment(tmp_path / "missing.toml", tmp_path / "out", "--no-progress"),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        preexec_fn=restore_sigint,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert (proc.returncode, err.decode(), out.decode()) == (
        130,
        "webmcp-harness: interrupted\n",
        "",
    )
    assert not (tmp_path / "out").exists()
