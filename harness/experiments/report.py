"""The study report: ``report.html`` and, per episode, its trace as an HTML timeline.

One self-contained page per study (no script, no network: it opens from disk):
the headline table, the results table, the plot, every episode with its verdict
and a link to ``episodes/<id>/trace.html``. Jinja2 renders both with autoescaping
on, so page-provided text in a trace (tool descriptions, results) is shown as text
and can never become markup in the report.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from jinja2 import Environment
from markupsafe import Markup

from harness.errors import HarnessError
from harness.experiments.metrics import GROUP, EpisodeResult, aggregate
from harness.experiments.results import PLOT_PNG, headline_dimensions, varying
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
pre { margin: 0; white-space: pre-wrap; word-break: break-word; font-size: 12.5px; }
img { max-width: 100%; border: 1px solid #ddd; }
"""

_REPORT = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{ title }} — webmcp-harness study</title>
<style>{{ style }}</style></head><body>
<h1>{{ title }}</h1>
<p id="summary">{{ results|length }} episodes, {{ failed }} without a result{% if overall %};
success {{ overall.success.show() }}{% if overall.attack.rate is not none %},
attack success {{ overall.attack.show() }}{% endif %}, leaks {{ overall.leaks }}{% endif %}.</p>
<h2>Utility and attacks</h2>
{{ table(headline, headline_by) }}
{% if plot %}<h2>Plot</h2><p><img id="plot" src="{{ plot }}" alt="utility against attack success"></p>{% endif %}
<h2>Results</h2>
{{ table(rows, shown) }}
<h2>Episodes</h2>
<table id="episodes"><tr><th>episode</th><th>seed</th><th>status</th><th>stop reason</th>
<th>success</th><th>attack</th><th>leaks</th><th>steps</th><th>calls</th><th>blocks</th><th>wall s</th></tr>
{% for r in results %}<tr>
<td>{% if r.episode in traces %}<a href="{{ traces[r.episode] }}">{{ r.episode }}</a>{% else %}{{ r.episode }}{% endif %}</td>
<td class="num">{{ r.seed }}</td>
<td class="{{ 'ok' if r.status == 'ok' else 'bad' }}">{{ r.status }}{% if r.error %}<br><span class="dim">{{ r.error }}</span>{% endif %}</td>
<td>{{ r.stop_reason or '' }}</td>
<td>{{ flag(r.success) }}</td><td>{{ flag(r.attack) }}</td>
<td class="num {{ 'bad' if r.leaks else '' }}">{{ r.leaks }}{% if r.leaked_in %} ({{ r.leaked_in|join(', ') }}){% endif %}</td>
<td class="num">{{ r.steps }}</td><td class="num">{{ r.tool_calls }}</td><td class="num">{{ r.policy_blocks }}</td>
<td class="num">{{ '%.2f'|format(r.wall_s) }}</td></tr>
{% endfor %}</table>
</body></html>
"""

_TABLE = """<table class="results"><tr>{% for d in by %}<th>{{ d }}</th>{% endfor %}
<th>n</th><th>success</th><th>attack success</th><th>leaks</th><th>blocks</th><th>elicitations</th>
<th>steps</th><th>tool calls</th><th>tokens</th><th>cost $</th><th>wall s</th></tr>
{% for row in rows %}<tr>{% for d in by %}<td>{{ row.group[d] }}</td>{% endfor %}
<td class="num">{{ row.episodes }}{% if row.errors %} ({{ row.errors }} failed){% endif %}</td>
<td class="num">{{ row.success.show() }}</td><td class="num">{{ row.attack.show() }}</td>
<td class="num {{ 'bad' if row.leaks else '' }}">{{ row.leaks }}</td>
<td class="num">{{ row.policy_blocks }}</td><td class="num">{{ row.elicitations }}</td>
<td class="num">{{ row.steps }}</td><td class="num">{{ row.tool_calls }}</td>
<td class="num">{{ row.tokens }}</td>
<td class="num">{{ '—' if row.cost_usd is none else '%.4f'|format(row.cost_usd) }}</td>
<td class="num">{{ '%.2f'|format(row.wall_s) }}</td></tr>
{% endfor %}</table>"""

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
    env.globals.update(flag=_flag, style=_STYLE)
    table = env.from_string(_TABLE)
    # Rendered by the same autoescaping environment: safe to insert as markup.
    env.globals["table"] = lambda rows, by: Markup(table.render(rows=rows, by=by))
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


def write_report(output: Path, results: list[EpisodeResult], title: str) -> Path:
    """``report.html`` (and each episode's ``trace.html``) for the study in ``output``."""
    traces: dict[str, str] = {}
    for result in results:
        with contextlib.suppress(OSError):
            page = write_trace_page(output / "episodes" / result.episode, result)
            if page is not None:
                traces[result.episode] = page.relative_to(output).as_posix()
    headline_by = headline_dimensions(results)
    shown = ["agent", "site", "task", "policy", *varying(results, ("backend", "elicitation"))]
    overall = aggregate(results, ())[0] if results else None
    html = (
        _environment()
        .from_string(_REPORT)
        .render(
            title=title,
            results=sorted(results, key=lambda r: r.episode),
            failed=sum(r.status != "ok" for r in results),
            overall=overall,
            headline=aggregate(results, headline_by),
            headline_by=headline_by,
            rows=aggregate(results, GROUP),
            shown=shown,
            plot=PLOT_PNG if (output / PLOT_PNG).is_file() else None,
            traces=traces,
        )
    )
    path = output / REPORT_HTML
    path.write_text(html, encoding="utf-8")
    return path
