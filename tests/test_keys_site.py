"""The keys console end to end: its API, and the canary that must never reach an agent.

Every secret the site makes contains the canary. On both backends, through Python and
through the `webmcp-harness` command, the canary must appear in no agent view, no
`--json` output, no log record and no file the harness writes; the user still gets
every secret (each test also checks that, so none of them can pass by losing it).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from harness.sites import keys_app
from harness.sites.server import RunningSites, serve_sites
from mcp.types import CallToolResult

from harness import BrowserPool, Harness
from harness.models import dump_result
from harness.stages.redaction import withheld_items

CANARY = keys_app.CANARY
SCRIPT = shutil.which("webmcp-harness") or str(Path(sys.executable).parent / "webmcp-harness")

# Every tool of the console, with arguments.
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("generate_api_key", {"name": "production"}),
    ("list_keys", {}),
    ("get_recovery_codes", {}),
    ("create_token", {"name": "deploy", "ttl": 120}),
    ("create_legacy_token", {"name": "old"}),
]


@pytest.fixture(scope="module")
async def sites() -> AsyncIterator[RunningSites]:
    async with serve_sites(["keys"]) as running:
        yield running


# -- the API, over plain HTTP ------------------------------------------------------------


def client() -> aiohttp.ClientSession:
    # unsafe: keep cookies from an IP-address host (the sites serve on 127.0.0.1).
    return aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with client() as session:
        yield session


async def login(http: aiohttp.ClientSession, sites: RunningSites) -> None:
    async with http.get(sites.url("keys")) as response:
        assert response.status == 200
        assert response.cookies[keys_app.SESSION_COOKIE]["httponly"]


async def test_the_page_logs_in_and_the_api_needs_the_login(
    http: aiohttp.ClientSession, sites: RunningSites
) -> None:
    async with http.get(sites.url("keys", "/api/keys")) as response:
        assert response.status == 401
        assert "not logged in" in (await response.json())["error"]
    await login(http, sites)
    async with http.get(sites.url("keys", "/api/keys")) as response:
        assert response.status == 200
        assert response.headers["Cache-Control"] == "no-store"
        assert [k["name"] for k in (await response.json())["keys"]] == ["ci-runner"]


async def test_every_secret_carries_the_canary_and_the_list_none(
    http: aiohttp.ClientSession, sites: RunningSites
) -> None:
    await login(http, sites)
    async with http.post(sites.url("keys", "/api/keys"), json={"name": "prod"}) as response:
        key = await response.json()
        assert response.status == 201 and CANARY in key["secret"]
    async with http.get(sites.url("keys", "/api/recovery-codes")) as response:
        codes = (await response.json())["codes"]
        assert len(codes) == keys_app.RECOVERY_CODES and all(CANARY in c for c in codes)
    async with http.get(sites.url("keys", "/api/keys")) as response:
        listed = await response.text()
        assert CANARY not in listed and key["id"] in listed


async def test_a_token_is_redeemed_once_by_its_owner(
    http: aiohttp.ClientSession, sites: RunningSites
) -> None:
    await login(http, sites)
    async with http.post(sites.url("keys", "/api/tokens"), json={"name": "t", "ttl": 60}) as r:
        reference = await r.json()
    assert reference["label"] == "Access token 't'" and reference["ttl"] == 60
    url = sites.url("keys", reference["redeemUrl"])
    async with client() as stranger:
        await login(stranger, sites)
        async with stranger.get(url) as response:
            assert response.status == 404  # another login's token is unknown to this one
    async with http.get(url) as response:
        assert response.status == 200 and response.headers["Cache-Control"] == "no-store"
        assert CANARY in (await response.json())["value"]
    async with http.get(url) as response:
        assert response.status == 410


async def test_the_sloppy_endpoint_is_sloppy(
    http: aiohttp.ClientSession, sites: RunningSites
) -> None:
    await login(http, sites)
    async with http.post(sites.url("keys", "/api/legacy-tokens"), json={"name": "x"}) as r:
        reference = await r.json()
    assert reference["ttl"] == keys_app.LEGACY_TOKEN_TTL_S
    assert reference["mirrorUrl"].startswith(f"http://localhost:{sites['keys'].port}/")
    for _ in range(2):  # reusable
        async with http.get(sites.url("keys", reference["redeemUrl"])) as response:
            assert response.status == 200 and "Cache-Control" not in response.headers


@pytest.mark.parametrize(
    ("path", "body", "message"),
    [
        ("/api/keys", {}, "name is required"),
        ("/api/keys", ["x"], "must be a JSON object"),
        ("/api/tokens", {"name": "t", "ttl": 0}, "ttl must be an integer from 1 to 3600"),
        ("/api/tokens", {"name": "t", "ttl": True}, "ttl must be an integer"),
    ],
)
async def test_bad_input_is_a_400_that_says_why(
    http: aiohttp.ClientSession, sites: RunningSites, path: str, body: Any, message: str
) -> None:
    await login(http, sites)
    async with http.post(sites.url("keys", path), json=body) as response:
        assert response.status == 400
        assert message in (await response.json())["error"]


# -- the canary, through Python, on both backends ----------------------------------------


@pytest.fixture(scope="module", params=["polyfill", "native"])
async def harness(
    browser_pool: BrowserPool, request: pytest.FixtureRequest
) -> AsyncIterator[Harness]:
    async with Harness(browsers=browser_pool, backend=request.param, call_timeout=10) as h:
        yield h


async def test_the_canary_reaches_the_user_and_never_an_agent_view_or_a_log(
    harness: Harness, sites: RunningSites, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    session = await harness.open(sites.url("keys"))
    try:
        agent_views: list[str] = [json.dumps([t.as_json() for t in await session.agent_tools()])]
        agent_views.append(json.dumps([w.model_dump() for w in session.warnings]))
        revealed: list[str] = []
        for name, arguments in CALLS:
            outcome = await session.call(name, arguments)
            assert not outcome.is_error, outcome.agent_json()
            agent_views += [
                json.dumps(outcome.agent_json()),
                outcome.model_dump_json(),
                repr(outcome),
                str(outcome),
                " ".join(outcome.notes),
            ]
            for attempt in await session.reveal_all(outcome):
                if attempt.revealed is not None:
                    revealed.append(json.dumps(attempt.revealed.value))
                    agent_views.append(repr(attempt.revealed))
                else:
                    agent_views.append(str(attempt.error))
        agent_views += [
            json.dumps([o.agent_json() for o in session.history]),
            repr(session.history),
        ]
        user_views = [session.user_view(o) for o in session.history]
        defects = [d.model_dump_json() for d in session.vault.defects]
    finally:
        await session.close()

    for view in [*agent_views, *defects, caplog.text]:
        assert CANARY not in view
    # The user got every secret: key, codes, token and the same-origin legacy token.
    assert sum(CANARY in r for r in revealed) == 4
    assert sum(CANARY in json.dumps(dump_result(v)) for v in user_views if v is not None) == 2
    assert {"redeem-missing-no-store", "redeem-url-cross-origin", "ttl-above-cap"} <= {
        json.loads(d)["code"] for d in defects
    }
    assert "withheld" in caplog.text  # the log says what happened, without the values


# -- the canary, through the command line -------------------------------------------------


async def cli(tmp: Path, *args: str) -> tuple[int, str, str]:
    """Run `webmcp-harness` with its working directory, HOME and TMPDIR under ``tmp``."""
    (tmp / "cwd").mkdir(parents=True)
    (tmp / "home").mkdir()
    env = {**os.environ, "HOME": str(tmp / "home"), "TMPDIR": str(tmp)}
    proc = await asyncio.create_subprocess_exec(
        SCRIPT,
        *args,
        cwd=tmp / "cwd",
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=90)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def files_with(folder: Path, marker: str) -> list[Path]:
    return [
        path
        for path in folder.rglob("*")
        if path.is_file() and marker.encode() in path.read_bytes()
    ]


@pytest.mark.parametrize("backend", ["polyfill", "native"])
async def test_call_json_never_holds_the_canary(
    sites: RunningSites, short_tmp: Path, backend: str
) -> None:
    url = sites.url("keys")
    (code, out, err), (code_r, out_r, err_r) = await asyncio.gather(
        cli(short_tmp / "plain", "call", url, "get_recovery_codes", "--json", "--backend", backend),
        cli(
            short_tmp / "reveal",
            *("call", url, "generate_api_key", "--args", '{"name": "a"}'),
            *("--reveal", "--json", "--backend", backend),
        ),
    )
    assert code == 0, err
    assert json.loads(out)["result"]["_meta"]["webmcp-harness/redacted"][0]["kind"] == "result"
    assert CANARY not in out and CANARY not in err
    # --reveal --json: stdout is the agent view alone; the secret goes to the terminal.
    assert code_r == 0, err_r
    [item] = withheld_items(CallToolResult.model_validate(json.loads(out_r)["result"]))
    assert CANARY not in out_r
    assert f"API key secret [field, {item.handle}]:\n    hxk_{CANARY}_" in err_r
    assert files_with(short_tmp, CANARY) == []


async def test_call_reveal_shows_the_user_each_value_defect_and_refusal(
    sites: RunningSites, short_tmp: Path
) -> None:
    code, out, err = await cli(
        short_tmp,
        "call",
        sites.url("keys"),
        "create_legacy_token",
        "--args",
        '{"name": "b"}',
        "--reveal",
    )
    # The mirror reference cannot be revealed, so the command says it could not do it all.
    assert code == 1
    assert out.startswith("create_legacy_token: ok") and CANARY not in out
    assert err.startswith("Revealed to you (the user), never to the agent:\n")
    assert f"hxl_{CANARY}_" in err
    assert "site defect: create_legacy_token: the redemption endpoint" in err
    assert "not revealed: The secret reference \"Legacy token 'b' (mirror)\"" in err
    assert files_with(short_tmp, CANARY) == []
