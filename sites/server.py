"""Serve the bundled demo sites, each on its own loopback port (its own origin).

    async with serve_sites(["todo"]) as sites:  # or: sites = await serve_sites(...)
        page_url = sites.url("todo")  # http://127.0.0.1:<port>/
        ...
        assert sites.requests("todo")[-1].path == "/api/todos"

Every site gets, besides its own routes:

- `POST /__reset` — restore the site's initial data (also `await sites.reset("todo")`);
- `GET /__log` — the requests the site received, as a JSON list of
  `{method, path, query, headers, body}`; `DELETE /__log` empties it. The same list is
  `sites.requests(name)` in Python. Requests to `/__…` are not logged, so the log shows
  only what pages, tools and agents asked for;
- JSON errors (`{"error": message}`) for every 4xx and 5xx, never an HTML traceback page.

Run `python -m harness.sites.server` (or `webmcp-harness sites`) to serve them by hand.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import logging
import sys
from collections.abc import Awaitable, Callable, Generator, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from types import TracebackType
from typing import Any, Final, Protocol, Self

from aiohttp import web

from . import attacks_app, evil_app, keys_app, mail_app, pantry_app, shop_app, todo_app

logger = logging.getLogger(__name__)

DEFAULT_HOST: Final = "127.0.0.1"

# Headers worth proving in a test (content negotiation, origin, fetch metadata). Cookies and
# credentials stay out: the log is readable over HTTP and ends up in test output.
LOGGED_HEADERS: Final = (
    "accept",
    "content-type",
    "origin",
    "referer",
    "sec-fetch-site",
    "sec-fetch-mode",
    "sec-fetch-dest",
    "webmcp-request-annotations",  # harness/stages/trust.py: on seed-dialect (tool-name) submissions
)

# Enough to see what a tool sent, without keeping an upload in memory.
MAX_LOGGED_BODY: Final = 64 * 1024

# Paths under this prefix are the test controls; they are neither logged nor site routes.
CONTROL_PREFIX: Final = "/__"


class Site(Protocol):
    """The state and routes of one running instance of a bundled site.

    A `SiteSpec.factory` makes one per `serve_sites` call, so instances never share data.
    """

    def routes(self) -> Iterable[web.AbstractRouteDef]:
        """The site's own routes (the server adds `/__reset` and `/__log`)."""
        ...

    async def reset(self) -> None:
        """Restore the initial data."""
        ...

    async def close(self) -> None:
        """Release what the instance holds; called once, when the site stops."""
        ...


@dataclass(frozen=True)
class SiteSpec:
    """A bundled site: its name (used in URLs, the CLI and tests) and how to make one."""

    name: str
    description: str
    factory: Callable[[], Site]
    port: int = 0
    """The site's fixed port for `webmcp-harness sites` (the README's examples use them);
    0: a free port."""
    requires: tuple[str, ...] = ()
    """Sites served along with this one (an attack site needs the attacker's origin)."""


SITES: dict[str, SiteSpec] = {
    spec.name: spec
    for spec in (
        SiteSpec(
            name="todo",
            port=8101,
            description="A todo list in SQLite; tools to list, add, complete and delete todos; "
            "/archive lists done todos.",
            factory=todo_app.TodoSite,
        ),
        SiteSpec(
            name="keys",
            port=8102,
            description="A keys console that makes secrets (each with the canary HXCANARY): "
            "x-sensitive fields, sensitiveHint, secret_reference with a redemption endpoint.",
            factory=keys_app.KeysSite,
        ),
        SiteSpec(
            name="mail",
            port=8103,
            description="A mailbox with the trust annotations SEP's email tools (read_drafts, "
            "list_inbox, get_attachment, send_email) and a prompt injection in the inbox.",
            factory=mail_app.MailSite,
        ),
        SiteSpec(
            name="shop",
            port=8104,
            description="A shop whose tools are <form toolname> forms (the spec's declarative "
            "dialect): search_products, add_to_cart, view_cart, and a checkout without "
            "toolautosubmit that waits for the user's review.",
            factory=shop_app.ShopSite,
        ),
        SiteSpec(
            name="evil",
            port=8105,
            description="A bank page that plants every defect the site audit looks for "
            "(evil/manifest.json lists them); its secrets hold the canary HXCANARY.",
            factory=evil_app.EvilSite,
        ),
        SiteSpec(
            name="notes",
            port=8106,
            description="Attack site: a notes app with a friend's shared note (the injections), "
            "tools to add, mail, share and delete notes, and cross-origin widgets.",
            factory=attacks_app.notes_site,
            requires=("attacker",),
        ),
        SiteSpec(
            name="store",
            port=8107,
            description="Attack site: a store after seed 004's examples (product search, "
            "reviews, a saved card, a newsletter form).",
            factory=attacks_app.store_site,
            requires=("attacker",),
        ),
        SiteSpec(
            name="attacker",
            port=8108,
            description="Attack site: the attacker's server; collects what reaches it and "
            "serves the iframes of the notes app.",
            factory=attacks_app.attacker_site,
        ),
        SiteSpec(
            name="pantry",
            port=8109,
            description="A stock list for the QA tools: a bug planted in find_items, and a "
            "next release (/next) whose catalog drifted.",
            factory=pantry_app.PantrySite,
        ),
    )
}
"""Every bundled site by name."""


@dataclass(frozen=True)
class LoggedRequest:
    """One request a site received, as its request log records it."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    """The `LOGGED_HEADERS` the request carried, by lower-case name."""
    body: str
    """The body as text (invalid UTF-8 replaced), cut at `MAX_LOGGED_BODY` characters."""

    def to_json(self) -> dict[str, object]:
        """The JSON form `GET /__log` returns."""
        return asdict(self)


_LOG_KEY: Final = web.AppKey("request_log", list[LoggedRequest])
_SITE_KEY: Final = web.AppKey("site", Site)


def _logged_request(request: web.Request, body: bytes) -> LoggedRequest:
    query: dict[str, list[str]] = {}
    for key, value in request.query.items():
        query.setdefault(key, []).append(value)
    return LoggedRequest(
        method=request.method,
        path=request.path,
        query=query,
        headers={name: request.headers[name] for name in LOGGED_HEADERS if name in request.headers},
        body=body.decode("utf-8", errors="replace")[:MAX_LOGGED_BODY],
    )


@web.middleware
async def _log_requests(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    if request.path.startswith(CONTROL_PREFIX):
        return await handler(request)
    log = request.app[_LOG_KEY]
    try:
        # read() caches the body, so the handler can still read it afterwards.
        body = await request.read() if request.can_read_body else b""
    except web.HTTPRequestEntityTooLarge:
        # Logged without its body; the JSON-errors middleware answers the 413.
        log.append(_logged_request(request, b""))
        raise
    # Logged before the handler runs, so a request that fails still shows up.
    log.append(_logged_request(request, body))
    return await handler(request)


@web.middleware
async def _json_errors(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    try:
        return await handler(request)
    except web.HTTPException as exc:
        if exc.status < 400 or exc.content_type == "application/json":
            raise
        # Errors raised by aiohttp itself (no route, wrong method, body too large) carry a
        # plain-text body: its default text names only the status, so name the request too.
        headers = {"Allow": exc.headers["Allow"]} if "Allow" in exc.headers else None
        message = f"{exc.reason}: {request.method} {request.path}"
        if exc.text and exc.text != f"{exc.status}: {exc.reason}":
            message = f"{message}: {exc.text}"
        return web.json_response({"error": message}, status=exc.status, headers=headers)
    except Exception:
        logger.exception("%s %s failed", request.method, request.path)
        return web.json_response(
            {
                "error": f"internal server error in {request.method} {request.path}; "
                "the server log has the details"
            },
            status=500,
        )


async def _reset(request: web.Request) -> web.StreamResponse:
    await request.app[_SITE_KEY].reset()
    return web.json_response({"reset": True})


async def _read_log(request: web.Request) -> web.StreamResponse:
    return web.json_response([entry.to_json() for entry in request.app[_LOG_KEY]])


async def _clear_log(request: web.Request) -> web.StreamResponse:
    request.app[_LOG_KEY].clear()
    return web.json_response({"cleared": True})


def create_app(site: Site, request_log: list[LoggedRequest] | None = None) -> web.Application:
    """The aiohttp application for one site instance: its routes plus the test controls.

    `request_log` is the list the app appends to; pass one to read it from Python.
    """
    # JSON errors outermost, so even an error raised while logging is answered in JSON.
    app = web.Application(middlewares=[_json_errors, _log_requests])
    app[_LOG_KEY] = request_log if request_log is not None else []
    app[_SITE_KEY] = site
    app.router.add_post(f"{CONTROL_PREFIX}reset", _reset)
    app.router.add_get(f"{CONTROL_PREFIX}log", _read_log)
    app.router.add_delete(f"{CONTROL_PREFIX}log", _clear_log)
    app.add_routes(list(site.routes()))
    return app


@dataclass
class RunningSite:
    """One site being served: where it is, its state, and the requests it received."""

    name: str
    host: str
    port: int
    site: Site
    requests: list[LoggedRequest] = field(default_factory=list)
    """The request log; the app appends to this very list."""
    _runner: web.AppRunner | None = field(default=None, repr=False)

    @property
    def addresses(self) -> list[tuple[str, int]]:
        """The (host, port) of every socket the site listens on; empty once stopped."""
        if self._runner is None:
            return []
        return [(str(address[0]), int(address[1])) for address in self._runner.addresses]

    @property
    def origin(self) -> str:
        """`http://host:port`, without a trailing slash."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def url(self, path: str = "/") -> str:
        """The absolute URL of `path` on this site."""
        return self.origin + "/" + path.lstrip("/")

    async def reset(self) -> None:
        """Restore the initial data (what `POST /__reset` does)."""
        await self.site.reset()

    def clear_log(self) -> None:
        """Forget the requests received so far (what `DELETE /__log` does)."""
        self.requests.clear()

    async def stop(self) -> None:
        """Stop serving and release the site's state; stopping twice does nothing."""
        runner, self._runner = self._runner, None
        if runner is not None:
            try:
                await runner.cleanup()
            finally:
                await self.site.close()


class RunningSites:
    """The sites `serve_sites` started; an async context manager that stops them on exit."""

    def __init__(self, sites: Mapping[str, RunningSite]) -> None:
        self.sites: dict[str, RunningSite] = dict(sites)
        """Each running site by name."""

    @property
    def urls(self) -> dict[str, str]:
        """The root URL (`http://127.0.0.1:<port>/`) of each site, by name."""
        return {name: site.url() for name, site in self.sites.items()}

    def __getitem__(self, name: str) -> RunningSite:
        try:
            return self.sites[name]
        except KeyError:
            raise KeyError(
                f"site {name!r} is not running here; running: {', '.join(self.sites)}"
            ) from None

    def url(self, name: str, path: str = "/") -> str:
        """The absolute URL of `path` on site `name`."""
        return self[name].url(path)

    def origin(self, name: str) -> str:
        """The origin (`http://127.0.0.1:<port>`) of site `name`."""
        return self[name].origin

    def requests(self, name: str) -> list[LoggedRequest]:
        """The live request log of site `name` (the list itself, not a copy)."""
        return self[name].requests

    async def reset(self, name: str | None = None) -> None:
        """Restore the initial data of site `name`, or of every site."""
        for site in [self[name]] if name is not None else self.sites.values():
            await site.reset()

    async def stop(self) -> None:
        """Stop every site; safe to call more than once."""
        for site in self.sites.values():
            await site.stop()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()


def _check_loopback(host: str) -> None:
    # The sites are test fixtures with a world-readable request log and a reset button.
    # IP literals only: "localhost" may bind two sockets (IPv4 and IPv6) on two free ports.
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise ValueError(
            f"the bundled sites serve on loopback only; host {host!r} is not a loopback "
            "address (use 127.0.0.1 or ::1)"
        )


async def _start(spec: SiteSpec, host: str, port: int) -> RunningSite:
    site = spec.factory()
    running = RunningSite(name=spec.name, host=host, port=port, site=site)
    # A short shutdown grace: a browser's idle keep-alive connection must not hold up stop().
    runner = web.AppRunner(
        create_app(site, running.requests), access_log=None, shutdown_timeout=1.0
    )
    try:
        await runner.setup()
        await web.TCPSite(runner, host, port).start()
    except BaseException:
        await runner.cleanup()
        await site.close()
        raise
    running._runner = runner
    # With port 0 the OS picked the port; the bound address says which.
    running.port = int(runner.addresses[0][1])
    return running


async def _serve(names: Iterable[str] | None, host: str, ports: Mapping[str, int]) -> RunningSites:
    _check_loopback(host)
    wanted = list(SITES) if names is None else list(dict.fromkeys(names))
    unknown = sorted((set(wanted) | set(ports)) - set(SITES))
    if unknown:
        raise ValueError(
            f"unknown site(s): {', '.join(unknown)}; bundled sites: {', '.join(SITES)}"
        )
    for name in list(wanted):  # and the sites they need, after them
        wanted.extend(r for r in SITES[name].requires if r not in wanted)
    started: dict[str, RunningSite] = {}
    try:
        for name in wanted:
            started[name] = await _start(SITES[name], host, ports.get(name, 0))
    except BaseException:
        # Whatever did start must not outlive a failed call.
        await RunningSites(started).stop()
        raise
    origins = {name: running.origin for name, running in started.items()}
    for running in started.values():
        introduce = getattr(running.site, "peers", None)
        if callable(introduce):
            introduce(origins)  # e.g. an attack page names the attacker's real URL
    return RunningSites(started)


class ServeSites:
    """What `serve_sites` returns: await it, or use it as an async context manager."""

    def __init__(self, names: Iterable[str] | None, host: str, ports: Mapping[str, int]) -> None:
        self._names = None if names is None else list(names)
        self._host = host
        self._ports = dict(ports)
        self._running: RunningSites | None = None

    def __await__(self) -> Generator[Any, None, RunningSites]:
        return _serve(self._names, self._host, self._ports).__await__()

    async def __aenter__(self) -> RunningSites:
        self._running = await _serve(self._names, self._host, self._ports)
        return self._running

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        running, self._running = self._running, None
        if running is not None:
            await running.stop()


def serve_sites(
    names: Iterable[str] | None = None,
    host: str = DEFAULT_HOST,
    ports: Mapping[str, int] | None = None,
) -> ServeSites:
    """Start the named bundled sites (all of them by default), each on its own port.

    `ports` maps a site name to a port; a missing name or 0 means a free port. `host` must
    be a loopback IP address. Either `sites = await serve_sites(...)` (then
    `await sites.stop()`) or `async with serve_sites(...) as sites:`; both give a
    `RunningSites`. Raises `ValueError` for an unknown site name or a non-loopback host,
    and `OSError` when a port is taken.
    """
    return ServeSites(names, host, ports or {})


def _parse_port(text: str) -> tuple[str, int]:
    name, sep, port = text.partition("=")
    if not sep or not port.isdecimal():
        raise argparse.ArgumentTypeError(f"expected NAME=PORT, like todo=8001; got {text!r}")
    return name, int(port)


async def _serve_forever(names: Sequence[str] | None, host: str, ports: dict[str, int]) -> None:
    async with serve_sites(names, host=host, ports=ports) as sites:
        for name, url in sites.urls.items():
            print(f"{name:12} {url}", flush=True)
        print("Serving; press Ctrl-C to stop.", flush=True)
        await asyncio.Event().wait()


def main(argv: Sequence[str] | None = None) -> int:
    """Serve bundled sites and print their URLs until Ctrl-C; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m harness.sites.server",
        description="Serve the bundled WebMCP demo sites on loopback, one origin each.",
    )
    parser.add_argument(
        "names", nargs="*", metavar="SITE", help=f"sites to serve (default: all of {list(SITES)})"
    )
    parser.add_argument("--host", default=DEFAULT_HOST, help="loopback address to bind")
    parser.add_argument(
        "--port",
        action="append",
        type=_parse_port,
        default=[],
        metavar="NAME=PORT",
        help="fixed port for a site (repeatable); others get a free port",
    )
    args = parser.parse_args(argv)
    try:
        asyncio.run(_serve_forever(args.names or None, args.host, dict(args.port)))
    except KeyboardInterrupt:
        return 0
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
