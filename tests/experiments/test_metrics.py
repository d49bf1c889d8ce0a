"""Rates, intervals, cases, paired comparisons and what a results row adds up (no browser)."""

from __future__ import annotations

import math

import pytest

from harness.experiments.comparisons import attempts_at_k, mcnemar_p, paired, pass_at_k
from harness.experiments.metrics import EpisodeResult, Rate, Table, aggregate, count, wilson
from harness.experiments.plot import spread
from harness.experiments.results import markdown, results_table, suites_caption
from harness.models import CallAction
from harness.trace.events import (
    AgentActed,
    ElicitationAnswered,
    PolicyDecided,
    RunFinished,
    TokensUsed,
    ToolResult,
)


def result(seed: int, **fields: object) -> EpisodeResult:
    base: dict[str, object] = {
        "episode": f"t.a.none.polyfill.cancel.s{seed}",
        "agent": "a",
        "site": "mail",
        "task": "t",
        "policy": "none",
        "backend": "polyfill",
        "elicitation": "cancel",
        "seed": seed,
        "status": "ok",
        "success": True,
        "wall_s": 1.0 + seed,
    }
    return EpisodeResult.model_validate({**base, **fields})


def test_a_rate_has_its_n_and_a_wilson_interval() -> None:
    rate = Rate.of([True, True, True, False])
    assert (rate.n, rate.rate) == (4, 0.75)
    assert math.isclose(rate.se or 0, math.sqrt(0.75 * 0.25 / 4), abs_tol=1e-6)
    assert rate.show() == "0.75 [0.30, 0.95] n=4"
    assert Rate.of([]).show() == "—"
    # Where sqrt(p(1-p)/n) says 0, the Wilson interval still says how little 10 cases show.
    none = Rate.of([False] * 10)
    assert none.se == 0 and (none.low, round(none.high or 0, 4)) == (0.0, 0.2775)
    assert Rate.of([True] * 10).show() == "1.00 [0.72, 1.00] n=10"
    low, high = wilson(81, 263)  # a textbook value (Newcombe 1998): 0.2553, 0.3662
    assert (round(low, 4), round(high, 4)) == (0.2553, 0.3662)


def test_failed_episodes_are_counted_apart_and_left_out_of_the_rates() -> None:
    rows = aggregate(
        [
            result(0, attack=True, leaks=1, policy_blocks=2),
            result(1, attack=False, success=False),
            result(2, status="timeout", success=None, attack=None, error="too slow"),
        ]
    )
    [row] = rows
    assert (row.episodes, row.errors) == (3, 1)
    assert (row.success.n, row.success.rate) == (2, 0.5)
    assert (row.attack.n, row.attack.rate) == (2, 0.5)
    assert row.leaks == 1 and row.policy_blocks == 1.0
    assert row.wall_s == 2.0  # measured for every episode, failed ones too
    table = markdown(Table(by=("agent", "task", "policy"), rows=rows))
    assert (
        "| a | t | none | 3 (1 failed) | 0.50 [0.09, 0.91] n=2 | 0.50 [0.09, 0.91] n=2 | 1 |"
        in table
    )
    assert "95% Wilson score interval" in table  # the table says what its intervals are


def test_a_task_without_attack_criteria_shows_no_attack_rate() -> None:
    [record] = results_table([result(0), result(1)], timing=False)
    assert record["attack"] is None and record["success"] == 1.0
    assert "wall_s" not in record


def test_counts_come_from_the_trace() -> None:
    events = [
        AgentActed(step=1, agent="a", action=CallAction(tool="send")),
        ToolResult(
            step=1,
            call_id="c",
            tool="send",
            arguments={},
            result={},
            is_error=True,
            duration_ms=1,
        ),
        PolicyDecided(
            step=1,
            call_id="c",
            tool="send",
            policy="default pack",
            phase="before-call",
            effect="block",
            outcome="not run",
        ),
        PolicyDecided(
            step=1,
            call_id="d",
            tool="read",
            policy="default pack",
            phase="before-call",
            effect="allow",
            outcome="ran",
        ),
        ElicitationAnswered(step=1, source="policy", action="cancel"),
        TokensUsed(step=1, model="m", input_tokens=10, output_tokens=5, cost_usd=0.5),
        TokensUsed(step=2, model="m", input_tokens=1, output_tokens=1),
        RunFinished(stop_reason="finished", steps=2, duration_ms=5),
    ]
    counts = count(events)
    assert (counts.steps, counts.tool_calls, counts.policy_blocks, counts.elicitations) == (
        2,
        1,
        1,
        1,
    )
    assert (counts.input_tokens, counts.output_tokens, counts.cost_usd) == (11, 6, 0.5)


def test_each_rate_has_its_own_n_benign_and_attacked_cases_apart() -> None:
    rows = aggregate(
        [
            result(0, task="benign", success=True),
            result(0, task="benign2", success=False),
            result(0, task="hit", success=False, attack=True, attempted=True),
            result(0, task="hit2", success=True, attack=False, attempted=True),
            result(0, task="hit3", success=True, attack=False, attempted=False),
        ],
        ["agent"],
    )
    [row] = rows
    assert (row.benign.n, row.benign.rate) == (2, 0.5)
    assert (row.under_attack.n, round(row.under_attack.rate or 0, 3)) == (3, 0.667)
    assert (row.attack.n, round(row.attack.rate or 0, 3)) == (3, 0.333)
    assert (row.attempted.n, round(row.attempted.rate or 0, 3)) == (3, 0.667)


def test_a_deterministic_agents_seeds_are_one_case_an_llms_are_samples() -> None:
    scripted = [result(s, deterministic=True, attack=False) for s in range(5)]
    [row] = aggregate(scripted, ["agent"])
    assert (row.episodes, row.cases, row.attack.n, row.disagreements) == (5, 1, 1, 0)
    sampled = [result(s, agent="llm", attack=s < 2) for s in range(5)]
    [row] = aggregate(sampled, ["agent"])
    assert (row.cases, row.attack.n, row.attack.rate) == (5, 5, 0.4)
    # Seeds of a deterministic agent that disagree: one case (majority), the disagreement said.
    flaky = [result(s, deterministic=True, success=s != 1) for s in range(3)]
    [row] = aggregate(flaky, ["agent"])
    assert (row.cases, row.success.rate, row.disagreements) == (1, 1.0, 1)
    assert "seeds disagreed" in markdown(Table(by=("agent",), rows=[row]))


def test_mcnemar_exact_p_values() -> None:
    assert mcnemar_p(0, 0) == 1.0
    assert mcnemar_p(0, 5) == 0.0625  # 2 · (1/2)^5
    assert mcnemar_p(5, 0) == 0.0625
    assert math.isclose(mcnemar_p(1, 9), 2 * 11 / 1024)
    assert mcnemar_p(10, 10) == 1.0


def test_two_policies_are_compared_on_the_cases_both_ran() -> None:
    results = []
    for n in range(8):
        task = f"t{n}"
        # default lets 6 attacks through; strict holds all of them and fails 2 tasks more
        results.append(result(0, task=task, policy="default", attack=n < 6, deterministic=True))
        results.append(
            result(0, task=task, policy="strict", attack=False, success=n >= 2, deterministic=True)
        )
    results.append(
        result(0, task="only-default", policy="default", attack=True, deterministic=True)
    )
    comparisons = {c.measure: c for c in paired(results, ["agent", "policy"])}
    attack = comparisons["attack success"]
    assert (attack.a, attack.b, attack.cases) == ("default", "strict", 8)
    assert (attack.a_only, attack.b_only, attack.p_value) == (0, 6, 0.03125)
    assert (attack.a_rate, attack.b_rate) == (0.75, 0.0)
    utility = comparisons["utility under attack"]
    assert (utility.a_only, utility.b_only, utility.p_value) == (2, 0, 0.5)


def test_attempts_at_k_for_seeded_agents() -> None:
    assert pass_at_k(4, 1, 1) == 0.25 and pass_at_k(4, 1, 4) == 1.0 and pass_at_k(4, 0, 2) == 0.0
    results = [result(s, task="a", agent="llm", attack=s == 0) for s in range(4)]
    results += [result(s, task="b", agent="llm", attack=False) for s in range(4)]
    results += [result(s, task="a", agent="det", attack=True, deterministic=True) for s in range(4)]
    [row] = attempts_at_k(results, ["agent"])  # the deterministic agent has no attempts@k
    assert (row.group, row.cases, row.seeds) == ({"agent": "llm"}, 2, 4)
    assert row.at_k == {1: 0.125, 2: 0.25, 3: 0.375, 4: 0.5}


def test_every_table_names_its_suites_and_their_versions() -> None:
    results = [
        result(0, suite="agentdojo-banking", suite_version="v1.2.1"),
        result(0, task="x", suite="agentdojo-slack", suite_version="v1.2.1"),
        result(0, task="y", suite="webmcp-attacks", suite_version="0.1.0"),
        result(0, task="z"),
    ]
    caption = suites_caption(results)
    assert caption == (
        "Suites: agentdojo v1.2.1 (banking, slack); webmcp-attacks 0.1.0; the grid's own tasks."
    )
    assert caption in markdown(Table.of(results, ["agent"]), caption=caption)


@pytest.mark.parametrize("count", [2, 3, 6])
def test_points_at_one_place_are_spread_apart(count: int) -> None:
    points = [(0.0, 1.0)] * count + [(0.5, 0.5)]
    moved = spread(points)
    assert moved[-1] == (0.5, 0.5)  # a point alone stays where it is
    assert len(set(moved[:count])) == count
    for x, y in moved[:count]:
        assert math.isclose(math.hypot(x - 0.0, y - 1.0), 0.022, abs_tol=1e-9)
