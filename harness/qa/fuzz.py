"""Property-based testing of a page's tools: inputs from each ``inputSchema``, the
properties of :mod:`harness.qa.properties` checked on every call, a failure shrunk to a
minimal input and printed as a reproduction.

One search per tool and kind of input (valid, near-miss) with Hypothesis's
:func:`hypothesis.find`: it calls the tool with generated inputs until one breaks a
property, then shrinks that input to the smallest that still breaks it. The properties that
failed are reported with it, and the search goes on for the others. Found failures are kept
in Hypothesis's example database (by default ``.hypothesis/examples`` under the current
directory, where Hypothesis keeps its own), under a key made of the tool's name, its
fingerprint and the properties searched: the next run tries them first, so a failure
comes back at once until it is fixed. ``seed`` makes a run generate the same inputs every
time instead (Hypothesis then leaves the database alone).

Safety: only tools that declare ``readOnlyHint`` are called unless writes are allowed; a
state-changing request is aborted in the browser unless writes are allowed and it goes to
the page's own origin (:class:`~harness.qa.observe.PageWatch`). While it runs, the session
has no policy and nobody to say yes (its own are put back after): the user's own tools are
tested, not the user agent's consent.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import re
import shlex
import uuid
from collections.abc import Callable, Coroutine
from random import Random
from typing import Any, TypeVar

from harness.elicitation.base import AutoHandler
from harness.errors import ConfigError, UnknownTool
from harness.models import Tool
from harness.qa.draft7 import unread_keywords
from harness.qa.form_constraints import (
    accepted_schema,
    changed_words,
    form_refusal,
    mismatches,
    not_kept,
    read_form,
    refusal_words,
)
from harness.qa.fuzz_report import (
    Failure,
    FuzzOptions,
    FuzzReport,
    PropertyResult,
    Status,
    ToolReport,
)
from harness.qa.observe import OwnChanges, PageState, PageWatch, Place, Window, page_state
from harness.qa.properties import (
    PROPERTIES,
    NearMissObservation,
    Observation,
    check_invalid_refused,
    navigated,
    violations,
    without_handles,
)
from harness.qa.snapshot import fingerprint
from harness.qa.strategies import (
    NearMiss,
    near_misses,
    require_hypothesis,
    unusable_schema,
    valid_arguments,
    why_nothing_fits,
)
from harness.session import Session
from harness.stages.normalization import normalize
from harness.stages.validation import validate_arguments

__all__ = [
    "Failure",
    "FuzzOptions",
    "FuzzReport",
    "Fuzzer",
    "PropertyResult",
    "Status",
    "ToolReport",
    "fuzz",
]

T = TypeVar("T")
Runner = Callable[[Coroutine[Any, Any, T]], T]
"""Runs one coroutine of the async core to its end (Hypothesis calls are synchronous)."""

QUIET_S = 0.05
"""How long after a call (and what followed it) the page is watched for late requests."""
IDLE_S = (0.25, 1.0)
"""How long the page is watched with nothing called when a call whose changes are compared
changed a place not yet known (what changes meanwhile is the page's own): as long as the
longest call so far, within these bounds (seconds)."""
OWN_CHANGES_CONCERN = ("read-only", "idempotent", "invalid-refused")
"""The properties that compare the page's state around a call, leaving out what the page
changes by itself."""
SHRINK_CALLS = 60
"""How many more calls shrinking a failure may make."""

NO_ANSWER = {
    "changed": "the page had registered the tool again, and did not run it",
    "navigation": "the page navigated away before the tool answered",
    "cancelled": "the call was cancelled before the tool answered",
    "unanswered": "the browser never found the tool in its frame",
}
"""Why a call the fuzzer made itself got no answer from the tool, by its status: it
decides no property."""


class Fuzzer:
    """Fuzzes one session's page (see the module's docstring).

    ``run`` runs a coroutine on the session's loop and waits for it: Hypothesis drives the
    search from a thread of its own (:func:`fuzz`) or from Playwright's sync API (the
    pytest plugin).
    """

    def __init__(self, session: Session, run: Runner[Any], options: FuzzOptions) -> None:
        options.check()
        self.session = session
        self.run = run
        self.options = options
        self.start_url = session.url
        self.watch = PageWatch(session, allow_writes=options.allow_writes)
        self._refused = False
        """The last call left a form filled with what its validation refused: reload."""
        self.own = OwnChanges()
        """What the page was seen change by itself, while nothing was called."""
        self._idle = IDLE_S[0]
        self._still: dict[Place, float] = {}
        """Places a call changed that stayed still in a watch with nothing called, and for
        how long that watch was (they need no other watch as long)."""

    def fuzz(self) -> FuzzReport:
        """Fuzz the selected tools; the report says which property broke, and how."""
        require_hypothesis()
        tools = self.run(self.session.tools())
        chosen = self._chosen(tools)
        report = FuzzReport(
            url=self.start_url,
            backend=self.session.backend.name,
            seed=self.options.seed,
            database=None
            if self.options.database is None or self.options.seed is not None
            else str(self.options.database),
        )
        session = self.session
        # The site's own tools are tested, not the user agent's consent: no policy, nobody
        # says yes to a question, and a filled form is submitted only when writes are allowed.
        kept = (session.policy, session.elicitation, session.form_review.mode)
        session.policy = None
        session.elicitation = AutoHandler("cancel")
        session.form_review.mode = "submit" if self.options.allow_writes else "cancel"
        self.run(self.watch.__aenter__())
        try:
            for tool in chosen:
                report.tools.append(self._tool(tool))
        finally:
            self.run(self.watch.__aexit__(None, None, None))
            session.policy, session.elicitation, session.form_review.mode = kept
        # On the session's loop, where the calls add what they withheld to the scrubber.
        shown: FuzzReport = self.run(self._as_shown(report))
        return shown

    async def _as_shown(self, report: FuzzReport) -> FuzzReport:
        """``report`` as the harness lets it be seen: every text in it scrubbed of what the
        session withheld (once the run is over, so of what later calls withheld too), each
        handle written as its kind (:func:`~harness.qa.properties.without_handles`).

        The inputs are the fuzzer's own, drawn from the schema the page shows every agent
        (an ``x-sensitive`` parameter's too): a reproduction needs them as they were. Only
        an input that holds a text the session withheld is scrubbed, and no longer
        reproduces the failure: a report holds no withheld value, whatever it costs."""
        scrubber = self.session.scrubber

        def shown(text: str) -> str:
            return without_handles(scrubber.text(text))

        report.url = shown(report.url)
        for tool in report.tools:
            name = tool.tool
            tool.tool = shown(name)
            tool.skipped = shown(tool.skipped) if tool.skipped is not None else None
            for result in tool.results:
                result.reason = shown(result.reason)
                failure = result.failure
                if failure is None:
                    continue
                failure.message = shown(failure.message)
                failure.mistake = shown(failure.mistake) if failure.mistake is not None else None
                failure.arguments = _json_shown(failure.arguments, shown)
                failure.cli = shown(self.cli_reproduction(name, result.property, failure.arguments))
                failure.pytest = shown(
                    self.pytest_reproduction(name, result.property, failure.arguments)
                )
        return report

    def _chosen(self, tools: list[Tool]) -> list[Tool]:
        names = list(self.options.tools)
        if not names:
            return tools
        by_name = {t.name: t for t in tools}
        missing = [n for n in names if n not in by_name]
        if missing:
            offered = ", ".join(by_name) or "none"
            raise ConfigError(
                f"No tool named {', '.join(map(repr, missing))} at {self.start_url} "
                f"(offered: {offered}). A tool registered late needs --wait-for-tool NAME "
                "(or a longer --settle MS)."
            )
        return [by_name[n] for n in dict.fromkeys(names)]

    def _may_call(self, tool: Tool) -> str | None:
        if self.options.allow_writes or tool.annotations.get("readOnlyHint") is True:
            return None
        return "not declared readOnlyHint; --allow-writes (allow_writes=True) calls it"

    def _tool(self, tool: Tool) -> ToolReport:
        report = ToolReport(tool=tool.name)
        why_not = self._may_call(tool)
        if why_not is not None:
            report.skipped = why_not
            return report
        concerned: dict[str, list[str]] = {"valid": [], "near-miss": []}
        for name in self.options.selected():
            prop = PROPERTIES[name]
            reason = prop.concerns(tool)
            if reason is None:
                concerned[prop.inputs].append(name)
            else:
                report.results.append(
                    PropertyResult(property=name, status="not-applicable", reason=reason)
                )
        example = self.options.example
        unusable = unusable_schema(tool)
        if unusable is not None:
            # The harness refuses every call of the tool: nothing about the tool to check.
            report.results += [
                PropertyResult(
                    property=name,
                    status="skipped",
                    reason=f"its inputSchema cannot be used: {unusable}; the harness refuses "
                    "every call of it until the site fixes the schema",
                )
                for name in [*concerned["valid"], *concerned["near-miss"]]
            ]
        elif example is not None:
            fits = not validate_arguments(tool, example)
            kind = "valid" if fits else "near-miss"
            report.results += self._example(tool, concerned[kind], example, kind)
            other = "near-miss" if fits else "valid"
            report.results += [
                PropertyResult(
                    property=name,
                    status="not-applicable",
                    reason=f"the example is not a {other} input",
                )
                for name in concerned[other]
            ]
        elif tool.source == "declarative":
            # form-constraints looks for input the schema allows and the form refuses; the
            # other properties are checked on input the form accepts, so that such a
            # mismatch does not hide the rest of what the tool does.
            own = [n for n in concerned["valid"] if n == "form-constraints"]
            rest = [n for n in concerned["valid"] if n != "form-constraints"]
            if own:
                report.results += self._search(tool, own, "valid")
            if rest:
                report.results += self._search(tool, rest, "accepted")
        else:
            if concerned["valid"]:
                report.results += self._search(tool, concerned["valid"], "valid")
            if concerned["near-miss"]:
                report.results += self._search(tool, concerned["near-miss"], "near-miss")
        order = list(PROPERTIES)
        report.results.sort(key=lambda r: order.index(r.property))
        return report

    # -- searching ---------------------------------------------------------------------------

    def _strategy(self, tool: Tool, kind: str) -> Any:
        if kind == "near-miss":
            return near_misses(tool)
        if kind == "accepted":  # what the form's own validation accepts, as far as a schema says
            self.run(self._home())
            controls = self.run(read_form(self.session, tool))
            if controls:
                narrowed = accepted_schema(tool.input_schema, controls)
                return valid_arguments(tool.model_copy(update={"input_schema": narrowed}))
        return valid_arguments(tool)

    def _search(self, tool: Tool, names: list[str], kind: str) -> list[PropertyResult]:
        from hypothesis import Phase, find, settings
        from hypothesis.database import DirectoryBasedExampleDatabase
        from hypothesis.errors import NoSuchExample

        try:
            strategy = self._strategy(tool, kind)
        except ConfigError as exc:
            return [PropertyResult(property=n, status="skipped", reason=str(exc)) for n in names]
        if strategy is None:
            return [
                PropertyResult(
                    property=n, status="not-applicable", reason="the schema takes any object"
                )
                for n in names
            ]
        options = self.options
        database = (
            DirectoryBasedExampleDatabase(str(options.database))
            if options.database is not None
            else None
        )
        results: list[PropertyResult] = []
        remaining = list(names)
        while remaining:
            probe = _Probe(self, tool, kind, remaining)
            key = "\0".join(["webmcp-fuzz/1", tool.name, fingerprint(tool), kind, *remaining])
            stopped: str | None = None  # why the search could not go on for this tool
            try:
                find(
                    strategy,
                    probe,
                    settings=settings(
                        max_examples=options.examples,
                        database=database,
                        deadline=None,
                        phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
                    ),
                    random=Random(options.seed) if options.seed is not None else None,
                    database_key=hashlib.sha256(key.encode("utf-8")).digest(),
                )
            except NoSuchExample:
                answered = probe.calls - probe.unanswered
                if probe.gone is None and (answered or not probe.unanswered):
                    more = (
                        f"{probe.unanswered} more got no answer: {probe.unanswered_reason}"
                        if probe.unanswered
                        else ""
                    )
                    results += [
                        PropertyResult(
                            property=n,
                            status="passed",
                            examples=answered,
                            reason="; ".join(filter(None, [more, self._own_note(n)])),
                        )
                        for n in remaining
                    ]
                    break
                if probe.gone is None:
                    stopped = (
                        f"the tool gave no answer to any of the {probe.unanswered} input(s) "
                        f"tried: {probe.unanswered_reason}"
                    )
            except Exception as exc:
                if probe.error is not None:
                    raise probe.error from None  # the page went away, or the harness failed
                stopped = _undrawable(tool, exc, probe.calls)
            for name, message in probe.found.items():
                results.append(
                    self._failed(tool, name, message, probe.value, probe.found_at, probe.calls)
                )
            remaining = [n for n in remaining if n not in probe.found]
            if probe.gone is not None:
                stopped = (
                    "the tool left the page during the run (it was gone when called with "
                    f"{_shown(probe.gone)}): nothing more could be checked"
                )
            if stopped is not None:
                results += [
                    PropertyResult(
                        property=n, status="skipped", examples=probe.calls, reason=stopped
                    )
                    for n in remaining
                ]
                break
        return results

    def _example(
        self, tool: Tool, names: list[str], example: dict[str, Any], kind: str
    ) -> list[PropertyResult]:
        if not names:
            return []
        value: Any = NearMiss(example, "the given example") if kind == "near-miss" else example
        try:
            found = self.run(self._check(tool, kind, value, names))
        except _NoAnswer as exc:
            reason = f"the tool gave no answer to the example: {exc}"
            return [PropertyResult(property=n, status="skipped", reason=reason) for n in names]
        return [
            self._failed(tool, n, found[n], value, 1, 1)
            if n in found
            else PropertyResult(property=n, status="passed", examples=1, reason=self._own_note(n))
            for n in names
        ]

    def _failed(
        self, tool: Tool, name: str, message: str, value: Any, found_after: int, calls: int
    ) -> PropertyResult:
        miss = value if isinstance(value, NearMiss) else None
        arguments = miss.arguments if miss is not None else value
        return PropertyResult(
            property=name,
            status="failed",
            severity=PROPERTIES[name].severity,
            examples=calls,
            failure=Failure(
                arguments=arguments,
                message=message,
                mistake=miss.mistake if miss is not None else None,
                found_after=found_after,
                cli=self.cli_reproduction(tool.name, name, arguments),
                pytest=self.pytest_reproduction(tool.name, name, arguments),
            ),
        )

    def cli_reproduction(self, tool: str, name: str, arguments: dict[str, Any]) -> str:
        """The command that checks ``name`` on ``tool`` with exactly these arguments."""
        parts = ["webmcp-harness", "fuzz", self.start_url, "--tool", tool, "--property", name]
        parts += ["--example", json.dumps(arguments, ensure_ascii=False, sort_keys=True)]
        if self.session.backend.name != "polyfill":
            parts += ["--backend", self.session.backend.name]
        if self.options.allow_writes:
            parts.append("--allow-writes")
        return shlex.join(parts)

    def pytest_reproduction(self, tool: str, name: str, arguments: dict[str, Any]) -> str:
        """A pytest test (on the plugin's ``webmcp`` fixture) that checks the same."""
        function = re.sub(r"\W+", "_", f"test_{tool}_{name}").lower()
        marker = (
            f"@pytest.mark.webmcp(backend={self.session.backend.name!r})\n"
            if self.session.backend.name != "polyfill"
            else ""
        )
        writes = ", allow_writes=True" if self.options.allow_writes else ""
        call = (
            f"webmcp.fuzz(tools=[{tool!r}], properties=[{name!r}], example={arguments!r}{writes})"
        )
        if PROPERTIES[name].severity == "warning":  # reported, never raised: assert on it
            call = f"report = {call}\n    assert not report.tools[0].failed, report.describe()"
        return f"{marker}def {function}(webmcp):\n    webmcp.open({self.start_url!r})\n    {call}"

    # -- one input -----------------------------------------------------------------------------

    async def _check(self, tool: Tool, kind: str, value: Any, names: list[str]) -> dict[str, str]:
        if kind == "near-miss":
            message = check_invalid_refused(await self._near_miss(tool, value))
            return {"invalid-refused": message} if message else {}
        return violations(names, await self._observe(tool, value, names))

    async def _home(self) -> None:
        """Back on the document the run started on, if a call left it."""
        await self.session.settled()
        await self.watch.landed(self.options.timeout)
        if self._refused or self.session.page.url != self.start_url:
            self._refused = False
            await self.session.open(self.start_url)

    async def _settle(self) -> None:
        await self.session.settled()
        await asyncio.sleep(QUIET_S)
        # A navigation the call started is the call's: seen after it, not in the next one.
        await self.watch.landed(self.options.timeout)

    async def _state(self, wanted: bool) -> PageState | None:
        return await page_state(self.session) if wanted else None

    async def _watched_alone(self, *states: PageState | None) -> OwnChanges:
        """What the page changes by itself, as far as the places a compared call changed go
        (between each state of ``states`` and the next).

        A place not yet known either way is watched for: the page is loaded again (what a
        call started — a timer, a listener — does not run there) and read twice with
        nothing called, as far apart as the longest compared call so far took. What
        changed in between is the page's own from then on; what stayed still is the call's.
        A call that changed only known places costs nothing more than its two reads."""
        changed: set[Place] = set()
        for was, now in itertools.pairwise(states):
            if was is not None and now is not None:
                changed |= was.differences(now).keys()
        unknown = {
            place
            for place in changed
            if place not in self.own.places and self._still.get(place, 0.0) < self._idle
        }
        if unknown:
            await self.session.open(self.start_url)
            self._refused = False  # a form left filled is gone with the document
            first = await page_state(self.session)
            await asyncio.sleep(self._idle)
            self.own.seen(first, await page_state(self.session))
            for place in unknown - self.own.places.keys():
                self._still[place] = max(self._still.get(place, 0.0), self._idle)
        return OwnChanges(dict(self.own.places))

    def _took(self, started: float) -> None:
        """A call whose changes were compared took from ``started`` until now."""
        took = asyncio.get_running_loop().time() - started
        self._idle = min(max(self._idle, took), IDLE_S[1])

    def _own_note(self, name: str) -> str:
        """What a property that held says it left out (empty: nothing, or not such a property)."""
        if name not in OWN_CHANGES_CONCERN or not self.own.places:
            return ""
        return f"left out what the page changes by itself: {self.own.described()}"

    async def _observe(
        self, tool: Tool, arguments: dict[str, Any], names: list[str]
    ) -> Observation:
        await self._home()
        wants_state = bool({"read-only", "idempotent", "no-navigation"} & set(names))
        compares = bool(set(OWN_CHANGES_CONCERN) & set(names))
        before = await self._state(wants_state or compares)
        started = asyncio.get_running_loop().time()
        window = self.watch.window()
        outcome = await self.session.call(tool.name, arguments, timeout=self.options.timeout)
        await self._settle()
        page_result = self.session.user_view(outcome)
        seen = Observation(
            tool=tool,
            outcome=outcome,
            page_result=page_result,
            window=window,
            before=before,
            after=await self._state(wants_state or compares),
        )
        if compares:
            self._took(started)
        refused = form_refusal(tool, outcome)
        said = refusal_words(page_result)
        if refused is not None and refused.kind != "changed":
            controls = await read_form(self.session, tool) or []
            seen.form_refusal = mismatches(controls, arguments, refused) or [
                f"the browser said: {said[:200]}"
            ]
            self._refused = True  # the next call starts from the form as the page has it
        elif refused is not None and (name := refused.parameter) is not None and name in arguments:
            # Refused by the harness, not typed in: the form would have changed the value.
            controls = await read_form(self.session, tool) or []
            seen.form_refusal = [not_kept(name, changed_words(said, name), controls, arguments)]
        if "idempotent" in names and not outcome.is_error and not navigated(seen):
            await self.session.call(tool.name, arguments, timeout=self.options.timeout)
            await self._settle()
            seen.again = await self._state(True)
        # Last: the watch loads the page again, and the form above is read as the call left it.
        seen.own = (
            await self._watched_alone(seen.before, seen.after, seen.again)
            if compares
            else OwnChanges(dict(self.own.places))
        )
        return seen

    async def _near_miss(self, tool: Tool, miss: NearMiss) -> NearMissObservation:
        refused: bool | str = ""
        for _ in range(2):  # once more on a fresh page when the tool gave no answer
            await self._home()
            outcome = await self.session.call(
                tool.name, miss.arguments, timeout=self.options.timeout
            )
            seen = NearMissObservation(
                tool=tool, mistake=miss.mistake, harness_kind=outcome.error_kind
            )
            if tool.source != "script":
                return seen
            # What the tool does when a browser that does not validate hands it the input:
            # the tool as the page offers it now (the page may have been loaded again since
            # the run began, and the page runs no registration but the one it holds).
            current = self.session.pipeline.lookup(tool.name)
            before = await page_state(self.session)
            started = asyncio.get_running_loop().time()
            window = self.watch.window()
            refused = await self._unchecked(current, miss.arguments)
            await self._settle()
            if isinstance(refused, bool):
                after = await page_state(self.session)
                self._took(started)
                seen.tool_refused = refused
                seen.own = await self._watched_alone(before, after)
                seen.tool_changes = _changes(window, before, after, seen.own)
                return seen
            self._refused = True  # load the page again before the next try
        raise _NoAnswer(refused)

    async def _unchecked(self, tool: Tool, arguments: dict[str, Any]) -> bool | str:
        """Run the tool with arguments no stage checked; True when it refused them
        (threw, or returned an ``isError`` result), False when it accepted them, and why
        it did not say when it gave no answer (it did not run, the page went away). Only the
        status is looked at: the result itself goes nowhere."""
        backend, call_id = self.session.backend, f"qa-{uuid.uuid4().hex[:12]}"
        try:
            raw = await asyncio.wait_for(
                backend.execute(tool, arguments, call_id, {}), self.options.timeout
            )
        except TimeoutError:
            await backend.cancel(call_id, "the fuzzer's timeout")
            return False
        if raw.status in NO_ANSWER:
            return NO_ANSWER[raw.status]
        if raw.status == "error":
            return True
        if raw.status != "ok":
            return False
        try:
            return bool(normalize(raw).is_error)
        except Exception:  # a result the pipeline would refuse: not a refusal of the input
            return False


class _NoAnswer(Exception):
    """The tool gave no answer to an input, twice (why is the message): the input decides
    nothing about it."""


class _Probe:
    """The condition of one search: calls the tool, and remembers the last input that
    broke a property (Hypothesis tries the shrunk one last).

    Each input's answer is kept: Hypothesis asks again for the input it settles on, and a
    page whose state moved on since (a counter, a stored value) must get the same answer,
    or Hypothesis calls the failure flaky.
    """

    def __init__(self, fuzzer: Fuzzer, tool: Tool, kind: str, names: list[str]) -> None:
        self.fuzzer, self.tool, self.kind, self.names = fuzzer, tool, kind, list(names)
        self.calls = 0
        self.found_at = 0
        self.value: Any = None
        self.found: dict[str, str] = {}
        self._answers: dict[str, dict[str, str]] = {}
        self.gone: Any = None
        """The input whose call found the tool gone from the page (None: still there)."""
        self.error: Exception | None = None
        """What a call raised (the search ends with it; Hypothesis's own errors are not it)."""
        self.unanswered = 0
        """Inputs the tool gave no answer to (:class:`_NoAnswer`): they decided nothing."""
        self.unanswered_reason = ""

    def __call__(self, value: Any) -> bool:
        key = json.dumps(
            [value.arguments, value.mistake] if isinstance(value, NearMiss) else value,
            sort_keys=True,
        )
        found = self._answers.get(key)
        if found is None:
            if self.gone is not None:
                return False  # nothing to call any more: the search runs out
            if self.found_at and self.calls >= self.found_at + SHRINK_CALLS:
                return False  # shrinking has had its calls: keep what it has
            self.calls += 1
            fuzzer = self.fuzzer
            try:
                found = fuzzer.run(fuzzer._check(self.tool, self.kind, value, self.names))
            except UnknownTool:
                self.gone = value.arguments if isinstance(value, NearMiss) else value
                return False
            except _NoAnswer as exc:
                self.unanswered += 1
                self.unanswered_reason = str(exc)
                return False  # not kept: asked again, it is tried again
            except Exception as exc:
                self.error = exc
                raise
            self._answers[key] = found
        if not found:
            return False
        self.found_at = self.found_at or self.calls
        self.value, self.found = value, found
        return True


def _undrawable(tool: Tool, exc: Exception, calls: int) -> str:
    """Why the search for ``tool``'s inputs stopped (``exc``: what Hypothesis or
    hypothesis-jsonschema raised while drawing them) after ``calls`` calls."""
    from hypothesis.errors import Unsatisfiable

    done = "nothing was checked" if calls == 0 else f"it stopped after {calls} input(s)"
    unread = unread_keywords(tool.input_schema) if isinstance(exc, Unsatisfiable) else ()
    if unread:
        return (
            f"no input drawn from {tool.name}'s inputSchema fits it as the harness validates "
            f"it: the schema uses {', '.join(unread)}, which the input generator cannot "
            f"read (it draws without {'it' if len(unread) == 1 else 'them'}, and no value "
            f"drawn met the schema); {done}"
        )
    unfit = why_nothing_fits(tool) if isinstance(exc, Unsatisfiable) else None
    if unfit is not None and unfit.no_generator is not None:
        return (
            f"no input drawn from {tool.name}'s inputSchema fits it as the harness validates "
            f"it: {unfit.said}: no generator for format {json.dumps(unfit.no_generator)}, "
            "which the harness checks (the values drawn for it are any strings, and it "
            f"refused each); {done}"
        )
    if isinstance(exc, Unsatisfiable):
        named = unfit.said if unfit is not None else None
        return (
            f"no input drawn from {tool.name}'s inputSchema fits it as the harness validates "
            f"it: {named + '; ' if named else ''}the schema may allow no value at all "
            f"{'there ' if named else ''}(a minimum above its maximum, a required parameter it "
            "does not allow), or use what the generator cannot draw (a pattern with "
            f"\\p{{…}}); {done}"
        )
    said = str(exc).splitlines()[0][:160] if str(exc) else ""
    return (
        f"the search for inputs from {tool.name}'s inputSchema failed "
        f"({type(exc).__name__}{': ' + said if said else ''}); {done}"
    )


def _json_shown(value: Any, shown: Callable[[str], str]) -> Any:
    """A JSON value with ``shown`` applied to every string in it."""
    if isinstance(value, str):
        return shown(value)
    if isinstance(value, dict):
        return {shown(key): _json_shown(member, shown) for key, member in value.items()}
    if isinstance(value, list):
        return [_json_shown(item, shown) for item in value]
    return value


def _shown(arguments: Any) -> str:
    return json.dumps(arguments, ensure_ascii=False, sort_keys=True)


def _changes(window: Window, before: PageState, after: PageState, own: OwnChanges) -> list[str]:
    found = [
        f"sent {r}" + (" (blocked)" if r in window.blocked else "")
        for r in dict.fromkeys([*window.unsafe, *window.blocked])
    ]
    found += before.storage_changes(after, ignoring=own.places)
    if before.document() != after.document():
        found.append("navigated")
    return found


async def fuzz(session: Session, options: FuzzOptions | None = None) -> FuzzReport:
    """Fuzz the tools of ``session``'s page (open it first) from async code: Hypothesis
    runs in a worker thread, every call on this loop."""
    loop = asyncio.get_running_loop()

    def run(coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, loop).result()

    fuzzer = Fuzzer(session, run, options or FuzzOptions())
    return await asyncio.to_thread(fuzzer.fuzz)
