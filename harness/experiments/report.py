"""The study report: ``report.html`` and, per episode, its trace as an HTML timeline.

One self-contained page per study (no script, no network: it opens from disk): the
headline table, the plot, the breakdowns per suite and injection channel, the paired
comparisons of policies (and attempts@k), the results table, what the intervals are,
the ``url`` tasks whose site changed during the run, the run information (versions,
commit, Chromium and its flags, the runner, each invocation), and every episode with
its verdict and a link to ``episodes/<id>/trace.html``. Jinja2 renders both with
autoescaping on, so page-provided text in a trace (tool descriptions, results) is shown
as text and can never become markup in the report.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from jinja2 import Environment
from markupsafe import Markup

from harness.errors import HarnessError
from harness.experiments.comparisons import attempts_at_k, paired
from harness.experiments.metrics import GROUP, INTERVALS_NOTE, EpisodeResult, Table
from harness.experiments.plot import PLOT_PNG
from harness.experiments.results import (
    RATE_HEADERS,
    detail_dimensions,
    headline_dimensions,
    shown_rates,
    suites_caption,
)
from harness.experiments.run_info import RUN_INFO
from harness.trace.events import TRACE_FILE, read_trace
from harness.trace.view import describe

REPORT_HTML = "report.html"
TRACE_HTML = "trace.html"

_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em; color: #1d1d1f; }
h1 { font-size: 1.6em; } h2 { margin-top: 1.6em; font-size: 1.2em; }
table { border-collapse: collapse; margin: .6em 0; }
th, td { border: 1px solid #d0d0d6; padding: .25em .55em; text-align: left; vertical-align: top; }
th { background: #f1f1f5; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.event { white-space: nowrap; }
.ok { color: #087a2c; } .bad { color: #b3141f; font-weight: 600; } .dim { color: #777; }
.caveat { color: #8a5a00; font-weight: 600; }
pre { margin: 0; white-space: pre-wrap; word-break: break-word; font-size: 12.5px; }
img { max-width: 100%; border: 1px solid #ddd; }
"""

_REPORT = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{ title }} — webmcp-harness study</title>
<style>{{ style }}</style></head><body>
<h1>{{ title }}</h1>
<p id="summary">{{ results|length }} episodes, {{ failed }} without a result{% if overall %};
{% for name in overall_rates %}{{ headers[name] }} {{ overall[name].show() }}, {% endfor %}
leaks {{ overall.leaks }}{% endif %}.{% for note in overall_caveats %} <span class="caveat">{{ note }}</span>{% endfor %}</p>
<p id="suites">{{ caption }}</p>
<p id="intervals" class="dim">{{ intervals }}</p>
<h2>Utility and attacks</h2>
{{ table(headline) }}
{% if plot %}<h2>Plot</h2><p><img id="plot" src="{{ plot }}" alt="utility against attack success, with 95% Wilson interval bars"></p>{% endif %}
{% if by_suite %}<h2>Per suite</h2>
{{ table(by_suite) }}{% endif %}
{% if by_channel %}<h2>Per injection channel (attacked cases)</h2>
{{ table(by_channel) }}{% endif %}
{% if comparisons %}<h2>Policies compared (McNemar's exact test)</h2>
<table id="paired"><tr>{% for d in paired_by %}<th>{{ d.replace('_name', '') }}</th>{% endfor %}<th>measure</th><th>A</th><th>B</th>
<th>cases</th><th>rate A</th><th>rate B</th><th>only A held/solved</th><th>only B held/solved</th><th>p (exact)</th></tr>
{% for c in comparisons %}<tr>{% for d in paired_by %}<td>{{ c.group[d] }}</td>{% endfor %}<td>{{ c.measure }}</td>
<td>{{ c.a }}</td><td>{{ c.b }}</td><td class="num">{{ c.cases }}</td>
<td class="num">{{ '%.3f'|format(c.a_rate) }}</td><td class="num">{{ '%.3f'|format(c.b_rate) }}</td>
<td class="num">{{ c.a_only }}</td><td class="num">{{ c.b_only }}</td>
<td class="num">{{ '< 0.0001' if c.p_value < 0.0001 else '%.4f'|format(c.p_value) }}</td></tr>
{% endfor %}</table>
<p class="dim">Only the cases both policies ran are compared; "only A" counts those where A held the
attack (attack success) or solved the task (utility) and B did not; p is the two-sided exact
binomial p-value of the discordant cases.</p>{% endif %}
{% if attempts %}<h2>attempts@k</h2>
<table id="attempts"><tr>{% for d in headline_by %}<th>{{ d.replace('_name', '') }}</th>{% endfor %}<th>cases</th><th>seeds</th>
{% for k in attempt_ks %}<th>@{{ k }}</th>{% endfor %}</tr>
{% for r in attempts %}<tr>{% for d in headline_by %}<td>{{ r.group[d] }}</td>{% endfor %}
<td class="num">{{ r.cases }}</td><td class="num">{{ r.seeds }}</td>
{% for k in attempt_ks %}<td class="num">{{ '%.2f'|format(r.at_k[k]) if k in r.at_k else '—' }}</td>{% endfor %}</tr>
{% endfor %}</table>
<p class="dim">The attack succeeds if any of k seeds does (the unbiased pass@k estimate over each case's seeds, averaged over cases).</p>{% endif %}
{% if changed_sites %}<h2>Sites that changed during the run</h2>
<ul id="served">{% for task, versions in changed_sites.items() %}<li class="bad">{{ task }}: {{ versions|length }} versions served
(document/tools hashes: {{ versions|join(', ') }})</li>{% endfor %}</ul>{% endif %}
<h2>Results</h2>
{{ table(rows, shown) }}
{% if run_info %}<h2>Run information</h2>
<table id="run-info">
<tr><th>harness</th><td>{{ run_info.environment.packages.get('webmcp-harness') }}{% if run_info.environment.git %},
commit <code>{{ run_info.environment.git.commit }}</code>{% if run_info.environment.git.dirty %} (uncommitted changes){% endif %}{% endif %}</td></tr>
<tr><th>Python, platform</th><td>{{ run_info.environment.python }}, {{ run_info.environment.platform }}</td></tr>
<tr><th>packages</th><td>{% for name, version in run_info.environment.packages.items() if version %}{{ name }} {{ version }}{{ ', ' if not loop.last }}{% endfor %}</td></tr>
{% for suite in run_info.grid.get('suites', []) %}<tr><th>suite</th><td>{{ suite.name }} {{ suite.version }}{% if suite.package %} (package {{ suite.package }}){% endif %}</td></tr>{% endfor %}
<tr><th>Chromium</th><td>{% for backend, version in run_info.chromium.versions.items() %}{{ backend }}: {{ version }}{{ '; ' if not loop.last }}{% endfor %}
{% if run_info.chromium.executable %}(<code>{{ run_info.chromium.executable }}</code>){% endif %}</td></tr>
{% for backend, flags in run_info.chromium.flags.items() %}<tr><th>flags ({{ backend }})</th><td><code>{{ flags|join(' ') }}</code></td></tr>{% endfor %}
<tr><th>grid</th><td><code>{{ run_info.grid.path }}</code>, sha256 <code>{{ run_info.grid.sha256 }}</code>, seeds {{ run_info.grid.seeds|join(', ') }}</td></tr>
<tr><th>runner</th><td>{{ run_info.runner.backend }}, {{ run_info.runner.workers }} worker(s){% if run_info.runner.worker_mode %} ({{ run_info.runner.worker_mode }}){% endif %}</td></tr>
{% for run in run_info.invocations %}<tr><th>invocation</th><td>{{ run.run_id }}: {% if run.seconds is none %}stopped before its end (interrupted or killed), {{ run.episodes_run }} episodes kept ({{ run.workers }} {{ run.runner }} worker(s)){% else %}{{ run.episodes_run }} episodes in {{ '%.1f'|format(run.seconds) }} s
({{ run.per_minute }} per minute, {{ run.workers }} {{ run.runner }} worker(s)){% endif %}</td></tr>{% endfor %}
</table>{% endif %}
<h2>Episodes</h2>
<table id="episodes"><tr><th>episode</th><th>seed</th><th>status</th><th>stop reason</th>
<th>success</th><th>attack</th><th>attempted</th><th>leaks</th><th>steps</th><th>calls</th><th>blocks</th><th>wall s</th></tr>
{% for r in results %}<tr>
<td>{% if r.episode in traces %}<a href="{{ traces[r.episode] }}">{{ r.episode }}</a>{% else %}{{ r.episode }}{% endif %}</td>
<td class="num">{{ r.seed }}</td>
<td class="{{ 'ok' if r.status == 'ok' else 'bad' }}">{{ r.status }}{% if r.error %}<br><span class="dim">{{ r.error }}</span>{% endif %}</td>
<td>{{ r.stop_reason or '' }}</td>
<td>{{ flag(r.success) }}</td><td>{{ flag(r.attack) }}</td><td>{{ flag(r.attempted) }}</td>
<td class="num {{ 'bad' if r.leaks else '' }}">{{ r.leaks }}{% if r.leaked_in %} ({{ r.leaked_in|join(', ') }}){% endif %}</td>
<td class="num">{{ r.steps }}</td><td class="num">{{ r.tool_calls }}</td><td class="num">{{ r.policy_blocks }}</td>
<td class="num">{{ '%.2f'|format(r.wall_s) }}</td></tr>
{% endfor %}</table>
</body></html>
"""

_TABLE = """<table class="results"><tr>{% for d in by %}<th>{{ d.replace('_name', '') }}</th>{% endfor %}
<th>episodes</th>{% for name in rates %}<th>{{ headers[name] }}</th>{% endfor %}<th>leaks</th><th>blocks</th>
<th>elicitations</th><th>steps</th><th>tool calls</th><th>tokens</th><th>cost $</th><th>wall s</th></tr>
{% for row in rows %}<tr>{% for d in by %}<td>{{ row.group[d] }}</td>{% endfor %}
<td class="num">{{ row.episodes }}{% if row.errors %} ({{ row.errors }} failed){% endif %}</td>
{% for name in rates %}<td class="num">{{ row[name].show() }}</td>{% endfor %}
<td class="num {{ 'bad' if row.leaks else '' }}">{{ row.leaks }}</td>
<td class="num">{{ row.policy_blocks }}</td><td class="num">{{ row.elicitations }}</td>
<td class="num">{{ row.steps }}</td><td class="num">{{ row.tool_calls }}</td>
<td class="num">{{ row.tokens }}</td>
<td class="num">{{ '—' if row.cost_usd is none else '%.4f'|format(row.cost_usd) }}</td>
<td class="num">{{ '%.2f'|format(row.wall_s) }}</td></tr>
{% endfor %}</table>
{% for note in caveats %}<p class="caveat">{{ note }}</p>
{% endfor %}"""

_TRACE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{ result.episode }} — trace</title>
<style>{{ style }}</style></head><body>
<p><a href="../../report.html">← the study</a></p>
<h1>{{ result.episode }}</h1>
<p id="verdict">{{ result.agent }} on {{ result.site }} / {{ result.task }} under {{ result.policy }},
seed {{ result.seed }}: <span class="{{ 'ok' if result.status == 'ok' else 'bad' }}">{{ result.status }}</span>,
success {{ flag(result.success) }}, attack {{ flag(result.attack) }}, leaks {{ result.leaks }}.</p>
{% if result.checks %}<ul>{% for c in result.checks %}<li class="{{ 'ok' if c.passed else 'bad' }}">{{ c.check }}{% if c.why %} — {{ c.why }}{% endif %}</li>{% endfor %}</ul>{% endif %}
{% if result.attack_evidence %}<p class="bad">The attack succeeded: {{ result.attack_evidence|join('; ') }}</p>{% endif %}
<table id="timeline"><tr><th>ms</th><th>step</th><th>event</th><th>details</th></tr>
{% for e in events %}<tr class="event {{ e.type }}"><td class="num">{{ '%.0f'|format(e.at_ms) }}</td>
<td class="num">{{ '' if e.step is none else e.step }}</td><td class="event">{{ e.type }}</td><td><pre>{{ e.details }}</pre></td></tr>
{% endfor %}</table>
</body></html>
"""


def _flag(value: bool | None) -> str:
    return "—" if value is None else ("yes" if value else "no")


def _environment() -> Environment:
    env = Environment(autoescape=True, trim_blocks=True, lstrip_blocks=True)
    env.globals.update(flag=_flag, style=_STYLE, headers=RATE_HEADERS)
    table = env.from_string(_TABLE)

    def render_table(results: Table, by: list[str] | None = None) -> Markup:
        # A Table, not rows: its caveats are said under it, as every rendering says them.
        # Rendered by the same autoescaping environment: safe to insert as markup.
        return Markup(
            table.render(
                rows=results.rows,
                by=list(results.by) if by is None else by,
                rates=shown_rates(results.rows),
                caveats=results.caveats,
            )
        )

    env.globals["table"] = render_table
    return env


def write_trace_page(directory: Path, result: EpisodeResult) -> Path | None:
    """``trace.html`` beside an episode's ``trace.jsonl``; None when it has no trace."""
    if not (directory / TRACE_FILE).is_file():
        return None
    try:
        events = read_trace(directory)
    except HarnessError:
        return None
    shown: list[dict[str, Any]] = [
        {
            "type": e.type,
            "at_ms": e.at_ms,
            "step": e.step,
            "details": describe(e, full=True).plain,
        }
        for e in events
        if e.type != "timing"
    ]
    page = _environment().from_string(_TRACE).render(result=result, events=shown)
    path = directory / TRACE_HTML
    path.write_text(page, encoding="utf-8")
    return path


def _run_info(output: Path) -> dict[str, Any] | None:
    try:
        info: dict[str, Any] = json.loads((output / RUN_INFO).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return info


def changed_sites(results: list[EpisodeResult]) -> dict[str, list[str]]:
    """``url`` tasks whose episodes saw more than one version of the site (short hashes)."""
    seen: dict[str, set[str]] = {}
    for r in results:
        if r.served:
            version = "/".join(r.served.get(k, "-")[:12] for k in ("document", "tools"))
            seen.setdefault(r.task, set()).add(version)
    return {task: sorted(v) for task, v in sorted(seen.items()) if len(v) > 1}


def write_report(output: Path, results: list[EpisodeResult], title: str) -> Path:
    """``report.html`` (and each episode's ``trace.html``) for the study in ``output``."""
    traces: dict[str, str] = {}
    for result in results:
        with contextlib.suppress(OSError):
            page = write_trace_page(output / "episodes" / result.episode, result)
            if page is not None:
                traces[result.episode] = page.relative_to(output).as_posix()
    headline_by = headline_dimensions(results)
    overall = Table.of(results, ())
    attacked = [r for r in results if r.channel]
    attempts = attempts_at_k(results, headline_by)
    html = (
        _environment()
        .from_string(_REPORT)
        .render(
            title=title,
            results=sorted(results, key=lambda r: r.episode),
            failed=sum(r.status != "ok" for r in results),
            overall=overall.rows[0] if overall.rows else None,
            overall_rates=shown_rates(overall.rows) if overall.rows else [],
            overall_caveats=overall.caveats,
            caption=suites_caption(results),
            intervals=INTERVALS_NOTE,
            headline=Table.of(results, headline_by),
            headline_by=headline_by,
            by_suite=(
                Table.of(results, [*headline_by, "suite"])
                if len({r.suite for r in results}) > 1
                else None
            ),
            by_channel=Table.of(attacked, [*headline_by, "channel"]) if attacked else None,
            comparisons=paired(results, headline_by),
            paired_by=[d for d in headline_by if d != "policy"],
            attempts=attempts,
            attempt_ks=list(range(1, max((r.seeds for r in attempts), default=0) + 1)),
            changed_sites=changed_sites(results),
            rows=Table.of(results, GROUP),
            shown=detail_dimensions(results),
            plot=PLOT_PNG if (output / PLOT_PNG).is_file() else None,
            traces=traces,
            run_info=_run_info(output),
        )
    )
    path = output / REPORT_HTML
    path.write_text(html, encoding="utf-8")
    return path
