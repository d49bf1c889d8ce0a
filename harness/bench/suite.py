"""The in-process items: call overhead, discovery, declarative calls, throughput, redaction.

Each item opens what it measures, runs its variants interleaved with their anchor
(:func:`~harness.bench.timing.interleaved`), and returns an :class:`~harness.bench.report.Item`.
The two browsers (polyfill and native) are launched once, concurrently, and shared.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass

from mcp_types import CallToolResult, TextContent
from playwright.async_api import Page

from harness.bench.pages import BenchSite
from harness.bench.report import Item, Target
from harness.bench.timing import Measured, Sample, interleaved
from harness.catalog import Settle
from harness.harness import Harness
from harness.models import CallRequest, Tool
from harness.session import Session
from harness.stages.redaction import Redactor
from harness.stages.vault import Vault

NO_SETTLE = Settle(quiet=0)
"""Readiness off: the figures time the harness's own work, not a quiet window."""

ECHO_ARGS = {"text": "hello"}
FLOOR_JS = "(args) => window.echoImpl(args)"
# Native executeTool with the tool looked up once per page, as a caller in the page would.
EXECUTE_JS = """async ([name, args]) => {
  const mc = document.modelContext;
  window.__benchTools ??= {};
  window.__benchTools[name] ??= (await mc.getTools()).find((t) => t.name === name);
  return await mc.executeTool(window.__benchTools[name], args);
}"""
GET_TOOLS_JS = "async () => (await document.modelContext.getTools()).length"
# A call's target, as a multiple of its floor: native's runs Chromium's own executeTool
# (which alone costs about a third of the floor more, the in-page anchor shows).
CALL_TARGETS = {"polyfill": 1.2, "native": 1.5}


@dataclass
class Scale:
    """How much the run measures: the quick run (CI) or the full one."""

    rounds: int
    batch: int
    catalog_tools: int
    catalog_forms: int
    discovery_rounds: int
    pages: tuple[int, ...]
    calls_per_page: int
    redaction_fields: int
    redaction_bytes: int
    redaction_rounds: int

    @classmethod
    def of(cls, quick: bool) -> Scale:
        """The quick scale (a smoke run: the command works) or the full one."""
        if quick:
            return cls(3, 3, 50, 10, 2, (1, 2), 5, 1_000, 1_000_000, 2)
        return cls(30, 10, 500, 100, 10, (1, 2, 4, 8, 16), 20, 10_000, 10_000_000, 7)


class Browsers:
    """The polyfill and the native harness, launched concurrently, and the bench site."""

    def __init__(self, site: BenchSite) -> None:
        self.site = site
        self.polyfill = Harness(backend="polyfill", settle=NO_SETTLE)
        self.native = Harness(backend="native", settle=NO_SETTLE)

    async def __aenter__(self) -> Browsers:
        await asyncio.gather(self.polyfill.start(), self.native.start())
        return self

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.gather(self.polyfill.close(), self.native.close())

    async def plain_page(self, url: str) -> Page:
        """A page of the native browser without the harness: the browser's own WebMCP."""
        context = await self.native.browser.new_context()
        page = await context.new_page()
        await page.goto(url)
        return page


async def _close(plain: Page, *sessions: Session) -> None:
    """Close an item's plain page (with its context) and its sessions."""
    await plain.context.close()
    for session in sessions:
        await session.close()


async def call_overhead(browsers: Browsers, scale: Scale) -> Item:
    """Item 1: one call of a trivial tool, the full pipeline against the browser's own call."""
    url = browsers.site.url("echo.html")
    poly = await browsers.polyfill.open(url)
    native = await browsers.native.open(url)
    plain = await browsers.plain_page(url)

    async def session_call(session: Session) -> None:
        outcome = await session.call("echo", ECHO_ARGS)
        if outcome.result.is_error:
            raise RuntimeError(f"the bench tool failed: {outcome.result}")

    variants = {
        "floor: page.evaluate (polyfill browser)": lambda: poly.page.evaluate(FLOOR_JS, ECHO_ARGS),
        "floor: page.evaluate (native browser)": lambda: plain.evaluate(FLOOR_JS, ECHO_ARGS),
        "Session.call, polyfill": lambda: session_call(poly),
        "Session.call, native": lambda: session_call(native),
        "Playwright page.webmcp.call_tool (native)": lambda: plain.webmcp.call_tool(
            "echo", ECHO_ARGS
        ),
        "native executeTool in the page": lambda: plain.evaluate(EXECUTE_JS, ["echo", ECHO_ARGS]),
    }
    samples = await interleaved(variants, rounds=scale.rounds, batch=scale.batch)
    item = Item(
        key="call",
        title="1. Call overhead: a trivial tool",
        anchor="floor: page.evaluate (polyfill browser)",
        anchor_is="a bare `page.evaluate` of the tool's own function (the floor); "
        "Playwright's `page.webmcp.call_tool` and the page's own `executeTool` on native "
        "Chromium are the peers. `Session.call` runs the whole pipeline with the default "
        "policy pack (validation, trust, policy, redaction, framing, history).",
    )
    for name, sample in samples.items():
        targets = []
        if name.startswith("Session.call"):
            backend = name.rpartition(", ")[2]
            floor = f"floor: page.evaluate ({backend} browser)"
            most = CALL_TARGETS[backend]
            targets = [
                Target(text=f"≤ {most:g}× {floor}", against=floor, max_ratio=most),
                Target(
                    text="below Playwright's call_tool",
                    against="Playwright page.webmcp.call_tool (native)",
                    max_ratio=1.0,
                ),
            ]
        item.add(name, sample, targets=targets)
    item.note = native_call_bound(item)
    await _close(plain, poly, native)
    return item.finish()


def native_call_bound(item: Item) -> str:
    """What native's target leaves the harness, from this run's medians: Chromium's own
    ``executeTool`` against the native floor, plus what the same pipeline costs on the
    polyfill over its floor (the stages and one page round trip)."""
    names = (
        "floor: page.evaluate (native browser)",
        "native executeTool in the page",
        "floor: page.evaluate (polyfill browser)",
        "Session.call, polyfill",
    )
    figures = [item.figure(name) for name in names]
    if any(f is None or f.sample.median <= 0 for f in figures):
        return ""
    floor, execute, poly_floor, poly_call = (f.sample.median for f in figures if f is not None)
    pipeline = max(0.0, poly_call - poly_floor)
    bound = (execute + pipeline) / floor
    most = CALL_TARGETS["native"]
    verdict = (
        f"above the {most:g}× target: a call through Chromium's `executeTool` with a "
        "pipeline as lean as on the polyfill would still miss it"
        if bound > most
        else f"within the {most:g}× target"
    )
    return (
        f"Native's bound in this run: Chromium's `executeTool` alone is "
        f"{execute / floor:.2f}× the native floor; with the pipeline's cost on the polyfill "
        f"added (Session.call minus its floor, {pipeline:.2f} ms: validation, trust, policy, "
        f"redaction, framing and one page round trip), {bound:.2f}× — {verdict}."
    )


async def discovery(browsers: Browsers, scale: Scale) -> Item:
    """Item 2: navigation to a full catalog until the harness has every tool."""
    tools, forms = scale.catalog_tools, scale.catalog_forms
    url = browsers.site.url(f"catalog.html?tools={tools}&forms={forms}")
    poly = await browsers.polyfill.new_session()
    native = await browsers.native.new_session()
    plain = await browsers.plain_page("about:blank")
    counts: dict[str, int] = {}

    async def harness_discovery(name: str, session: Session) -> None:
        await session.open(url, settle=False)
        counts[name] = len(await session.tools(settle=False))

    async def native_get_tools() -> None:
        await plain.goto(url)
        counts["anchor"] = int(await plain.evaluate(GET_TOOLS_JS))

    variants = {
        "native getTools() after load": native_get_tools,
        "Session.open + tools, polyfill": lambda: harness_discovery("polyfill", poly),
        "Session.open + tools, native": lambda: harness_discovery("native", native),
    }
    samples = await interleaved(variants, rounds=scale.discovery_rounds, warmup=1)
    item = Item(
        key="discovery",
        title=f"2. Discovery: {tools} script tools + {forms} forms",
        anchor="native getTools() after load",
        anchor_is="native Chromium: `page.goto` (to `load`), then `getTools()` in the page. "
        "The harness variants navigate (to `load`) and read the whole catalog into Python "
        "(readiness wait off, so the figure is the harness's own work).",
        note="Tools found: "
        + ", ".join(f"{name} {count}" for name, count in sorted(counts.items()))
        + f" (expected {tools + forms}).",
    )
    for name, sample in samples.items():
        targets = []
        if name.startswith("Session"):
            targets = [Target(text="≤ 1.3× native getTools()", against=item.anchor, max_ratio=1.3)]
        item.add(name, sample, targets=targets)
    await _close(plain, poly, native)
    return item.finish()


async def declarative(browsers: Browsers, scale: Scale) -> Item:
    """Item 3: a spec-dialect form on both backends; a seed-dialect form (fetch-first)."""
    url = browsers.site.url("declarative.html")
    poly = await browsers.polyfill.open(url)
    native = await browsers.native.open(url)
    plain = await browsers.plain_page(url)
    submit = browsers.site.url("submit")

    async def session_call(session: Session, name: str) -> None:
        outcome = await session.call(name, {"q": "hello"})
        if outcome.result.is_error:
            raise RuntimeError(f"the bench form {name} failed: {outcome.result}")

    async def bare_post() -> None:
        response = await plain.request.post(
            submit, form={"q": "hello"}, headers={"Accept": "application/json"}
        )
        await response.json()

    variants = {
        "native executeTool of the form in the page": lambda: plain.evaluate(
            EXECUTE_JS, ["spec_form", {"q": "hello"}]
        ),
        "spec form: Session.call, polyfill": lambda: session_call(poly, "spec_form"),
        "spec form: Session.call, native": lambda: session_call(native, "spec_form"),
        "HTTP floor: a bare POST of the form": bare_post,
        "seed form (fetch-first): Session.call, polyfill": lambda: session_call(poly, "seed_form"),
        "seed form (fetch-first): Session.call, native": lambda: session_call(native, "seed_form"),
    }
    samples = await interleaved(variants, rounds=scale.rounds, batch=max(1, scale.batch // 2))
    item = Item(
        key="declarative",
        title="3. Declarative calls",
        anchor="native executeTool of the form in the page",
        anchor_is="native Chromium's `executeTool` of the spec-dialect form, in the page; for "
        "the seed dialect, the HTTP floor is a bare POST of the same form from Python.",
    )
    for name, sample in samples.items():
        item.add(name, sample)
    await _close(plain, poly, native)
    item.finish()
    http_floor = item.figure("HTTP floor: a bare POST of the form")
    for figure in item.figures:  # the seed dialect's ratio is to its own floor
        if figure.name.startswith("seed") and http_floor is not None:
            figure.ratio = figure.sample.median / http_floor.sample.median
            figure.note = "ratio to the HTTP floor"
    return item


async def throughput(browsers: Browsers, scale: Scale) -> Item:
    """Item 5: calls per second with 1, 2, 4, 8, 16 pages calling at once (polyfill)."""
    url = browsers.site.url("echo.html")
    sessions: list[Session] = []
    item = Item(
        key="throughput",
        title="5. Throughput: pages calling at once (polyfill)",
        anchor_is="for each page count, bare `page.evaluate` calls of the tool's function on "
        "the same pages (the floor); the ratio is the harness's share of the floor's rate.",
    )
    k = scale.calls_per_page
    for count in scale.pages:
        while len(sessions) < count:
            sessions.append(await browsers.polyfill.open(url))
        pages = sessions[:count]

        async def harness_calls(pages: list[Session] = pages) -> None:
            async def one(session: Session) -> None:
                for _ in range(k):
                    await session.call("echo", ECHO_ARGS)

            await asyncio.gather(*(one(s) for s in pages))

        async def floor_calls(pages: list[Session] = pages) -> None:
            async def one(session: Session) -> None:
                for _ in range(k):
                    await session.page.evaluate(FLOOR_JS, ECHO_ARGS)

            await asyncio.gather(*(one(s) for s in pages))

        samples = await interleaved(
            {"harness": harness_calls, "floor": floor_calls},
            rounds=max(3, scale.rounds // 3),
            warmup=1,
        )
        rates = {name: _rate(sample, count * k) for name, sample in samples.items()}
        floor = item.add(
            f"{count} page(s): page.evaluate floor", rates["floor"], higher_is_better=True
        )
        harness = item.add(
            f"{count} page(s): Session.call", rates["harness"], higher_is_better=True
        )
        if floor.sample.median > 0:
            harness.ratio = harness.sample.median / floor.sample.median
    for session in sessions:
        await session.close()
    return item


def _rate(sample: Sample, calls: int) -> Sample:
    """A round's time (ms) as calls per second (the slowest round is the minimum rate)."""
    return Sample(
        median=calls * 1000 / sample.median,
        min=calls * 1000 / sample.max,
        max=calls * 1000 / sample.min,
        n=sample.n,
        unit="calls/s",
    )


def sensitive_result(fields: int, size: int) -> tuple[Tool, CallToolResult]:
    """A tool whose outputSchema marks a field sensitive, and a ``size``-byte result with
    ``fields`` sensitive values."""
    tool = Tool.model_validate(
        {
            "name": "export",
            "description": "Exports the accounts.",
            "origin": "http://127.0.0.1",
            "frame": "main",
            "outputSchema": {
                "type": "object",
                "properties": {
                    "accounts": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "id": {"type": "integer"},
                                "token": {"type": "string", "x-sensitive": True},
                                "notes": {"type": "string"},
                            },
                        },
                    }
                },
            },
        }
    )
    padding = "n" * max(0, size // fields - 60)
    accounts = [{"id": i, "token": f"HXBENCH-{i:08d}", "notes": padding} for i in range(fields)]
    result = CallToolResult(
        content=[TextContent(type="text", text=f"{fields} accounts exported.")],
        structuredContent={"accounts": accounts},
    )
    return tool, result


async def redaction(scale: Scale) -> Item:
    """Item 6: the redaction stage on a large result with many sensitive fields."""
    tool, result = sensitive_result(scale.redaction_fields, scale.redaction_bytes)
    size = len(json.dumps(result.model_dump(mode="json")))
    withheld: list[int] = []

    async def redact_once() -> Measured:
        redactor = Redactor(Vault())
        request = CallRequest(tool=tool, arguments={}, timeout=30.0)
        await redactor.before_execute(request)
        started = time.perf_counter()
        agent_view = await redactor(request, result)
        took = Measured((time.perf_counter() - started) * 1000)
        # The check that nothing sensitive is left is not part of the figure.
        withheld.append(json.dumps(agent_view.model_dump(mode="json")).count("HXBENCH"))
        return took

    async def copy_once() -> None:
        json.loads(json.dumps(result.model_dump(mode="json")))

    samples = await interleaved(
        {"a JSON round trip of the result": copy_once, "Redactor (the stage)": redact_once},
        rounds=scale.redaction_rounds,
        warmup=1,
    )
    item = Item(
        key="redaction",
        title=f"6. Redaction: a {size / 1e6:.1f} MB result, {scale.redaction_fields:,} "
        "sensitive fields",
        anchor="a JSON round trip of the result",
        anchor_is="serialising and parsing the same result once (touching every byte).",
        note=f"Sensitive values left in the agent view: {max(withheld, default=0)} (must be 0).",
    )
    item.add("a JSON round trip of the result", samples["a JSON round trip of the result"])
    item.add(
        "Redactor (the stage)",
        samples["Redactor (the stage)"],
        targets=[Target(text="≤ 0.5 s", max_value=500.0)],
    )
    return item.finish()
