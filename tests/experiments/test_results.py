"""The files a run's results are written to: every Markdown table keeps its shape whatever
the names in it hold (no browser)."""

from __future__ import annotations

import io
from pathlib import Path

from harness.experiments.metrics import EpisodeResult
from harness.experiments.results import write_tables
from tests.gfm import HARMLESS, HOSTILE, inert


def cells(row: str) -> list[str]:
    """A Markdown table row's cells as a reader (GitHub's) splits them: at each ``|`` not
    escaped by a backslash, where ``\\\\`` is an escaped backslash; unescaped."""
    found, cell, i = [], "", 0
    while i < len(row):
        if row[i] == "\\" and i + 1 < len(row):
            cell += row[i + 1]
            i += 2
            continue
        if row[i] == "|":
            found.append(cell.strip())
            cell = ""
        else:
            cell += row[i]
        i += 1
    return [*found, cell.strip()][1:-1]  # the row's outer pipes open and close it


def tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """Each table of a Markdown text: its header's cells and its rows' (a row is every line
    after the delimiter line up to the first blank one, whatever it looks like)."""
    found = []
    lines = text.splitlines()
    for number, line in enumerate(lines[:-1]):
        if line.startswith("| ") and lines[number + 1].startswith("|---"):
            rows = []
            for following in lines[number + 2 :]:
                if not following.strip():
                    break
                rows.append(cells(following) if following.startswith("|") else [following])
            found.append((cells(line), rows))
    return found


def result(seed: int, policy: str, **fields: object) -> EpisodeResult:
    base: dict[str, object] = {
        "episode": f"e.{policy}.s{seed}",
        "agent": "llm a\\|b",  # a backslash before a pipe, as a model's name may hold
        "site": "mail",
        "task": "task | one",
        "policy": policy,
        "backend": "polyfill",
        "elicitation": "cancel",
        "seed": seed,
        "status": "ok",
        "success": True,
        "attack": seed == 0,
        "channel": "instructions in results\n(multi-line category)",
        "deterministic": False,
    }
    return EpisodeResult.model_validate({**base, **fields})


def test_every_markdown_table_keeps_its_shape_whatever_its_cells_hold(tmp_path: Path) -> None:
    results = [result(seed, policy) for seed in (0, 1) for policy in ("none", "default")]
    results.append(result(0, "none", channel="channel a\\|b", episode="other", task="two"))
    written = write_tables(tmp_path, results, "odd\nnames")
    shown: set[str] = set()
    for name in ("results.md", "headline.md", "breakdown.md", "paired.md"):
        text = written[name].read_text(encoding="utf-8")
        assert "### odd names" in text, name  # a title on one line too
        found = tables(text)
        assert found, name
        for header, rows in found:
            assert rows, (name, header)
            for row in rows:
                assert len(row) == len(header), (name, row)
                shown.update(row)
    # Each name reads back as it was (on one line): nothing lost, nothing added.
    assert {
        "llm a\\|b",
        "task | one",
        "instructions in results (multi-line category)",
        "channel a\\|b",
    } <= shown
    assert "@2" in written["paired.md"].read_text(encoding="utf-8")  # attempts@k written too


def test_every_rendering_of_the_results_says_a_deterministic_agents_seeds_disagreed(
    tmp_path: Path,
) -> None:
    """headline.md and results.md said the seeds of a deterministic agent disagreed (the
    majority kept); report.html showed the same 1.00 n=1 with no word of it. The caveat comes
    with the table from the results model, so every rendering of the table says it."""
    from rich.console import Console

    from harness.cli.experiment import headline_table
    from harness.experiments.plot import figure
    from harness.experiments.report import write_report

    caveat = "seeds disagreed (majority kept)"
    flaky = [
        result(seed, "none", agent="scripted", deterministic=True, success=seed != 1, attack=None)
        for seed in range(3)
    ]
    written = write_tables(tmp_path, flaky, "study")
    for name in ("results.md", "headline.md", "breakdown.md"):
        assert caveat in written[name].read_text(encoding="utf-8"), name
    assert "seed_disagreements" in written["results.csv"].read_text(encoding="utf-8")
    page = write_report(tmp_path, flaky, "study").read_text(encoding="utf-8")
    # Under every table that shows the case: the headline, the results, and the overall line.
    assert page.count(caveat) >= 3, page
    terminal = Console(width=200, record=True, file=io.StringIO())
    terminal.print(headline_table(flaky, "study"))
    assert caveat in " ".join(terminal.export_text().split())  # the caption wraps
    drawn = figure(flaky, "study")
    assert drawn is not None
    assert caveat in " ".join(text.get_text() for text in drawn.texts)


def _tables(tmp_path: Path, names: tuple[str, ...]) -> dict[str, str]:
    """The Markdown files of a run whose agents, tasks and sites are named ``names``."""
    results = [
        result(seed, policy, agent=name, task=name, site=name, episode=f"e{i}.{policy}.{seed}")
        for i, name in enumerate(names)
        for policy in ("none", "default")
        for seed in (0, 1)
    ]
    written = write_tables(tmp_path, results, "study")
    return {n: p.read_text(encoding="utf-8") for n, p in written.items() if n.endswith(".md")}


def test_names_in_the_markdown_tables_are_shown_as_written_and_never_become_links(
    tmp_path: Path,
) -> None:
    """Every Markdown file of a run, rendered by GitHub's renderer (cmark-gfm): names that
    Markdown would read as markup (``www.…``, a URL, an e-mail address, a heading, HTML) give
    the elements harmless names give, and read as written."""
    (tmp_path / "hostile").mkdir()
    (tmp_path / "harmless").mkdir()
    hostile = _tables(tmp_path / "hostile", HOSTILE)
    harmless = _tables(tmp_path / "harmless", HARMLESS)
    assert set(hostile) == {"results.md", "headline.md", "breakdown.md", "paired.md"}
    for name, text in hostile.items():
        inert(text, harmless[name])
