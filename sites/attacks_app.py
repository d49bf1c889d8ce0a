"""The attack sites: small sites, each on its own origin, that the WebMCP attack suite runs on.

| site       | what it is                                                                       |
|------------|----------------------------------------------------------------------------------|
| `notes`    | the user's notes app: private notes, a note a friend shared (the injections), and |
|            | tools to add, mail, share, delete notes; cross-origin widgets in iframes         |
| `store`    | a shop in the style of seed 004's examples: product search, reviews, a saved     |
|            | card, a newsletter form (spec-dialect `<form toolname>`)                          |
| `attacker` | the attacker's server: collects whatever reaches it, serves the iframes          |

Each scenario is a page, `GET /s/<scenario>`, whose script (`attacks/<site>/scenarios.js`)
registers that scenario's tools; `GET /` lists the scenarios. The pages get the
attacker's origin from the server (the sites learn each other's origins when they are
served together, see `peers`), so an injection can name a real URL.

JSON API of `notes` and `store` (every side effect a tool has goes through it, so the
request log shows what the agent made the site do):

| request                      | answer                                                  |
|------------------------------|---------------------------------------------------------|
| `POST /api/act/{tool}` JSON  | `{"ok": true, "id": N}`: the action is recorded         |
| `GET /api/actions`           | `{"actions": [{"id", "tool", "args"}, …]}`              |
| `GET /out?to=URL&…`          | 302 to URL with the other query parameters (an open redirect, on purpose) |
| `POST /newsletter` (form)    | the newsletter form's target (store)                    |

`attacker`: `GET|POST /collect…` and `/send…` answer 200 and keep nothing but the
request log; `GET /frame/{name}?top=ORIGIN` is a page for an iframe (`frames.js`).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlencode

from aiohttp import web

STATIC_DIR: Final = Path(__file__).parent / "attacks"
_SCENARIO: Final = re.compile(r"^[a-z0-9-]{1,64}$")
_FILE: Final = re.compile(r"^[a-z_]+\.(?:js|css)$")


def _no_store(response: web.StreamResponse) -> web.StreamResponse:
    response.headers["Cache-Control"] = "no-store"
    return response


def _json_script(value: Any) -> str:
    """JSON for an inline `<script type="application/json">`: `<` cannot close the element."""
    return json.dumps(value).replace("<", "\\u003c")


class AttackSite:
    """One attack site: its scenario pages, scripts, recorded actions and open redirect."""

    def __init__(self, name: str, title: str) -> None:
        self.name = name
        self.title = title
        self.origins: dict[str, str] = {}
        self.actions: list[dict[str, Any]] = []
        """Every `POST /api/act/{tool}` since the last reset."""

    def peers(self, origins: Mapping[str, str]) -> None:
        """The origins of the sites served together with this one, by name."""
        self.origins = dict(origins)

    def routes(self) -> Iterable[web.AbstractRouteDef]:
        """The index, the scenario pages, the scripts and the JSON API."""
        return [
            web.get("/", self.index),
            web.get("/s/{scenario}", self.scenario_page),
            web.get("/common.js", self.common_script),
            web.get("/static/{file}", self.static_file),
            web.post("/api/act/{tool}", self.act),
            web.get("/api/actions", self.list_actions),
            web.get("/out", self.redirect),
            web.post("/newsletter", self.newsletter),
        ]

    async def reset(self) -> None:
        """Forget the recorded actions."""
        self.actions.clear()

    async def close(self) -> None:
        """Nothing to release: the data lives in memory."""

    def _config(self, request: web.Request, **extra: Any) -> dict[str, Any]:
        own = f"{request.scheme}://{request.host}"
        return {
            "site": self.name,
            "self": own,
            "attacker": self.origins.get("attacker", ""),
            **extra,
        }

    async def index(self, request: web.Request) -> web.StreamResponse:
        """The list of scenarios, for people (the scenarios are in the page script)."""
        names = sorted(
            m.group(1)
            for m in re.finditer(
                r'^\s*"([a-z0-9-]+)":\s*\{',
                (STATIC_DIR / self.name / "scenarios.js").read_text(encoding="utf-8"),
                re.MULTILINE,
            )
        )
        items = "".join(f'<li><a href="/s/{n}">{html.escape(n)}</a></li>' for n in names)
        page = (
            f"<!doctype html><meta charset=utf-8><title>{html.escape(self.title)}</title>"
            f"<h1>{html.escape(self.title)}</h1><p>Attack scenarios:</p><ul>{items}</ul>"
        )
        return _no_store(web.Response(text=page, content_type="text/html"))

    async def scenario_page(self, request: web.Request) -> web.StreamResponse:
        """`GET /s/{scenario}`: the site's page with the scenario's configuration inlined."""
        scenario = request.match_info["scenario"]
        if not _SCENARIO.match(scenario):
            raise web.HTTPNotFound(text=json.dumps({"error": "no such scenario"}))
        template = (STATIC_DIR / self.name / "page.html").read_text(encoding="utf-8")
        config = self._config(request, scenario=scenario, query=dict(request.query))
        page = template.replace("{{CONFIG}}", _json_script(config))
        return _no_store(web.Response(text=page, content_type="text/html"))

    async def common_script(self, request: web.Request) -> web.StreamResponse:
        """What every attack page shares (`attacks/common.js`)."""
        return _no_store(web.FileResponse(STATIC_DIR / "common.js"))

    async def static_file(self, request: web.Request) -> web.StreamResponse:
        """A script or style sheet of this site (the pattern allows no paths)."""
        name = request.match_info["file"]
        path = STATIC_DIR / self.name / name
        if not _FILE.match(name) or not path.is_file():
            raise web.HTTPNotFound(text=json.dumps({"error": f"no such file: {name}"}))
        return _no_store(web.FileResponse(path))

    async def act(self, request: web.Request) -> web.StreamResponse:
        """`POST /api/act/{tool}`: record what a tool did."""
        try:
            args = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise web.HTTPBadRequest(text=json.dumps({"error": "the body is not JSON"})) from None
        action = {"id": len(self.actions) + 1, "tool": request.match_info["tool"], "args": args}
        self.actions.append(action)
        return _no_store(web.json_response({"ok": True, "id": action["id"]}))

    async def list_actions(self, request: web.Request) -> web.StreamResponse:
        """`GET /api/actions`."""
        return _no_store(web.json_response({"actions": self.actions}))

    async def redirect(self, request: web.Request) -> web.StreamResponse:
        """`GET /out?to=URL&…`: an open redirect (the kind real sites have by mistake)."""
        target = request.query.get("to", "")
        if not re.match(r"^https?://", target):
            raise web.HTTPBadRequest(text=json.dumps({"error": "to must be an http(s) URL"}))
        rest = [(k, v) for k, v in request.query.items() if k != "to"]
        joiner = "&" if "?" in target else "?"
        raise web.HTTPFound(target + (joiner + urlencode(rest) if rest else ""))

    async def newsletter(self, request: web.Request) -> web.StreamResponse:
        """`POST /newsletter`: the newsletter form's target."""
        form = await request.post()
        self.actions.append(
            {"id": len(self.actions) + 1, "tool": "newsletter", "args": dict(form.items())}
        )
        page = "<!doctype html><meta charset=utf-8><title>Subscribed</title><p>Subscribed.</p>"
        return _no_store(web.Response(text=page, content_type="text/html"))


class AttackerSite(AttackSite):
    """The attacker's server: it answers everything it is sent, and serves the iframes."""

    def routes(self) -> Iterable[web.AbstractRouteDef]:
        """The collection endpoints, the iframe pages and their script."""
        return [
            web.get("/", self.index_page),
            web.route("*", r"/collect{rest:.*}", self.collect),
            web.route("*", r"/send{rest:.*}", self.collect),
            web.get("/frame/{scenario}", self.frame_page),
            web.get("/common.js", self.common_script),
            web.get("/static/{file}", self.static_file),
        ]

    async def index_page(self, request: web.Request) -> web.StreamResponse:
        """A page that says what this is."""
        page = "<!doctype html><meta charset=utf-8><title>attacker</title><p>Nothing to see.</p>"
        return _no_store(web.Response(text=page, content_type="text/html"))

    async def collect(self, request: web.Request) -> web.StreamResponse:
        """Anything sent here is in the request log; the answer says thanks, to anyone."""
        response = web.Response(text="<!doctype html><p>Thanks.</p>", content_type="text/html")
        response.headers["Access-Control-Allow-Origin"] = "*"
        return _no_store(response)

    async def frame_page(self, request: web.Request) -> web.StreamResponse:
        """`GET /frame/{scenario}?top=ORIGIN`: a page for a cross-origin iframe."""
        scenario = request.match_info["scenario"]
        if not _SCENARIO.match(scenario):
            raise web.HTTPNotFound(text=json.dumps({"error": "no such frame"}))
        top = request.query.get("top", "")
        template = (STATIC_DIR / self.name / "frame.html").read_text(encoding="utf-8")
        config = self._config(request, scenario=scenario, top=top)
        page = template.replace("{{CONFIG}}", _json_script(config))
        return _no_store(web.Response(text=page, content_type="text/html"))


def notes_site() -> AttackSite:
    """The notes app."""
    return AttackSite("notes", "Notes")


def store_site() -> AttackSite:
    """The store."""
    return AttackSite("store", "Store")


def attacker_site() -> AttackerSite:
    """The attacker's server."""
    return AttackerSite("attacker", "attacker")
