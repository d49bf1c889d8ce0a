"""The site audit's probes: calls of what may be called, with arguments made from each
tool's schema, and checks of what came back and where its references lead
(:class:`Prober`; :mod:`harness.conformance.audit` runs it on each page it scanned).

Only tools the page says are read-only are called, unless the audit allows writes; each
is called on the page as the audit opened it; a probe that got no answer is a
``probe-failed`` error and leaves its checks not run — never passed. Requests go to the
page's own origin only and never follow a redirect; what they read is never kept, only where
and what it looked like.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any
from urllib.parse import urljoin, urlsplit

import aiohttp
from mcp_types import TextContent
from playwright.async_api import Error as PlaywrightError

from harness.conformance.findings import (
    DeclaredForm,
    Finding,
    PageScan,
    finding,
    secret_leaves,
)
from harness.conformance.results import (
    SubtestStatus,
)
from harness.errors import HarnessError, PageCrashed
from harness.models import CallOutcome, Tool
from harness.schemas.patterns import (
    HTML,
    JSON_SCHEMA,
    PatternDialect,
    PatternTimeout,
    dialect_of,
    search,
)
from harness.session import Session
from harness.stages.framing import PAGE_RESULT_KINDS
from harness.stages.redaction import marks_sensitive
from harness.stages.validation import validate_arguments

PROBE_TIMEOUT_S = 10.0
HTTP_TIMEOUT_S = 10.0
TTL_CAP_S = 3600


def first_line(exc: BaseException) -> str:
    """The first line of what ``exc`` says, at most 200 characters (evidence, not a dump)."""
    return str(exc).splitlines()[0][:200] if str(exc) else ""


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


# -- arguments a probe can send ---------------------------------------------------------------


MAX_EXAMPLE_DEPTH = 32
"""How deep an example value follows a page's (untrusted) schema."""
MAX_EXAMPLE_LENGTH = 10_000
"""The longest example string made for a ``minLength`` (a page can ask for gigabytes)."""


def example_value(schema: Any, depth: int = 0, dialect: PatternDialect = JSON_SCHEMA) -> Any:
    """A plausible value for ``schema`` (defaults, examples and enums first), its patterns
    read as ``dialect`` reads them (a form's as HTML does). The schema is the page's: any
    keyword may hold any JSON value, and none may make this fail or hang."""
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
        return example_arguments(schema, depth + 1, dialect)
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
    length = schema.get("minLength", 0)
    minimum = min(length, MAX_EXAMPLE_LENGTH) if isinstance(length, int) else 0
    first = formats.get(str(schema.get("format")), "audit")
    pattern = schema.get("pattern")
    for text in (first, *PATTERN_CANDIDATES) if isinstance(pattern, str) else (first,):
        padded = (text * (minimum // len(text) + 1))[: max(minimum, len(text))]
        if not isinstance(pattern, str) or _matches_whole(pattern, padded, dialect):
            return padded
    return (first * (minimum // len(first) + 1))[: max(minimum, len(first))]


# Strings a probe tries, in order, for a parameter with a ``pattern`` "audit" does not match:
# the shapes patterns most often ask for (codes, numbers, identifiers, addresses, dates).
PATTERN_CANDIDATES = (
    "a", "A", "Audit", "AUDIT", "0", "1", "12345", "a1", "A1", "AB12", "audit-1", "audit_1",
    "audit@example.com", "https://example.com/", "2025-01-01", "10:00", "+15550100",
    "AB-1234", "abc", "ABC",
)  # fmt: skip


def _matches_whole(pattern: str, text: str, dialect: PatternDialect) -> bool:
    """Whether the ECMAScript ``pattern`` matches all of ``text`` as ``dialect`` reads it
    (a form's as HTML compiles it; a schema's anchored here, so the value fits either)."""
    try:
        if dialect is HTML:
            return search(pattern, text, dialect=HTML) is True
        return search(f"^(?:{pattern})$", text) is True
    except PatternTimeout:
        return False


def example_arguments(
    schema: dict[str, Any], depth: int = 0, dialect: PatternDialect = JSON_SCHEMA
) -> dict[str, Any]:
    """Arguments for a tool's required parameters (``required`` of any other shape than a
    list of names asks for none: the schema lints flag it)."""
    found = schema.get("properties")
    properties: dict[str, Any] = found if isinstance(found, dict) else {}
    listed = schema.get("required")
    required = [n for n in listed if isinstance(n, str)] if isinstance(listed, list) else []
    return {name: example_value(properties.get(name, {}), depth, dialect) for name in required}


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
        arguments = example_arguments(tool.input_schema, dialect=dialect_of(tool))
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
                first_line(exc) or type(exc).__name__,
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
            self._unanswered(tool.name, pending, message, first_line(exc))

    async def _probe_json(self, tool: Tool, form: DeclaredForm) -> None:
        parts = urlsplit(form.action)
        if f"{parts.scheme}://{parts.netloc}" != self.scan.origin:
            return  # the harness never submits elsewhere; neither does the audit
        self.checks.append((tool.name, "declarative-non-json"))
        arguments = {
            k: v
            for k, v in example_arguments(tool.input_schema, dialect=dialect_of(tool)).items()
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
            self._unanswered(tool.name, ("declarative-non-json",), message, first_line(exc))
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
