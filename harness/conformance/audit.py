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
import json
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urljoin, urlsplit

import aiohttp
from mcp_types import TextContent
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
    secret_leaves,
)
from harness.conformance.page_reads import (
    READ_TIMEOUT_S,
    FrameWorld,
    IsolatedWorlds,
    PageReadTimeout,
    registrations,
)
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
from harness.errors import ConfigError, HarnessError, PageCrashed, UnknownTool
from harness.harness import Harness
from harness.models import BackendName, CallOutcome, Tool
from harness.qa.fuzz import FuzzOptions, fuzz
from harness.qa.snapshot import CatalogSnapshot
from harness.session import Session
from harness.stages.framing import PAGE_RESULT_KINDS
from harness.stages.redaction import marks_sensitive
from harness.stages.validation import validate_arguments

PROBE_TIMEOUT_S = 10.0
HTTP_TIMEOUT_S = 10.0
TTL_CAP_S = 3600
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
    host and port never are. Raises :class:`ConfigError` for a bad site name or two URLs
    with one id (two origins' pages at one path)."""
    starts: dict[str, tuple[str, str]] = {}
    targets: list[SiteTarget] = []
    for url, name in urls:
        if not SITE_NAME.match(name):
            raise ConfigError(
                f"--name {name!r}: a site name is 1-64 letters, digits, '_', '.' or '-' "
                "(it becomes the first segment of every test id)."
            )
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        base = starts.setdefault(name, (origin, parts.path[: parts.path.rfind("/") + 1] or "/"))
        path = parts.path or "/"
        inside = origin == base[0] and path.startswith(base[1])
        relative = path[len(base[1]) :] if inside else f"{OUTSIDE_START}{path}"
        test = f"/{name}/{relative}" + (f"?{parts.query}" if parts.query else "")
        if any(t.test == test for t in targets):
            raise ConfigError(
                f"{url} and an earlier URL both become the test {test!r}; audit them in "
                "separate runs, or give each site its own --name."
            )
        targets.append(SiteTarget(url, test))
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
        detail = _first_line(exc)
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


def _first_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0][:200] if str(exc) else ""


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


def _references(value: Any) -> list[dict[str, Any]]:
    """Every ``secret_reference`` item anywhere in a result (as content, or as data when the
    page's result was not an MCP result), once per redeemUrl."""
    found: dict[str, dict[str, Any]] = {}
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if item.get("type") == "secret_reference" and isinstance(item.get("redeemUrl"), str):
                found.setdefault(item["redeemUrl"], item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return list(found.values())


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


# -- arguments a probe can send ---------------------------------------------------------------


MAX_EXAMPLE_DEPTH = 32
"""How deep an example value follows a page's (untrusted) schema."""
MAX_EXAMPLE_LENGTH = 10_000
"""The longest example string made for a ``minLength`` (a page can ask for gigabytes)."""


def example_value(schema: Any, depth: int = 0) -> Any:
    """A plausible value for ``schema`` (defaults, examples and enums first). The schema is
    the page's: any keyword may hold any JSON value, and none may make this fail or hang."""
    if not isinstance(schema, dict) or depth > MAX_EXAMPLE_DEPTH:
        return "audit"
    for key in ("default", "const"):
        if key in schema:
            return schema[key]
    if isinstance(schema.get("examples"), list) and schema["examples"]:
        return schema["examples"][0]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "object" or "properties" in schema:
        return example_arguments(schema, depth + 1)
    if kind == "array":
        return []
    if kind == "boolean":
        return False
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        low = low if isinstance(low, (int, float)) else 0
        value = (low + 1) if "exclusiveMinimum" in schema else max(low, 1)
        return int(value) if kind == "integer" else value
    formats = {
        "email": "audit@example.com",
        "uri": "https://example.com/",
        "date": "2025-01-01",
        "date-time": "2025-01-01T00:00:00Z",
        "time": "10:00:00Z",
    }
    text = formats.get(str(schema.get("format")), "audit")
    length = schema.get("minLength", 0)
    minimum = min(length, MAX_EXAMPLE_LENGTH) if isinstance(length, int) else 0
    return (text * (minimum // len(text) + 1))[: max(minimum, len(text))]


def example_arguments(schema: dict[str, Any], depth: int = 0) -> dict[str, Any]:
    """Arguments for a tool's required parameters (``required`` of any other shape than a
    list of names asks for none: the schema lints flag it)."""
    found = schema.get("properties")
    properties: dict[str, Any] = found if isinstance(found, dict) else {}
    listed = schema.get("required")
    required = [n for n in listed if isinstance(n, str)] if isinstance(listed, list) else []
    return {name: example_value(properties.get(name, {}), depth) for name in required}


def _valid(tool: Tool, arguments: dict[str, Any]) -> bool:
    """Whether the harness's own argument check (ECMAScript patterns, a form's read as HTML
    reads them) lets ``arguments`` through: the probe's call would be refused otherwise."""
    try:
        return not validate_arguments(tool, arguments)
    except Exception:  # a schema the lints already flagged
        return False


# -- the probes ---------------------------------------------------------------------------------


REDEEM_CODES = (
    "redeem-cross-origin",
    "redeem-ttl-too-long",
    "redeem-no-auth",
    "redeem-cacheable",
    "redeem-reusable",
    "redeem-accepts-post",
)
"""The checks of one ``secret_reference``'s redemption endpoint."""


class Prober:
    """Calls what may be called, and checks what came back and where references lead.

    Each tool is probed on the audited page as it loads: a tool that navigated the page
    away leaves it for the next one to find at its start URL again, and one that crashed
    it (:attr:`crashed`) for a fresh page (``reopen``). A probe that got no answer is a
    ``probe-failed`` error and leaves its checks in :attr:`not_run`, never passed."""

    def __init__(
        self,
        session: Session,
        scan: PageScan,
        allow_writes: bool,
        *,
        reopen: Callable[[], Awaitable[Session]] | None = None,
        timeout: float = PROBE_TIMEOUT_S,
    ) -> None:
        self.session = session
        self.scan = scan
        self.allow_writes = allow_writes
        self.reopen = reopen
        self.timeout = timeout
        self.start = session.url
        self.findings: list[Finding] = []
        self.checks: list[tuple[str, str]] = []
        self.not_run: dict[tuple[str, str], tuple[SubtestStatus, str]] = {}
        self.crashed: list[str] = []
        """The tools during whose probe the page crashed."""
        self._stale = False  # a tool timed out: it may still be running on the page

    def _may_call(self, tool: Tool) -> bool:
        form = self.scan.form(tool.name)
        said_read_only = tool.annotations.get("readOnlyHint") is True and (
            form is None or form.dialect != "seed" or "tool-readonly" in form.hints
        )
        return said_read_only or self.allow_writes

    def _add(self, code: str, tool: str, message: str, evidence: str = "") -> None:
        self.findings.append(finding(code, message, tool=tool, evidence=evidence))

    def _unanswered(
        self,
        tool: str,
        codes: Sequence[str],
        message: str,
        evidence: str = "",
        status: SubtestStatus = "NOTRUN",
    ) -> None:
        """A probe that got no answer to judge: a ``probe-failed`` error (the run asked for
        the checks, and must not pass without them), and ``codes`` not run."""
        self.findings.append(
            finding("probe-failed", message, tool=tool, evidence=evidence, severity="error")
        )
        self.checks += [(tool, "probe-failed"), *((tool, code) for code in codes)]
        for code in codes:
            self.not_run.setdefault((tool, code), (status, message))

    def _probe_codes(self, tool: Tool) -> tuple[str, ...]:
        """The checks a call of ``tool`` is for (its references' come with what it returns)."""
        form = self.scan.form(tool.name)
        if form is not None:
            return ("declarative-non-json",) if form.dialect == "seed" else ()
        return () if tool.annotations.get("sensitiveHint") is True else ("secret-in-output",)

    async def run(self) -> None:
        """Every probe on every tool it may touch."""
        async with aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=HTTP_TIMEOUT_S),
            cookie_jar=aiohttp.DummyCookieJar(),  # the no-cookie requests: never the user's
        ) as anonymous:
            for tool in self.scan.tools:
                if not self._may_call(tool):
                    continue
                form = self.scan.form(tool.name)
                if form is not None and form.dialect == "seed":
                    await self._probe_json(tool, form)
                elif form is None:
                    await self._probe_call(tool, anonymous)

    async def _at_start(self) -> str | None:
        """Put the page back as the audit opened it: a fresh page after a crash or a tool
        that never ended (it may still run, and crash the page later), the start URL again
        after a tool navigated away. Why it could not, or None."""
        with contextlib.suppress(HarnessError, PlaywrightError):
            await self.session.settled()  # what followed the last call (its navigation)
        try:
            if self.session.broken is not None or self._stale:
                if self.reopen is None:
                    return "the page crashed" if self.session.broken else "a tool never ended"
                used, self.session = self.session, await self.reopen()
                self._stale = False
                await used.close()
            elif self.session.url != self.start:
                await self.session.open(self.start)
        except (HarnessError, PlaywrightError) as exc:
            return f"the page could not be opened again ({type(exc).__name__})"
        return None

    async def _call(self, tool: Tool, arguments: dict[str, Any]) -> CallOutcome | str:
        """The outcome of calling ``tool`` on the page as the audit opened it (a read-only
        tool once more when a navigation cut the call short: an earlier tool's may land
        during it; any other may have acted already), or why there is none."""
        outcome: CallOutcome | str = "it was not called"
        for _ in range(2 if tool.annotations.get("readOnlyHint") is True else 1):
            unusable = await self._at_start()
            if unusable is not None:
                return f"{tool.name} was not probed: {unusable}."
            try:
                outcome = await self.session.call(tool.name, arguments, timeout=self.timeout)
            except PageCrashed:
                self.crashed.append(tool.name)
                return f"The page crashed while the audit called {tool.name}."
            except Exception as exc:  # the page went away, the tool vanished
                return f"Calling {tool.name} failed: {type(exc).__name__}."
            if outcome.error_kind != "navigation":
                break
        return outcome

    async def _probe_call(self, tool: Tool, anonymous: aiohttp.ClientSession) -> None:
        arguments = example_arguments(tool.input_schema)
        if not _valid(tool, arguments):
            self._add(
                "probe-failed",
                tool.name,
                f"No arguments the audit could make fit {tool.name}'s schema.",
            )
            self.checks.append((tool.name, "probe-failed"))
            return
        outcome = await self._call(tool, arguments)
        codes = self._probe_codes(tool)
        if isinstance(outcome, str):
            self._unanswered(tool.name, codes, outcome)
            return
        user_view = self.session.user_view(outcome)
        if outcome.error_kind not in PAGE_RESULT_KINDS or user_view is None:
            self._no_answer(tool.name, codes, outcome)
            return
        if codes:
            self.checks.append((tool.name, "secret-in-output"))
            leaks = self._leaks(tool, user_view.model_dump(by_alias=True, mode="json"))
            if leaks:
                self._add(
                    "secret-in-output",
                    tool.name,
                    f"{tool.name} returned what looks like a secret, without sensitiveHint.",
                    "; ".join(f"{path}: {kind}" for path, kind in leaks[:3]),
                )
        for block in _references(user_view.model_dump(by_alias=True, mode="json")):
            await self._probe_reference(tool, block, anonymous)

    def _no_answer(self, tool: str, codes: Sequence[str], outcome: CallOutcome) -> None:
        """A call that ended without the tool's answer: timed out, crashed the page, cut
        short by a navigation (twice), refused by the harness. Only a refusal for the schema
        (which the lints flag) is not an error; none of them passes a check."""
        said = next((b.text for b in outcome.result.content if isinstance(b, TextContent)), "")
        evidence = said.splitlines()[0][:200] if said else ""
        if outcome.error_kind == "validation":  # the harness refused the call: a schema lint's
            message = f"The harness would not call {tool}: its arguments cannot be checked."
            self._add("probe-failed", tool, message, evidence)
            self.checks.append((tool, "probe-failed"))
            return
        if outcome.error_kind == "timeout":
            self._stale = True
            message = f"{tool} did not answer within {self.timeout:g} s."
            self._unanswered(tool, codes, message, evidence, status="TIMEOUT")
            return
        if outcome.error_kind == "crashed":
            self.crashed.append(tool)
            message = f"The page crashed while the audit called {tool}."
        elif outcome.error_kind == "navigation":
            message = f"The page navigated away while {tool} ran, so it never answered."
        else:
            message = f"The audit got no answer from {tool} ({outcome.error_kind})."
        self._unanswered(tool, codes, message, evidence)

    def _leaks(self, tool: Tool, result: dict[str, Any]) -> list[tuple[str, str]]:
        sensitive = tool.output_schema is not None and marks_sensitive(tool.output_schema)
        leaks = []
        if not sensitive:  # x-sensitive fields are redacted; the undeclared hint is linted
            leaks += [
                (f"/structuredContent{p}", k)
                for p, k in secret_leaves(result.get("structuredContent"))
            ]
        for index, block in enumerate(result.get("content", [])):
            if isinstance(block, dict) and block.get("type") == "text" and not sensitive:
                text = str(block.get("text", ""))
                try:  # a JSON text block is read as JSON, so that references stay references
                    parsed: Any = json.loads(text)
                except ValueError:
                    parsed = text
                leaks += [(f"/content/{index}/text", k) for _, k in secret_leaves(parsed)]
        return leaks

    async def _probe_reference(
        self, tool: Tool, block: dict[str, Any], anonymous: aiohttp.ClientSession
    ) -> None:
        url = urljoin(self.session.url, str(block.get("redeemUrl", "")))
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        self.checks += [(tool.name, code) for code in REDEEM_CODES]
        ttl = block.get("ttl")
        if isinstance(ttl, (int, float)) and ttl > TTL_CAP_S:
            self._add(
                "redeem-ttl-too-long",
                tool.name,
                f"A reference of {tool.name} lives {ttl:g} s.",
                f"ttl {ttl:g} s (cap {TTL_CAP_S} s)",
            )
        if origin != self.scan.origin:
            # Never send anything there: the page chose that URL.
            self._add(
                "redeem-cross-origin",
                tool.name,
                f"{tool.name}'s reference is redeemed on {origin}, not {self.scan.origin}.",
                f"redeemUrl origin {origin}",
            )
            return
        http = self.session.context.request
        try:
            # Never follow a redirect: what answers on another origin is not this site's.
            async with anonymous.get(
                url, headers={"Accept": "application/json"}, allow_redirects=False
            ) as response:
                if response.status == 200:
                    self._add(
                        "redeem-no-auth",
                        tool.name,
                        f"{tool.name}'s redemption endpoint answered 200 without cookies.",
                        "GET without cookies → 200",
                    )
        except (aiohttp.ClientError, TimeoutError) as exc:
            self._unanswered(
                tool.name,
                ("redeem-no-auth",),
                f"Redeeming {tool.name}'s reference without cookies got no answer.",
                _first_line(exc) or type(exc).__name__,
                status="TIMEOUT" if isinstance(exc, TimeoutError) else "NOTRUN",
            )
        pending = ["redeem-cross-origin", "redeem-cacheable", "redeem-reusable"]
        try:
            first = await http.get(url, timeout=HTTP_TIMEOUT_S * 1000, max_redirects=0)
            target = urljoin(url, first.headers.get("location", ""))
            elsewhere = f"{urlsplit(target).scheme}://{urlsplit(target).netloc}"
            if 300 <= first.status < 400 and elsewhere != self.scan.origin:
                self._add(
                    "redeem-cross-origin",
                    tool.name,
                    f"{tool.name}'s redemption endpoint redirects to {elsewhere}.",
                    f"GET → {first.status}, Location on {elsewhere} (not followed)",
                )
            pending.remove("redeem-cross-origin")
            if first.status == 200:
                cache = first.headers.get("cache-control", "")
                if "no-store" not in cache.lower():
                    self._add(
                        "redeem-cacheable",
                        tool.name,
                        f"{tool.name}'s redemption answer may be cached.",
                        f"Cache-Control: {cache or '(none)'}",
                    )
                pending.remove("redeem-cacheable")
                await first.dispose()
                again = await http.get(url, timeout=HTTP_TIMEOUT_S * 1000, max_redirects=0)
                if again.status == 200:
                    self._add(
                        "redeem-reusable",
                        tool.name,
                        f"{tool.name}'s reference was redeemed twice.",
                        "second GET → 200, not 410",
                    )
                await again.dispose()
            else:
                await first.dispose()
            pending = ["redeem-accepts-post"]
            posted = await http.post(url, timeout=HTTP_TIMEOUT_S * 1000, max_redirects=0)
            if 200 <= posted.status < 300:
                self._add(
                    "redeem-accepts-post",
                    tool.name,
                    f"{tool.name}'s redemption endpoint answered POST.",
                    f"POST → {posted.status}",
                )
            await posted.dispose()
        except PlaywrightError as exc:
            message = f"Redeeming {tool.name}'s reference failed."
            self._unanswered(tool.name, pending, message, _first_line(exc))

    async def _probe_json(self, tool: Tool, form: DeclaredForm) -> None:
        parts = urlsplit(form.action)
        if f"{parts.scheme}://{parts.netloc}" != self.scan.origin:
            return  # the harness never submits elsewhere; neither does the audit
        self.checks.append((tool.name, "declarative-non-json"))
        arguments = {
            k: v
            for k, v in example_arguments(tool.input_schema).items()
            if not isinstance(v, (dict, list))
        }
        values: dict[str, str | float | bool] = {k: str(v) for k, v in arguments.items()}
        post = form.method == "post"
        try:
            response = await self.session.context.request.fetch(
                form.action,
                method="POST" if post else "GET",
                form=values if post else None,
                params=None if post else values,
                headers={"Accept": "application/json"},
                timeout=HTTP_TIMEOUT_S * 1000,
                max_redirects=0,
            )
        except PlaywrightError as exc:
            message = f"Submitting {tool.name} failed."
            self._unanswered(tool.name, ("declarative-non-json",), message, _first_line(exc))
            return
        kind = response.headers.get("content-type", "").split(";")[0].strip()
        try:
            is_json = kind.endswith("json") and await response.json() is not None
        except (PlaywrightError, ValueError):
            is_json = False
        await response.dispose()
        if not is_json:
            self._add(
                "declarative-non-json",
                tool.name,
                f"{tool.name}'s action answered {kind or 'no content type'} to Accept: application/json.",
                f"{form.method.upper()} {parts.path} → HTTP {response.status}, {kind or 'no content type'}",
            )


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
