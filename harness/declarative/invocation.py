"""Seed 002's declarative tools in the catalog, and calling them (§4–§8).

:class:`SeedTools` belongs to a backend (both backends have one: Chromium has no seed
dialect, so the injected extractor runs on both). It turns each frame's ``declarations``
report into catalog tools (part ``tool-name``), submits calls, and does what §6.1 says
comes after a result.

How a call is submitted, and why from here: the harness (the user agent) sends the
request itself, through the browser context's request API (``page.context.request``),
which shares the context's cookie jar, rather than running ``fetch`` in the page:

- the page never sees the agent's arguments or the server's answer, so a page script that
  patches ``fetch``, or a service worker, cannot read or rewrite either;
- the call belongs to the user agent, not to the document: a page that navigates or
  removes the form mid-call cannot lose the result (§6.1's "freeze the invoking tool").

The request is what the page's own same-origin ``fetch`` would send: ``Accept:
application/json``, the cookies, ``Referer``, ``Origin`` on a POST, and the session's
request annotations (``WebMCP-Request-Annotations``, harness/stages/trust.py). Because the
browser's CORS and SameSite rules do not apply to a request made here, only the page's own
origin is a target: a cross-origin action, href or redirect is refused, and nothing is
sent there.

§6.1 ordering, per call: (1) the request and the answer; (2) the result is returned to
the caller (delivered); then :meth:`SeedTools.after_delivery` (3) recomputes the catalog,
which emits the tools-changed event if anything changed, and (4) applies the navigation
the answer asked for (``_meta.uiRedirect``, an HTTP ``Location``, or the URL a redirect
ended at), then reads the new document's tools. While the call runs, the frame's ``tool-name`` tools are frozen in the catalog:
the executing tool is not unmounted before its result is delivered, even if the page
removes its element.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlencode, urlsplit, urlunsplit

from mcp_types import CallToolResult
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import FormData, Page

from harness.browser.backends.base import RawResult
from harness.browser.frames import FrameKeys
from harness.browser.injection import FrameGone, PageChannel
from harness.catalog import Catalog, FrameInfo
from harness.declarative.synthesis import (
    SEED_SURFACE,
    Declaration,
    EncodingError,
    FileValue,
    Leaf,
    NotATool,
    Pair,
    Plan,
    SeedTool,
    elicit_fields,
    elicitation_schema,
    encode,
    extra_problems,
    form_default,
    merge_answer,
    parse_declarations,
    synthesize,
    value_at,
)
from harness.elicitation.base import ElicitationHandler, ElicitationRequest, Quoted, ask
from harness.elicitation.wording import TOOL_ELICIT
from harness.models import META_PREFIX, CallRequest, CatalogWarning, StageSlots, Tool, error_result
from harness.stages.trust import request_annotations_header
from harness.stages.validation import check_arguments_async
from harness.urls import http_url, origin_of, resolve

log = logging.getLogger("harness.declarative")

PART = "tool-name"
"""The catalog part seed-dialect tools are reported in."""

MAX_REDIRECTS = 20
MAX_ERROR_BODY = 500  # characters of an error answer shown to the agent
# If nobody reports the result delivered (the pipeline used without a Session), the
# catalog is unfrozen and the navigation applied this long after the answer.
UNDELIVERED_AFTER_S = 5.0


class SeedHost(Protocol):
    """What :class:`SeedTools` needs from its backend."""

    channel: PageChannel
    frames: FrameKeys

    @property
    def page(self) -> Page:
        """The page whose frames declare the tools."""
        ...

    @property
    def catalog(self) -> Catalog:
        """The session's catalog."""
        ...

    async def refresh(self) -> None:
        """Re-read every frame (the catalog recompute of §6.1)."""
        ...


@dataclass
class Navigation:
    """A navigation a call asked for, applied after its result was delivered."""

    call_id: str
    tool: str
    frame: str
    url: str
    error: str | None = None


@dataclass
class _Call:
    frame: str
    tool: str
    navigate_to: str | None = None
    work: asyncio.Future[RawResult] | None = None
    cancel_reason: str | None = None
    expiry: asyncio.TimerHandle | None = None


@dataclass
class Answer:
    """A target's final answer to a submission (after the redirects that were followed)."""

    status: int
    reason: str
    url: str
    method: str
    headers: dict[str, str]
    body: bytes
    redirected: bool = False


class _Refused(Exception):
    """The request may not be sent (or followed); the message says why."""


@dataclass
class SeedTools:
    """The ``tool-name`` tools of one page's frames (see the module docstring)."""

    host: SeedHost
    navigations: list[Navigation] = field(default_factory=list)
    _declared: dict[str, dict[str, SeedTool]] = field(default_factory=dict)
    _latest: dict[str, tuple[FrameInfo, Any, str]] = field(default_factory=dict)
    _frozen: dict[str, int] = field(default_factory=dict)
    _seen: dict[str, dict[tuple[str, int], int]] = field(default_factory=dict)
    _counter: int = 0
    _calls: dict[str, _Call] = field(default_factory=dict)
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)

    # -- the catalog -------------------------------------------------------------------
    def owns(self, tool: Tool) -> bool:
        """Whether ``tool`` is a seed-dialect tool (run by this object, not the page)."""
        return tool.source == "declarative" and tool.surface == SEED_SURFACE

    def declared(self, tool: Tool) -> SeedTool | None:
        """The synthesized tool behind a catalog tool (its plan, its ``tool-elicit`` fields)."""
        return self._declared.get(tool.frame, {}).get(tool.name)

    def report(self, info: FrameInfo, raw: Any, top_origin: str) -> None:
        """A frame's current ``declarations`` (from a message or a ``list`` answer)."""
        if self._frozen.get(info.key):
            self._latest[info.key] = (info, raw, top_origin)  # applied after delivery
            return
        self._latest.pop(info.key, None)
        tools, accepted, warnings = self._synthesize(info, raw, top_origin)
        self._declared[info.key] = accepted
        self.host.catalog.replace_frame(info, tools, warnings, part=PART)

    def forget(self, key: str) -> None:
        """A frame went away (the catalog drops it on its own)."""
        self._declared.pop(key, None)
        self._latest.pop(key, None)
        self._seen.pop(key, None)

    def _synthesize(
        self, info: FrameInfo, raw: Any, top_origin: str
    ) -> tuple[list[Tool], dict[str, SeedTool], list[CatalogWarning]]:
        declarations, problems = parse_declarations(raw)
        warnings = [
            CatalogWarning(code="malformed-tool", message=f"Frame {info.key}: ignored {p}.")
            for p in problems
        ]
        # A cross-origin frame offers only tools that name the top-level origin in
        # `exposedTo`; an HTML element has no way to, so it offers none of these (nor does
        # a frame none of whose tools are offered: an opaque origin's, harness/browser/frames).
        if not info.is_main and (not info.exposed or info.origin != top_origin):
            return [], {}, warnings
        seen = self._seen.setdefault(info.key, {})
        live = {(d.name, d.id) for d in declarations}
        for key in [k for k in seen if k not in live]:
            del seen[key]
        for d in declarations:
            if (d.name, d.id) not in seen:
                self._counter += 1
                seen[(d.name, d.id)] = self._counter
        accepted: dict[str, SeedTool] = {}
        tools: list[Tool] = []
        for d in sorted(declarations, key=lambda d: (seen[(d.name, d.id)], d.index)):
            try:
                seed = synthesize(d)
            except NotATool as exc:
                warnings.append(_malformed(d, info, str(exc)))
                continue
            except RecursionError:  # page-made structure too deep to build (a safety net)
                warnings.append(_malformed(d, info, "it nests too deeply to be read"))
                continue
            first = accepted.get(seed.name)
            if first is not None:
                warnings.append(_duplicate(first.declaration, d, info))
                continue
            accepted[seed.name] = seed
            tools.append(_tool(seed, info))
            warnings += [
                CatalogWarning(code="declarative-control", tool=seed.name, message=m)
                for m in seed.warnings
            ]
        return tools, accepted, warnings

    # -- calling -------------------------------------------------------------------------
    async def execute(
        self, tool: Tool, arguments: dict[str, Any], call_id: str, meta: dict[str, Any]
    ) -> RawResult:
        """Submit one call (arguments already validated) and read the answer (§4, §5, §8)."""
        call = _Call(frame=tool.frame, tool=tool.name)
        self._calls[call_id] = call
        self._frozen[tool.frame] = self._frozen.get(tool.frame, 0) + 1
        work = asyncio.ensure_future(self._run(tool, arguments, meta, call))
        call.work = work
        try:
            return await work
        except asyncio.CancelledError:
            if work.cancelled() and call.cancel_reason is not None:
                return RawResult(status="cancelled", error_message=call.cancel_reason)
            raise
        finally:
            call.expiry = asyncio.get_running_loop().call_later(
                UNDELIVERED_AFTER_S, self._undelivered, call_id
            )

    def cancel(self, call_id: str, reason: str) -> bool:
        """Abort a call in flight; False when it is not one of ours."""
        call = self._calls.get(call_id)
        if call is None:
            return False
        if call.work is not None and not call.work.done():
            call.cancel_reason = reason
            call.work.cancel()
        return True

    async def _run(
        self, tool: Tool, arguments: dict[str, Any], meta: dict[str, Any], call: _Call
    ) -> RawResult:
        frame = self.host.frames.frame(tool.frame)
        if frame is None:
            return RawResult(status="navigation")
        try:
            fresh = await self.host.channel.command(frame, {"op": "declarations"})
        except (FrameGone, PlaywrightError):
            return RawResult(status="navigation")
        declaration = self._find(tool, fresh)
        if declaration is None:
            return _error("NotFoundError", f"The element that declared {tool.name!r} is gone.")
        try:
            seed = synthesize(declaration)
        except NotATool as exc:
            return _error("NotFoundError", f"{declaration.locator()} is no longer a tool: {exc}")
        if seed.input_schema != tool.input_schema:
            return _error(
                "InvalidStateError",
                f"The form of {tool.name!r} changed since the tools were listed; nothing was "
                "sent. List the tools again and call it with the new schema.",
            )
        try:
            pairs = encode(seed.plan, arguments)
            # The document's own origin (a sandboxed one's is opaque: same-origin with none).
            origin = await self.host.frames.origin(frame)
            answer = await self._send(seed.plan, pairs, frame.url, origin, meta)
        except EncodingError as exc:
            return _error("EncodingError", f"{exc}; nothing was sent.")
        except _Refused as exc:
            return _error("SecurityError", str(exc))
        except PlaywrightError as exc:
            return _error("NetworkError", f"{seed.plan.method} {seed.plan.url} failed: {exc}")
        result, navigate_to = interpret(answer)
        call.navigate_to = navigate_to
        return result

    def _find(self, tool: Tool, fresh: Any) -> Declaration | None:
        listed = fresh.get("declarations") if isinstance(fresh, dict) else None
        declarations, _ = parse_declarations(listed)
        known = self.declared(tool)
        same = [d for d in declarations if d.name == tool.name]
        if known is not None:
            for d in same:
                if d.id == known.declaration.id:
                    return d
        return same[0] if same else None

    async def _send(
        self, plan: Plan, pairs: list[Pair], page_url: str, page_origin: str, meta: dict[str, Any]
    ) -> Answer:
        # What is checked is what is sent: the WHATWG serialization (harness.urls).
        url = http_url(plan.url) or plan.url
        method = plan.method
        if origin_of(url) != page_origin:
            raise _Refused(
                f"The tool submits to {origin_of(url)}, another origin than the page's "
                f"({page_origin}); the harness sends seed-dialect submissions to the page's "
                "own origin only, so nothing was sent."
            )
        body: dict[str, Any] = {}
        if method == "GET":
            if plan.kind != "a":  # HTML: a GET form's data replaces the action's query
                url = _with_query(url, pairs)
        elif plan.encoding == "multipart" or any(isinstance(v, FileValue) for _, v in pairs):
            body["multipart"] = _form_data(pairs)
        else:
            body["form"] = _form_data(pairs)
        headers = {"Accept": "application/json", "Referer": page_url.split("#", 1)[0]}
        if method == "POST":
            headers["Origin"] = page_origin
        annotations = (meta.get("_meta") or {}).get("annotations")
        if isinstance(annotations, dict):
            headers.update(request_annotations_header(annotations))
        request = self.host.page.context.request
        redirected = False
        for _ in range(MAX_REDIRECTS + 1):
            response = await request.fetch(
                url,
                method=method,
                headers=headers,
                max_redirects=0,
                fail_on_status_code=False,
                timeout=0,  # the pipeline's call timeout governs, by cancelling
                **body,
            )
            try:
                location = response.headers.get("location")
                status = response.status
                if status in (301, 302, 303, 307, 308) and location:
                    target = resolve(url, location) or location
                    if origin_of(target) != page_origin:
                        raise _Refused(
                            f"{method} {url} answered HTTP {status}, a redirect to another "
                            f"origin ({origin_of(target)}); it was not followed."
                        )
                    if status in (301, 302, 303) and method == "POST":
                        method, body = "GET", {}
                        headers.pop("Origin", None)
                    url, redirected = target, True
                    continue
                return Answer(
                    status=status,
                    reason=response.status_text,
                    url=url,
                    method=method,
                    headers=dict(response.headers),
                    body=await response.body(),
                    redirected=redirected,
                )
            finally:
                await response.dispose()
        raise _Refused(f"more than {MAX_REDIRECTS} redirects from {plan.url}")

    # -- after the result (§6.1) -----------------------------------------------------------
    def after_delivery(self, call_id: str) -> Coroutine[Any, Any, None] | None:
        """The work that follows a delivered result, or None when the call was not ours."""
        call = self._calls.pop(call_id, None)
        if call is None:
            return None
        if call.expiry is not None:
            call.expiry.cancel()
        return self._follow_up(call_id, call)

    def _undelivered(self, call_id: str) -> None:
        work = self.after_delivery(call_id)
        if work is not None:
            task = asyncio.ensure_future(work)
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _follow_up(self, call_id: str, call: _Call) -> None:
        try:
            self._unfreeze(call.frame)
            await self.host.refresh()  # (3) recompute: the change event, if any, fires here
            if call.navigate_to is not None:  # (4) then the navigation
                await self._navigate(call_id, call)
        except Exception as exc:  # the result is delivered; nothing may fail the caller now
            log.warning("after the result of %s: %s", call.tool, exc)

    def _unfreeze(self, key: str) -> None:
        left = self._frozen.get(key, 0) - 1
        if left > 0:
            self._frozen[key] = left
            return
        self._frozen.pop(key, None)
        latest = self._latest.pop(key, None)
        if latest is not None:
            self.report(*latest)

    async def _navigate(self, call_id: str, call: _Call) -> None:
        assert call.navigate_to is not None
        record = Navigation(call_id=call_id, tool=call.tool, frame=call.frame, url=call.navigate_to)
        self.navigations.append(record)
        frame = self.host.frames.frame(call.frame)
        if frame is None:
            record.error = "the frame is gone"
            return
        try:
            await frame.goto(call.navigate_to)
        except PlaywrightError as exc:
            record.error = str(exc).splitlines()[0]
            return
        await self.host.refresh()  # the new document's tools, before settled() returns


# -- answers -------------------------------------------------------------------------------


def _mime(headers: dict[str, str]) -> str:
    return headers.get("content-type", "").split(";", 1)[0].strip().lower()


def _is_json(mime: str) -> bool:
    return mime == "application/json" or mime.endswith("+json")


def interpret(answer: Answer) -> tuple[RawResult, str | None]:
    """The result of a submission's answer (§5, §8, §8.2), and where to navigate after it."""
    mime = _mime(answer.headers)
    where = f"{answer.method} {answer.url}"
    shown = mime or "no content type"
    if answer.status >= 400:
        text = answer.body.decode("utf-8", errors="replace").strip()
        excerpt = (
            f": {text[:MAX_ERROR_BODY]}"
            if text and (_is_json(mime) or mime == "text/plain")
            else ""
        )
        message = f"HTTP {answer.status} {answer.reason} from {where} ({shown}){excerpt}"
        return _error("HTTPError", message), None
    if not _is_json(mime):
        return _error(
            "NotJSON",
            f"HTTP {answer.status} {answer.reason} from {where} answered {shown}, not JSON; "
            "a declarative tool needs a JSON answer to Accept: application/json.",
        ), None
    try:
        text = answer.body.decode("utf-8")
        value = json.loads(text)
    except (UnicodeDecodeError, ValueError) as exc:
        return _error("NotJSON", f"HTTP {answer.status} from {where}: invalid JSON ({exc})"), None
    return RawResult(status="ok", json_text=text), _navigation_target(answer, value)


def _navigation_target(answer: Answer, value: Any) -> str | None:
    """§6: ``_meta.uiRedirect``, else an HTTP ``Location``, else where redirects ended."""
    if isinstance(value, dict) and value.get("isError") is True:
        return None
    meta = value.get("_meta") if isinstance(value, dict) else None
    target: str | None = None
    if isinstance(meta, dict) and isinstance(meta.get("uiRedirect"), str):
        target = resolve(answer.url, meta["uiRedirect"])
    elif answer.headers.get("location"):
        target = resolve(answer.url, answer.headers["location"])
    elif answer.redirected:
        target = answer.url
    if target is None or urlsplit(target).scheme not in ("http", "https"):
        return None
    return target


def _error(name: str, message: str) -> RawResult:
    return RawResult(status="error", error_name=name, error_message=message)


def _with_query(url: str, pairs: list[Pair]) -> str:
    parts = urlsplit(url)
    query = urlencode([(k, v.name if isinstance(v, FileValue) else v) for k, v in pairs])
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


def _form_data(pairs: list[Pair]) -> FormData:
    data = FormData()
    for name, value in pairs:
        if isinstance(value, FileValue):
            data.append(name, {"name": value.name, "mimeType": value.mime, "buffer": value.data})
        else:
            data.append(name, value)
    return data


def _tool(seed: SeedTool, info: FrameInfo) -> Tool:
    return Tool(
        name=seed.name,
        title=seed.title,
        description=seed.description,
        inputSchema=seed.input_schema,
        annotations=dict(seed.annotations),
        source="declarative",
        origin=info.origin,
        frame=info.key,
        frameUrl=info.url,
        surface=SEED_SURFACE,
    )


def _malformed(declaration: Declaration, info: FrameInfo, why: str) -> CatalogWarning:
    return CatalogWarning(
        code="malformed-tool",
        tool=declaration.name or None,
        message=f"Ignored {declaration.locator()} in frame {info.key} ({info.url}): {why}.",
    )


def _duplicate(first: Declaration, later: Declaration, info: FrameInfo) -> CatalogWarning:
    return CatalogWarning(
        code="duplicate-name",
        tool=later.name,
        message=(
            f"Tool {later.name!r} is defined twice in frame {info.key} ({info.url}): "
            f"{first.locator()} and {later.locator()}. The first definition is kept; the "
            "second is refused. Give one of them another name."
        ),
    )


# -- the pipeline stage: HTML's remaining constraints, then tool-elicit (§8.1) -------------


class SeedStage:
    """Before a seed-dialect call runs: the constraints JSON Schema cannot check (date and
    time ``min``/``max``, base64 files), then the ``tool-elicit`` fields through
    :func:`~harness.elicitation.ask`. Anything but ``accept`` stops the call with
    ``isError``, and nothing is submitted.
    """

    def __init__(
        self, tools: Callable[[], SeedTools | None], handler: Callable[[], ElicitationHandler]
    ) -> None:
        self.tools = tools
        self.handler = handler

    def works_on(self, tool: Tool) -> bool:
        """Only the seed dialect's own tools (declarative ones) have anything to check."""
        return tool.source == "declarative"

    async def __call__(self, request: CallRequest) -> CallToolResult | None:
        """The stage: :meth:`before_call`."""
        return await self.before_call(request)

    async def before_call(self, request: CallRequest) -> CallToolResult | None:
        """Stop the call (with the reason) or let it go on, arguments merged with the user's."""
        seeds = self.tools()
        tool: Tool = request.tool
        seed = seeds.declared(tool) if seeds is not None and seeds.owns(tool) else None
        if seed is None:
            return None
        problems = extra_problems(tool.input_schema, request.arguments)
        if problems:
            lines = [f"Invalid arguments for tool {tool.name!r}; the tool was not run."]
            lines += [f"- {path or '(the arguments object)'}: {why}" for path, why in problems]
            detail = [{"path": p, "message": m, "schema_path": ""} for p, m in problems]
            return error_result("\n".join(lines), {META_PREFIX + "validation": detail})
        if not elicit_fields(seed.plan):
            return None
        schema, unshowable = elicitation_schema(seed.plan)
        if unshowable:
            return error_result(
                f"Tool {tool.name!r} asks the user to confirm {', '.join(unshowable)}, which "
                "cannot be shown in an elicitation form; nothing was submitted."
            )
        prefilled = {}
        for path, node in elicit_fields(seed.plan):
            present, value = value_at(request.arguments, path)
            if not present and isinstance(node, Leaf):
                present, value = form_default(node)  # the form's own default (§8.1.1)
            if present:
                prefilled[".".join(path)] = value
        asked = ElicitationRequest(
            source="tool-elicit",
            message=TOOL_ELICIT,
            quoted=[Quoted(label="the form's title", text=tool.title)] if tool.title else [],
            origin=tool.origin,
            tool=tool.name,
            requested_schema=schema,
            prefilled=prefilled,
        )
        answer = await ask(self.handler(), asked)
        if answer.action != "accept":
            reason = f" ({answer.reason})" if answer.reason else ""
            return error_result(
                f"The user did not confirm the form of {tool.name!r}: {answer.action}{reason}. "
                "Nothing was submitted."
            )
        merged = merge_answer(request.arguments, seed.plan, answer.content)
        refused = await check_arguments_async(tool, merged)
        if refused is not None:
            return refused
        problems = extra_problems(tool.input_schema, merged)  # HTML's rules bind the user too
        if problems:
            lines = [f"The user's answer for {tool.name!r} breaks the form's rules; nothing sent."]
            lines += [f"- {path or '(the arguments object)'}: {why}" for path, why in problems]
            detail = [{"path": p, "message": m, "schema_path": ""} for p, m in problems]
            return error_result("\n".join(lines), {META_PREFIX + "validation": detail})
        request.arguments = merged
        request.notes.append(f"tool-elicit: the user confirmed {', '.join(schema['properties'])}")
        return None


def seed_tools_of(backend: object) -> SeedTools | None:
    """A backend's :class:`SeedTools` (both bundled backends have one)."""
    seeds = getattr(backend, "seed", None)
    return seeds if isinstance(seeds, SeedTools) else None


def install_seed_stage(
    pipeline: StageSlots,
    seeds: Callable[[], SeedTools | None],
    handler: Callable[[], ElicitationHandler],
) -> None:
    """Add :class:`SeedStage` to a session's pipeline (after trust and policy)."""
    pipeline.before.append(SeedStage(seeds, handler))
