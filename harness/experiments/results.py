"""Where results go: ``results.db`` (SQLite, one row per episode), CSV and Markdown tables, a plot.

The database is the run's memory: a row is written (and committed) only once the
episode's directory is complete, so a run killed at any moment loses at most the
episodes in flight, and ``--resume`` runs exactly the ones without an ``ok`` row.
Every table is computed from the rows, sorted, so the same episodes give the same
tables whatever order they ran in.

- ``results.csv`` / ``results.md``: one row per (agent, site, task, policy, backend,
  elicitation): success rate ± standard error, attack success rate ± standard error,
  leaks, and per-episode means of policy blocks, elicitations, steps, tool calls,
  tokens, cost and wall time;
- ``episodes.csv``: one row per episode (so per seed);
- ``headline.md``: utility and attack success per agent and policy pack;
- ``plot.png``: utility against attack success, one point per agent and policy.
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from harness.errors import ConfigError
from harness.experiments.metrics import GROUP, TIMING_COLUMNS, EpisodeResult, Row, aggregate

DATABASE = "results.db"
RESULTS_CSV = "results.csv"
RESULTS_MD = "results.md"
EPISODES_CSV = "episodes.csv"
HEADLINE_MD = "headline.md"
PLOT_PNG = "plot.png"

_COLUMNS = (
    "episode TEXT PRIMARY KEY, agent TEXT, site TEXT, task TEXT, policy TEXT, backend TEXT, "
    "elicitation TEXT, seed INTEGER, status TEXT, stop_reason TEXT, error TEXT, "
    "success INTEGER, attack INTEGER, leaks INTEGER, leaked_in TEXT, steps INTEGER, "
    "tool_calls INTEGER, policy_blocks INTEGER, elicitations INTEGER, input_tokens INTEGER, "
    "output_tokens INTEGER, cost_usd REAL, wall_s REAL, run_id TEXT, worker TEXT, "
    "finished_at TEXT, result TEXT"
)


def _flag(value: bool | None) -> int | None:
    return None if value is None else int(value)


class ResultStore:
    """``results.db``: the episodes table, the invocations that ran them, and run metadata."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self._db = sqlite3.connect(self.path)
            self._db.execute(f"CREATE TABLE IF NOT EXISTS episodes ({_COLUMNS})")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS runs (run_id TEXT PRIMARY KEY, started_at TEXT, "
                "finished_at TEXT, runner TEXT, workers INTEGER, episodes_run INTEGER, "
                "seconds REAL, per_minute REAL)"
            )
            self._db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
            self._db.commit()
        except sqlite3.DatabaseError as exc:
            raise ConfigError(f"{self.path} is not a results database: {exc}.") from None

    def put(self, result: EpisodeResult) -> None:
        """Write one episode's row (replacing an earlier attempt's) and commit it."""
        row = (
            result.episode,
            result.agent,
            result.site,
            result.task,
            result.policy,
            result.backend,
            result.elicitation,
            result.seed,
            result.status,
            result.stop_reason,
            result.error,
            _flag(result.success),
            _flag(result.attack),
            result.leaks,
            json.dumps(result.leaked_in),
            result.steps,
            result.tool_calls,
            result.policy_blocks,
            result.elicitations,
            result.input_tokens,
            result.output_tokens,
            result.cost_usd,
            result.wall_s,
            result.run_id,
            result.worker,
            result.finished_at,
            result.model_dump_json(),
        )
        marks = ", ".join("?" * len(row))
        self._db.execute(f"INSERT OR REPLACE INTO episodes VALUES ({marks})", row)
        self._db.commit()

    def results(self) -> list[EpisodeResult]:
        """Every episode's result, by episode id."""
        rows = self._db.execute("SELECT result FROM episodes ORDER BY episode").fetchall()
        return [EpisodeResult.model_validate_json(text) for (text,) in rows]

    def done(self) -> set[str]:
        """The episodes that ran to an end (``--resume`` leaves them alone)."""
        rows = self._db.execute("SELECT episode FROM episodes WHERE status = 'ok'").fetchall()
        return {episode for (episode,) in rows}

    def get_meta(self, key: str) -> str | None:
        """A metadata value (the grid's hash, …)."""
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        """Set a metadata value."""
        self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))
        self._db.commit()

    def record_run(
        self,
        run_id: str,
        *,
        started_at: str,
        finished_at: str,
        runner: str,
        workers: int,
        episodes_run: int,
        seconds: float,
    ) -> None:
        """One invocation (a first run or a resume) and its throughput."""
        per_minute = round(episodes_run / seconds * 60, 2) if seconds > 0 else 0.0
        self._db.execute(
            "INSERT OR REPLACE INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (run_id, started_at, finished_at, runner, workers, episodes_run, seconds, per_minute),
        )
        self._db.commit()

    def runs(self) -> list[dict[str, Any]]:
        """Every invocation, oldest first."""
        cursor = self._db.execute("SELECT * FROM runs ORDER BY started_at")
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def close(self) -> None:
        """Close the database."""
        self._db.close()


# -- tables -----------------------------------------------------------------------------------

ROW_COLUMNS = (
    "episodes",
    "errors",
    "success",
    "success_se",
    "attack",
    "attack_se",
    "leaks",
    "policy_blocks",
    "elicitations",
    "steps",
    "tool_calls",
    "tokens",
    "cost_usd",
    "wall_s",
)


def row_record(row: Row, *, timing: bool = True) -> dict[str, Any]:
    """A row as a flat record (the columns of ``results.csv``)."""
    record: dict[str, Any] = dict(row.group)
    record.update(
        episodes=row.episodes,
        errors=row.errors,
        success=row.success.rate,
        success_se=row.success.se,
        attack=row.attack.rate,
        attack_se=row.attack.se,
        leaks=row.leaks,
        policy_blocks=row.policy_blocks,
        elicitations=row.elicitations,
        steps=row.steps,
        tool_calls=row.tool_calls,
        tokens=row.tokens,
        cost_usd=row.cost_usd,
        wall_s=row.wall_s,
    )
    if not timing:
        for column in TIMING_COLUMNS:
            record.pop(column, None)
    return record


def results_table(results: Iterable[EpisodeResult], *, timing: bool = True) -> list[dict[str, Any]]:
    """The results table as records: one per (agent, site, task, policy, backend, elicitation).

    With ``timing=False`` the measured columns are left out: what remains is the same
    on every run of deterministic agents.
    """
    return [row_record(row, timing=timing) for row in aggregate(results, GROUP)]


def varying(results: Sequence[EpisodeResult], dimensions: Sequence[str]) -> list[str]:
    """The dimensions that take more than one value in ``results``."""
    return [d for d in dimensions if len({getattr(r, d) for r in results}) > 1]


def headline_dimensions(results: Sequence[EpisodeResult]) -> list[str]:
    """Agent and policy, plus backend or elicitation when the run varied them."""
    return ["agent", "policy", *varying(results, ("backend", "elicitation"))]


def _csv_text(records: list[dict[str, Any]]) -> str:
    if not records:
        return ""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(records[0]), lineterminator="\n")
    writer.writeheader()
    for record in records:
        writer.writerow({k: "" if v is None else v for k, v in record.items()})
    return out.getvalue()


def episode_records(results: Iterable[EpisodeResult]) -> list[dict[str, Any]]:
    """One flat record per episode (``episodes.csv``)."""
    records = []
    for r in sorted(results, key=lambda r: r.episode):
        records.append(
            {
                "episode": r.episode,
                "agent": r.agent,
                "site": r.site,
                "task": r.task,
                "policy": r.policy,
                "backend": r.backend,
                "elicitation": r.elicitation,
                "seed": r.seed,
                "status": r.status,
                "stop_reason": r.stop_reason,
                "success": _flag(r.success),
                "attack": _flag(r.attack),
                "leaks": r.leaks,
                "leaked_in": " ".join(r.leaked_in),
                "policy_blocks": r.policy_blocks,
                "elicitations": r.elicitations,
                "steps": r.steps,
                "tool_calls": r.tool_calls,
                "input_tokens": r.input_tokens,
                "output_tokens": r.output_tokens,
                "cost_usd": r.cost_usd,
                "wall_s": r.wall_s,
                "error": r.error,
            }
        )
    return records


def _number(value: float | None, digits: int = 1) -> str:
    if value is None:
        return "—"
    return f"{value:.{digits}f}" if value != int(value) else str(int(value))


def markdown(
    rows: list[Row], dimensions: Sequence[str], *, timing: bool = True, title: str = ""
) -> str:
    """A Markdown table of ``rows`` (grouped by ``dimensions``)."""
    header = [
        *dimensions,
        "n",
        "success",
        "attack success",
        "leaks",
        "blocks",
        "elicitations",
        "steps",
        "tool calls",
        "tokens",
        "cost $",
    ]
    if timing:
        header.append("wall s")
    lines = [f"### {title}", ""] if title else []
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "|".join("---" for _ in header) + "|")
    for row in rows:
        n = f"{row.episodes}" + (f" ({row.errors} failed)" if row.errors else "")
        cells = [
            *(row.group[d] for d in dimensions),
            n,
            row.success.show(),
            row.attack.show(),
            str(row.leaks),
            _number(row.policy_blocks),
            _number(row.elicitations),
            _number(row.steps),
            _number(row.tool_calls),
            _number(row.tokens, 0),
            "—" if row.cost_usd is None else f"{row.cost_usd:.4f}",
        ]
        if timing:
            cells.append(f"{row.wall_s:.2f}")
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(lines) + "\n"


def write_tables(directory: Path, results: list[EpisodeResult], title: str) -> dict[str, Path]:
    """Write ``results.csv``, ``results.md``, ``episodes.csv`` and ``headline.md``."""
    shown = ["agent", "site", "task", "policy", *varying(results, ("backend", "elicitation"))]
    rows = aggregate(results, GROUP)
    headline_by = headline_dimensions(results)
    files = {
        RESULTS_CSV: _csv_text(results_table(results)),
        EPISODES_CSV: _csv_text(episode_records(results)),
        RESULTS_MD: markdown(rows, shown, title=f"{title}: results"),
        HEADLINE_MD: markdown(
            aggregate(results, headline_by), headline_by, title=f"{title}: utility and attacks"
        ),
    }
    written = {}
    for name, text in files.items():
        path = directory / name
        path.write_text(text, encoding="utf-8")
        written[name] = path
    return written


def plot(directory: Path, results: list[EpisodeResult], title: str) -> Path | None:
    """``plot.png``: utility (success rate) against attack success rate, per agent and policy.

    Without attack tasks, a bar chart of utility. None when no episode ran to an end.
    """
    by = headline_dimensions(results)
    rows = [r for r in aggregate(results, by) if r.success.rate is not None]
    if not rows:
        return None
    import matplotlib

    matplotlib.use("Agg")  # no display: a file only
    import matplotlib.pyplot as plt

    policies = sorted({r.group["policy"] for r in rows})
    colours = {p: plt.get_cmap("tab10")(i % 10) for i, p in enumerate(policies)}
    figure, axes = plt.subplots(figsize=(7, 4.5), dpi=110)
    with_attack = [r for r in rows if r.attack.rate is not None]
    if with_attack:
        markers = "osD^vP*X"
        agents = sorted({r.group["agent"] for r in with_attack})
        for row in with_attack:
            label = " / ".join(row.group[d] for d in by)
            axes.errorbar(
                row.attack.rate or 0.0,
                row.success.rate or 0.0,
                xerr=row.attack.se,
                yerr=row.success.se,
                fmt=markers[agents.index(row.group["agent"]) % len(markers)],
                color=colours[row.group["policy"]],
                markersize=8,
                capsize=3,
                label=label,
            )
        axes.set_xlabel("attack success rate (lower is better)")
        axes.set_ylabel("utility: task success rate")
        axes.set_xlim(-0.05, 1.05)
        axes.legend(fontsize=7, loc="best")
    else:
        labels = [" / ".join(r.group[d] for d in by) for r in rows]
        axes.bar(
            range(len(rows)),
            [r.success.rate or 0.0 for r in rows],
            yerr=[r.success.se or 0.0 for r in rows],
            color=[colours[r.group["policy"]] for r in rows],
            capsize=3,
        )
        axes.set_xticks(range(len(rows)), labels, rotation=30, ha="right", fontsize=7)
        axes.set_ylabel("task success rate")
    axes.set_ylim(-0.05, 1.05)
    axes.set_title(title)
    axes.grid(alpha=0.3)
    figure.tight_layout()
    path = directory / PLOT_PNG
    figure.savefig(path)
    plt.close(figure)
    return path
