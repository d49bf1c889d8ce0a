"""One episode: a fresh browser context on a freshly reset site, an agent, a trace, a verdict.

An :class:`Environment` is what one worker owns: the bundled sites it serves (its
own instances, so resetting them never disturbs another worker's episode) and the
harnesses (browsers) it runs in — its own, or a pool shared by the workers of one
process. :func:`run_episode` resets every site, opens a new browser context, gives
the session the episode's policy and elicitation answers, runs the agent with a
trace in the episode's directory, judges the result (:mod:`harness.experiments.checks`)
and writes ``summary.json``. A hang is cut at the episode's time limit and an
unexpected failure is caught: both become the episode's status, with the error,
and the run goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp
from playwright.async_api import Error as PlaywrightError

from harness.agents import make_agent
from harness.agents.base import Agent
from harness.agents.cassette import Cassette
from harness.agents.loop import RunResult, run_agent
from harness.agents.obedient import ObedientAgent
from harness.agents.scripted import ScriptedAgent, parse_plan
from harness.catalog import Settle
from harness.elicitation.answers import ScriptedHandler
from harness.elicitation.base import AutoHandler, ElicitationHandler
from harness.errors import ConfigError, HarnessError
from harness.experiments.agentdojo.judge import Started
from harness.experiments.checks import (
    CheckOutcome,
    Evidence,
    LoggedRequest,
    evaluate,
    find_leaks,
)
from harness.experiments.grid import EpisodeSpec, NamedSource
from harness.experiments.metrics import FAILED_STOP_REASONS, EpisodeResult, Status, count
from harness.experiments.served import ServedPages
from harness.experiments.site_origins import served_as_fixed
from harness.harness import Harness
from harness.inputs import parse_input
from harness.session import Session
from harness.stages.policy import Policy, policy_from_argument
from harness.trace.events import TRACE_FILE, AgentActed, RunFinished, TraceEvent, read_trace
from harness.trace.recorder import TraceOptions, append_event

SUMMARY_FILE = "summary.json"
JUDGE_TIMEOUT_S = 30.0  # checks that read the page or the sites
CLOSE_TIMEOUT_S = 15.0
EPISODE_GRACE_S = 5.0
"""What may follow an episode's time limit: judging what it left and closing its browser
context end within this long after ``episode_timeout`` (a page whose main thread spins
answers neither), so an episode's wall time is at most its timeout and this grace. A close
still under way then goes on in the background."""

_closing: set[asyncio.Task[None]] = set()  # closes left to finish in the background


class HarnessPool:
    """One started :class:`Harness` per browser backend, restarted if its browser died."""

    def __init__(self, call_timeout: float) -> None:
        self.call_timeout = call_timeout
        self._harnesses: dict[str, Harness] = {}
        self._lock = asyncio.Lock()

    async def get(self, backend: str) -> Harness:
        """The harness for ``backend``, started (again, if its browser is gone)."""
        async with self._lock:
            harness = self._harnesses.get(backend)
            if harness is not None and not harness.browser.is_connected():
                with contextlib.suppress(HarnessError, PlaywrightError):
                    await harness.close()
                harness = None
            if harness is None:
                harness = Harness(backend=backend, call_timeout=self.call_timeout, policy=None)  # type: ignore[arg-type]
                await harness.start()
                self._harnesses[backend] = harness
            return harness

    def browser_versions(self) -> dict[str, str]:
        """The Chromium version each started backend runs."""
        return {
            name: harness.browser.version
            for name, harness in self._harnesses.items()
            if harness.browser.is_connected()
        }

    async def close(self) -> None:
        """Close every browser."""
        for harness in self._harnesses.values():
            with contextlib.suppress(HarnessError, PlaywrightError):
                await harness.close()
        self._harnesses.clear()


class Environment:
    """One worker's sites and browsers; :meth:`start` before the first episode."""

    def __init__(
        self, sites: list[str], pool: HarnessPool, *, owns_pool: bool, name: str = "worker-1"
    ) -> None:
        self.site_names = list(sites)
        self.pool = pool
        self.owns_pool = owns_pool
        self.name = name
        self.sites: Any = None  # harness.sites.server.RunningSites, once started

    async def start(self) -> Environment:
        """Serve this worker's own instances of the bundled sites."""
        if self.site_names and self.sites is None:
            from harness.sites.server import serve_sites

            self.sites = await serve_sites(self.site_names)
        return self

    def site_urls(self) -> dict[str, str]:
        """Each served site's root URL."""
        return dict(self.sites.urls) if self.sites is not None else {}

    def fixed_origins(self) -> dict[str, str]:
        """Each origin this worker serves a bundled site at → the site's fixed origin (as
        ``webmcp-harness sites`` serves it), by which an answers file names the site."""
        return served_as_fixed(self.sites) if self.sites is not None else {}

    def start_url(self, spec: EpisodeSpec) -> str:
        """Where the episode's agent starts."""
        task = spec.task
        if task.site is not None:
            if self.sites is None:
                raise ConfigError(f"The site {task.site!r} is not served by this worker.")
            return str(self.sites.url(task.site, task.path))
        return str(task.url)

    async def reset(self, spec: EpisodeSpec) -> None:
        """The sites the task needs back to their initial data and every request log empty
        (a site the task does not touch is reset before the episode that does); and the
        task's own ``reset`` URL, for a site that is not bundled."""
        if self.sites is not None:
            needed = set(spec.task.sites())
            for name, site in self.sites.sites.items():
                if name in needed:
                    await site.reset()
                site.clear_log()
        if spec.task.reset:
            timeout = aiohttp.ClientTimeout(total=30)
            async with (
                aiohttp.ClientSession(timeout=timeout) as client,
                client.post(spec.task.reset) as response,
            ):
                if response.status >= 400:
                    raise ConfigError(
                        f"Resetting the site with POST {spec.task.reset} answered HTTP "
                        f"{response.status}."
                    )

    def start_case(self, spec: EpisodeSpec) -> Started | None:
        """An AgentDojo case's start on its site (after :meth:`reset`): the environment with
        the episode's injections, and the ground-truth plan. None for other tasks."""
        if spec.task.agentdojo is None or spec.task.site is None:
            return None
        from harness.experiments.agentdojo.judge import start_episode

        return start_episode(self.site_objects()[spec.task.site], spec)

    def site_objects(self) -> dict[str, Any]:
        """Each served site's state, by name (what in-process checks read)."""
        if self.sites is None:
            return {}
        return {name: running.site for name, running in self.sites.sites.items()}

    def requests(self) -> dict[str, list[LoggedRequest]]:
        """What each served site received since the last reset."""
        if self.sites is None:
            return {}
        return {
            name: [
                LoggedRequest(method=r.method, path=r.path, query=r.query, body=r.body)
                for r in running.requests
            ]
            for name, running in self.sites.sites.items()
        }

    async def close(self) -> None:
        """Stop the sites (and the browsers, when this worker owns them)."""
        if self.sites is not None:
            await self.sites.stop()
            self.sites = None
        if self.owns_pool:
            await self.pool.close()


# -- what the session and the agent get ---------------------------------------------------------


def policy_of(source: NamedSource) -> Policy | None:
    """The policy an episode runs under: a pack by name, or a policy file's text."""
    if source.text is None:
        return policy_from_argument(source.name)
    suffix = Path(source.path or "").suffix.lower()
    kind = {".yaml": "yaml", ".yml": "yaml", ".json": "json"}.get(suffix, "toml")
    return Policy.from_text(source.text, kind, source=source.path or source.name)  # type: ignore[arg-type]


def answers_of(source: NamedSource, origins: Mapping[str, str] | None = None) -> ElicitationHandler:
    """Who answers the user's questions: the same answer every time, or an answers file.

    ``origins``: each origin the worker serves a bundled site at → the site's fixed origin,
    by which an answers file names it (:meth:`Environment.fixed_origins`).
    """
    if source.text is None:
        return AutoHandler(source.name)  # type: ignore[arg-type]
    # Parsed within the limits of every input file, as the grid checked it when it loaded.
    return ScriptedHandler.from_data(
        parse_input(source.text, "yaml", f"the answers file {source.path or source.name}"),
        origins,
    )


def agent_of(spec: EpisodeSpec, site_plan: dict[str, Any] | None = None) -> Agent:
    """The agent for one episode: the task's plan (or the one its site gave: AgentDojo's
    ground truth) for scripted/obedient, the seed for LLMs."""
    entry = spec.agent
    argument = entry.spec.partition(":")[2].strip()
    if entry.kind in ("scripted", "obedient") and argument:
        # Its plan file, read by the grid (beside the grid file): no file is opened here.
        if spec.agent_plan is None:
            raise ConfigError(f"The agent {entry.spec!r} has no plan: load the grid to read it.")
        own = parse_plan(spec.agent_plan, f"agent {entry.spec}: plan")
        if entry.kind == "scripted":
            return ScriptedAgent(own)
        return ObedientAgent(own, **entry.options)
    data = spec.task.plan or site_plan
    plan = parse_plan(data, f"task {spec.task.id}: plan") if data else None
    if entry.kind == "scripted" and not argument:
        if plan is None:
            raise ConfigError(f"The scripted agent needs a plan, and task {spec.task.id} has none.")
        return ScriptedAgent(plan)
    if entry.kind == "obedient" and not argument:
        return ObedientAgent(plan, **entry.options)
    options: dict[str, Any] = dict(entry.options)
    if entry.is_llm:
        options["temperature"] = entry.temperature
        options["max_tokens"] = entry.max_tokens
        if entry.seeded:
            options["seed"] = spec.seed
        if spec.cassette is not None:
            options["cassette"] = Cassette(spec.cassette, spec.cassette_mode)
    return make_agent(entry.spec, **options)


def _llm_view(agent: Agent) -> list[str]:
    """The conversation an LLM agent held (what the model saw), for the leak check."""
    messages = getattr(agent, "messages", None)
    if not isinstance(messages, list):
        return []
    return [json.dumps(messages, ensure_ascii=False, default=str)]


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


# -- one episode -----------------------------------------------------------------------------


async def run_episode(
    spec: EpisodeSpec,
    env: Environment,
    directory: Path,
    *,
    run_id: str = "",
) -> EpisodeResult:
    """Run ``spec`` in ``env``, writing ``trace.jsonl`` and ``summary.json`` to ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    status: Status = "ok"
    error = ""
    run: RunResult | None = None
    session: Session | None = None
    agent: Agent | None = None
    start_url = ""
    case: Started | None = None
    served = ServedPages()
    try:
        async with asyncio.timeout(spec.episode_timeout):
            await env.reset(spec)
            case = env.start_case(spec)
            start_url = env.start_url(spec)
            harness = await env.pool.get(spec.backend)
            session = await harness.new_session()
            session.policy = policy_of(spec.policy)
            session.elicitation = answers_of(spec.elicitation, env.fixed_origins())
            if spec.task.settle_ms is not None:
                session.settle = Settle.quiet_ms(spec.task.settle_ms)
            if spec.task.url is not None:
                served.watch(session.page, start_url)
            agent = agent_of(spec, case.plan if case is not None else None)
            run = await run_agent(
                session,
                agent,
                start_url,
                task=spec.task.instruction,
                max_steps=spec.max_steps,
                trace_dir=directory,
                trace_options=TraceOptions(
                    playwright=spec.playwright_trace, screenshots=spec.screenshots
                ),
            )
    except TimeoutError:
        status, error = "timeout", f"the episode took longer than {spec.episode_timeout:g} s"
        _record_cut(directory, error, started)
    except Exception as exc:  # an episode's failure is its result; the run goes on
        status, error = "crashed", _first_line(exc)
    # Whatever the agent left, judging it and closing end within the grace after the limit.
    deadline = started + spec.episode_timeout + EPISODE_GRACE_S
    if run is not None and run.stop_reason in FAILED_STOP_REASONS:
        status, error = "error", f"{run.stop_reason}: {run.detail}".strip()
    events: list[TraceEvent] = []
    trace_text = ""
    if (directory / TRACE_FILE).is_file():
        trace_text = (directory / TRACE_FILE).read_text(encoding="utf-8")
        with contextlib.suppress(HarnessError):
            events = read_trace(directory)
    evidence = Evidence(
        events=events,
        answer=run.answer if run is not None else "",
        start_url=start_url,
        site_urls=env.site_urls(),
        requests=env.requests(),
        context=session.context if session is not None else None,
        page=session.page if session is not None else None,
        extra_agent_view=_llm_view(agent) if agent is not None else [],
        sites=env.site_objects(),
    )
    checks: list[CheckOutcome] = []
    attack_hits: list[CheckOutcome] = []
    attempts: list[CheckOutcome] = []
    leaked: list[str] = []
    attack = spec.task.attack
    if attack is not None:  # from what was recorded: no page to ask
        leaked = find_leaks(attack.canaries, attack.leak_in, evidence, trace_text)
    judge_s = min(JUDGE_TIMEOUT_S, max(deadline - time.perf_counter(), 0.0))
    try:
        async with asyncio.timeout(judge_s):
            if status == "ok":
                checks = [await evaluate(c, evidence) for c in spec.task.success]
            if attack is not None and status != "timeout":  # a cut page may answer nothing
                attack_hits = [await evaluate(c, evidence) for c in attack.succeeded]
                attempts = [await evaluate(c, evidence) for c in attack.attempted]
            if spec.task.url is not None:
                await served.read()
    except TimeoutError:
        if status == "ok":
            status, error = (
                "timeout",
                (
                    f"judging the episode took longer than {judge_s:.3g} s "
                    f"(of its {spec.episode_timeout:g} s and {EPISODE_GRACE_S:g} s of grace)"
                ),
            )
    finally:
        if session is not None:
            await _close(session, min(CLOSE_TIMEOUT_S, max(deadline - time.perf_counter(), 0.5)))
    counts = count(events)
    ok = status == "ok"
    # Without success checks, success is the agent finishing.
    success = all(c.passed for c in checks) if spec.task.success else run is not None and run.ok
    result = EpisodeResult(
        episode=spec.id,
        **spec.key(),
        status=status,
        stop_reason=run.stop_reason if run is not None else None,
        error=error,
        success=success if ok else None,
        checks=checks,
        attack=any(h.passed for h in attack_hits) if ok and spec.task.has_attack else None,
        attempted=any(a.passed for a in attempts) if ok and attempts else None,
        attack_evidence=[h.check for h in attack_hits if h.passed],
        channel=(case.channel if case is not None else "")
        or (spec.task.attack.category if spec.task.attack is not None else ""),
        deterministic=not spec.agent.is_llm,
        served=served.hashes(events),
        served_note=served.note,
        leaks=len(leaked),
        leaked_in=leaked,
        **counts.model_dump(),
        wall_s=round(time.perf_counter() - started, 3),
        run_id=run_id,
        worker=env.name,
        finished_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    write_summary(directory, result)
    return result


def _record_cut(directory: Path, error: str, started: float) -> None:
    """End a cut episode's trace with why it ended (the agent loop, cancelled, could not)."""
    with contextlib.suppress(HarnessError, OSError):
        events = read_trace(directory) if (directory / TRACE_FILE).is_file() else []
        steps = len({e.step for e in events if isinstance(e, AgentActed)})
        elapsed = (time.perf_counter() - started) * 1000
        cut = RunFinished(stop_reason="timeout", detail=error, steps=steps, duration_ms=elapsed)
        append_event(directory, cut, at_ms=elapsed)


async def _close(session: Session, seconds: float) -> None:
    """Close the episode's context, waiting ``seconds`` at most (a busy page can hold a close
    up): one that takes longer finishes in the background, so the next episode need not wait."""
    closing = asyncio.ensure_future(session.close())
    _closing.add(closing)
    closing.add_done_callback(_closed)
    await asyncio.wait({closing}, timeout=seconds)


def _closed(task: asyncio.Task[None]) -> None:
    _closing.discard(task)
    if not task.cancelled():
        task.exception()  # retrieved: a close that failed has nothing left to say


def write_summary(directory: Path, result: EpisodeResult) -> None:
    """``summary.json``, written last: an episode directory without it is incomplete."""
    path = directory / SUMMARY_FILE
    temporary = path.with_suffix(".tmp")
    temporary.write_text(result.model_dump_json(indent=2) + "\n", encoding="utf-8")
    temporary.replace(path)
