"""An experiment's answers files name the bundled sites by their fixed origins (as
``webmcp-harness sites`` serves them), whatever ports a worker serves them on; an entry
naming an origin no page of the grid has is said when the grid loads."""

from __future__ import annotations

from pathlib import Path

import pytest
from harness.sites.server import serve_sites

from harness.experiments.grid import load_grid
from harness.experiments.site_origins import served_as_fixed

ANSWERS = """answers:
  - source: form-review
    origin: http://127.0.0.1:8107       # the store: served by the grid
    action: accept
  - origin: http://localhost:8108       # the attacker, as localhost: served along with it
    action: decline
  - origin: http://127.0.0.1:8103       # mail's: not in this grid
    action: accept
  - source: navigation
    destination: https://docs.example.org   # outside: the agent's to choose
    action: accept
  - source: navigation
    destination: http://localhost:7     # loopback, and no site of the grid
    action: accept
  - origin: http://127.0.0.1:9          # where the url task starts
    action: decline
"""

GRID = """
[experiment]
name = "origins"
policies = ["none"]
elicitation = ["answers.yaml"]
suites = ["webmcp-attacks"]
select = ["store-form-review", "elsewhere"]
[[agents]]
spec = "obedient"
[[tasks]]
id = "elsewhere"
url = "http://127.0.0.1:9/page"
instruction = "Read."
"""


def write_grid(directory: Path, answers: str = ANSWERS) -> Path:
    (directory / "answers.yaml").write_text(answers, encoding="utf-8")
    grid = directory / "grid.toml"
    grid.write_text(GRID, encoding="utf-8")
    return grid


async def test_a_workers_origins_map_to_the_sites_fixed_ones() -> None:
    async with serve_sites(["store"]) as sites:
        mapped = served_as_fixed(sites)
        store, attacker = sites["store"].port, sites["attacker"].port
    assert mapped == {
        f"http://127.0.0.1:{store}": "http://127.0.0.1:8107",
        f"http://localhost:{store}": "http://localhost:8107",
        f"http://127.0.0.1:{attacker}": "http://127.0.0.1:8108",
        f"http://localhost:{attacker}": "http://localhost:8108",
    }


def test_an_origin_no_page_of_the_grid_has_is_said_when_it_loads(tmp_path: Path) -> None:
    grid = load_grid(write_grid(tmp_path))
    mail, loopback = grid.warnings  # the store, attacker, url task and outside: no word
    answers = str(tmp_path / "answers.yaml")
    assert mail.startswith(
        f"{answers}: entry #3: origin 'http://127.0.0.1:8103' is the mail site's, which this "
        "grid does not serve; its bundled sites are store http://127.0.0.1:8107, attacker "
        "http://127.0.0.1:8108 (each worker serves them on ports of its own, and an answers "
        "file names them by these origins, as `webmcp-harness sites` serves them); its url "
        "tasks start at http://127.0.0.1:9."
    )
    assert mail.endswith("The entry can answer only a page an agent reaches by navigating there.")
    assert loopback == (
        f"{answers}: entry #5: destination 'http://localhost:7' is no site of this grid; "
        + mail.split("; ", 1)[1].split(". The entry")[0]
        + ". The entry can answer only a navigation to a site outside the grid."
    )


def test_the_experiment_command_prints_the_warnings_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from harness.cli.commands import EXIT_USAGE, main

    grid = write_grid(tmp_path, "answers:\n  - origin: http://127.0.0.1:8103\n    action: accept\n")
    full = tmp_path / "full"
    full.mkdir()
    (full / "x").touch()  # refused before any episode runs: the warning came first
    assert main(["experiment", str(grid), "--output", str(full), "--no-progress"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.startswith("warning: ") and "entry #1: origin 'http://127.0.0.1:8103'" in err
    assert "exists and is not empty" in err
