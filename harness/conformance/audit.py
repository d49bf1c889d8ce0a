"""The site audit: what is wrong with a site's tools, before an agent finds out.

For each URL, the audit opens the page in the harness (no policy, nobody to answer
questions: it must never act for the user), waits for its catalog like every front end
(:class:`~harness.catalog.Settle`; ``wait_for_tools``), reads the catalog, every frame's own
registrations and the declarative elements of the DOM — never in the page's own JavaScript
world, always within a time limit (:mod:`harness.conformance.page_reads`) — and lints them
(:func:`harness.conformance.findings.lint`). A tool the run expected (``expect_tools``) that
the page does not offer is a finding, so a page whose tools never came fails the audit
instead of passing it. Then it probes — only tools the page says are
read-only, unless ``allow_writes``: it calls them with arguments made from their schema and
looks at what came back *before* redaction for secrets a tool did not declare; it tries each
``secret_reference``'s redemption endpoint the way seed 000 §4a says it must behave; and it
asks each seed-dialect form's action for JSON. Probes only ever send requests to the page's
own origin and never follow a redirect; what they read is never kept, only where and what it
looked like. With ``fuzz`` options, the QA tools' fuzzer then tests the same tools' properties
on inputs made from their schemas (same rule: writes only with ``allow_writes``); a target
with a ``catalog_baseline`` has its catalog compared with it
(:mod:`harness.conformance.qa_findings`).

:func:`audit_report` turns the audits into a wptreport: one test per URL, one subtest per
(rule, tool) checked — ``PASS`` without a finding at or above ``fail_on``. A URL's test id is
what stays the same between runs (:func:`site_targets`): ``/<site>/<path relative to the
site's start URL>``, never its host or port.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame

from harness.catalog import Settle
from harness.conformance.findings import (
    PAGE_CODES,
    RULES,
    Control,
    DeclaredForm,
    Finding,
    PageScan,
    Registration,
    codes_for,
    deduplicated,
    finding,
    lint,
)
from harness.conformance.ids import apart, page_id, url_path
from harness.conformance.page_reads import (
    READ_TIMEOUT_S,
    FrameWorld,
    IsolatedWorlds,
    PageReadTimeout,
    registrations,
)
from harness.conformance.probes import PROBE_TIMEOUT_S, Prober, first_line
from harness.conformance.qa_findings import catalog_findings, fuzz_findings
from harness.conformance.results import (
    Report,
    RunInfo,
    Subtest,
    SubtestStatus,
    TestResult,
    TestStatus,
    run_info,
)
from harness.conformance.rules import at_least
from harness.elicitation.base import AutoHandler
from harness.errors import ConfigError, UnknownTool
from harness.harness import Harness
from harness.models import BackendName, Tool
from harness.qa.fuzz import FuzzOptions, fuzz
from harness.qa.snapshot import CatalogSnapshot
from harness.session import Session

DEFAULT_SITE = "site"
SITE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
OUTSIDE_START = "@root"
"""The segment under which a URL outside the start URL's directory keeps its whole path,
so that it never takes the id of a page inside it (``/a/x.html`` and ``/x.html``)."""

# Run in an isolated world of each frame (page_reads): the page's patches never reach them.
# Even in an isolated world the DOM's named properties apply (``<input name="action">``
# shadows ``form.action``; ``<img name="querySelectorAll">`` shadows the document's), so every
# read goes through the prototypes' own methods and getters.
_FORMS_JS = """() => {
  const call = (proto, name, self, ...args) => proto[name].call(self, ...args);
  const get = (proto, name, self) => Object.getOwnPropertyDescriptor(proto, name).get.call(self);
  const attr = (el, name) => call(Element.prototype, 'getAttribute', el, name);
  const has = (el, name) => call(Element.prototype, 'hasAttribute', el, name);
  const all = (selector) => [...call(Document.prototype, 'querySelectorAll', document, selector)];
  const tag = (el) => get(Element.prototype, 'tagName', el).toLowerCase();
  const F = HTMLFormElement.prototype;
  const controls = (form) => form ? [...get(F, 'elements', form)].filter((e) => e.name).map((e) => ({
    name: String(e.name), type: String(e.type || tag(e)).toLowerCase(),
    elicit: has(e, 'tool-elicit'),
    interactive: !(e.disabled || e.readOnly || e.type === 'hidden'),
  })) : [];
  const found = [];
  for (const form of all('form[toolname]')) {
    found.push({dialect: 'spec', element: 'form', name: attr(form, 'toolname'),
      description: attr(form, 'tooldescription'), action: get(F, 'action', form),
      method: get(F, 'method', form), autosubmit: has(form, 'toolautosubmit'), hints: [],
      controls: controls(form)});
  }
  for (const el of all('[tool-name]')) {
    const kind = tag(el);
    if (!['form', 'a', 'button'].includes(kind)) continue;
    const form = kind === 'form' ? el : (kind === 'button' ? get(HTMLButtonElement.prototype, 'form', el) : null);
    const hints = ['tool-readonly', 'tool-destructive', 'tool-idempotent', 'tool-openworld']
      .filter((h) => has(el, h));
    found.push({dialect: 'seed', element: kind, name: attr(el, 'tool-name'),
      description: attr(el, 'tool-description'),
      action: kind === 'a' ? get(HTMLAnchorElement.prototype, 'href', el) : (form ? get(F, 'action', form) : ''),
      method: kind === 'a' ? 'get' : (form ? get(F, 'method', form) : 'get'),
      autosubmit: false, hints, controls: controls(form)});
  }
  return found;
}"""

_BAD_PATTERNS_JS = """(patterns) => patterns.filter((p) => {
  try { new RegExp(p, 'u'); return false; } catch (e) { return true; }
})"""


@dataclass(frozen=True)
class AuditOptions:
    """How the audit treats every page (one place, so that a new option is one field)."""

    allow_writes: bool = False
    """Also probe tools that do not say they are read-only (they will run)."""
    wait_for_tools: tuple[str, ...] = ()
    """Wait (up to the settle cap) for each of these tools; one that never comes is a
    finding, as with ``expect_tools``."""
    expect_tools: tuple[str, ...] = ()
    """Tools the page must offer once its catalog settled; a missing one is a finding."""
    read_timeout: float = READ_TIMEOUT_S
    """The time limit of each read of the page."""
    probe_timeout: float = PROBE_TIMEOUT_S
    """The time limit of each call a probe makes: a tool that has not answered by then
    fails its probe (its checks are ``TIMEOUT``, never a pass)."""
    fuzz: FuzzOptions | None = None
    """Fuzz each page's tools after the probes (:mod:`harness.qa.fuzz`); a broken property is
    a ``fuzz-<property>`` finding. Whether it may call tools that are not read-only, and
    write, is ``allow_writes``'s say, not these options'."""


@dataclass(frozen=True)
class SiteTarget:
    """One URL to audit and its test id (what stays the same between runs)."""

    url: str
    test: str
    catalog_baseline: CatalogSnapshot | None = None
    """The catalog the page must still offer (a ``webmcp-harness snapshot`` file): each
    change is a ``catalog-<kind>`` finding."""


def site_targets(urls: Sequence[tuple[str, str]]) -> list[SiteTarget]:
    """The test id of each ``(url, site name)``: ``/<site>/<path>``, the path relative to the
    directory of the site's first URL (its start URL) when the URL is on the start URL's
    origin and under it, else ``/<site>/@root/<the URL's own path>``; the query is kept, the
    host and port never are. Each id is a file path wpt.fyi can store a result at
    (:mod:`harness.conformance.ids`): a directory's page is ``{index}``, a page whose id is
    another's directory ``{page}`` in it. Raises :class:`ConfigError` for a bad site name or
    two URLs with one id (two origins' pages at one path)."""
    starts: dict[str, tuple[str, str]] = {}
    found: list[tuple[str, str]] = []
    for url, name in urls:
        if not SITE_NAME.match(name):
            raise ConfigError(
                f"--name {name!r}: a site name is 1-64 letters, digits, '_', '.' or '-' "
                "(it becomes the first segment of every test id)."
            )
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        # The path the browser asks for: `/app/../x` is not inside /app/.
        path = url_path(parts.path)
        base = starts.setdefault(name, (origin, path[: path.rfind("/") + 1]))
        if origin == base[0] and path.startswith(base[1]):
            relative = path[len(base[1]) :]
            if relative.split("/")[0] == OUTSIDE_START:  # a page's own @root is not ours
                relative = "%40" + relative[1:]
        else:
            relative = f"{OUTSIDE_START}{path}"
        found.append((url, page_id(f"/{name}", relative, parts.query)))
    ids = apart(test for _, test in found)
    targets: list[SiteTarget] = []
    for url, test in found:
        if any(t.test == ids[test] for t in targets):
            raise ConfigError(
                f"{url} and an earlier URL both become the test {ids[test]!r}; audit them in "
                "separate runs, or give each site its own --name."
            )
        targets.append(SiteTarget(url, ids[test]))
    return targets


@dataclass
class SiteAudit:
    """The audit of one URL."""

    url: str
    test: str
    findings: list[Finding] = field(default_factory=list)
    checks: list[tuple[str, str]] = field(default_factory=list)
    """(tool or "page", rule code) of every check that ran."""
    tools: list[str] = field(default_factory=list)
    duration_ms: int = 0
    status: TestStatus = "OK"
    """``CRASH`` when the page crashed during the audit (the rest ran on a fresh page)."""
    message: str | None = None
    """Why the status is not ``OK``."""
    not_run: dict[tuple[str, str], tuple[SubtestStatus, str]] = field(default_factory=dict)
    """(tool, rule code) → status and why, for checks that got no answer to judge
    (``TIMEOUT``, ``NOTRUN``): never a pass."""


ProgressCallback = Callable[[str, str], None]


async def audit_sites(
    targets: Sequence[SiteTarget],
    *,
    backend: BackendName = "polyfill",
    options: AuditOptions | None = None,
    settle: Settle | None = None,
    progress: ProgressCallback | None = None,
    executable_path: str | None = None,
) -> tuple[RunInfo, list[SiteAudit]]:
    """Audit each target; raises :class:`~harness.errors.PageUnreachable` or
    :class:`~harness.errors.BrowserNotFound` when the harness cannot run."""
    options = options or AuditOptions()
    harness = Harness(
        backend=backend,
        executable_path=executable_path,
        policy=None,
        form_review="cancel",
        elicitation=AutoHandler("cancel"),
        call_timeout=options.probe_timeout,
        settle=settle,
    )
    async with harness:
        info = run_info(
            harness, "site", allow_writes=options.allow_writes, **_fuzz_info(options.fuzz)
        )
        audits = []
        for target in targets:
            audits.append(await audit_page(harness, target, options))
            if progress is not None:
                progress(target.test, "done")
    return info, audits


async def audit_page(harness: Harness, target: SiteTarget, options: AuditOptions) -> SiteAudit:
    """Scan, lint and probe one page. A page that crashes is a ``CRASH``: what was read
    stays, and each probe after the crash runs on a fresh page."""
    started = time.monotonic()
    session = await harness.open(target.url)
    prober: Prober | None = None
    try:
        scan = await scan_page(session, target.url, options)
        audit = SiteAudit(url=target.url, test=target.test, tools=[t.name for t in scan.tools])
        if session.broken is not None:
            audit.status, audit.message = "CRASH", "The page crashed while the audit read it."
        audit.findings = lint(scan)
        for tool in scan.tools:
            form = scan.form(tool.name) if tool.source == "declarative" else None
            audit.checks += [(tool.name, code) for code in codes_for(tool, form)]
        audit.checks += [("page", code) for code in PAGE_CODES]
        audit.checks += [(name, "expected-tool-missing") for name in scan.expected]
        if target.catalog_baseline is not None:
            drifted, checked = catalog_findings(target.catalog_baseline, scan.tools, session.url)
            audit.findings += drifted
            audit.checks += checked
        prober = Prober(
            session,
            scan,
            options.allow_writes,
            reopen=lambda: harness.open(target.url),
            timeout=options.probe_timeout,
        )
        await prober.run()
        audit.findings = deduplicated([*audit.findings, *prober.findings])
        audit.checks += prober.checks
        audit.not_run.update(prober.not_run)
        if prober.crashed:
            audit.status = "CRASH"
            audit.message = (
                f"The page crashed (its renderer died) while the audit called "
                f"{', '.join(prober.crashed)}; the tools after it were probed on a fresh page."
            )
        if options.fuzz is not None:
            fuzzed = replace(options.fuzz, allow_writes=options.allow_writes)
            await _fuzz(prober.session, audit, fuzzed)
    finally:
        await session.close()
        if prober is not None and prober.session is not session:
            await prober.session.close()
    for item in audit.findings:
        item.url = target.url
    audit.duration_ms = int((time.monotonic() - started) * 1000)
    return audit


def _fuzz_info(options: FuzzOptions | None) -> dict[str, Any]:
    """What a fuzzing audit checked, and how hard (for its ``run_info``)."""
    if options is None:
        return {}
    return {
        "fuzz": options.selected(),
        "fuzz_examples": options.examples,
        "fuzz_seed": options.seed,
    }


async def _fuzz(session: Session, audit: SiteAudit, options: FuzzOptions) -> None:
    """Fuzz the page's tools into ``audit``. A fuzz that could not go on is a ``probe-failed``
    error: the run asked for the properties' gate, and must not pass without it."""
    try:
        report = await fuzz(session, options)
    except ConfigError:
        raise  # options that cannot be used (a tool no page has, no Hypothesis): say so
    except Exception as exc:  # the page went away, a tool vanished mid-search
        detail = first_line(exc)
        stopped = f"Fuzzing stopped: {type(exc).__name__}."
        audit.findings.append(finding("probe-failed", stopped, evidence=detail, severity="error"))
        audit.checks.append(("page", "probe-failed"))
        return
    found, checked = fuzz_findings(report)
    audit.findings = deduplicated([*audit.findings, *found])
    audit.checks += checked


async def _waited_tools(session: Session, options: AuditOptions, unread: list[str]) -> list[Tool]:
    """The catalog once it settled, and once each tool waited for came (or the cap passed).
    Listing asks the page again: a page that does not answer in time leaves the catalog as
    the harness last read it (and a note in ``unread``)."""
    for name in options.wait_for_tools:
        with contextlib.suppress(UnknownTool, TimeoutError):
            await session.wait_for_tool(name, timeout=session.settle.timeout)
    try:
        return await asyncio.wait_for(session.tools(), options.read_timeout)
    except TimeoutError:
        unread.append(f"the tool list: no answer within {options.read_timeout:g} s")
        return session.catalog.tools()


async def scan_page(session: Session, url: str, options: AuditOptions | None = None) -> PageScan:
    """Everything the lints need: catalog, warnings, frames' registrations, the DOM's forms.
    No read runs in the page's own world, and each has a time limit (``page_reads``)."""
    options = options or AuditOptions()
    unread: list[str] = []
    tools = await _waited_tools(session, options, unread)
    parts = urlsplit(session.url)
    scan = PageScan(
        url=url,
        origin=f"{parts.scheme}://{parts.netloc}",
        tools=tools,
        warnings=session.warnings,
        expected=tuple(dict.fromkeys([*options.wait_for_tools, *options.expect_tools])),
        unread=unread,
    )
    for frame in session.page.frames:
        scan.registrations += await _registrations(
            session, frame, frame == session.page.main_frame, scan, options.read_timeout
        )
    async with IsolatedWorlds(session.page, options.read_timeout) as isolated:
        worlds = await _read(scan, "the frames", isolated.worlds(), [])
        for world in worlds:
            found = await _read(scan, world.url, isolated.evaluate(world, _FORMS_JS), [])
            scan.forms += _forms(found, world)
        patterns = {t.name: _patterns(t.input_schema) for t in tools if t.source == "script"}
        top = next((world for world in worlds if world.top), None)
        for name, found in patterns.items():
            if found and top is not None:
                bad = await _read(
                    scan, top.url, isolated.evaluate(top, _BAD_PATTERNS_JS, found), []
                )
                if isinstance(bad, list) and bad:
                    scan.bad_patterns[name] = [str(p) for p in bad]
    return scan


async def _read(scan: PageScan, where: str, reading: Any, default: Any) -> Any:
    """A read of the page, or ``default`` when its frame went or it ran out of time (noted
    in ``scan.unread``: the page kept the audit from reading it)."""
    try:
        return await reading
    except PageReadTimeout as exc:
        scan.unread.append(str(exc))
    except PlaywrightError:
        pass  # the frame went away meanwhile
    return default


def _frame_origin(frame: Frame) -> str:
    parts = urlsplit(frame.url)
    return f"{parts.scheme}://{parts.netloc}" if parts.netloc else "null"


async def _registrations(
    session: Session, frame: Frame, top: bool, scan: PageScan, timeout: float
) -> list[Registration]:
    found = await _read(scan, frame.url, registrations(session, frame, timeout), [])
    return [
        Registration(
            name=str(item.get("name", "")),
            description=str(item.get("description") or ""),
            frame_url=frame.url,
            origin=_frame_origin(frame),
            top=top,
        )
        for item in found
    ]


def _forms(found: Any, world: FrameWorld) -> list[DeclaredForm]:
    forms: list[DeclaredForm] = []
    for item in found if isinstance(found, list) else []:
        forms.append(
            DeclaredForm(
                dialect=item["dialect"],
                element=item["element"],
                name=str(item.get("name") or ""),
                description=item.get("description"),
                action=str(item.get("action") or ""),
                method=str(item.get("method") or "get").lower(),
                autosubmit=bool(item.get("autosubmit")),
                hints=frozenset(item.get("hints") or ()),
                controls=tuple(
                    Control(
                        name=str(c["name"]),
                        type=str(c["type"]),
                        elicit=bool(c["elicit"]),
                        interactive=bool(c["interactive"]),
                    )
                    for c in item.get("controls") or ()
                ),
                frame_url=world.url,
            )
        )
    return forms


def _patterns(schema: Any) -> list[str]:
    found: list[str] = []
    if isinstance(schema, dict):
        if isinstance(schema.get("pattern"), str):
            found.append(schema["pattern"])
        for key, value in schema.items():
            if key not in ("enum", "const", "default", "examples"):
                found += _patterns(value)
    elif isinstance(schema, list):
        for value in schema:
            found += _patterns(value)
    return found


# -- the report -------------------------------------------------------------------------------------


def audit_report(info: RunInfo, audits: Sequence[SiteAudit], fail_on: str, started: int) -> Report:
    """The wptreport of an audit: a test per URL, a subtest per (rule, tool) checked."""
    results: list[TestResult] = []
    for audit in audits:
        keyed: dict[tuple[str, str], list[Finding]] = {}
        for item in audit.findings:
            keyed.setdefault((item.tool or "page", item.code), []).append(item)
        checks = list(dict.fromkeys([*audit.checks, *keyed]))
        subtests = [
            _subtest(tool, code, keyed.get((tool, code), []), fail_on)
            if (tool, code) in keyed or (tool, code) not in audit.not_run
            else _not_run(tool, code, *audit.not_run[(tool, code)])
            for tool, code in sorted(checks, key=lambda pair: (pair[0] != "page", pair[0], pair[1]))
        ]
        results.append(
            TestResult(
                test=audit.test,
                status=audit.status,
                message=audit.message,
                title=audit.url,
                duration=audit.duration_ms,
                subtests=subtests,
            )
        )
    return Report(
        run_info=info, time_start=started, time_end=int(time.time() * 1000), results=results
    )


def _not_run(tool: str, code: str, status: SubtestStatus, message: str) -> Subtest:
    """A check that got nothing to judge (the tool never answered): never a pass."""
    return Subtest(
        name=f"{code} · {tool}",
        status=status,
        message=message,
        tool=None if tool == "page" else tool,
    )


def _subtest(tool: str, code: str, found: list[Finding], fail_on: str) -> Subtest:
    name = f"{code} · {tool}"
    if not found:
        return Subtest(name=name, status="PASS", tool=None if tool == "page" else tool)
    worst = max(found, key=lambda f: RULES[f.code].severity != "info")
    severity = max((f.severity for f in found), key=lambda s: ["info", "warning", "error"].index(s))
    return Subtest(
        name=name,
        status="FAIL" if at_least(severity, fail_on) else "PASS",
        message=" ".join(dict.fromkeys(f.message for f in found)),
        severity=severity,
        tool=None if tool == "page" else tool,
        evidence="; ".join(dict.fromkeys(f.evidence for f in found if f.evidence)),
        fix=worst.fix,
        spec=worst.spec,
        lighthouse=worst.lighthouse,
    )


def findings_json(audits: Sequence[SiteAudit]) -> dict[str, Any]:
    """``findings.json``: every finding of every URL."""
    return {
        "sites": [
            {
                "url": audit.url,
                "test": audit.test,
                "tools": audit.tools,
                "findings": [f.model_dump() for f in audit.findings],
            }
            for audit in audits
        ],
        "rules": {
            code: {
                "severity": rule.severity,
                "title": rule.title,
                "fix": rule.fix,
                "spec": rule.spec,
                "lighthouse": rule.lighthouse,
            }
            for code, rule in RULES.items()
        },
    }
