"""The `pantry` site: a small stock list for the QA tools (`webmcp-harness fuzz`, `snapshot`,
`diff`), with one bug planted on purpose and a next release whose catalog drifted.

| request          | answer                                                                  |
|------------------|-------------------------------------------------------------------------|
| `GET /`          | release 1: `list_items`, `find_items` (read-only), `set_stock`          |
| `GET /next`      | release 2: `find_items` takes a far larger `limit` (its schema widened), |
|                  | and a new destructive tool, `clear_pantry`                              |
| `GET /api/items` | `{"items": [{name, count}]}`                                            |
| `PUT /api/items/{name}` `{"count"}` | sets one item's count (what `set_stock` sends)       |

The planted bug: `find_items` reads the first letter of its `query`, so the empty string
(which its schema allows) makes it throw — the fuzzer finds it and shrinks it to
`{"query": ""}`. The other suites and the conformance reports leave this site alone.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Final

from aiohttp import web

STATIC_DIR: Final = Path(__file__).parent / "pantry"
START: Final = {"apples": 6, "beans": 12, "coffee": 1, "dates": 0}


class PantrySite:
    """One running pantry (its stock is per instance)."""

    def __init__(self) -> None:
        self.items = dict(START)

    def routes(self) -> Iterable[web.AbstractRouteDef]:
        """The two releases, the script, and the stock API."""
        return [
            web.get("/", self.file("index.html", "text/html")),
            web.get("/next", self.file("next.html", "text/html")),
            web.get("/pantry.js", self.file("pantry.js", "text/javascript")),
            web.get("/api/items", self.list_items),
            web.put("/api/items/{name}", self.set_item),
        ]

    @staticmethod
    def file(name: str, kind: str) -> web.Handler:
        """A handler that serves one file of `pantry/` (never cached)."""

        async def serve(_request: web.Request) -> web.StreamResponse:
            text = (STATIC_DIR / name).read_text(encoding="utf-8")
            return web.Response(text=text, content_type=kind, headers={"Cache-Control": "no-store"})

        return serve

    async def list_items(self, _request: web.Request) -> web.Response:
        """`{"items": [{name, count}]}`."""
        return web.json_response(
            {"items": [{"name": n, "count": c} for n, c in sorted(self.items.items())]}
        )

    async def set_item(self, request: web.Request) -> web.Response:
        """Set one item's count (0–99)."""
        name = request.match_info["name"]
        body = await request.json()
        count = body.get("count") if isinstance(body, dict) else None
        if name not in self.items or not isinstance(count, int) or not 0 <= count <= 99:
            raise web.HTTPBadRequest(
                text='{"error": "unknown item, or a count outside 0-99"}',
                content_type="application/json",
            )
        self.items[name] = count
        return web.json_response({"name": name, "count": count})

    async def reset(self) -> None:
        """Back to the starting stock."""
        self.items = dict(START)

    async def close(self) -> None:
        """Nothing to release."""
