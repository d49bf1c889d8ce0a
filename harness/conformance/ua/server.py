"""The fixture server of the user-agent suite: its pages and endpoints, on three origins.

The same aiohttp application listens on three loopback ports — three origins — so that
origin rules can be tested (a cross-origin ``redeemUrl``, a cross-origin iframe, a form
action elsewhere). Every test file's page is served at its WPT-like path; ``/pages/NAME``
serves any page directly (iframes, landing pages). Pages refer to the origins as
``{{ORIGIN0}}``, ``{{ORIGIN1}}``, ``{{ORIGIN2}}`` and to fixture secrets as
``{{SECRET:name}}``; each secret is fresh per server and contains ``HXCANARY``, so a report
or log that carries one is caught.

Endpoints (``/api/…``, logged with the origin they were called on):

- ``echo`` (any method): a CallToolResult whose ``structuredContent`` says what arrived
  (method, query, form fields, ``Accept``, whether the login cookie came);
- ``html``: an HTML answer; ``fail``: HTTP 500 with JSON; ``redirect``: a result with
  ``_meta.uiRedirect``; ``location``: a result with a ``Location`` header;
- ``schema``: a JSON Schema, for pages that (wrongly) refer to a remote one;
- ``slow/KEY``: answers once :meth:`FixtureServer.release` releases ``KEY``;
- ``reference/KIND``: makes a secret reference whose redemption endpoint
  ``/redeem/KIND/ID`` behaves as KIND says (``good``, ``cacheable``, ``gone``,
  ``forbidden``, ``unauthorized``, ``missing``, ``limited``).

Every page load sets the login cookie ``ua_login`` (HttpOnly); the redemption endpoints and
``echo`` report whether it came back.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import threading
from collections.abc import Iterable
from importlib import resources
from typing import Any

from aiohttp import web

from harness.conformance.ua.framework import TestFile

PAGES = resources.files("harness.conformance.ua") / "pages"
LOGIN_COOKIE = "ua_login"
ORIGINS = 3
RELEASE_TIMEOUT_S = 15.0


def _result(text: str, structured: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    answer: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
    if structured is not None:
        answer["structuredContent"] = structured
    answer.update(extra)
    return answer


class FixtureServer:
    """Serves the suite's fixture pages and endpoints on three loopback origins."""

    def __init__(self, files: Iterable[TestFile]) -> None:
        self.pages = {file.path: file.page for file in files}
        self.ports: list[int] = []
        self.log: list[dict[str, Any]] = []
        self.secrets: dict[str, str] = {}
        self._logins: set[str] = set()
        self._released: dict[str, asyncio.Event] = {}
        self._redeemed: set[str] = set()
        self._runners: list[web.AppRunner] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    # -- what subtests use (the framework's Fixtures protocol) --------------------------
    def origin(self, index: int = 0) -> str:
        """``http://127.0.0.1:PORT`` of origin ``index``."""
        return f"http://127.0.0.1:{self.ports[index]}"

    def url(self, path: str, origin: int = 0) -> str:
        """The URL of ``path`` on origin ``origin``."""
        return self.origin(origin) + "/" + path.lstrip("/")

    def requests(self, path_prefix: str = "/") -> list[dict[str, Any]]:
        """The logged requests whose path starts with ``path_prefix``."""
        return [r for r in self.log if r["path"].startswith(path_prefix)]

    def secret(self, name: str) -> str:
        """The fixture secret ``name`` (made on first use; contains ``HXCANARY``)."""
        if name not in self.secrets:
            self.secrets[name] = f"HXCANARY-{name}-{secrets.token_hex(8)}"
        return self.secrets[name]

    def release(self, key: str) -> None:
        """Let ``/api/slow/KEY`` answer (from any thread)."""
        if self._loop is not None:
            self._loop.call_soon_threadsafe(lambda: self._event(key).set())

    def _event(self, key: str) -> asyncio.Event:
        return self._released.setdefault(key, asyncio.Event())

    # -- serving ----------------------------------------------------------------------------
    async def start(self) -> FixtureServer:
        """Listen on three free loopback ports, from a thread of its own.

        The server has its own event loop: a user agent that blocks its loop (a synchronous
        fetch of a page's remote ``$ref``, say) must not block the fixtures it is tested on.
        """
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="ua-fixtures", daemon=True
        )
        self._thread.start()
        await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._listen(), self._loop))
        return self

    async def _listen(self) -> None:
        for index in range(ORIGINS):
            runner = web.AppRunner(self._app(index), access_log=None, shutdown_timeout=1.0)
            await runner.setup()
            # Port 0: the system picks a free one as it binds (one picked first could be
            # taken before the bind).
            await web.TCPSite(runner, "127.0.0.1", 0).start()
            self._runners.append(runner)
            self.ports.append(int(runner.addresses[-1][1]))

    async def _cleanup(self) -> None:
        for event in self._released.values():
            event.set()
        for runner in self._runners:
            await runner.cleanup()
        self._runners.clear()

    async def stop(self) -> None:
        """Stop listening and end the server's thread."""
        if self._loop is None:
            return
        loop, self._loop = self._loop, None
        await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._cleanup(), loop))
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            await asyncio.to_thread(self._thread.join, 10)
        loop.close()

    async def __aenter__(self) -> FixtureServer:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def _render(self, name: str) -> str:
        html = (PAGES / name).read_text(encoding="utf-8")
        for index in range(ORIGINS):
            html = html.replace(f"{{{{ORIGIN{index}}}}}", self.origin(index))
        while "{{SECRET:" in html:
            start = html.index("{{SECRET:")
            end = html.index("}}", start)
            html = html[:start] + self.secret(html[start + 9 : end]) + html[end + 2 :]
        return html

    def _page_response(self, name: str) -> web.StreamResponse:
        if not name.endswith((".html", ".js")) or "/" in name or not (PAGES / name).is_file():
            raise web.HTTPNotFound(text=json.dumps({"error": f"no fixture page {name!r}"}))
        content_type = "text/html" if name.endswith(".html") else "text/javascript"
        response = web.Response(text=self._render(name), content_type=content_type)
        login = secrets.token_hex(8)
        self._logins.add(login)
        response.set_cookie(LOGIN_COOKIE, login, httponly=True, samesite="Lax", path="/")
        return response

    def _app(self, index: int) -> web.Application:
        @web.middleware
        async def log(request: web.Request, handler: Any) -> web.StreamResponse:
            if request.path.startswith(("/api/", "/redeem/")):
                body = await request.read() if request.can_read_body else b""
                self.log.append(
                    {
                        "origin": index,
                        "method": request.method,
                        "path": request.path,
                        "query": dict(request.query),
                        "accept": request.headers.get("Accept", ""),
                        "content_type": request.headers.get("Content-Type", ""),
                        "cookie": request.cookies.get(LOGIN_COOKIE) in self._logins,
                        "annotations": request.headers.get("WebMCP-Request-Annotations"),
                        "body": body.decode("utf-8", errors="replace")[:4096],
                    }
                )
            response: web.StreamResponse = await handler(request)
            return response

        async def page(request: web.Request) -> web.StreamResponse:
            name = self.pages.get(request.path)
            if name is None:
                raise web.HTTPNotFound(text=json.dumps({"error": f"no test at {request.path}"}))
            return self._page_response(name)

        async def direct(request: web.Request) -> web.StreamResponse:
            return self._page_response(request.match_info["name"])

        app = web.Application(middlewares=[log])
        app.router.add_get("/pages/{name}", direct)
        app.router.add_route("*", "/api/echo", self._echo)
        app.router.add_route("*", "/api/html", self._html)
        app.router.add_route("*", "/api/fail", self._fail)
        app.router.add_route("*", "/api/redirect", self._redirect)
        app.router.add_route("*", "/api/location", self._location)
        app.router.add_route("*", "/api/slow/{key}", self._slow)
        app.router.add_post("/api/reference/{kind}", self._reference)
        app.router.add_get("/api/schema", self._schema)
        app.router.add_route("*", "/redeem/{kind}/{id}", self._redeem)
        app.router.add_get("/{path:.*}", page)
        return app

    # -- endpoints ---------------------------------------------------------------------------
    async def _arrived(self, request: web.Request) -> dict[str, Any]:
        form: dict[str, Any] = {}
        if request.method == "POST" and request.content_type in (
            "application/x-www-form-urlencoded",
            "multipart/form-data",
        ):
            data = await request.post()
            for key in data:
                values = [str(v) for v in data.getall(key)]
                form[key] = values[0] if len(values) == 1 else values
        return {
            "method": request.method,
            "query": dict(request.query),
            "form": form,
            "accept": request.headers.get("Accept", ""),
            "cookie": request.cookies.get(LOGIN_COOKIE) in self._logins,
        }

    async def _echo(self, request: web.Request) -> web.StreamResponse:
        arrived = await self._arrived(request)
        return web.json_response(_result(f"received {request.method}", arrived))

    async def _html(self, request: web.Request) -> web.StreamResponse:
        return web.Response(text="<!doctype html><p>Thanks!</p>", content_type="text/html")

    async def _fail(self, request: web.Request) -> web.StreamResponse:
        return web.json_response({"error": "the fixture failed on purpose"}, status=500)

    async def _redirect(self, request: web.Request) -> web.StreamResponse:
        target = request.query.get("to", "/pages/landing.html")
        return web.json_response(_result("done; moving on", _meta={"uiRedirect": target}))

    async def _location(self, request: web.Request) -> web.StreamResponse:
        target = request.query.get("to", "/pages/landing.html")
        return web.json_response(_result("done; see Location"), headers={"Location": target})

    async def _slow(self, request: web.Request) -> web.StreamResponse:
        key = request.match_info["key"]
        try:
            await asyncio.wait_for(self._event(key).wait(), RELEASE_TIMEOUT_S)
        except TimeoutError:
            return web.json_response({"error": "never released"}, status=504)
        target = request.query.get("to")
        meta = {"_meta": {"uiRedirect": target}} if target else {}
        return web.json_response(_result(f"released {key}", **meta))

    async def _schema(self, request: web.Request) -> web.StreamResponse:
        return web.json_response({"type": "string"})

    async def _reference(self, request: web.Request) -> web.StreamResponse:
        kind = request.match_info["kind"]
        reference = secrets.token_hex(6)
        origin = int(request.query.get("origin", "0"))
        ttl = int(request.query.get("ttl", "300"))
        return web.json_response(
            {
                "id": f"refid-{reference}",
                "label": f"{kind} secret",
                "redeemUrl": self.url(f"/redeem/{kind}/{reference}", origin),
                "ttl": ttl,
            }
        )

    async def _redeem(self, request: web.Request) -> web.StreamResponse:
        kind, reference = request.match_info["kind"], request.match_info["id"]
        no_store = {"Cache-Control": "no-store"}
        if request.method != "GET":
            return web.json_response({"error": "GET only"}, status=405, headers=no_store)
        statuses = {"gone": 410, "forbidden": 403, "unauthorized": 401, "missing": 404}
        if kind in statuses:
            return web.json_response({"error": kind}, status=statuses[kind], headers=no_store)
        if kind == "limited":
            return web.json_response(
                {"error": "slow down"}, status=429, headers={**no_store, "Retry-After": "30"}
            )
        if request.cookies.get(LOGIN_COOKIE) not in self._logins:
            return web.json_response({"error": "log in first"}, status=401, headers=no_store)
        if reference in self._redeemed:
            return web.json_response({"error": "already redeemed"}, status=410, headers=no_store)
        self._redeemed.add(reference)
        value = {"value": self.secret(f"redeemed-{kind}")}
        return web.json_response(value, headers={} if kind == "cacheable" else no_store)
