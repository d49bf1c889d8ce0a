"""Rates, standard errors and what a results row adds up (no browser)."""

from __future__ import annotations

import math

from harness.experiments.metrics import EpisodeResult, Rate, aggregate, count
from harness.experiments.results import markdown, results_table
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


def test_a_rate_has_the_binomial_standard_error() -> None:
    rate = Rate.of([True, True, True, False])
    assert (rate.n, rate.rate) == (4, 0.75)
    assert math.isclose(rate.se or 0, math.sqrt(0.75 * 0.25 / 4), abs_tol=1e-6)
    assert rate.show() == "0.75 ± 0.22"
    assert Rate.of([]).show() == "—"


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
    table = markdown(rows, ["agent", "task", "policy"])
    assert "| a | t | none | 3 (1 failed) | 0.50 ± 0.35 | 0.50 ± 0.35 | 1 |" in table


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
