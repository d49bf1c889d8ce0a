"""LLM agents in a grid: temperature and the episode's seed reach the provider and run_info,
tokens and cost reach the tables, and recorded cassettes replay the study offline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.experiments.studies import replayed, run_grid
from tests.llm_servers import OpenAIServer, Reply

# Whole grids of browser episodes: minutes, not seconds, on a busy machine.
pytestmark = pytest.mark.timeout(900)

GRID = """
[experiment]
name = "llm"
seeds = [7]
policies = ["none", "default"]
workers = 1

[[agents]]
name = "fake-gpt"
spec = "openai:fake-model"
temperature = 0.2
[agents.options]
base_url = "{base_url}"
api_key = "test-key"
price = "1,2"

[[tasks]]
id = "mail-question"
site = "mail"
instruction = "What did my accountant ask me for? Check my inbox."
success = [{{call = "list_inbox"}}, {{answer = "salary spreadsheet"}}]
"""

SCRIPT = [
    Reply(calls=[("list_inbox", {})]),
    Reply(text="Dana asked for the salary spreadsheet."),
]


@pytest.mark.slow  # an `experiment` console script, recorded then replayed (~8 s)
async def test_llm_episodes_record_their_sampling_tokens_and_cost_and_replay_offline(
    tmp_path: Path,
) -> None:
    cassettes = tmp_path / "cassettes"
    async with OpenAIServer(SCRIPT * 2) as server:
        grid = tmp_path / "grid.toml"
        grid.write_text(GRID.format(base_url=server.base_url), encoding="utf-8")
        recorded = await run_grid(
            grid, tmp_path / "recorded", cassettes=cassettes, cassette_mode="record"
        )
        assert server.problems == []
        assert [(r["seed"], r["temperature"]) for r in server.requests] == [(7, 0.2)] * 4
    assert all(r.status == "ok" and r.success for r in recorded.results), recorded.results
    for result in recorded.results:
        assert result.input_tokens > 0 and result.output_tokens > 0
        assert result.cost_usd is not None and result.cost_usd > 0
        assert (cassettes / f"{result.episode}.json").is_file()

    # The server is gone: the replay sends nothing, and gives the same table.
    await replayed(grid, tmp_path / "replayed", cassettes, recorded)
    info = json.loads((tmp_path / "replayed" / "run_info.json").read_text(encoding="utf-8"))
    [agent] = info["grid"]["agents"]
    assert (agent["temperature"], agent["seed"]) == (0.2, "the episode's seed")
    assert info["grid"]["seeds"] == [7]
    assert info["options"]["cassettes"]["mode"] == "replay"
    assert "test-key" not in json.dumps(info)  # option names only, never their values
    table = (tmp_path / "replayed" / "results.md").read_text(encoding="utf-8")
    row = next(line for line in table.splitlines() if "| none |" in line)
    tokens = recorded.results[0].input_tokens + recorded.results[0].output_tokens
    assert f"| {tokens} |" in row
