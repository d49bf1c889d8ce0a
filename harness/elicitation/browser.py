"""The browser elicitation handler: a form in a tab of the harness's own.

Each request opens a new tab, in a browser context separate from every site's,
on a loopback origin that belongs to the harness (a small aiohttp server this
handler starts), never inside the site's page. The fields are an HTML form with
the original constraints (``required``, ``minlength``/``maxlength``,
``pattern``, ``min``/``max``, input types, choices), so the browser's own
constraint validation keeps an invalid answer from being sent. The server checks
the answer again by the same rules (:func:`harness.elicitation.form.field_problem`)
and shows the form again with the problems if it does not fit.

Headed, a person answers it. Headless, tests drive it with Playwright: every tab
the handler opens is put on :attr:`BrowserHandler.opened`.

The page has no script at all; its Content-Security-Policy forbids any. Each
question lives at an unguessable path, and answers are only taken from the
handler's own origin.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import logging
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from multidict import MultiDictProxy
from playwright.async_api import Browser, BrowserContext, Page
from playwright.async_api import Error as PlaywrightError

from harness.elicitation.base import SOURCE_TITLES, Action, ElicitationRequest, ElicitationResult
from harness.elicitation.form import (
    describe_field,
    enum_choices,
    field_kind,
    field_problem,
    field_title,
    is_sensitive,
    item_choices,
    value_from_text,
)
from harness.elicitation.wording import one_line, question_lines, quote

log = logging.getLogger("harness.elicitation")

BrowserSource = Browser | BrowserContext | Callable[[], Browser | BrowserContext]
"""Where tabs open: a browser (the handler makes its own context in it), a context,
or a function returning either (e.g. ``lambda: harness.browser``)."""

_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
    "Cache-Control": "no-store",
    "Referrer-Policy": "same-origin",  # "no-referrer" would make the form's Origin "null"
    "X-Content-Type-Options": "nosniff",
}
OPENED_KEPT = 16  # tabs kept on `opened` for whoever drives them
CLOSE_WAIT_S = 5.0

_INPUT_TYPES = {"email": "email", "uri": "url", "date": "date"}
_STYLE = """
body { font: 16px/1.45 system-ui, sans-serif; margin: 0; background: #f3f4f6; color: #111827; }
main { max-width: 40rem; margin: 2rem auto; background: #fff; padding: 1.5rem 2rem;
       border-radius: 10px; box-shadow: 0 1px 4px #0002; }
.who { font-size: .85rem; color: #4b5563; margin: 0; }
h1 { font-size: 1.3rem; margin: .3rem 0 1rem; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; margin: 0 0 1rem; }
dt { font-weight: 600; } dd { margin: 0; word-break: break-all; }
.message { white-space: pre-wrap; border-left: 4px solid #2563eb; padding: .3rem .8rem;
           background: #eff6ff; }
code.page { background: #fef3c7; white-space: pre;
         overflow-x: auto; } small { color: #6b7280; }
.field { margin: 1rem 0; } label, legend { font-weight: 600; display: block; }
.desc { margin: .1rem 0 .3rem; color: #374151; } .hint { margin: .2rem 0; font-size: .85rem;
        color: #6b7280; }
input[type=text], input[type=email], input[type=url], input[type=date], input[type=number],
input[type=password], select, textarea { width: 100%; box-sizing: border-box; font: inherit;
        padding: .4rem; }
input:invalid, select:invalid { border-color: #dc2626; }
.error { color: #b91c1c; font-weight: 600; margin: .2rem 0; }
.actions { display: flex; gap: .6rem; margin-top: 1.5rem; }
button { font: inherit; padding: .45rem 1.2rem; border-radius: 6px; border: 1px solid #9ca3af; }
button[value=accept] { background: #2563eb; color: #fff; border-color: #2563eb; }
.expiry { font-size: .8rem; color: #6b7280; }
"""


def html_pattern(pattern: str) -> str:
    """A JSON Schema ``pattern`` (matches anywhere) as an HTML ``pattern`` (matches whole)."""
    if pattern.startswith("^") and pattern.endswith("$") and not pattern.endswith("\\$"):
        return pattern
    return rf"[\s\S]*(?:{pattern})[\s\S]*"


@dataclass
class _Question:
    request: ElicitationRequest
    answer: asyncio.Future[ElicitationResult]

    def settle(self, result: ElicitationResult) -> None:
        if not self.answer.done():
            self.answer.set_result(result)


class BrowserHandler:
    """Opens each question as a form in a tab of its own; see the module docstring.

    Use it as an async context manager, or call :meth:`aclose` (a
    :class:`~harness.Harness` closes the handler it was given).
    """

    def __init__(self, source: BrowserSource, *, host: str = "127.0.0.1") -> None:
        self._source = source
        self.host = host
        self.opened: asyncio.Queue[Page] = asyncio.Queue(maxsize=OPENED_KEPT)
        self._questions: dict[str, _Question] = {}
        self._closing: set[asyncio.Future[None]] = set()
        self._runner: web.AppRunner | None = None
        self._context: BrowserContext | None = None
        self._owns_context = False
        self._port = 0

    @property
    def context(self) -> BrowserContext | None:
        """The browser context the tabs open in (None before the first question)."""
        return self._context

    @property
    def origin(self) -> str:
        """The handler's own loopback origin (after the first question)."""
        return f"http://{self.host}:{self._port}"

    async def elicit(self, request: ElicitationRequest) -> ElicitationResult:
        """Open the question in a new tab and wait for the answer (a closed tab is ``cancel``)."""
        await self._serve()
        context = await self._tab_context()
        token = secrets.token_urlsafe(18)
        question = _Question(request, asyncio.get_running_loop().create_future())
        self._questions[token] = question
        opening = asyncio.ensure_future(context.new_page())
        try:
            page = await asyncio.shield(opening)
        except BaseException:  # given up (time limit) while the tab opened: close it later
            self._questions.pop(token, None)
            opening.add_done_callback(self._close_late_tab)
            raise
        page.on(
            "close",
            lambda _: question.settle(
                ElicitationResult(action="cancel", reason="the elicitation tab was closed")
            ),
        )
        try:
            await page.goto(f"{self.origin}/elicit/{token}")
            await page.bring_to_front()
            if self.opened.full():  # nobody is watching (headed use): keep the newest
                self.opened.get_nowait()
            self.opened.put_nowait(page)
            return await question.answer
        finally:
            self._questions.pop(token, None)
            await close_tab(page)

    def _close_late_tab(self, opening: asyncio.Future[Page]) -> None:
        if opening.cancelled() or opening.exception() is not None:
            return
        closing = asyncio.ensure_future(close_tab(opening.result()))
        self._closing.add(closing)
        closing.add_done_callback(self._closing.discard)

    async def aclose(self) -> None:
        """Cancel open questions, stop the server, close the context the handler made."""
        for question in self._questions.values():
            question.settle(ElicitationResult(action="cancel", reason="the harness closed"))
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._context is not None and self._owns_context:
            with contextlib.suppress(PlaywrightError):
                await self._context.close()
        self._context = None

    async def __aenter__(self) -> BrowserHandler:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _tab_context(self) -> BrowserContext:
        if self._context is not None:
            return self._context
        source = self._source
        target = source if isinstance(source, Browser | BrowserContext) else source()
        if isinstance(target, BrowserContext):
            self._context = target
        else:  # a context of its own: no site's cookies, scripts or init scripts
            self._context = await target.new_context()
            self._owns_context = True
        return self._context

    async def _serve(self) -> None:
        if self._runner is not None:
            return
        app = web.Application()
        app.router.add_get("/elicit/{token}", self._show)
        app.router.add_post("/elicit/{token}", self._take)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, self.host, 0).start()
        self._port = int(runner.addresses[0][1])  # the port the system chose
        self._runner = runner

    def _question(self, request: web.Request) -> tuple[str, _Question] | None:
        token = request.match_info["token"]
        question = self._questions.get(token)
        if question is None or question.answer.done():
            return None
        return token, question

    async def _show(self, request: web.Request) -> web.Response:
        found = self._question(request)
        if found is None:
            return _page("This question is no longer open.", status=410)
        token, question = found
        values = question.request.starting_values()
        return _page(render_form(question.request, token, values, {}))

    async def _take(self, request: web.Request) -> web.Response:
        if request.headers.get("Origin") != self.origin:
            return _page("Answers are only taken from this page.", status=403)
        found = self._question(request)
        if found is None:
            return _page("This question is no longer open.", status=410)
        token, question = found
        form = await request.post()
        action = form.get("action")
        if action in ("decline", "cancel"):
            chosen: Action = "decline" if action == "decline" else "cancel"
            question.settle(ElicitationResult(action=chosen))
            return _answered()
        values, problems = content_from_form(question.request, form)
        if problems:
            return _page(render_form(question.request, token, values, problems), status=422)
        content = values if question.request.mode == "form" else None
        question.settle(ElicitationResult(action="accept", content=content))
        return _answered()


async def close_tab(page: Page) -> None:
    """Close a tab, waiting a bounded time: the harness must not hang on a stuck close.

    Chromium may acknowledge a close that races a navigation commit without doing it
    (crbug.com/536385539, playwright#42366); answers are sent without navigating for
    that reason, and a tab that still does not close goes with its context.
    """
    try:
        await asyncio.wait_for(page.close(), CLOSE_WAIT_S)
    except TimeoutError:
        log.warning("an elicitation tab did not close within %g s", CLOSE_WAIT_S)
    except PlaywrightError:
        pass  # already gone with its context or browser


def _page(body: str, *, status: int = 200) -> web.Response:
    if not body.startswith("<!doctype"):
        body = _document("webmcp-harness", f"<p>{html.escape(body)}</p>")
    return web.Response(text=body, status=status, content_type="text/html", headers=_HEADERS)


def _answered() -> web.Response:
    # No Content: the tab stays on the form (no navigation to commit) and is closed next,
    # which a navigation racing the close could make Chromium drop.
    return web.Response(status=204, headers=_HEADERS)


def _document(title: str, body: str) -> str:
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head>"
        f"<body><main>{body}</main></body></html>"
    )


def render_form(
    request: ElicitationRequest,
    token: str,
    values: Mapping[str, Any],
    problems: Mapping[str, str],
) -> str:
    """The question page: who asks, the message, the fields with their constraints."""
    esc = html.escape
    rows = "".join(
        f"<dt>{esc(line.label)}</dt><dd>"
        + (
            f"<code class=page>{esc(line.value)}</code> <small>the {line.by}'s words</small>"
            if line.by
            else esc(line.value)
        )
        + "</dd>"
        for line in question_lines(request)
    )
    parts = [
        "<header><p class=who>webmcp-harness asks you — the browser's question, not the page's</p>",
        f"<h1>{esc(SOURCE_TITLES[request.source])}</h1></header>",
        f"<p class=message>{esc(request.message)}</p>",
        f"<dl>{rows}</dl>",
    ]
    if request.url:
        # The link itself (the page's URL): opened only by the person's own click.
        parts.append(
            f"<p>The page asks you to open: <a href='{esc(request.url)}' target=_blank "
            f"rel='noopener noreferrer'>{esc(quote(request.url))}</a></p>"
        )
    if problems:
        parts.append("<p class=error role=alert>Some answers do not fit; see below.</p>")
    parts.append(f"<form method=post action='/elicit/{esc(token)}'>")
    if request.mode == "form":
        for index, (name, prop) in enumerate(request.fields.items()):
            required = name in request.required
            parts.append(_field(index, name, prop, values, problems.get(name), required=required))
    parts.append(
        "<div class=actions>"
        "<button type=submit name=action value=accept>Accept</button>"
        "<button type=submit name=action value=decline formnovalidate>Decline</button>"
        "<button type=submit name=action value=cancel formnovalidate>Cancel</button>"
        "</div></form>"
        f"<p class=expiry>Unanswered, this question is cancelled after {request.timeout:g} s.</p>"
    )
    return _document(f"webmcp-harness: {SOURCE_TITLES[request.source]}", "".join(parts))


def _field(
    index: int,
    name: str,
    prop: Mapping[str, Any],
    values: Mapping[str, Any],
    problem: str | None,
    *,
    required: bool,
) -> str:
    esc = html.escape
    ident, key = f"f{index}", esc("field." + name)
    title = esc(one_line(field_title(name, prop))) + (" *" if required else "")
    description = prop.get("description")
    described = (
        f"<p class=desc id=d{index}><code class=page>{esc(quote(description))}</code>"
        " <small>the page's words</small></p>"
        if isinstance(description, str)
        else ""
    )
    aria = f" aria-describedby=d{index}" if described else ""
    kind = field_kind(prop)
    value = values.get(name)
    hint = f"<p class=hint>{esc(describe_field(prop, required=required))}</p>"
    error = f"<p class=error role=alert>{esc(title)}: {esc(problem)}</p>" if problem else ""
    if kind == "multi":
        chosen = value if isinstance(value, list) else []
        boxes = "".join(
            f"<label><input type=checkbox name='{key}' value={i}"
            f"{' checked' if v in chosen else ''}> {esc(one_line(label))}</label>"
            for i, (v, label) in enumerate(item_choices(prop) or [])
        )
        return f"<fieldset class=field><legend>{title}</legend>{described}{boxes}{hint}{error}</fieldset>"
    if kind == "enum":
        options = [] if required and name in values else ["<option value=''>— choose —</option>"]
        options += [
            f"<option value={i}{' selected' if name in values and v == value else ''}>"
            f"{esc(one_line(label))}</option>"
            for i, (v, label) in enumerate(enum_choices(prop) or [])
        ]
        control = (
            f"<select id={ident} name='{key}'{' required' if required else ''}{aria}>"
            + "".join(options)
            + "</select>"
        )
    elif kind == "boolean":
        control = (
            f"<input id={ident} type=checkbox name='{key}' value=true"
            f"{' checked' if value is True else ''}{aria}>"
        )
    elif kind == "list":
        lines = "\n".join(str(v) for v in value) if isinstance(value, list) else ""
        control = f"<textarea id={ident} name='{key}' rows=4{aria}>{esc(lines)}</textarea>"
    else:
        control = _input(ident, key, kind, prop, value, required=required, aria=aria)
    return f"<div class=field><label for={ident}>{title}</label>{described}{control}{hint}{error}</div>"


def _input(
    ident: str,
    key: str,
    kind: str,
    prop: Mapping[str, Any],
    value: Any,
    *,
    required: bool,
    aria: str,
) -> str:
    esc = html.escape
    attrs = [f"id={ident}", f"name='{key}'", "autocomplete=off"]
    if kind in ("integer", "number"):
        step = prop.get("multipleOf", 1 if kind == "integer" else "any")
        attrs += ["type=number", f"step='{esc(str(step))}'"]
        for rule, attr in (("minimum", "min"), ("maximum", "max")):
            if isinstance(prop.get(rule), int | float):
                attrs.append(f"{attr}='{prop[rule]}'")
    else:
        secret = is_sensitive(prop)
        fmt = prop.get("format")
        kind_attr = "password" if secret else _INPUT_TYPES.get(str(fmt), "text")
        attrs.append(f"type={kind_attr}")
        for rule, attr in (("minLength", "minlength"), ("maxLength", "maxlength")):
            if isinstance(prop.get(rule), int):
                attrs.append(f"{attr}='{prop[rule]}'")
        if isinstance(prop.get("pattern"), str):
            attrs.append(f"pattern='{esc(html_pattern(prop['pattern']))}'")
        if secret:
            value = None  # never echo a secret back into the page's source
    if required:
        attrs.append("required")
    if value is not None:
        shown = value if isinstance(value, str) else json.dumps(value)
        attrs.append(f"value='{esc(shown)}'")
    return "<input " + " ".join(attrs) + aria + ">"


def content_from_form(
    request: ElicitationRequest, form: MultiDictProxy[Any]
) -> tuple[dict[str, Any], dict[str, str]]:
    """The typed answer from a submitted form, and each field's problem (same rules as ever).

    An empty optional field is left out; a field that cannot be read keeps the
    text the person typed, so the form can show it again.
    """
    values: dict[str, Any] = {}
    problems: dict[str, str] = {}
    for name, prop in request.fields.items():
        key, kind = "field." + name, field_kind(prop)
        required = name in request.required
        if kind == "boolean":
            values[name] = form.get(key) == "true"
            continue
        if kind == "multi":
            choices = item_choices(prop) or []
            picked = [str(v) for v in form.getall(key, [])]
            values[name] = [choices[int(i)][0] for i in picked if _index(i, choices)]
        else:
            raw = str(form.get(key, ""))
            if raw == "":
                if required:
                    problems[name] = "is required"
                continue
            if kind == "enum":
                choices = enum_choices(prop) or []
                if not _index(raw, choices):
                    problems[name] = "must be one of the choices"
                    continue
                values[name] = choices[int(raw)][0]
            else:
                text = "\n".join(raw.splitlines()) if kind == "list" else raw
                try:
                    values[name] = (
                        [value_from_text(prop.get("items", {}), t) for t in text.split("\n") if t]
                        if kind == "list"
                        else value_from_text(prop, text)
                    )
                except ValueError as exc:
                    values[name] = raw
                    problems[name] = str(exc)
                    continue
        problem = field_problem(prop, values[name])
        if problem is not None:
            problems[name] = problem
    return values, problems


def _index(text: str, choices: list[tuple[Any, str]]) -> bool:
    return text.isdigit() and int(text) < len(choices)
