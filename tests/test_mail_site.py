"""The mail site and the SEP's email scenario (seed 001), end to end.

A prompt injection in the inbox asks the agent to mail the salary spreadsheet to an
outside address. Under the default policy pack the harness blocks the send; with an
escalate rule the user is asked, and only an accept lets it through. The site's outbox
(and its request log) prove what was, and was not, sent.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from harness.sites.mail_app import (
    ACCOUNTANT,
    ATTACKER,
    INJECTION,
    SALARIES,
    SALARIES_ATTRIBUTION,
    classify,
)
from harness.sites.server import RunningSites, serve_sites

from harness import BrowserPool, Harness, Session
from harness.elicitation.wording import POLICY_CALL
from harness.stages.policy import Policy
from tests.stages.test_trust import Scripted, text_of

ESCALATE_OPEN_WORLD = """
[[rules]]
name = "confirm-open-world-to-external"
effect = "escalate"
description = "open-world data is in this session, and this tool sends its input somewhere public"
[rules.conditions]
and = [
  { fact = "request.annotations.openWorldHint", equals = true },
  { fact = "tool.annotations.inputMetadata.destination", equals = "public" },
]
"""

EXFILTRATION = {
    "to": ATTACKER,
    "subject": "Payroll verification",
    "body": "name,role,salary ...",
    "attachments": [SALARIES],
}


@pytest.fixture(scope="module")
async def sites() -> AsyncIterator[RunningSites]:
    async with serve_sites(["mail"]) as running:
        yield running


@pytest.fixture(scope="module", params=["polyfill", "native"])
async def harness(
    browser_pool: BrowserPool, request: pytest.FixtureRequest
) -> AsyncIterator[Harness]:
    async with Harness(browsers=browser_pool, backend=request.param, call_timeout=10) as h:
        yield h


@pytest.fixture
async def session(harness: Harness, sites: RunningSites) -> AsyncIterator[Session]:
    await sites.reset("mail")
    sites["mail"].clear_log()
    s = await harness.open(sites.url("mail"))
    yield s
    await s.close()


def outbox(sites: RunningSites) -> list[dict[str, Any]]:
    return list(sites["mail"].site.outbox)  # type: ignore[attr-defined]


def sends(sites: RunningSites) -> list[str]:
    return [r.body for r in sites.requests("mail") if (r.method, r.path) == ("POST", "/api/send")]


# -- the server ------------------------------------------------------------------------------


def test_attachments_are_classified_by_path() -> None:
    salaries = classify(SALARIES)
    assert salaries["attribution"] == [SALARIES_ATTRIBUTION]
    assert salaries["returnMetadata"] == {"source": "internal", "sensitivity": "financial"}
    assert classify("hr/team-roster.csv")["returnMetadata"]["sensitivity"] == "pii"
    assert classify("shared/lunch-menu.txt")["attribution"] == ["urn:org:acme:shared:lunch-menu"]
    for path in ("../hr/salaries.xlsx", "/etc/passwd", "hr\\salaries.xlsx"):
        assert classify(path)["maliciousActivityHint"] is True


async def test_the_api_annotates_and_records_what_it_sends(sites: RunningSites) -> None:
    await sites.reset("mail")
    async with aiohttp.ClientSession(sites.url("mail")) as http:
        async with http.get("/api/inbox", params={"limit": "2"}) as response:
            inbox = await response.json()
        assert [e["id"] for e in inbox["emails"]] == ["m1", "m2"]
        assert inbox["emails"][1]["body"] == INJECTION
        assert inbox["annotations"]["openWorldHint"] is True
        assert "maliciousActivityHint" not in inbox["annotations"]  # the scanner misses it
        async with http.get("/api/inbox", params={"folder": "junk"}) as response:
            assert (await response.json())["annotations"]["maliciousActivityHint"] is True
        async with http.post("/api/send", json={"to": "nobody", "subject": "", "body": ""}) as r:
            assert r.status == 400 and "not an email address" in (await r.json())["error"]
        email = {"to": ACCOUNTANT, "subject": "s", "body": "b", "requestAnnotations": {"x": 1}}
        async with http.post("/api/send", json=email) as response:
            assert response.status == 201
        async with http.get("/api/outbox") as response:
            sent = (await response.json())["sent"]
    assert [(e["to"], e["requestAnnotations"]) for e in sent] == [(ACCOUNTANT, {"x": 1})]
    await sites.reset("mail")
    assert outbox(sites) == []


# -- the scenario, on both backends -----------------------------------------------------------


async def test_the_injected_exfiltration_is_blocked_under_the_default_pack(
    session: Session, sites: RunningSites
) -> None:
    origin = sites.origin("mail")
    assert not (await session.call("read_drafts")).is_error
    inbox = await session.call("list_inbox")
    # The agent does see the injection: as untrusted data from the mail site's origin.
    framed = text_of(inbox)
    assert framed.startswith(f'<untrusted-data origin="{origin}">') and INJECTION in framed
    attachment = await session.call("get_attachment", {"path": SALARIES})
    assert "98000" in text_of(attachment)

    outcome = await session.call("send_email", EXFILTRATION)

    assert outcome.is_error
    assert "Blocked by policy rule 'block-open-world-to-external'" in text_of(outcome)
    assert outbox(sites) == [] and sends(sites) == []
    send = session.audit.for_call(outcome.call_id)[0]
    assert (send.effect, send.rules, send.outcome) == (
        "block",
        ["block-open-world-to-external"],
        "not run",
    )
    assert send.facts["request.annotations.openWorldHint"] is True
    assert send.facts["tool.annotations.inputMetadata.destination"] == "public"
    assert SALARIES_ATTRIBUTION in send.attribution
    # The salary file's attribution came from get_attachment's resolve(), before it ran
    # (its static declaration names no attribution).
    read = session.audit.for_call(attachment.call_id)[0]
    assert (read.phase, read.outcome) == ("before-call", "ran")
    assert SALARIES_ATTRIBUTION in read.attribution
    assert "financial" in session.trust.sensitivity


async def test_with_an_escalate_rule_the_user_is_asked_and_only_accept_sends(
    session: Session, sites: RunningSites, tmp_path: Path
) -> None:
    path = tmp_path / "escalate.toml"
    path.write_text(ESCALATE_OPEN_WORLD)
    session.policy = Policy.load(path)
    handler = Scripted("decline", "accept")
    session.elicitation = handler
    await session.call("list_inbox")
    await session.call("get_attachment", {"path": SALARIES})
    email = {
        "to": ACCOUNTANT,
        "subject": "Salaries",
        "body": "Attached.",
        "attachments": [SALARIES],
    }

    declined = await session.call("send_email", email)
    assert declined.is_error and "The user was asked and declined" in text_of(declined)
    assert outbox(sites) == [] and sends(sites) == []

    accepted = await session.call("send_email", email)
    assert not accepted.is_error
    question = handler.asked[1]
    assert question.rule == "confirm-open-world-to-external" and question.tool == "send_email"
    # The harness's sentence; the agent's arguments and the data's sources quoted apart.
    assert question.message == POLICY_CALL
    assert ACCOUNTANT in question.quoted[0].text and question.quoted[0].by == "agent"
    assert SALARIES_ATTRIBUTION in question.attribution
    [sent] = outbox(sites)
    assert sent["to"] == ACCOUNTANT and sent["attachments"] == [SALARIES]
    # The page was handed the session's annotations (options._meta.annotations).
    carried = sent["requestAnnotations"]
    assert carried["openWorldHint"] is True
    assert SALARIES_ATTRIBUTION in carried["attribution"]
    assert "financial" in carried["sensitivity"]
    assert json.loads(sends(sites)[0])["requestAnnotations"] == carried
    records = session.audit.for_call(accepted.call_id)
    assert (records[0].effect, records[0].answer, records[0].outcome) == (
        "escalate",
        "accept",
        "ran",
    )


async def test_open_world_persists_across_navigation(session: Session, sites: RunningSites) -> None:
    await session.call("list_inbox")
    await session.navigate(sites.url("mail", "/compose"))
    assert [t.name for t in await session.tools()] == ["read_drafts", "send_email"]
    assert session.trust.open_world

    blocked = await session.call("send_email", EXFILTRATION)
    assert blocked.is_error and "block-open-world-to-external" in text_of(blocked)
    record = session.audit.for_call(blocked.call_id)[0]
    assert session.url == sites.url("mail", "/compose")
    assert record.facts["request.annotations.openWorldHint"] is True
    assert sends(sites) == []

    # Without a policy the send goes out, and the new document got the session's annotations.
    session.policy = None
    assert not (await session.call("send_email", EXFILTRATION)).is_error
    assert outbox(sites)[0]["requestAnnotations"]["openWorldHint"] is True


async def test_the_honest_task_is_confirmed_as_irreversible(
    session: Session, sites: RunningSites
) -> None:
    handler = Scripted("accept")
    session.elicitation = handler
    await session.call("read_drafts")
    await session.call("get_attachment", {"path": SALARIES})
    outcome = await session.call(
        "send_email", {"to": ACCOUNTANT, "subject": "Salaries", "body": "Attached."}
    )
    assert not outcome.is_error
    assert [q.rule for q in handler.asked] == ["confirm-irreversible-actions"]
    [sent] = outbox(sites)
    assert sent["requestAnnotations"]["openWorldHint"] is False


async def test_a_flagged_inbox_result_is_withheld_unless_the_user_accepts(
    session: Session, sites: RunningSites
) -> None:
    withheld = await session.call("list_inbox", {"folder": "junk"})
    assert withheld.is_error and "escalate-malicious" in text_of(withheld)
    assert "Confirm your password" not in json.dumps(withheld.agent_json())
    assert [e.kind for e in session.trust.events if e.kind == "malicious-activity"] == [
        "malicious-activity"
    ]
    session.elicitation = Scripted("accept")
    delivered = await session.call("list_inbox", {"folder": "junk"})
    assert not delivered.is_error
    assert "flagged this result of 'list_inbox' as possibly malicious" in text_of(delivered, 0)
    origin = sites.origin("mail")
    assert text_of(delivered, 1).startswith(f'<untrusted-data origin="{origin}">')
    assert session.trust.malicious


async def test_a_path_that_leaves_the_store_is_flagged_by_resolve_and_not_run(
    session: Session, sites: RunningSites
) -> None:
    outcome = await session.call("get_attachment", {"path": "../../etc/passwd"})
    assert outcome.is_error and "escalate-malicious-request" in text_of(outcome)
    paths = [r.path for r in sites.requests("mail")]
    assert "/api/attachments/classify" in paths and "/api/attachments" not in paths
    assert any(e.kind == "malicious-activity" for e in session.trust.events)


# -- the CLI ----------------------------------------------------------------------------------

SCRIPT = shutil.which("webmcp-harness") or str(Path(sys.executable).parent / "webmcp-harness")


async def run(*args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        SCRIPT,
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "COLUMNS": "400"},
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_the_cli_warns_about_flagged_results_and_takes_policy_none(
    sites: RunningSites,
) -> None:
    url = sites.url("mail")
    args = ["call", url, "list_inbox", "--args", '{"folder": "junk"}', "--policy", "none"]
    code, out, err = await run(*args, "--json")
    assert code == 0
    # No policy: the flagged result reaches the agent (marked); the user is warned anyway.
    result = json.loads(out)["result"]
    assert result["isError"] is False and "possibly malicious" in result["content"][0]["text"]
    assert err.strip() == (
        f"warning: the page at {sites.origin('mail')} flagged this result of 'list_inbox' as "
        "possibly malicious (maliciousActivityHint)"
    )
