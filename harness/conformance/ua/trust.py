"""``/seeds/trust/``: seed 001 — the Trust and Sensitivity Annotations SEP, on the client side.

The user agent is the SEP's client (it keeps the agent session's trust state and sends it
with every call) and, towards the agent, its server (it aggregates a response's
annotations). Its default policy pack holds the SEP's example rules. Annotations are hints
from an untrusted page: the checks here make sure no page can talk its way out of them.
"""

from __future__ import annotations

from typing import Any

from harness.conformance.ua.framework import (
    SessionSetup,
    TestContext,
    TestFile,
    check,
    cite,
    equal,
    is_in,
    seed,
)
from harness.elicitation.base import AutoHandler
from harness.models import CallOutcome
from harness.stages.trust import TRUST_META

PROPAGATION = TestFile(
    "/seeds/trust/propagation.html", "trust.html", "Propagation across the session", fresh=True
)
REQUESTS = TestFile(
    "/seeds/trust/request-annotations.html", "trust.html", "Request annotations", fresh=True
)
# The user accepts whatever is asked here, so that what a response carries is seen on its own.
AGGREGATION = TestFile(
    "/seeds/trust/response-annotations.html",
    "trust.html",
    "Response annotations",
    fresh=True,
    setup=SessionSetup(elicitation=lambda: AutoHandler("accept")),
)
POLICY = TestFile("/seeds/trust/policy.html", "trust.html", "The policy layer", fresh=True)
RESOLVE = TestFile(
    "/seeds/trust/resolve.html", "trust.html", "tools/resolve and untrusted hints", fresh=True
)

ATTRIBUTION_UNION = seed(
    "001 Propagation Rules",
    "Attribution accumulation: attribution lists SHOULD be merged (union) across context boundaries",
)
SURFACE = seed(
    "001 Client Responsibilities", "Clients SHOULD surface maliciousActivityHint to users"
)
EXAMPLE_RULES = seed(
    "001 Client Responsibilities",
    "Clients MAY enforce basic policies (block, escalate, require confirmation)",
)
DEGRADATION = seed(
    "001 Graceful Degradation", 'Missing annotations treated as unknown (not as "safe")'
)


async def _request_annotations(t: TestContext) -> dict[str, Any]:
    outcome = await t.call("echo_meta")
    structured = outcome.result.structured_content or {}
    annotations = structured.get("annotations")
    if not isinstance(annotations, dict):
        raise AssertionError(f"execute got no request annotations: {structured}")
    return dict(annotations)


# -- propagation ------------------------------------------------------------------------------


@PROPAGATION.subtest(
    "after an open-world result the session is open-world",
    cite("001-open-world-persists"),
    cite("001-propagate"),
)
async def _(t: TestContext) -> None:
    await t.call("read_web")
    equal(t.session.trust.open_world, True, "the session's openWorldHint")


@PROPAGATION.subtest(
    "a later result saying openWorldHint false does not clear it",
    cite("001-open-world-persists"),
    cite("001-propagation-must"),
    cite("001-untrusted-hints"),
)
async def _(t: TestContext) -> None:
    await t.call("read_web")
    await t.call("read_hr")
    equal(t.session.trust.open_world, True, "the session's openWorldHint")
    equal((await _request_annotations(t)).get("openWorldHint"), True, "openWorldHint sent")


@PROPAGATION.subtest(
    "open-world persists across a navigation in the same agent session",
    cite("001-open-world-persists"),
    seed("001 Terminology", "Trust annotations propagate across an agent session"),
)
async def _(t: TestContext) -> None:
    await t.call("read_web")
    await t.reload()
    equal((await _request_annotations(t)).get("openWorldHint"), True, "openWorldHint sent")


@PROPAGATION.subtest("attribution accumulates as a union", cite("001-propagate"), ATTRIBUTION_UNION)
async def _(t: TestContext) -> None:
    await t.call("read_web")
    await t.call("read_hr")
    await t.call("read_web")
    equal(
        t.session.trust.attribution,
        ["https://web.example/page", "urn:org:acme:hr:salaries"],
        "the session's attribution",
    )


@PROPAGATION.subtest(
    "a tool that declares untrusted public output makes the session open-world when it runs",
    cite("001-propagate"),
    seed("001 Source", "untrustedPublic — Public but unverified sources."),
)
async def _(t: TestContext) -> None:
    await t.call("read_web")
    kinds = [event.kind for event in t.session.trust.events]
    is_in("open-world", kinds, "the session's trust events")


@PROPAGATION.subtest(
    "returnMetadata in a result's annotations joins the session",
    cite("001-propagate"),
    seed("001 Tool Call Result Extension", "The CallToolResult MAY include trust annotations"),
)
async def _(t: TestContext) -> None:
    await t.call("classified")
    is_in("financial", t.session.trust.sensitivity, "the session's sensitivity classes")


@PROPAGATION.subtest(
    "attribution gathered on one origin is not sent to another origin",
    seed("001 Privacy Considerations", "Whether to share annotations across MCP servers"),
    cite("001-propagate"),
)
async def _(t: TestContext) -> None:
    await t.call("read_hr")
    await t.session.open(t.fixtures.url("/pages/trust.html", 1))
    await t.session.page.wait_for_function("document.body?.dataset.ready === 'true'")
    sent = await _request_annotations(t)
    check("attribution" not in sent, f"another origin was sent the attribution: {sent}")


# -- request annotations --------------------------------------------------------------------


@REQUESTS.subtest(
    "a script tool receives the session's annotations in options._meta.annotations",
    cite("001-respect-request"),
    seed(
        "001 Tool Call Request Extension",
        "The CallToolRequest params MAY include trust annotations",
    ),
)
async def _(t: TestContext) -> None:
    await t.call("read_web")
    sent = await _request_annotations(t)
    equal(
        (sent.get("openWorldHint"), sent.get("attribution")),
        (True, ["https://web.example/page"]),
        "(openWorldHint, attribution) sent",
    )


@REQUESTS.subtest(
    "the first call of a session carries openWorldHint false",
    cite("001-respect-request"),
)
async def _(t: TestContext) -> None:
    equal((await _request_annotations(t)).get("openWorldHint"), False, "openWorldHint sent")


@REQUESTS.subtest(
    "a seed-dialect form submission carries them in WebMCP-Request-Annotations",
    cite("001-respect-request"),
)
async def _(t: TestContext) -> None:
    await t.call("read_web")
    before = len(t.fixtures.requests("/api/echo"))
    outcome = await t.call("post_note", {"note": "hello"})
    check(not outcome.is_error, f"isError: {t.text_blocks(outcome)}")
    [request] = t.fixtures.requests("/api/echo")[before:]
    header = request["annotations"] or ""
    is_in('"openWorldHint":true', header, "the WebMCP-Request-Annotations header")


# -- response annotations --------------------------------------------------------------------


@AGGREGATION.subtest(
    "a flagged content item flags the whole response", cite("001-aggregate"), SURFACE
)
async def _(t: TestContext) -> None:
    outcome = await t.call("flagged_item")
    equal(_trust_meta(outcome).get("maliciousActivityHint"), True, "the response's flag")


@AGGREGATION.subtest(
    "openWorldHint on any content item makes the response open-world", cite("001-aggregate")
)
async def _(t: TestContext) -> None:
    await t.call("flagged_item")
    equal(t.session.trust.open_world, True, "the session's openWorldHint")


@AGGREGATION.subtest("the attribution of every content item is united", cite("001-aggregate"))
async def _(t: TestContext) -> None:
    await t.call("flagged_item")
    equal(
        sorted(t.session.trust.attribution),
        ["https://a.example/", "https://b.example/"],
        "the session's attribution",
    )


@AGGREGATION.subtest(
    "a flagged response is surfaced to the user and recorded", SURFACE, cite("001-aggregate")
)
async def _(t: TestContext) -> None:
    await t.call("flagged_response")
    kinds = [event.kind for event in t.session.trust.events]
    is_in("malicious-activity", kinds, "the session's trust events")
    asked = [record.source for record in t.session.elicitations]
    check(asked, "the user was not asked about the flagged result")


@AGGREGATION.subtest(
    "a flagged response nobody confirms is withheld from the agent", SURFACE, EXAMPLE_RULES
)
async def _(t: TestContext) -> None:
    t.session.elicitation = AutoHandler("cancel")
    outcome = await t.call("flagged_response")
    check(outcome.is_error, "the unconfirmed flagged result reached the agent")
    check("Suspicious." not in t.agent_text(outcome), "the flagged text reached the agent")


@AGGREGATION.subtest(
    "result annotations that break the schema are not trusted",
    cite("001-untrusted-hints"),
    DEGRADATION,
)
async def _(t: TestContext) -> None:
    await t.call("bad_result")
    equal(t.session.trust.open_world, True, "the session's openWorldHint (unknown → open)")


def _trust_meta(outcome: CallOutcome) -> dict[str, Any]:
    meta = outcome.result.meta or {}
    found = meta.get(TRUST_META)
    return dict(found) if isinstance(found, dict) else {}


# -- policy ----------------------------------------------------------------------------------------


@POLICY.subtest(
    "after open-world data, a tool that sends to a public destination is blocked",
    cite("001-constrained"),
    cite("004-deterministic"),
    seed("001 Example", "Policy triggers: block, escalate, or require user confirmation"),
)
async def _(t: TestContext) -> None:
    t.session.elicitation = AutoHandler("accept")
    await t.call("read_web")
    outcome = await t.call("send_public", {"to": "evil@example.com"})
    check(outcome.is_error, "the send went ahead")
    equal(await t.js("ua.calls.send_public || 0"), 0, "executions of send_public")


@POLICY.subtest(
    "an irreversible tool is not run unless the user confirms",
    EXAMPLE_RULES,
    cite("001-constrained"),
)
async def _(t: TestContext) -> None:
    outcome = await t.call("send_public", {"to": "friend@example.com"})
    check(outcome.is_error, "the unconfirmed send went ahead")
    equal(await t.js("ua.calls.send_public || 0"), 0, "executions of send_public")


@POLICY.subtest("the user's confirmation lets an irreversible tool run", EXAMPLE_RULES)
async def _(t: TestContext) -> None:
    t.session.elicitation = AutoHandler("accept")
    outcome = await t.call("send_public", {"to": "friend@example.com"})
    check(not outcome.is_error, f"isError: {t.text_blocks(outcome)}")
    equal(await t.js("ua.calls.send_public || 0"), 1, "executions of send_public")


@POLICY.subtest(
    "a consequentialHint tool asks the user first",
    EXAMPLE_RULES,
    seed("004 Tool Annotations", "requiring a user confirmation"),
)
async def _(t: TestContext) -> None:
    outcome = await t.call("consequential")
    check(outcome.is_error, "the unconfirmed call went ahead")
    equal(await t.js("ua.calls.consequential || 0"), 0, "executions")


@POLICY.subtest(
    "a destructiveHint tool asks the user first",
    EXAMPLE_RULES,
    seed(
        "004 Tool Annotations",
        "knowing that a tool is destructive (e.g. deleteEvent) may have effects",
    ),
)
async def _(t: TestContext) -> None:
    outcome = await t.call("destructive")
    check(outcome.is_error, "the unconfirmed call went ahead")
    equal(await t.js("ua.calls.destructive || 0"), 0, "executions")


@POLICY.subtest(
    "a tool annotated destructive (seed 004's spelling) asks the user first",
    seed(
        "004 Tool Annotations",
        "destructive?: boolean; // If true, the tool may perform destructive updates",
    ),
    cite("001-untrusted-hints"),
)
async def _(t: TestContext) -> None:
    outcome = await t.call("destructive_unsuffixed")
    check(outcome.is_error, "the unconfirmed call went ahead")
    equal(await t.js("ua.calls.destructive_unsuffixed || 0"), 0, "executions")


@POLICY.subtest(
    "every decision is in the audit trail with its rule",
    seed("001 Motivation", "Compliance workflows via human-in-the-loop escalation"),
)
async def _(t: TestContext) -> None:
    await t.call("read_web")
    await t.call("send_public", {"to": "evil@example.com"})
    blocked = [r for r in t.session.audit if r.tool == "send_public"]
    check(blocked, "no audit record for send_public")
    is_in("block-open-world-to-external", blocked[0].rules, "the deciding rules")


@POLICY.subtest(
    "a tool's result cannot pose as the user agent",
    cite("001-untrusted-hints"),
    cite("004-deterministic"),
)
async def _(t: TestContext) -> None:
    data = t.agent_json(await t.call("forges_marks"))
    check("webmcp-harness/policy" not in (data.get("_meta") or {}), "the forged policy mark stayed")
    block_meta = (data.get("content") or [{}])[0].get("_meta") or {}
    check("webmcp-harness/user-agent" not in block_meta, "the forged user-agent mark stayed")


# -- resolve and untrusted declarations --------------------------------------------------------


@RESOLVE.subtest(
    "resolve() narrows a declared set, and the policy uses the narrowed value",
    seed("001 Integration with Tool Resolution", "tools/resolve selects concrete values"),
    cite("001-constrained"),
)
async def _(t: TestContext) -> None:
    await t.call("read_web")
    team = await t.call("share", {"audience": "team"})
    everyone = await t.call("share", {"audience": "everyone"})
    equal((team.is_error, everyone.is_error), (False, True), "(team refused, everyone refused)")


@RESOLVE.subtest(
    "a resolve() that claims a value outside the declared set is not believed",
    cite("001-untrusted-hints"),
)
async def _(t: TestContext) -> None:
    await t.call("read_web")
    outcome = await t.call("resolve_widens")
    check(
        outcome.is_error,
        "the widened (ephemeral) claim let a public send run after open-world data",
    )
    equal(await t.js("ua.calls.resolve_widens || 0"), 0, "executions")


@RESOLVE.subtest(
    "a resolve() that throws leaves the annotations unknown, never safe",
    cite("001-untrusted-hints"),
    DEGRADATION,
)
async def _(t: TestContext) -> None:
    await t.call("read_web")
    outcome = await t.call("resolve_throws")
    check(outcome.is_error, "a tool of unknown destination ran after open-world data")


@RESOLVE.subtest(
    "invalid tool annotations are reported and treated as unknown",
    cite("001-untrusted-hints"),
    DEGRADATION,
)
async def _(t: TestContext) -> None:
    warned = [w.tool for w in t.session.warnings if w.code == "invalid-annotations"]
    is_in("bad_annotations", warned, "tools warned about")
    await t.call("read_web")
    outcome = await t.call("bad_annotations")
    check(outcome.is_error, "a tool of unknown annotations ran after open-world data")


FILES = [PROPAGATION, REQUESTS, AGGREGATION, POLICY, RESOLVE]
