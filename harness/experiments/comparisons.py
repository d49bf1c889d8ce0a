"""Paired comparisons between two policies on the same cases, and attempts@k for seeded agents.

**McNemar's exact test.** Two policies ran the same cases (same agent, task, variant, and
for an LLM the same seed). Only the discordant cases say anything: ``a_only`` the cases
where the first policy held (the attack failed; for utility: the task succeeded) and the
second did not, ``b_only`` the reverse. Under "no difference" each discordant case is a
fair coin, so the two-sided p-value is the binomial tail ``2 · P(X ≤ min(a, b))`` for
``X ~ Bin(a + b, 1/2)`` (capped at 1).

**attempts@k.** For an agent whose seeds are samples (an LLM), an attack that succeeds if
any of k attempts does: per case with n seeds of which c succeeded, the unbiased estimate
``1 − C(n−c, k) / C(n, k)`` (the pass@k estimator), averaged over cases.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from math import comb
from typing import Literal

from pydantic import BaseModel, ConfigDict

from harness.experiments.metrics import CASE, EpisodeResult, Observation, observations

Measure = Literal["attack success", "benign utility", "utility under attack"]
MEASURES: tuple[Measure, ...] = ("attack success", "utility under attack", "benign utility")


def mcnemar_p(a_only: int, b_only: int) -> float:
    """The two-sided exact p-value of McNemar's test for the discordant counts."""
    n = a_only + b_only
    if n == 0:
        return 1.0
    tail: float = sum(comb(n, i) for i in range(min(a_only, b_only) + 1)) / 2**n
    return min(1.0, 2 * tail)


class Paired(BaseModel):
    """One comparison: policy ``a`` against ``b`` on one measure, over shared cases."""

    model_config = ConfigDict(frozen=True)

    group: dict[str, str]
    measure: Measure
    a: str
    b: str
    cases: int
    a_rate: float | None
    b_rate: float | None
    a_only: int
    """Cases ``a`` held (attack failed) or solved (utility) and ``b`` did not."""
    b_only: int
    p_value: float


def _good(observation: Observation, measure: Measure) -> bool | None:
    """The outcome that counts as good for the measure, or None if the case is not in it."""
    if observation.injection_task:  # the attacker's goal asked for directly: no utility
        return None
    attacked = observation.attack is not None
    if measure == "attack success":
        return None if not attacked else not observation.attack
    if measure == "utility under attack":
        return observation.success if attacked else None
    return None if attacked else observation.success


def paired(
    results: Iterable[EpisodeResult], by: Sequence[str], dimension: str = "policy"
) -> list[Paired]:
    """McNemar comparisons of every pair of ``dimension`` values, per group of ``by``
    (``dimension`` itself left out of it)."""
    by = [d for d in by if d != dimension]
    groups: dict[tuple[str, ...], dict[str, list[EpisodeResult]]] = {}
    for r in results:
        group = tuple(str(getattr(r, d)) for d in by)
        groups.setdefault(group, {}).setdefault(str(getattr(r, dimension)), []).append(r)
    found: list[Paired] = []
    for group, values in sorted(groups.items()):
        cases = {
            value: {_without(o.key, dimension): o for o in observations(members)}
            for value, members in values.items()
        }
        for a, b in itertools.combinations(sorted(values), 2):
            for measure in MEASURES:
                pairs = [
                    (_good(cases[a][key], measure), _good(cases[b][key], measure))
                    for key in sorted(set(cases[a]) & set(cases[b]))
                ]
                shared = [(x, y) for x, y in pairs if x is not None and y is not None]
                if not shared:
                    continue
                a_only = sum(x and not y for x, y in shared)
                b_only = sum(y and not x for x, y in shared)
                flip = measure == "attack success"  # shown as attack success, judged as held
                a_rate = sum((not x) if flip else x for x, _ in shared) / len(shared)
                b_rate = sum((not y) if flip else y for _, y in shared) / len(shared)
                found.append(
                    Paired(
                        group=dict(zip(by, group, strict=True)),
                        measure=measure,
                        a=a,
                        b=b,
                        cases=len(shared),
                        a_rate=round(a_rate, 6),
                        b_rate=round(b_rate, 6),
                        a_only=a_only,
                        b_only=b_only,
                        p_value=round(mcnemar_p(a_only, b_only), 8),
                    )
                )
    return found


def _without(key: tuple[str, ...], dimension: str) -> tuple[str, ...]:
    """A case key with ``dimension``'s value taken out (cases then match across it)."""
    if dimension not in CASE:
        return key
    at = CASE.index(dimension)
    return key[:at] + key[at + 1 :]


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of ``k`` of ``n`` attempts (``c`` successes) succeeded."""
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


class AttemptsRow(BaseModel):
    """attempts@k of the attack for one group: k → the estimated success rate."""

    model_config = ConfigDict(frozen=True)

    group: dict[str, str]
    cases: int
    seeds: int
    at_k: dict[int, float]


def attempts_at_k(results: Iterable[EpisodeResult], by: Sequence[str]) -> list[AttemptsRow]:
    """attempts@k for agents whose seeds are samples, over cases with attack criteria run
    with at least two seeds (k up to the fewest seeds a case has)."""
    per_case: dict[tuple[str, ...], dict[tuple[str, ...], list[bool]]] = {}
    for r in results:
        if r.deterministic or not r.completed or r.attack is None:
            continue
        group = tuple(str(getattr(r, d)) for d in by)
        per_case.setdefault(group, {}).setdefault(r.case_key(), []).append(r.attack)
    rows = []
    for group, cases in sorted(per_case.items()):
        seeds = min(len(v) for v in cases.values())
        if seeds < 2:
            continue
        at_k = {
            k: round(sum(pass_at_k(len(v), sum(v), k) for v in cases.values()) / len(cases), 6)
            for k in range(1, seeds + 1)
        }
        rows.append(
            AttemptsRow(
                group=dict(zip(by, group, strict=True)), cases=len(cases), seeds=seeds, at_k=at_k
            )
        )
    return rows
