"""``plot.png``: utility against attack success per agent and policy, with 95% Wilson bars.

One point per headline row (agent × policy × each varied axis): x is the targeted attack
success rate, y the utility under attack; rows without attacked cases are drawn at their
benign utility on a strip left of the axis (``no attacks``). Deterministic agents often
land on the same spot (every policy at 0 attack success, utility 1): points that would
cover each other are spread on a small circle around their common place, drawn hollow
over their interval bars, so each stays visible and keeps its own bars. Colour is the
policy, marker the agent, fill the annotations variant (hollow: bare). The note under the
plot says the table's caveats (seeds that disagreed), as every table does.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

from harness.experiments.metrics import EpisodeResult, Rate, Row, Table
from harness.experiments.results import headline_dimensions

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PLOT_PNG = "plot.png"
SPREAD = 0.022
"""How far (in axis units) points that share a place are moved apart."""
NO_ATTACK_X = -0.12
"""Where rows without attacked cases are drawn (left of x = 0)."""


def _literal(text: str) -> str:
    """``text`` (names from the grid) drawn as written: matplotlib reads ``$…$`` as math,
    and leaves out of the legend a label that starts with ``_``."""
    shown = text.replace("$", r"\$")
    return f" {shown}" if shown.startswith("_") else shown


def _bars(rate: Rate) -> tuple[float, float]:
    """The (below, above) lengths of a rate's Wilson interval bar."""
    if rate.rate is None or rate.low is None or rate.high is None:
        return (0.0, 0.0)
    return (max(0.0, rate.rate - rate.low), max(0.0, rate.high - rate.rate))


def spread(points: list[tuple[float, float]], radius: float = SPREAD) -> list[tuple[float, float]]:
    """``points`` with each group of coinciding ones moved onto a circle around their place."""
    groups: dict[tuple[float, float], list[int]] = {}
    for index, (x, y) in enumerate(points):
        groups.setdefault((round(x, 3), round(y, 3)), []).append(index)
    moved = list(points)
    for members in groups.values():
        if len(members) < 2:
            continue
        for k, index in enumerate(members):
            angle = 2 * math.pi * k / len(members) + math.pi / 2
            x, y = points[index]
            moved[index] = (x + radius * math.cos(angle), y + radius * math.sin(angle))
    return moved


def _place(row: Row) -> tuple[float, float, Rate, Rate | None]:
    """(x, y, the y rate, the x rate) of a row: attacked rows at (ASR, utility under attack)."""
    if row.attack.rate is not None:
        return (row.attack.rate, row.under_attack.rate or 0.0, row.under_attack, row.attack)
    return (NO_ATTACK_X, row.benign.rate or 0.0, row.benign, None)


def plot(
    directory: Path, results: list[EpisodeResult], title: str, caption: str = ""
) -> Path | None:
    """Write ``plot.png``; None when no episode ran to an end."""
    drawn = figure(results, title, caption)
    if drawn is None:
        return None
    import matplotlib.pyplot as plt

    path = directory / PLOT_PNG
    drawn.savefig(path)
    plt.close(drawn)
    return path


def figure(results: list[EpisodeResult], title: str, caption: str = "") -> Figure | None:
    """The plot of the headline table of ``results``; None when no episode ran to an end."""
    table = Table.of(results, headline_dimensions(results))
    by = table.by
    # Rows of AgentDojo injection tasks alone have no utility to plot (success.n counts none).
    rows = [r for r in table.rows if r.success.n]
    if not rows:
        return None
    import matplotlib

    matplotlib.use("Agg")  # no display: a file only
    import matplotlib.pyplot as plt

    policies = sorted({r.group["policy"] for r in rows})
    agents = sorted({r.group["agent"] for r in rows})
    colours = {p: plt.get_cmap("tab10")(i % 10) for i, p in enumerate(policies)}
    markers = "osD^vP*X"
    places = [_place(r) for r in rows]
    moved = spread([(x, y) for x, y, _, _ in places])
    drawn, axes = plt.subplots(figsize=(8, 5.2), dpi=110)
    for row, (x, y), (_, _, y_rate, x_rate) in zip(rows, moved, places, strict=True):
        colour = colours[row.group["policy"]]
        bare = row.group.get("annotations") == "bare"
        axes.errorbar(
            x,
            y,
            xerr=[[v] for v in _bars(x_rate)] if x_rate is not None else None,
            yerr=[[v] for v in _bars(y_rate)],
            fmt=markers[agents.index(row.group["agent"]) % len(markers)],
            color=colour,
            markerfacecolor="none" if bare else colour,
            markeredgewidth=1.6,
            markersize=8,
            alpha=0.85,
            elinewidth=1.1,
            capsize=3,
            label=_literal(" / ".join(row.group[d] for d in by)),
        )
    if any(p[3] is None for p in places):
        axes.axvline(NO_ATTACK_X / 2, color="#bbb", linewidth=0.8)
        axes.annotate(
            "no attacks:\nbenign utility",
            (NO_ATTACK_X, -0.03),
            fontsize=7,
            ha="center",
            va="top",
            color="#666",
        )
    axes.set_xlim(NO_ATTACK_X - 0.06 if any(p[3] is None for p in places) else -0.06, 1.06)
    axes.set_ylim(-0.1, 1.08)
    axes.set_xlabel("targeted attack success rate (lower is better)")
    axes.set_ylabel("utility under attack (benign utility where no attack)")
    axes.set_title(_literal(title), fontsize=11)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    note = "Bars: 95% Wilson intervals. Points at one place are spread on a small circle."
    said = " ".join([caption, note, *table.caveats]).strip()
    drawn.text(0.01, 0.01, _literal(said), fontsize=6.5, color="#555", wrap=True)
    drawn.tight_layout(rect=(0, 0.04, 1, 1))
    return drawn
