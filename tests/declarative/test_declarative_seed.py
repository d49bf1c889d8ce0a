"""Seed 002's `tool-name` dialect in the browser: invocation (§4–§8), the §6.1 ordering,
the catalog following the DOM, collisions, tool-elicit, and the todo site's forms page.

Every test runs on both backends (Chromium has no seed dialect: the injected extractor
serves both). A small server records exactly what each submission carried.
"""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp import BodyPartReader, web
from harness.sites.server import RunningSites, serve_sites

from harness import BrowserPool, Harness, Session
from harness.declarative.invocation import seed_tools_of
from harness.elicitation.answers import ScriptedAnswer, ScriptedHandler
from harness.elicitation.base import AutoHandler
from harness.models import ToolChange
from harness.stages.trust import REQUEST_ANNOTATIONS_HEADER
from tests.conftest import PAGES, listen

BACKENDS = ["polyfill", "native"]


@dataclass
class Received:
    """One request the server got: what a seed-dialect submission carried."""

    method: str
    path: str
    query: list[tuple[str, str]]
    form: list[tuple[str, Any]]
    headers: dict[str, str]
    port: int
    file_types: list[tuple[str, str]] = field(default_factory=list)  # (name, Content-Type)


@dataclass
class SeedServer:
    """Serves tests/pages/ds_*.html on two origins and answers the tools' targets."""

    log: list[Received] = field(default_factory=list)
    ports: list[int] = field(default_factory=list)
    release: asyncio.Event = field(default_factory=asyncio.Event)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    _runners: list[web.AppRunner] = field(default_factory=list)

    def url(self, path: str, *, other: bool = False) -> str:
        return f"http://127.0.0.1:{self.ports[1 if other else 0]}/{path.lstrip('/')}"

    def received(self, path: str = "", *, other: bool = False) -> list[Received]:
        port = self.ports[1 if other else 0]
        return [r for r in self.log if r.port == port and r.path.startswith(path)]

    async def _record(self, request: web.Request) -> Received:
        form: list[tuple[str, Any]] = []
        file_types: list[tuple[str, str]] = []
        if request.method == "POST":
            if request.content_type == "multipart/form-data":
                reader = await request.multipart()
                while (part := await reader.next()) is not None:
                    assert isinstance(part, BodyPartReader)
                    data = await part.read()
                    if part.filename is not None:
                        file_types.append((part.name or "", part.headers.get("Content-Type", "")))
                        form.append(
                            (
                                part.name or "",
                                {"file": part.filename, "base64": base64.b64encode(data).decode()},
                            )
                        )
                    else:
                        form.append((part.name or "", data.decode()))
            else:
                form = [(k, str(v)) for k, v in (await request.post()).items()]
        received = Received(
            method=request.method,
            path=request.path,
            query=list(request.query.items()),
            form=form,
            headers=dict(request.headers),
            port=request.url.port or 0,
            file_types=file_types,
        )
        self.log.append(received)
        return received

    def _app(self, port_index: int) -> web.Application:
        other = lambda: f"http://127.0.0.1:{self.ports[1 - port_index]}"  # noqa: E731

        async def page(request: web.Request) -> web.StreamResponse:
            path = PAGES / f"ds_{request.match_info['name']}.html"
            if not path.is_file():
                raise web.HTTPNotFound()
            html = path.read_text(encoding="utf-8").replace("{{OTHER}}", other())
            return web.Response(text=html, content_type="text/html")

        def result(text: str, **extra: Any) -> dict[str, Any]:
            return {"content": [{"type": "text", "text": text}], **extra}

        async def echo(request: web.Request) -> web.StreamResponse:
            got = await self._record(request)
            return web.json_response(result("received", structuredContent={"form": got.form}))

        async def landing(request: web.Request) -> web.StreamResponse:
            if "application/json" in request.headers.get("Accept", ""):
                await self._record(request)
                return web.json_response(result("landed"))
            return web.Response(
                text="<!doctype html><title>landed</title>", content_type="text/html"
            )

        async def slow(request: web.Request) -> web.StreamResponse:
            await self._record(request)
            self.arrived.set()
            await self.release.wait()
            return web.json_response(result("slow done", _meta={"uiRedirect": "/ds_dynamic.html"}))

        async def fixed(request: web.Request) -> web.StreamResponse:
            await self._record(request)
            name = request.match_info["what"]
            if name == "plain-json":
                return web.json_response({"n": 1})
            if name == "mcp-result":
                return web.json_response(result("done", structuredContent={"ok": True}))
            if name == "html":
                return web.Response(text="<p>hello</p>", content_type="text/html")
            if name == "fail":
                return web.json_response({"error": "text is too short"}, status=400)
            if name == "boom":
                return web.Response(text="it broke", status=500, content_type="text/plain")
            if name == "redirect":
                raise web.HTTPSeeOther("/landing?via=redirect")
            if name == "created":
                return web.json_response(
                    result("made"), status=201, headers={"Location": "/landing"}
                )
            if name == "error-result":
                return web.json_response(
                    result("no", isError=True, _meta={"uiRedirect": "/landing"})
                )
            if name == "away":
                raise web.HTTPSeeOther(f"{other()}/echo")
            raise web.HTTPNotFound()

        app = web.Application()
        app.router.add_get("/ds_{name}.html", page)
        app.router.add_route("*", "/echo", echo)
        app.router.add_get("/landing", landing)
        app.router.add_post("/slow", slow)
        app.router.add_post("/{what}", fixed)
        return app

    async def start(self) -> None:
        self.ports = []
        for index in range(2):
            runner = web.AppRunner(self._app(index), shutdown_timeout=0.5)
            await runner.setup()
            self.ports.append(await listen(runner))
            self._runners.append(runner)

    async def stop(self) -> None:
        self.release.set()
        for runner in self._runners:
            await runner.cleanup()


@pytest.fixture(scope="module")
async def server() -> AsyncIterator[SeedServer]:
    running = SeedServer()
    await running.start()
    yield running
    await running.stop()


@pytest.fixture(scope="module", params=BACKENDS)
async def shared(
    browser_pool: BrowserPool, request: pytest.FixtureRequest, server: SeedServer
) -> AsyncIterator[Session]:
    """One session per backend, re-opened by every test (a new context each time is slow)."""
    async with Harness(browsers=browser_pool, backend=request.param, call_timeout=10) as harness:
        session = await harness.open(server.url("ds_dynamic.html"))
        yield session
        await session.close()


async def reopen(session: Session, url: str) -> Session:
    """The shared session on a fresh document, nobody answering questions (cancel)."""
    session.elicitation = AutoHandler("cancel")
    await session.open(url)
    return session


@pytest.fixture
async def invoke(shared: Session, server: SeedServer) -> Session:
    server.log.clear()
    return await reopen(shared, server.url("ds_invoke.html"))


async def eventually(check: Callable[[], Awaitable[bool]], timeout: float = 5.0) -> None:
    """Wait until ``check()`` holds (the extractor coalesces DOM changes for up to 250 ms)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not await check():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("the condition did not hold in time")
        await asyncio.sleep(0.05)


def text_of(outcome: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in outcome.result.content)


# -- §4: what a submission carries ------------------------------------------------------


async def test_a_form_posts_form_data_with_json_accept_and_the_page_credentials(
    invoke: Session, server: SeedServer
) -> None:
    outcome = await invoke.call(
        "post_form",
        {
            "text": "hi there",
            "priority": "low",
            "address": {"street": "Main St", "zip": "12345"},
            "urgent": True,
            "tags": ["a"],
            "lines": [{"sku": "A1", "qty": 2}, {"sku": "B2", "qty": 1}],
            "due": "2025-06-01",
            "projectId": "999",
        },
    )
    assert not outcome.is_error, text_of(outcome)
    [got] = server.received("/echo")
    assert (got.method, got.path, got.query) == ("POST", "/echo", [("dropped", "no")])
    assert got.form == [
        ("text", "hi there"),
        ("priority", "low"),
        ("street", "Main St"),  # HTML's names: a fieldset's name is no part of them
        ("zip", "12345"),
        ("urgent", "yes"),
        ("tags", "a"),
        ("lines.sku", "A1"),
        ("lines.qty", "2"),
        ("lines.sku", "B2"),
        ("lines.qty", "1"),
        ("due", "2025-06-01"),
        ("projectId", "999"),
    ]
    headers = got.headers
    assert headers["Accept"] == "application/json"
    assert headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert headers["Origin"] == server.url("").rstrip("/")
    assert headers["Referer"] == server.url("ds_invoke.html")
    assert "session=page-cookie" in headers["Cookie"]  # the page's cookie, as fetch would
    assert set(json.loads(headers[REQUEST_ANNOTATIONS_HEADER])) == {
        "openWorldHint",
        "maliciousActivityHint",
    }
    # The answer was a CallToolResult: it passes through.
    assert outcome.result.structured_content == {"form": [list(p) for p in got.form]}


async def test_left_out_parameters_are_sent_as_the_form_has_them_now(
    invoke: Session, server: SeedServer
) -> None:
    await invoke.page.fill("#post input[name=street]", "Typed by the user")
    outcome = await invoke.call("post_form", {"text": "hi"})
    assert not outcome.is_error, text_of(outcome)
    [got] = server.received("/echo")
    assert got.form == [
        ("text", "hi"),
        ("priority", "medium"),  # the selected option
        ("street", "Typed by the user"),  # the control's current value
        ("zip", ""),  # an empty text field is sent empty, as HTML does
        ("tags", "b"),  # the checked box; the unchecked `urgent` is not sent
        ("lines.sku", ""),
        ("lines.qty", ""),
        ("lines.sku", ""),
        ("lines.qty", ""),
        ("due", ""),
        ("projectId", "123"),  # the hidden input
    ]


async def test_a_get_form_replaces_the_action_query_with_its_parameters(
    invoke: Session, server: SeedServer
) -> None:
    outcome = await invoke.call("get_form", {"q": "oat milk & more", "page": 3, "exact": False})
    assert not outcome.is_error, text_of(outcome)
    [got] = server.received("/echo")
    assert (got.method, got.query, got.form) == (
        "GET",
        [("q", "oat milk & more"), ("page", "3")],
        [],
    )
    assert "Origin" not in got.headers  # a same-origin GET fetch sends none


async def test_a_file_makes_the_submission_multipart(invoke: Session, server: SeedServer) -> None:
    data = bytes(range(256))
    outcome = await invoke.call(
        "file_form", {"title": "report", "attachment": base64.b64encode(data).decode()}
    )
    assert not outcome.is_error, text_of(outcome)
    await invoke.call("multipart_form", {"title": "no file"})
    with_file, enctype = server.received("/echo")
    assert with_file.headers["Content-Type"].startswith("multipart/form-data")
    assert with_file.form == [
        ("title", "report"),
        ("attachment", {"file": "attachment", "base64": base64.b64encode(data).decode()}),
    ]
    assert enctype.headers["Content-Type"].startswith("multipart/form-data")
    assert enctype.form == [("title", "no file")]


async def test_a_file_part_carries_the_name_and_type_the_argument_gives(
    invoke: Session, server: SeedServer
) -> None:
    content = base64.b64encode(b"hello").decode()
    for attachment in (
        {"name": "notes.txt", "type": "text/plain", "content": content},
        f"data:text/csv;base64,{content}",
    ):
        outcome = await invoke.call("file_form", {"title": "t", "attachment": attachment})
        assert not outcome.is_error, text_of(outcome)
    as_object, as_data_url = server.received("/echo")
    assert as_object.form[1] == ("attachment", {"file": "notes.txt", "base64": content})
    assert as_object.file_types == [("attachment", "text/plain")]
    assert as_data_url.form[1][1]["base64"] == content
    assert as_data_url.file_types == [("attachment", "text/csv")]


async def test_a_link_gets_its_href_and_a_button_submits_its_form(
    invoke: Session, server: SeedServer
) -> None:
    for name in ("link_tool", "button_tool", "button_override"):
        outcome = await invoke.call(name)
        assert not outcome.is_error, text_of(outcome)
    link, button, override = server.received("/echo")
    assert (link.method, link.query) == ("GET", [("page", "2"), ("sort", "new")])
    # The button is the submitter: its form's current values, then its own name=value.
    assert (button.method, button.query) == ("GET", [("q", "from the page"), ("go", "now")])
    assert (override.method, override.query, override.form) == (
        "POST",
        [("override", "1")],
        [("q", "from the page")],
    )


# -- §5, §8, §8.2: what an answer becomes -----------------------------------------------------


async def test_json_answers_become_results(invoke: Session) -> None:
    plain = await invoke.call("plain_json")
    assert not plain.is_error and plain.result.structured_content == {"n": 1}
    assert '{"n": 1}' in text_of(plain)
    mcp = await invoke.call("mcp_result")
    assert not mcp.is_error and mcp.result.structured_content == {"ok": True}
    assert "done" in text_of(mcp)


@pytest.mark.parametrize(
    ("tool", "expected"),
    [
        ("html_answer", "HTTP 200 OK from POST {url}html answered text/html, not JSON"),
        (
            "http_error",
            'HTTP 400 Bad Request from POST {url}fail (application/json): {{"error": "text is too short"}}',
        ),
        (
            "server_error",
            "HTTP 500 Internal Server Error from POST {url}boom (text/plain): it broke",
        ),
    ],
)
async def test_non_json_and_http_errors_name_the_status_and_content_type(
    invoke: Session, server: SeedServer, tool: str, expected: str
) -> None:
    outcome = await invoke.call(tool)
    assert outcome.is_error and outcome.error_kind == "thrown"
    assert expected.format(url=server.url("")) in text_of(outcome)
    await invoke.settled()
    assert invoke.url == server.url("ds_invoke.html")  # an error does not navigate


async def test_other_origins_are_never_sent_to(invoke: Session, server: SeedServer) -> None:
    cross = await invoke.call("cross_origin", {"text": "secret"})
    assert cross.is_error and "another origin than the page's" in text_of(cross)
    away = await invoke.call("redirects_away")
    assert away.is_error and "a redirect to another origin" in text_of(away)
    assert server.received(other=True) == []  # neither the form nor the redirect reached it
    assert [r.path for r in server.received()] == ["/away"]


# -- §6: navigation after the result ----------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "lands"),
    [
        ("redirects", "landing?via=redirect"),  # a 303 followed; the page goes where it ended
        ("created", "landing"),  # HTTP Location on a JSON answer
        ("slow", "ds_dynamic.html"),  # _meta.uiRedirect
    ],
)
async def test_the_answer_navigates_the_page_after_the_result(
    invoke: Session, server: SeedServer, tool: str, lands: str
) -> None:
    server.release.set()
    seeds = seed_tools_of(invoke.backend)
    assert seeds is not None
    before = len(seeds.navigations)
    outcome = await invoke.call(tool)
    assert not outcome.is_error, text_of(outcome)
    assert invoke.url == server.url("ds_invoke.html")  # not before the result is delivered
    await invoke.settled()
    assert invoke.url == server.url(lands)
    [navigation] = seeds.navigations[before:]
    assert (navigation.tool, navigation.url, navigation.error) == (tool, server.url(lands), None)


async def test_an_error_result_does_not_navigate(invoke: Session, server: SeedServer) -> None:
    outcome = await invoke.call("error_result")
    assert outcome.is_error
    await invoke.settled()
    assert invoke.url == server.url("ds_invoke.html")


@pytest.fixture
async def ordering(shared: Session, server: SeedServer) -> AsyncIterator[Session]:
    server.log.clear()
    server.release.clear()
    server.arrived.clear()
    yield await reopen(shared, server.url("ds_ordering.html"))
    server.release.set()


async def test_result_then_tools_changed_then_navigation(
    ordering: Session, server: SeedServer
) -> None:
    """Seed 002 §6.1, observed: the form is removed mid-call, yet stays in the catalog
    until its result is delivered; then the change event; then the redirect."""
    order: list[Any] = []
    ordering.on_call(lambda _args, outcome: order.append(("result", outcome.is_error)))
    ordering.on_tools_changed(lambda change: order.append(("tools changed", tuple(change.removed))))
    main = ordering.page.main_frame
    ordering.page.on(
        "framenavigated", lambda frame: order.append("navigation") if frame == main else None
    )
    call = asyncio.ensure_future(ordering.call("once", {"text": "hi"}))
    await asyncio.wait_for(server.arrived.wait(), 10)
    await ordering.page.evaluate("document.getElementById('once').remove()")
    await asyncio.sleep(0.4)  # longer than the extractor's coalescing: its report is in
    # Re-read every frame now: the DOM has no `once`, the catalog keeps it (not unmounted).
    assert "once" in [t.name for t in await ordering.tools()]
    assert order == []
    server.release.set()
    outcome = await call
    assert not outcome.is_error
    await ordering.settled()
    assert order[:3] == [("result", False), ("tools changed", ("once",)), "navigation"]
    # After the navigation, the new document's (empty) catalog.
    assert order[3:] == [("tools changed", ("stays",))]
    assert ordering.url == server.url("ds_dynamic.html")


async def test_a_timed_out_call_unfreezes_the_catalog(
    ordering: Session, server: SeedServer
) -> None:
    outcome = await ordering.call("once", {"text": "late"}, timeout=0.5)
    assert outcome.is_error and outcome.error_kind == "timeout"
    await ordering.page.evaluate("document.getElementById('once').remove()")
    await eventually(lambda: _absent(ordering, "once"))
    server.release.set()
    assert ordering.url == server.url("ds_ordering.html")  # no answer, no navigation


async def _absent(session: Session, name: str) -> bool:
    return name not in [t.name for t in await session.tools()]


# -- validation, elicitation: nothing leaves before they pass --------------------------------


@pytest.mark.parametrize(
    ("tool", "arguments", "why"),
    [
        ("post_form", {"text": "x"}, "/text: 'x' is too short"),
        ("post_form", {"text": "ok", "address": {"zip": "1234"}}, "/address/zip"),
        ("post_form", {"text": "ok", "extra": 1}, "Additional properties are not allowed"),
        (
            "post_form",
            {"text": "ok", "due": "2024-12-31"},
            "/due: '2024-12-31' is before the form's min",
        ),
        ("file_form", {"attachment": "not base64!"}, "/attachment: is not valid base64"),
        ("get_form", {"page": 1.5}, "/page: 1.5 is not of type 'integer'"),
    ],
)
async def test_invalid_arguments_never_leave_the_browser(
    invoke: Session, server: SeedServer, tool: str, arguments: dict[str, Any], why: str
) -> None:
    outcome = await invoke.call(tool, arguments)
    assert outcome.is_error and why in text_of(outcome)
    assert server.log == []


async def test_tool_elicit_asks_the_user_and_sends_their_answer(
    invoke: Session, server: SeedServer
) -> None:
    invoke.elicitation = ScriptedHandler(
        [ScriptedAnswer(tool="elicited", action="accept", values={"description": "from the user"})]
    )
    outcome = await invoke.call("elicited", {"description": "from the agent", "note": "n"})
    assert not outcome.is_error, text_of(outcome)
    [got] = server.received("/echo")
    assert got.form == [("description", "from the user"), ("note", "n")]
    record = invoke.elicitations[-1]
    assert (record.source, record.tool, record.fields, record.action) == (
        "tool-elicit",
        "elicited",
        ["description"],
        "accept",
    )
    assert record.prefilled == {"description": "from the agent"} and record.changed == [
        "description"
    ]


@pytest.mark.parametrize("action", ["cancel", "decline"])
async def test_tool_elicit_not_accepted_submits_nothing(
    invoke: Session, server: SeedServer, action: str
) -> None:
    invoke.elicitation = AutoHandler(action)  # type: ignore[arg-type]
    outcome = await invoke.call("elicited", {"description": "buy milk"})
    assert outcome.is_error and f"did not confirm the form of 'elicited': {action}" in text_of(
        outcome
    )
    assert "Nothing was submitted" in text_of(outcome)
    assert server.log == []


@pytest.fixture
async def elicit_rules(shared: Session, server: SeedServer) -> Session:
    server.log.clear()
    return await reopen(shared, server.url("ds_elicit_rules.html"))


async def test_tool_elicit_answers_keep_html_rules_and_start_from_the_forms_defaults(
    elicit_rules: Session, server: SeedServer
) -> None:
    # The user's answer is bound by HTML's rules as a person's typing is: a date before the
    # field's min is not sent.
    elicit_rules.elicitation = ScriptedHandler(
        [ScriptedAnswer(tool="elicited_rules", action="accept", values={"when": "2024-12-31"})]
    )
    outcome = await elicit_rules.call("elicited_rules", {})
    assert outcome.is_error and "breaks the form's rules" in text_of(outcome)
    assert "/when" in text_of(outcome)
    assert server.log == []
    # What the user was shown starts from the form's own values (the agent sent none).
    assert elicit_rules.elicitations[-1].prefilled == {
        "when": "2025-06-01",
        "remark": "from the page",
    }
    # A field the user clears is sent empty, not with the page's value; the default
    # button's name=value goes with the form, as a person's click sends it.
    elicit_rules.elicitation = ScriptedHandler(
        [
            ScriptedAnswer(
                tool="elicited_rules", action="accept", values={"when": "2025-07-01", "remark": ""}
            )
        ]
    )
    outcome = await elicit_rules.call("elicited_rules", {"note": "n"})
    assert not outcome.is_error, text_of(outcome)
    [got] = server.received("/echo")
    assert got.form == [("when", "2025-07-01"), ("remark", ""), ("note", "n"), ("action", "save")]


@pytest.mark.parametrize(
    ("tool", "sent"),
    [
        ("image_named", [("q", "hi"), ("go.x", "0"), ("go.y", "0")]),
        ("image_nameless", [("q", "hi"), ("x", "0"), ("y", "0")]),
        ("submit_first", [("q", "hi"), ("action", "save")]),
    ],
)
async def test_the_default_button_goes_as_a_persons_enter_sends_it(
    shared: Session, server: SeedServer, tool: str, sent: list[tuple[str, str]]
) -> None:
    # HTML's form submission: Enter activates the default button (the first submit button,
    # an image button too); an image button sends where it was "clicked", (0, 0).
    page = await reopen(shared, server.url("ds_image_button.html"))
    server.log.clear()
    field = page.page.locator(f'form[tool-name="{tool}"] input[name="q"]')
    await field.fill("hi")
    await field.press("Enter")
    await eventually(lambda: asyncio.sleep(0, bool(server.received("/echo"))))
    [by_hand] = server.received("/echo")
    page = await reopen(shared, server.url("ds_image_button.html"))
    outcome = await page.call(tool, {"q": "hi"})
    assert not outcome.is_error, text_of(outcome)
    [by_harness] = server.received("/echo")[1:]
    assert by_hand.form == by_harness.form == sent


# -- the catalog follows the DOM -----------------------------------------------------------------


@pytest.fixture
async def dynamic(shared: Session, server: SeedServer) -> Session:
    return await reopen(shared, server.url("ds_dynamic.html"))


async def test_forms_added_renamed_and_removed_follow_into_the_catalog(dynamic: Session) -> None:
    changes: list[ToolChange] = []
    dynamic.on_tools_changed(changes.append)
    await dynamic.page.evaluate("window.addForm('late', 'late')")
    await dynamic.wait_for_tool("late")
    await dynamic.page.evaluate(
        "document.getElementById('late').setAttribute('tool-name', 'renamed')"
    )
    await dynamic.wait_for_tool("renamed")
    await dynamic.page.evaluate("document.getElementById('late').remove()")
    await eventually(lambda: _absent(dynamic, "renamed"))
    assert [(c.added, c.removed) for c in changes] == [
        (["late"], []),
        (["renamed"], ["late"]),
        ([], ["renamed"]),
    ]


async def test_a_flapping_page_does_not_flood_change_events(dynamic: Session) -> None:
    changes: list[ToolChange] = []
    dynamic.on_tools_changed(changes.append)
    # `required` toggles every 4 ms for 1.5 s: hundreds of DOM changes, each a new schema.
    await dynamic.page.evaluate("window.flap(1500, 4)")
    await asyncio.sleep(0.6)
    flapping = await dynamic.tool("flapping")
    assert flapping.input_schema["required"] == ["text"]  # the state it settled in
    assert 1 <= len(changes) <= 10, len(changes)


async def _warned(session: Session, name: str) -> bool:
    await session.tools()
    return any(w.code == "duplicate-name" and w.tool == name for w in session.warnings)


@pytest.mark.parametrize(
    ("first", "later", "kept", "refused"),
    [
        (
            "window.addForm('shared', 'f')",
            "window.registerScriptTool('shared')",
            "declarative",
            "script",
        ),
        (
            "window.registerScriptTool('shared')",
            "window.addForm('shared', 'f')",
            "script",
            "declarative",
        ),
    ],
)
async def test_a_later_tool_with_the_name_of_another_source_is_refused(
    dynamic: Session, first: str, later: str, kept: str, refused: str
) -> None:
    await dynamic.page.evaluate(first)
    await dynamic.wait_for_tool("shared")
    await dynamic.page.evaluate(later)
    await eventually(lambda: _warned(dynamic, "shared"))
    [warning] = [w for w in dynamic.warnings if w.tool == "shared"]
    # "…defined twice: <kept> tool in frame main (…) and <refused> tool in frame main (…)"
    assert warning.message.index(f"{kept} tool in frame main") < warning.message.index(
        f"{refused} tool in frame main"
    )
    assert dynamic.catalog.get("shared").source == kept  # type: ignore[union-attr]


async def test_a_later_form_with_another_forms_name_is_refused_naming_both(
    dynamic: Session,
) -> None:
    await dynamic.page.evaluate("window.addForm('twin', 'one')")
    await dynamic.wait_for_tool("twin")
    await dynamic.page.evaluate("document.body.prepend(window.addForm('twin', 'two'))")
    await eventually(lambda: _warned(dynamic, "twin"))
    [warning] = [w for w in dynamic.warnings if w.tool == "twin"]
    # The new form is first in the document, but later: it is the one refused.
    assert "defined twice in frame main" in warning.message
    assert warning.message.index('<form id="one">') < warning.message.index('<form id="two">')


# -- the todo site's forms page, end to end --------------------------------------------------


@pytest.fixture(scope="module")
async def sites() -> AsyncIterator[RunningSites]:
    async with serve_sites(["todo"]) as running:
        yield running


@pytest.fixture
async def todo(shared: Session, sites: RunningSites) -> tuple[Session, RunningSites]:
    await sites.reset("todo")
    sites["todo"].clear_log()
    return await reopen(shared, sites.url("todo", "/declarative")), sites


async def test_todo_forms_page_offers_its_seed_dialect_tools(
    todo: tuple[Session, RunningSites],
) -> None:
    session, _ = todo
    tools = {t.name: t for t in await session.tools()}
    assert sorted(tools) == [
        "add_todo_with_details",
        "clear_done_todos",
        "complete_todo_1",
        "complete_todo_2",
        "list_open_todos",
    ]
    details = tools["add_todo_with_details"].input_schema
    assert details["properties"]["reminder"] == {
        "type": "object",
        "properties": {
            "date": {"type": "string", "format": "date", "description": "Day"},
            "time": {"type": "string", "format": "time", "description": "Time"},
        },
        "additionalProperties": False,
        "description": "When to be reminded (optional).",
    }
    assert details["required"] == ["text"]
    assert tools["list_open_todos"].annotations["readOnlyHint"] is True
    assert tools["clear_done_todos"].annotations["destructiveHint"] is True


async def test_todo_forms_work_end_to_end(todo: tuple[Session, RunningSites]) -> None:
    session, sites = todo
    listed = await session.call("list_open_todos")
    assert [t["id"] for t in listed.result.structured_content["todos"]] == [1, 2]  # type: ignore[index]
    added = await session.call(
        "add_todo_with_details",
        {"text": "Water the plants", "priority": "high", "reminder": {"date": "2026-05-01"}},
    )
    assert added.result.structured_content == {
        "todo": {"id": 4, "text": "Water the plants", "done": False},
        "priority": "high",
        "reminder": {"date": "2026-05-01"},
        "list": "inbox",
    }
    posted = [r for r in sites.requests("todo") if r.method == "POST"]
    assert posted[-1].body == (
        "text=Water+the+plants&priority=high&date=2026-05-01&time=&list=inbox"
    )
    assert posted[-1].headers["accept"] == "application/json"
    assert REQUEST_ANNOTATIONS_HEADER.lower() in posted[-1].headers
    # A button tool whose answer (HTTP Location) reloads the page: its own button is gone.
    done = await session.call("complete_todo_1")
    assert not done.is_error and done.result.structured_content["todo"]["done"] is True  # type: ignore[index]
    await session.settled()
    names = [t.name for t in await session.tools()]
    assert "complete_todo_1" not in names and "complete_todo_4" in names


async def test_todo_clear_done_is_escalated_then_removes_itself_and_redirects(
    todo: tuple[Session, RunningSites],
) -> None:
    session, sites = todo
    refused = await session.call("clear_done_todos")  # destructive: the default policy asks
    assert refused.is_error and refused.error_kind == "refused"
    assert not [r for r in sites.requests("todo") if r.path == "/todos/clear-done"]
    session.elicitation = AutoHandler("accept")
    changes: list[ToolChange] = []
    session.on_tools_changed(changes.append)
    cleared = await session.call("clear_done_todos")
    assert cleared.result.structured_content == {
        "deleted": [{"id": 3, "text": "Renew the library card", "done": True}]
    }
    await session.settled()
    assert session.url == sites.url("todo", "/declarative")
    assert ["clear_done_todos"] in [c.removed for c in changes]
    assert "clear_done_todos" not in [t.name for t in await session.tools()]


async def test_todo_targets_answer_people_with_html(todo: tuple[Session, RunningSites]) -> None:
    session, sites = todo
    response = await session.page.request.post(
        sites.url("todo", "/todos"), form={"text": "by hand"}, max_redirects=0
    )
    assert (response.status, response.headers["location"]) == (303, "/declarative")
    await session.page.goto(sites.url("todo", "/todos?status=open"))
    assert session.page.url == sites.url("todo", "/declarative")
    assert "by hand" in await session.page.content()


# -- the CLI -------------------------------------------------------------------------------------------

SCRIPT = shutil.which("webmcp-harness") or str(Path(sys.executable).parent / "webmcp-harness")


async def test_cli_tools_and_call_on_the_forms_page() -> None:
    """Once, outside the backend matrix: the CLI starts its own browser (polyfill)."""
    async with serve_sites(["todo"]) as sites:
        url = sites.url("todo", "/declarative")
        listed = await _cli("tools", url, "--json")
        assert {t["name"]: t["source"] for t in listed["tools"]} == {
            "add_todo_with_details": "declarative",
            "clear_done_todos": "declarative",
            "complete_todo_1": "declarative",
            "complete_todo_2": "declarative",
            "list_open_todos": "declarative",
        }
        called = await _cli(
            "call", url, "add_todo_with_details", "--args", '{"text": "From the CLI"}', "--json"
        )
        assert called["result"]["structuredContent"]["todo"]["text"] == "From the CLI"


async def _cli(*args: str) -> Any:
    proc = await asyncio.create_subprocess_exec(
        SCRIPT, *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=90)
    assert proc.returncode == 0, err.decode()
    return json.loads(out)
