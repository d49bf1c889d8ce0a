"""The keys console: a site whose tools make secrets, for the harness's redaction and vault.

Opening `/` logs the browser in: the page load sets an `HttpOnly` login cookie
(`keys_session`), and every API call needs it (401 without). Each login has its own keys.
Every secret the site makes contains the canary marker `HXCANARY`, so a test can search any
output for it.

| tool (page script)    | what it returns                                                  |
|-----------------------|------------------------------------------------------------------|
| `generate_api_key`    | `{id, name, secret, createdAt}`; `secret` is `x-sensitive`       |
| `list_keys`           | `{keys: [{id, name, createdAt}]}` (no secrets)                   |
| `get_recovery_codes`  | `{codes: [...]}`; `sensitiveHint`, no `outputSchema`             |
| `create_token`        | a text line and a `secret_reference` to a redemption endpoint    |
| `create_legacy_token` | deliberately sloppy: a reference whose endpoint lacks `no-store` |
|                       | with a day-long ttl, and one with a cross-origin `redeemUrl`     |

The JSON API behind them:

| request                                   | answer                                               |
|-------------------------------------------|------------------------------------------------------|
| `GET /api/keys`                           | `{"keys": [...]}`                                    |
| `POST /api/keys` `{"name": …}`            | 201 `{"id", "name", "secret", "createdAt"}`          |
| `GET /api/recovery-codes`                 | `{"codes": [8 codes]}`                               |
| `POST /api/tokens` `{"name", "ttl"?}`     | 201 `{"id", "label", "redeemUrl", "ttl"}`            |
| `GET /api/tokens/{id}/redeem`             | the redemption contract (seed 000 §4a), below        |
| `POST /api/legacy-tokens` `{"name"}`      | 201 `{"id", "label", "redeemUrl", "mirrorUrl", "ttl"}` |
| `GET /api/legacy-tokens/{id}/redeem`      | 200 `{"value"}` without `Cache-Control: no-store`    |

Redemption (`GET /api/tokens/{id}/redeem`), in this order: no or unknown login cookie → 401;
more than `RATE_LIMIT` redemption attempts by this login within `RATE_WINDOW_S` → 429 with
`Retry-After`; a token this login does not own → 404; used or past its ttl → 410;
otherwise 200 `{"value": "hxt_HXCANARY_…"}` with `Cache-Control: no-store`, and the token is
used up.
"""

from __future__ import annotations

import json
import math
import secrets
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from aiohttp import web

STATIC_DIR: Final = Path(__file__).parent / "keys"

CANARY: Final = "HXCANARY"
"""In every secret the site makes: a test that finds it in agent-facing output found a leak."""

SESSION_COOKIE: Final = "keys_session"
RATE_LIMIT: Final = 5
"""Redemption attempts one login may make within `RATE_WINDOW_S` (the next one gets 429)."""
RATE_WINDOW_S: Final = 60.0
DEFAULT_TOKEN_TTL_S: Final = 300
MAX_TOKEN_TTL_S: Final = 3600
LEGACY_TOKEN_TTL_S: Final = 86400
"""The sloppy tool's ttl: a day, above the harness's default cap of an hour."""
RECOVERY_CODES: Final = 8
MAX_NAME_LENGTH: Final = 64


@dataclass
class Token:
    """A secret waiting behind a redemption endpoint."""

    owner: str
    value: str
    expires_at: float
    used: bool = False


@dataclass
class Login:
    """One logged-in browser: its keys, recovery codes and redemption attempts."""

    keys: list[dict[str, str]] = field(default_factory=list)
    recovery_codes: list[str] = field(default_factory=list)
    attempts: deque[float] = field(default_factory=deque)


def _error(exc_type: type[web.HTTPException], message: str, **headers: str) -> web.HTTPException:
    """An HTTP error whose body is `{"error": message}`."""
    return exc_type(
        text=json.dumps({"error": message}), content_type="application/json", headers=headers
    )


def _no_store(response: web.StreamResponse) -> web.StreamResponse:
    response.headers["Cache-Control"] = "no-store"
    return response


def _secret(kind: str) -> str:
    return f"{kind}_{CANARY}_{secrets.token_hex(16)}"


class KeysSite:
    """One running instance of the keys console: logins, keys, tokens."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.logins: dict[str, Login] = {}
        self.tokens: dict[str, Token] = {}
        self.legacy_tokens: dict[str, Token] = {}
        self._key_counter = 0

    def routes(self) -> Iterable[web.AbstractRouteDef]:
        """The page, its files, and the JSON API."""
        return [
            web.get("/", self.index_page),
            web.get(r"/{file:[a-z_]+\.(?:js|css)}", self.static_file),
            web.get("/api/keys", self.list_keys),
            web.post("/api/keys", self.create_key),
            web.get("/api/recovery-codes", self.recovery_codes),
            web.post("/api/tokens", self.create_token),
            web.get("/api/tokens/{id}/redeem", self.redeem_token),
            web.post("/api/legacy-tokens", self.create_legacy_token),
            web.get("/api/legacy-tokens/{id}/redeem", self.redeem_legacy_token),
        ]

    async def reset(self) -> None:
        """Forget every login, key and token."""
        self.logins.clear()
        self.tokens.clear()
        self.legacy_tokens.clear()
        self._key_counter = 0

    async def close(self) -> None:
        """Nothing to release: the state is in memory."""

    # -- logins ------------------------------------------------------------------------

    def _login(self, request: web.Request) -> tuple[str, Login]:
        """The request's login, or a 401 that says how to get one."""
        cookie = request.cookies.get(SESSION_COOKIE, "")
        login = self.logins.get(cookie)
        if login is None:
            raise _error(
                web.HTTPUnauthorized, "not logged in: open the keys console (/) in this browser"
            )
        return cookie, login

    def _new_login(self) -> str:
        cookie = secrets.token_urlsafe(24)
        self._key_counter += 1
        self.logins[cookie] = Login(
            keys=[{"id": f"key_{self._key_counter}", "name": "ci-runner", "createdAt": _now()}]
        )
        return cookie

    # -- pages -------------------------------------------------------------------------

    async def index_page(self, request: web.Request) -> web.StreamResponse:
        """The console; loading it logs the browser in (sets the login cookie)."""
        response = _no_store(web.FileResponse(STATIC_DIR / "index.html"))
        if request.cookies.get(SESSION_COOKIE) not in self.logins:
            response.set_cookie(
                SESSION_COOKIE, self._new_login(), httponly=True, samesite="Strict", path="/"
            )
        return response

    async def static_file(self, request: web.Request) -> web.StreamResponse:
        """A script or style sheet from `keys/` (the route pattern allows no paths)."""
        path = STATIC_DIR / request.match_info["file"]
        if not path.is_file():
            raise _error(web.HTTPNotFound, f"no such file: {request.path}")
        return _no_store(web.FileResponse(path))

    # -- keys and codes ----------------------------------------------------------------

    async def list_keys(self, request: web.Request) -> web.StreamResponse:
        """`GET /api/keys`: the login's keys, without their secrets."""
        _, login = self._login(request)
        return _no_store(web.json_response({"keys": login.keys}))

    async def create_key(self, request: web.Request) -> web.StreamResponse:
        """`POST /api/keys` with `{"name": …}`: a new key, its secret shown this once."""
        _, login = self._login(request)
        name = _name(await _json_body(request))
        self._key_counter += 1
        key = {"id": f"key_{self._key_counter}", "name": name, "createdAt": _now()}
        login.keys.append(key)
        return _no_store(web.json_response({**key, "secret": _secret("hxk")}, status=201))

    async def recovery_codes(self, request: web.Request) -> web.StreamResponse:
        """`GET /api/recovery-codes`: the login's one-time recovery codes."""
        _, login = self._login(request)
        if not login.recovery_codes:
            login.recovery_codes = [
                f"{CANARY}-{secrets.token_hex(3)}-{secrets.token_hex(3)}"
                for _ in range(RECOVERY_CODES)
            ]
        return _no_store(web.json_response({"codes": login.recovery_codes}))

    # -- tokens behind the redemption contract -----------------------------------------

    async def create_token(self, request: web.Request) -> web.StreamResponse:
        """`POST /api/tokens` with `{"name", "ttl"?}`: a reference to a one-time token."""
        owner, _ = self._login(request)
        body = await _json_body(request)
        name = _name(body)
        ttl = body.get("ttl", DEFAULT_TOKEN_TTL_S)
        if not isinstance(ttl, int) or isinstance(ttl, bool) or not 1 <= ttl <= MAX_TOKEN_TTL_S:
            raise _error(
                web.HTTPBadRequest, f"ttl must be an integer from 1 to {MAX_TOKEN_TTL_S} seconds"
            )
        token_id = "tok_" + secrets.token_hex(8)
        self.tokens[token_id] = Token(owner, _secret("hxt"), self.clock() + ttl)
        reference = {
            "id": token_id,
            "label": f"Access token {name!r}",
            "redeemUrl": f"/api/tokens/{token_id}/redeem",
            "ttl": ttl,
        }
        return _no_store(web.json_response(reference, status=201))

    async def redeem_token(self, request: web.Request) -> web.StreamResponse:
        """`GET /api/tokens/{id}/redeem`: the redemption contract, one-time use."""
        owner, login = self._login(request)
        self._rate_limit(login)
        token = self.tokens.get(request.match_info["id"])
        if token is None or token.owner != owner:
            raise _error(web.HTTPNotFound, "no such token")
        if token.used or self.clock() >= token.expires_at:
            raise _error(web.HTTPGone, "this token was already redeemed or has expired")
        token.used = True
        return _no_store(web.json_response({"value": token.value}))

    def _rate_limit(self, login: Login) -> None:
        now = self.clock()
        while login.attempts and now - login.attempts[0] >= RATE_WINDOW_S:
            login.attempts.popleft()
        if len(login.attempts) >= RATE_LIMIT:
            retry_after = max(1, math.ceil(login.attempts[0] + RATE_WINDOW_S - now))
            raise _error(
                web.HTTPTooManyRequests,
                f"too many redemptions; try again in {retry_after} s",
                **{"Retry-After": str(retry_after)},
            )
        login.attempts.append(now)

    # -- the sloppy way ----------------------------------------------------------------

    async def create_legacy_token(self, request: web.Request) -> web.StreamResponse:
        """`POST /api/legacy-tokens`: what a careless site does (for audits to catch).

        The token lives a day, its endpoint is reusable and cacheable, and the answer
        offers a "mirror" URL on another origin (same server, other host name).
        """
        owner, _ = self._login(request)
        name = _name(await _json_body(request))
        token_id = "leg_" + secrets.token_hex(8)
        self.legacy_tokens[token_id] = Token(
            owner, _secret("hxl"), self.clock() + LEGACY_TOKEN_TTL_S
        )
        path = f"/api/legacy-tokens/{token_id}/redeem"
        other_host = "localhost" if request.url.host != "localhost" else "127.0.0.1"
        return web.json_response(
            {
                "id": token_id,
                "label": f"Legacy token {name!r}",
                "redeemUrl": path,
                "mirrorUrl": f"http://{other_host}:{request.url.port}{path}",
                "ttl": LEGACY_TOKEN_TTL_S,
            },
            status=201,
        )

    async def redeem_legacy_token(self, request: web.Request) -> web.StreamResponse:
        """`GET /api/legacy-tokens/{id}/redeem`: reusable, and without `no-store`."""
        owner, _ = self._login(request)
        token = self.legacy_tokens.get(request.match_info["id"])
        if token is None or token.owner != owner:
            raise _error(web.HTTPNotFound, "no such token")
        if self.clock() >= token.expires_at:
            raise _error(web.HTTPGone, "this token has expired")
        return web.json_response({"value": token.value})


async def _json_body(request: web.Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise _error(web.HTTPBadRequest, f"body is not valid JSON: {exc}") from None
    if not isinstance(body, dict):
        raise _error(web.HTTPBadRequest, 'body must be a JSON object like {"name": "ci"}')
    return body


def _name(body: dict[str, Any]) -> str:
    name = body.get("name")
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME_LENGTH:
        raise _error(
            web.HTTPBadRequest, f"name is required: a string of 1 to {MAX_NAME_LENGTH} characters"
        )
    return name


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
