"""Where results go: ``results.db`` (SQLite, one row per episode), CSV and Markdown tables, a plot.

The database is the run's memory: a row is written (and committed) only once the
episode's directory is complete, so a run killed at any moment loses at most the
episodes in flight, and ``--resume`` runs exactly the ones without an ``ok`` row.
Every table is computed from the rows, sorted, so the same episodes give the same
tables whatever order they ran in.

- ``results.csv`` / ``results.md``: one row per (agent, site, task, policy, backend,
  elicitation, attack, annotations): benign utility, utility under attack, targeted
  attack success and attempted attacks, each with its n and 95% Wilson interval
  (:mod:`harness.experiments.metrics`), leaks, and per-episode means of policy blocks,
  elicitations, steps, tool calls, tokens, cost and wall time;
- ``episodes.csv``: one row per episode (so per seed);
- ``headline.md``: the same per agent and policy pack (and each varied axis);
- ``breakdown.md``: the headline per suite and per injection channel;
- ``paired.md``: McNemar's exact test between every two policies on the same cases, and
  attempts@k for agents whose seeds are samples (:mod:`harness.experiments.comparisons`);
- ``plot.png``: utility against attack success (:mod:`harness.experiments.plot`).

Every table says which suites (name and version) its rows come from, and what its
intervals are.
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from harness.elicitation.wording import markdown_cell, markdown_text
from harness.errors import ConfigError
from harness.experiments.comparisons import AttemptsRow, Paired, attempts_at_k, paired
from harness.experiments.metrics import (
    GROUP,
    INTERVALS_NOTE,
    TIMING_COLUMNS,
    EpisodeResult,
    Rate,
    Row,
    Table,
    aggregate,
)

DATABASE = "results.db"
RESULTS_CSV = "results.csv"
RESULTS_MD = "results.md"
EPISODES_CSV = "episodes.csv"
HEADLINE_MD = "headline.md"
BREAKDOWN_MD = "breakdown.md"
PAIRED_MD = "paired.md"

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
            json.dumps(result.leaked_in, allow_nan=False),
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

    def begin_run(self, run_id: str, *, started_at: str, runner: str, workers: int) -> None:
        """An invocation starts: listed from now on, so that one stopped before its end
        (Ctrl-C, a kill) is still there beside the episodes it kept (see :meth:`runs`)."""
        self._db.execute(
            "INSERT OR REPLACE INTO runs VALUES (?, ?, NULL, ?, ?, 0, NULL, NULL)",
            (run_id, started_at, runner, workers),
        )
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
        """One invocation (a first run or a resume) at its end, and its throughput."""
        per_minute = round(episodes_run / seconds * 60, 2) if seconds > 0 else 0.0
        self._db.execute(
            "INSERT OR REPLACE INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (run_id, started_at, finished_at, runner, workers, episodes_run, seconds, per_minute),
        )
        self._db.commit()

    def runs(self) -> list[dict[str, Any]]:
        """Every invocation, oldest first; ``ended``: ``finished``, or ``stopped`` for one that
        never reached its end (interrupted or killed), its ``episodes_run`` the rows it kept."""
        cursor = self._db.execute("SELECT * FROM runs ORDER BY started_at, rowid")
        names = [d[0] for d in cursor.description]
        found = []
        for row in cursor.fetchall():
            run = dict(zip(names, row, strict=True))
            run["ended"] = "stopped" if run["finished_at"] is None else "finished"
            if run["finished_at"] is None:
                kept = self._db.execute(
                    "SELECT count(*) FROM episodes WHERE run_id = ?", (run["run_id"],)
                ).fetchone()
                run["episodes_run"] = int(kept[0])
            found.append(run)
        return found

    def close(self) -> None:
        """Close the database."""
        self._db.close()


# -- tables -----------------------------------------------------------------------------------

RATES = ("success", "benign", "under_attack", "attack", "attempted", "injection_tasks")
"""The rates of a row, by attribute name (the CSV's columns: NAME, NAME_n, NAME_low, …)."""

RATE_HEADERS = {
    "benign": "benign utility",
    "under_attack": "utility under attack",
    "attack": "attack success",
    "attempted": "attack attempted",
    "injection_tasks": "injection tasks solved",
}
"""The rates the Markdown and HTML tables show, and their headers."""


def row_record(row: Row, *, timing: bool = True) -> dict[str, Any]:
    """A row as a flat record (the columns of ``results.csv``)."""
    record: dict[str, Any] = dict(row.group)
    record.update(episodes=row.episodes, errors=row.errors, cases=row.cases)
    record["seed_disagreements"] = row.disagreements
    for name in RATES:
        rate: Rate = getattr(row, name)
        record.update(
            {
                name: rate.rate,
                f"{name}_n": rate.n,
                f"{name}_low": rate.low,
                f"{name}_high": rate.high,
                f"{name}_se": rate.se,
            }
        )
    record.update(
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
    """The results table as records: one per cell of the grid but the seed.

    With ``timing=False`` the measured columns are left out: what remains is the same
    on every run of deterministic agents.
    """
    return [row_record(row, timing=timing) for row in aggregate(results, GROUP)]


def varying(results: Sequence[EpisodeResult], dimensions: Sequence[str]) -> list[str]:
    """The dimensions that take more than one value in ``results``."""
    return [d for d in dimensions if len({getattr(r, d) for r in results}) > 1]


def attack_names(results: Sequence[EpisodeResult]) -> set[str]:
    """The attacks that wrote injections in ``results`` (not ``none``, not a site's own)."""
    return {r.attack_name for r in results if r.attack_name not in ("", "none")}


def headline_dimensions(results: Sequence[EpisodeResult]) -> list[str]:
    """Agent and policy, plus each axis the run varied (backend, answers, annotations), and
    the attack when more than one wrote injections (benign cases then form a row of their own)."""
    by = ["agent", "policy", *varying(results, ("backend", "elicitation", "annotations"))]
    return by + (["attack_name"] if len(attack_names(results)) > 1 else [])


def detail_dimensions(results: Sequence[EpisodeResult]) -> list[str]:
    """The coordinates ``results.md`` shows: agent, site, task, policy and what varied."""
    extra = ("backend", "elicitation", "attack_name", "annotations")
    return ["agent", "site", "task", "policy", *varying(results, extra)]


def suites_caption(results: Sequence[EpisodeResult]) -> str:
    """Which suites the rows come from, with their versions (every table says it)."""
    versions: dict[str, set[str]] = {}
    own = False
    for r in results:
        if not r.suite:
            own = True
            continue
        family, _, member = (
            r.suite.partition("-")
            if r.suite.startswith("agentdojo-")
            else (
                r.suite,
                "",
                "",
            )
        )
        label = f"{family} {r.suite_version}".strip()
        versions.setdefault(label, set())
        if member:
            versions[label].add(member)
    parts = [
        f"{label} ({', '.join(sorted(members))})" if members else label
        for label, members in sorted(versions.items())
    ]
    if own:
        parts.append("the grid's own tasks")
    return "Suites: " + "; ".join(parts) + "." if parts else ""


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
                "suite": r.suite,
                "site": r.site,
                "task": r.task,
                "policy": r.policy,
                "backend": r.backend,
                "elicitation": r.elicitation,
                "attack_name": r.attack_name,
                "annotations": r.annotations,
                "channel": r.channel,
                "seed": r.seed,
                "status": r.status,
                "stop_reason": r.stop_reason,
                "success": _flag(r.success),
                "attack": _flag(r.attack),
                "attempted": _flag(r.attempted),
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
                "served": " ".join(f"{k}={v}" for k, v in sorted(r.served.items())),
                "error": r.error,
                # last, so the columns before it keep their places
                "injection_task": int(r.injection_task),
            }
        )
    return records


def _number(value: float | None, digits: int = 1) -> str:
    if value is None:
        return "—"
    return f"{value:.{digits}f}" if value != int(value) else str(int(value))


def shown_rates(rows: Sequence[Row]) -> list[str]:
    """The rates worth a column: those some row measured (benign utility at the least)."""
    shown = [name for name in RATE_HEADERS if any(getattr(r, name).n for r in rows)]
    return shown or ["benign"]


def markdown(
    table: Table,
    dimensions: Sequence[str] | None = None,
    *,
    timing: bool = True,
    title: str = "",
    caption: str = "",
) -> str:
    """A Markdown table of ``table``'s rows (showing ``dimensions``: by default, what they are
    grouped by), its suites, intervals and caveats said under it."""
    rows = table.rows
    dimensions = table.by if dimensions is None else dimensions
    rates = shown_rates(rows)
    header = [
        *(d.replace("_name", "") for d in dimensions),
        "episodes",
        *(RATE_HEADERS[r] for r in rates),
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
    lines = [f"### {markdown_text(title)}", ""] if title else []
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "|".join("---" for _ in header) + "|")
    for row in rows:
        n = f"{row.episodes}" + (f" ({row.errors} failed)" if row.errors else "")
        cells = [
            *(markdown_cell(row.group[d]) for d in dimensions),
            n,
            *(getattr(row, r).show() for r in rates),
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
        lines.append("| " + " | ".join(cells) + " |")
    notes = [caption, INTERVALS_NOTE, *table.caveats]
    lines += ["", " ".join(n for n in notes if n)]
    return "\n".join(lines) + "\n"


def paired_markdown(comparisons: list[Paired], caption: str = "", title: str = "") -> str:
    """McNemar's exact test per pair of policies (``paired.md``)."""
    dims = list(comparisons[0].group) if comparisons else []
    header = [
        *dims,
        "measure",
        "A",
        "B",
        "cases",
        "rate A",
        "rate B",
        "only A held/solved",
        "only B held/solved",
        "p (exact)",
    ]
    lines = [f"### {markdown_text(title)}", ""] if title else []
    lines += ["| " + " | ".join(d.replace("_name", "") for d in header) + " |"]
    lines.append("|" + "|".join("---" for _ in header) + "|")
    for c in comparisons:
        cells = [
            *(markdown_cell(c.group[d]) for d in dims),
            c.measure,
            markdown_cell(c.a),
            markdown_cell(c.b),
            str(c.cases),
            _number(c.a_rate, 3),
            _number(c.b_rate, 3),
            str(c.a_only),
            str(c.b_only),
            _p(c.p_value),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        " ".join(
            n
            for n in (
                caption,
                'McNemar\'s exact test on the cases both policies ran: "only A" counts the cases '
                "where A held the attack (attack success) or solved the task (utility) and B did "
                "not; p is the two-sided binomial p-value of the discordant cases.",
            )
            if n
        ),
    ]
    return "\n".join(lines) + "\n"


def _p(value: float) -> str:
    return "< 0.0001" if value < 0.0001 else f"{value:.4f}"


def attempts_markdown(rows: list[AttemptsRow], caption: str = "", title: str = "") -> str:
    """attempts@k of the attack per group (seeded agents)."""
    if not rows:
        return ""
    dims = list(rows[0].group)
    most = max(r.seeds for r in rows)
    # `@1` as code: on github.com a bare @1 in a comment is a mention of the user "1".
    header = [*dims, "cases", "seeds", *(f"`@{k}`" for k in range(1, most + 1))]
    lines = [f"### {markdown_text(title)}", ""] if title else []
    lines += ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for r in rows:
        cells = [*(markdown_cell(r.group[d]) for d in dims), str(r.cases), str(r.seeds)]
        cells += [f"{r.at_k[k]:.2f}" if k in r.at_k else "—" for k in range(1, most + 1)]
        lines.append("| " + " | ".join(cells) + " |")
    note = (
        "attempts@k: the attack succeeds if any of k seeds does (the unbiased pass@k "
        "estimate over each case's seeds, averaged over cases)."
    )
    lines += ["", " ".join(n for n in (caption, note) if n)]
    return "\n".join(lines) + "\n"


def breakdown_markdown(results: list[EpisodeResult], title: str, caption: str) -> str:
    """The headline per suite, and (over attacked cases) per injection channel."""
    by = headline_dimensions(results)
    parts = [
        markdown(Table.of(results, [*by, "suite"]), title=f"{title}: per suite", caption=caption)
    ]
    attacked = [r for r in results if r.channel]
    if attacked:
        parts.append(
            markdown(
                Table.of(attacked, [*by, "channel"]),
                title=f"{title}: per injection channel (attacked cases)",
                caption=caption,
            )
        )
    return "\n".join(parts)


def write_tables(directory: Path, results: list[EpisodeResult], title: str) -> dict[str, Path]:
    """Write ``results.csv``, ``results.md``, ``episodes.csv``, ``headline.md``,
    ``breakdown.md`` and ``paired.md``."""
    caption = suites_caption(results)
    headline_by = headline_dimensions(results)
    comparisons = paired(results, [d for d in headline_by if d != "policy"] + ["policy"])
    attempts = attempts_at_k(results, headline_by)
    files = {
        RESULTS_CSV: _csv_text(results_table(results)),
        EPISODES_CSV: _csv_text(episode_records(results)),
        RESULTS_MD: markdown(
            Table.of(results, GROUP),
            detail_dimensions(results),
            title=f"{title}: results",
            caption=caption,
        ),
        HEADLINE_MD: markdown(
            Table.of(results, headline_by),
            title=f"{title}: utility and attacks",
            caption=caption,
        ),
        BREAKDOWN_MD: breakdown_markdown(results, title, caption),
        PAIRED_MD: paired_markdown(comparisons, caption, f"{title}: policies compared")
        + ("\n" + attempts_markdown(attempts, caption, f"{title}: attempts@k") if attempts else ""),
    }
    written = {}
    for name, text in files.items():
        path = directory / name
        path.write_text(text, encoding="utf-8")
        written[name] = path
    return written
