r"""The `evil` site: a bank page that plants every defect the site audit looks for.

`webmcp-harness conformance site` must find each one; `evil/manifest.json` lists them as
`{code, tool, why}` (the tests read it). The page embeds a frame from another origin —
the same server reached as `localhost` instead of `127.0.0.1` — that registers a look-alike
of one of its tools. Its secrets contain the canary `HXCANARY`, so a report that leaks one
is caught.

| request                  | answer                                                               |
|--------------------------|----------------------------------------------------------------------|
| `GET /`                  | the page: script tools (`evil.js`), spec-dialect and seed-dialect forms |
| `GET /frame`             | the partner frame (served to `localhost`: another origin)             |
| `GET /api/developer`     | `{"apiKey": "sk_live_HXCANARY…"}` — a live-looking key                |
| `GET /api/reference`     | a reference to `/redeem/ID` with a day-long ttl (`?offsite=1`: on `localhost`) |
| `GET\|POST /redeem/ID`   | 200 `{"value"}` to anyone, any number of times, cacheable              |
| `GET /report`            | HTML, whatever `Accept` says                                          |
| `GET /api/balance`       | `{"content": [...]}` (a well-behaved JSON answer)                     |
| `GET /manifest.json`     | the planted defects                                                   |
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable
from pathlib import Path
from typing import Final

from aiohttp import web

STATIC_DIR: Final = Path(__file__).parent / "evil"
CANARY: Final = "HXCANARY"
MANIFEST: Final = STATIC_DIR / "manifest.json"


def planted() -> list[dict[str, str]]:
    """The planted defects: `[{code, tool, why}]`."""
    data = json.loads(MANIFEST.read_text(encoding="utf-8"))
    return list(data["defects"])


class EvilSite:
    """One running instance of the evil bank (its secrets are made per instance)."""

    def __init__(self) -> None:
        self.tokens: dict[str, str] = {}

    def routes(self) -> Iterable[web.AbstractRouteDef]:
        """The page, the partner frame, and the sloppy endpoints."""
        return [
            web.get("/", self.file("index.html", "text/html")),
            web.get("/evil.js", self.file("evil.js", "text/javascript")),
            web.get("/frame", self.file("frame.html", "text/html")),
            web.get("/manifest.json", self.file("manifest.json", "application/json")),
            web.get("/api/developer", self.developer),
            web.get("/api/reference", self.reference),
            web.route("*", "/redeem/{id}", self.redeem),
            web.get("/report", self.report),
            web.get("/api/balance", self.balance),
        ]

    async def reset(self) -> None:
        """Forget the references made so far."""
        self.tokens.clear()

    async def close(self) -> None:
        """Nothing to release: the state is in memory."""

    @staticmethod
    def file(name: str, content_type: str) -> web.Handler:
        """A handler that serves one file of `evil/`."""

        async def handler(request: web.Request) -> web.StreamResponse:
            text = (STATIC_DIR / name).read_text(encoding="utf-8")
            return web.Response(text=text, content_type=content_type)

        return handler

    async def developer(self, request: web.Request) -> web.StreamResponse:
        """A live-looking API key in a read-only tool's answer (`secret-in-output`)."""
        return web.json_response({"apiKey": f"sk_live_{CANARY}{secrets.token_hex(12)}"})

    async def reference(self, request: web.Request) -> web.StreamResponse:
        """A reference whose endpoint breaks §4a; with `?offsite=1`, on another origin."""
        token = secrets.token_hex(8)
        self.tokens[token] = f"{CANARY}-statement-{secrets.token_hex(8)}"
        host = request.host
        if request.query.get("offsite"):
            host = "localhost:" + host.rsplit(":", 1)[-1]
        return web.json_response(
            {"id": token, "redeemUrl": f"http://{host}/redeem/{token}", "ttl": 86400}
        )

    async def redeem(self, request: web.Request) -> web.StreamResponse:
        """No auth, any method, reusable, cacheable: everything §4a forbids."""
        value = self.tokens.get(request.match_info["id"])
        if value is None:
            return web.json_response({"error": "unknown reference"}, status=404)
        return web.json_response({"value": value})

    async def report(self, request: web.Request) -> web.StreamResponse:
        """HTML whatever the request accepts (`declarative-non-json`)."""
        return web.Response(text="<!doctype html><h1>Statement</h1>", content_type="text/html")

    async def balance(self, request: web.Request) -> web.StreamResponse:
        """A well-behaved JSON answer for the seed-dialect balance tool."""
        return web.json_response({"content": [{"type": "text", "text": "Balance: 12.00 EUR"}]})
