"""Redeeming secret references (seed 000 §4a) against the keys console, on both backends.

Each status and rule has its test; the site's request log proves when no request was
sent. A small extra server covers redirects and the statuses the keys console never
answers with.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web
from harness.sites import keys_app
from harness.sites.server import RunningSites, serve_sites
from playwright.async_api import APIRequestContext, async_playwright

from harness import BrowserPool, Harness, Session, SessionClosed
from harness.errors import (
    RedemptionFailed,
    RedemptionRateLimited,
    RedemptionRefused,
    RedemptionUnauthorized,
    ReferenceExpired,
    ReferenceGone,
    ReferenceNotFound,
    UnknownHandle,
)
from harness.models import Tool, dump_result
from harness.stages.normalization import normalize_value
from harness.stages.redaction import redact, withheld_items
from harness.stages.redemption import _retry_after, reveal
from harness.stages.vault import Vault

CANARY = keys_app.CANARY


@pytest.fixture(scope="module", params=["polyfill", "native"])
async def harness(
    browser_pool: BrowserPool, request: pytest.FixtureRequest
) -> AsyncIterator[Harness]:
    async with Harness(browsers=browser_pool, backend=request.param, call_timeout=10) as h:
        yield h


@pytest.fixture(scope="module")
async def sites() -> AsyncIterator[RunningSites]:
    async with serve_sites(["keys"]) as running:
        yield running


@pytest.fixture(scope="module")
async def console(harness: Harness, sites: RunningSites) -> AsyncIterator[Session]:
    s = await harness.open(sites.url("keys"))
    yield s
    await s.close()


@pytest.fixture
async def session(console: Session, sites: RunningSites) -> Session:
    """The console, logged in afresh (a new login has a new rate limit), with an empty log."""
    await console.context.clear_cookies()
    await console.open(sites.url("keys"))
    console.vault.clock = time.monotonic
    sites["keys"].clear_log()
    return console


async def token(session: Session, **args: Any) -> str:
    """Call create_token; the handle of the reference it returned."""
    outcome = await session.call("create_token", {"name": "ci", **args})
    [item] = withheld_items(outcome.result)
    assert item.kind == "secret_reference" and item.label == "Access token 'ci'"
    return item.handle


def redeems(sites: RunningSites) -> list[str]:
    return [r.path for r in sites.requests("keys") if r.path.endswith("/redeem")]


async def test_a_reference_is_redeemed_with_the_page_s_cookies(
    session: Session, sites: RunningSites
) -> None:
    handle = await token(session)
    revealed = await session.reveal(handle)
    assert revealed.value.startswith(f"hxt_{CANARY}_")
    assert revealed.kind == "secret_reference" and revealed.defects == []
    [path] = redeems(sites)
    assert path.startswith("/api/tokens/tok_")
    # The agent view never had the id or the URL; the user view has both.
    outcome = session.history[-1]
    assert path not in json.dumps(outcome.agent_json())
    user_view = session.user_view(outcome)
    assert user_view is not None and path in json.dumps(dump_result(user_view))


async def test_a_used_reference_is_gone(session: Session) -> None:
    handle = await token(session)
    await session.reveal(handle)
    with pytest.raises(ReferenceGone, match=r"already redeemed or has expired \(HTTP 410\)"):
        await session.reveal(handle)


async def test_without_the_login_cookie_it_is_not_authorized(
    session: Session, sites: RunningSites
) -> None:
    handle = await token(session)
    await session.context.clear_cookies()
    with pytest.raises(RedemptionUnauthorized, match=r"HTTP 401.*log in to the site"):
        await session.reveal(handle)
    assert len(redeems(sites)) == 1  # the request was sent, without the cookie


async def test_an_unknown_reference_is_not_found(session: Session, sites: RunningSites) -> None:
    handle = await token(session)
    site = sites["keys"].site
    assert isinstance(site, keys_app.KeysSite)
    site.tokens.clear()
    with pytest.raises(ReferenceNotFound, match="HTTP 404"):
        await session.reveal(handle)


async def test_rate_limiting_reports_retry_after_and_is_not_retried(
    session: Session, sites: RunningSites
) -> None:
    handle = await token(session)
    await session.reveal(handle)
    for _ in range(keys_app.RATE_LIMIT - 1):
        with pytest.raises(ReferenceGone):
            await session.reveal(handle)
    with pytest.raises(RedemptionRateLimited, match=r"HTTP 429\); try again in \d+ s") as caught:
        await session.reveal(handle)
    assert caught.value.retry_after is not None
    assert 0 < caught.value.retry_after <= keys_app.RATE_WINDOW_S
    assert len(redeems(sites)) == keys_app.RATE_LIMIT + 1


async def test_a_cross_origin_redeem_url_is_refused_before_any_request(
    session: Session, sites: RunningSites
) -> None:
    outcome = await session.call("create_legacy_token", {"name": "old"})
    mirror = next(i for i in withheld_items(outcome.result) if i.label.endswith("(mirror)"))
    codes = [d.code for d in session.vault.get(mirror.handle).defects]
    assert codes == ["redeem-url-cross-origin", "ttl-above-cap"]
    with pytest.raises(RedemptionRefused, match=r"points to http://localhost:\d+, not to"):
        await session.reveal(mirror.handle)
    assert redeems(sites) == []


async def test_a_missing_no_store_and_a_long_ttl_are_flagged(session: Session) -> None:
    outcome = await session.call("create_legacy_token", {"name": "old"})
    first = withheld_items(outcome.result)[0]
    revealed = await session.reveal(first.handle)
    assert revealed.value.startswith(f"hxl_{CANARY}_")  # the value still comes back
    assert [d.code for d in revealed.defects] == ["ttl-above-cap", "redeem-missing-no-store"]
    assert all(CANARY not in d.message for d in revealed.defects)
    assert "redeem-missing-no-store" in [d.code for d in session.vault.defects]


async def test_an_expired_reference_is_refused_locally(
    session: Session, sites: RunningSites
) -> None:
    handle = await token(session, ttl=60)
    session.vault.clock = lambda: time.monotonic() + 61
    with pytest.raises(ReferenceExpired, match=r"ttl was 60 s\); the harness did not ask"):
        await session.reveal(handle)
    assert redeems(sites) == []


async def test_handles_are_per_session_and_forgotten_on_close(
    harness: Harness, session: Session, sites: RunningSites
) -> None:
    handle = await token(session)
    other = await harness.open(sites.url("keys"))
    try:
        with pytest.raises(UnknownHandle):
            await other.reveal(handle)
        other_handle = await token(other)
    finally:
        await other.close()
    with pytest.raises(SessionClosed):
        await other.reveal(other_handle)
    assert len(other.vault) == 0


# -- what the keys console never does ---------------------------------------------------------


class Redeemer:
    """A tiny site with redemption endpoints that misbehave in the ways the tests need."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self.port = 0
        self._runner: web.AppRunner | None = None

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        async def handle(request: web.Request) -> web.StreamResponse:
            self.log.append(f"{request.method} {request.host} {request.path}")
            name = request.match_info["name"]
            if name == "value":
                return web.json_response(
                    {"value": f"{CANARY}-r"}, headers={"Cache-Control": "no-store"}
                )
            if name == "home":
                raise web.HTTPFound("/value")
            if name == "away":
                raise web.HTTPFound(f"http://localhost:{self.port}/value")
            if name == "forbidden":
                return web.json_response({"error": "no"}, status=403)
            if name == "teapot":
                return web.json_response({"error": "tea"}, status=418)
            if name == "dated":
                return web.json_response(
                    {}, status=429, headers={"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}
                )
            return web.json_response({"val": "wrong shape"})

        app = web.Application()
        app.router.add_get("/{name}", handle)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        self.port = int(self._runner.addresses[0][1])

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    def reference(self, vault: Vault, path: str) -> str:
        """Hand a result with a reference to ``path`` to redaction; the handle."""
        tool = Tool(name="mint", description="d", origin=self.origin, frame="main")
        result = normalize_value(
            json.dumps(
                {"content": [{"type": "secret_reference", "label": path, "redeemUrl": path}]}
            )
        )
        [item] = withheld_items(redact(tool, result, vault).result)
        return item.handle


@pytest.fixture(scope="module")
async def redeemer() -> AsyncIterator[Redeemer]:
    server = Redeemer()
    await server.start()
    yield server
    await server.stop()


@pytest.fixture(scope="module")
async def http() -> AsyncIterator[APIRequestContext]:
    """Redemption needs only an APIRequestContext; these rules do not depend on the backend."""
    async with async_playwright() as playwright:
        context = await playwright.request.new_context()
        yield context
        await context.dispose()


@pytest.mark.parametrize(
    ("path", "error", "message"),
    [
        ("/away", RedemptionRefused, "redirected to http://localhost:"),
        ("/forbidden", RedemptionUnauthorized, "HTTP 403"),
        ("/teapot", RedemptionFailed, "answered HTTP 418"),
        ("/shape", RedemptionFailed, 'not with {"value": string}'),
        ("/dated", RedemptionRateLimited, "try again in 0 s"),
    ],
)
async def test_other_answers_are_errors_that_say_what_happened(
    http: APIRequestContext, redeemer: Redeemer, path: str, error: type[Exception], message: str
) -> None:
    vault = Vault()
    handle = redeemer.reference(vault, path)
    redeemer.log.clear()
    with pytest.raises(error, match=re.escape(message)):
        await reveal(vault, handle, http)
    # Only the first request was sent: a redirect away is not followed, 429 not retried.
    assert redeemer.log == [f"GET 127.0.0.1:{redeemer.port} {path}"]


async def test_a_same_origin_redirect_is_followed(
    http: APIRequestContext, redeemer: Redeemer
) -> None:
    vault = Vault()
    handle = redeemer.reference(vault, "/home")
    redeemer.log.clear()
    revealed = await reveal(vault, handle, http)
    assert revealed.value == f"{CANARY}-r" and revealed.defects == []
    assert [line.split()[-1] for line in redeemer.log] == ["/home", "/value"]


def test_retry_after_reads_seconds_and_dates() -> None:
    assert _retry_after("12") == 12.0
    assert _retry_after(None) is None and _retry_after("soon") is None
    later = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 100))
    after = _retry_after(later)
    assert after is not None and 90 < after <= 100
