"""``/seeds/sensitive/``: seed 000 — ``sensitiveHint``, ``x-sensitive`` and ``secret_reference``.

The user agent is the trust boundary for sensitive outputs: raw values never reach the
agent, the agent gets a redacted result or a reference, and only the user redeems it —
with a GET, to the registering page's origin, with its cookies. Every fixture secret holds
``HXCANARY``; the checks never print one.
"""

from __future__ import annotations

from harness.conformance.ua.framework import (
    TestContext,
    TestFile,
    check,
    cite,
    equal,
    is_in,
    not_in,
    seed,
)
from harness.errors import (
    RedemptionRateLimited,
    RedemptionRefused,
    RedemptionUnauthorized,
    ReferenceGone,
    ReferenceNotFound,
)
from harness.stages.redaction import withheld_items

HINT = TestFile("/seeds/sensitive/sensitive-hint.html", "sensitive.html", "sensitiveHint")
FIELDS = TestFile("/seeds/sensitive/x-sensitive.html", "sensitive.html", "x-sensitive fields")
REFERENCES = TestFile(
    "/seeds/sensitive/secret-reference.html", "sensitive.html", "secret_reference"
)
AUDIENCE = TestFile(
    "/seeds/sensitive/user-audience.html", "sensitive.html", "Content for the user only"
)
REDEMPTION = TestFile(
    "/seeds/sensitive/redemption.html",
    "sensitive.html",
    "Redeeming a secret_reference (the contract of §4a)",
    fresh=True,
)


# -- sensitiveHint -------------------------------------------------------------------------


@HINT.subtest(
    "a sensitiveHint result never reaches the agent", cite("000-hint-raw"), cite("000-summary")
)
async def _(t: TestContext) -> None:
    outcome = await t.call("recovery_codes")
    not_in(t.secret("codes"), t.agent_text(outcome), "the agent view")


@HINT.subtest("the agent is told the result was withheld", cite("000-hint-provide"))
async def _(t: TestContext) -> None:
    outcome = await t.call("recovery_codes")
    check(not outcome.is_error, "the withheld result is an error")
    items = withheld_items(outcome.result)
    check(items, "the agent view lists nothing as withheld")


@HINT.subtest("the user can reveal the withheld result", cite("000-hint-provide"))
async def _(t: TestContext) -> None:
    outcome = await t.call("recovery_codes")
    [attempt] = await t.session.reveal_all(outcome)
    check(attempt.revealed is not None, f"reveal failed: {attempt.error}")
    check(
        attempt.revealed is not None and t.secret("codes") in str(attempt.revealed.value),
        "the revealed value is not the tool's result",
    )


@HINT.subtest("the call history keeps only the agent view", cite("000-hint-raw"))
async def _(t: TestContext) -> None:
    await t.call("recovery_codes")
    history = " ".join(t.agent_text(outcome) for outcome in t.session.history)
    not_in(t.secret("codes"), history, "session.history")


@HINT.subtest(
    "an error result of a sensitiveHint tool does not carry the secret", cite("000-hint-raw")
)
async def _(t: TestContext) -> None:
    outcome = await t.call("error_result")
    not_in(t.secret("error"), t.agent_text(outcome), "the agent view of the error result")


@HINT.subtest(
    "an error result of a tool with an x-sensitive outputSchema does not carry the secret",
    cite("000-hint-raw"),
)
async def _(t: TestContext) -> None:
    outcome = await t.call("error_with_schema")
    check(outcome.is_error, "the error result is not isError")
    not_in(t.secret("schemaerror"), t.agent_text(outcome), "the agent view of the error result")


@HINT.subtest(
    "the thrown error of a sensitiveHint tool does not carry the secret", cite("000-hint-raw")
)
async def _(t: TestContext) -> None:
    outcome = await t.call("error_thrown")
    check(outcome.is_error, "the thrown error is not isError")
    not_in(t.secret("thrown"), t.agent_text(outcome), "the agent view of the thrown error")


# -- x-sensitive ---------------------------------------------------------------------------

FIELD_RULE = seed("000 §3", "Strip secret from the result before passing to the agent")


@FIELDS.subtest("an x-sensitive field never reaches the agent", cite("000-hint-raw"), FIELD_RULE)
async def _(t: TestContext) -> None:
    outcome = await t.call("generate_key")
    not_in(t.secret("key"), t.agent_text(outcome), "the agent view")


@FIELDS.subtest(
    "the other fields reach the agent (a redacted structured result)",
    cite("000-hint-provide"),
)
async def _(t: TestContext) -> None:
    structured = (await t.call("generate_key")).result.structured_content or {}
    equal((structured.get("id"), structured.get("name")), ("key_1", "ci"), "(id, name)")


@FIELDS.subtest(
    "the withheld field holds an opaque handle, listed in _meta",
    cite("000-hint-provide"),
    seed("000 §3", "with an annotation that fields were redacted"),
)
async def _(t: TestContext) -> None:
    outcome = await t.call("generate_key")
    structured = outcome.result.structured_content or {}
    items = withheld_items(outcome.result)
    equal([item.path for item in items], ["/structuredContent/secret"], "withheld paths")
    equal(structured.get("secret"), items[0].handle, "the field's replacement")


@FIELDS.subtest("the text block mirroring the JSON is redacted too", cite("000-hint-raw"))
async def _(t: TestContext) -> None:
    outcome = await t.call("generate_key")
    for text in t.text_blocks(outcome):
        not_in(t.secret("key"), text, "a text block")
    is_in("key_1", " ".join(t.text_blocks(outcome)), "the text blocks")


@FIELDS.subtest("x-sensitive in array items is redacted", cite("000-hint-raw"))
async def _(t: TestContext) -> None:
    not_in(t.secret("item"), t.agent_text(await t.call("nested_secrets")), "the agent view")


@FIELDS.subtest("x-sensitive under additionalProperties is redacted", cite("000-hint-raw"))
async def _(t: TestContext) -> None:
    not_in(t.secret("map"), t.agent_text(await t.call("nested_secrets")), "the agent view")


@FIELDS.subtest("x-sensitive behind a $ref is redacted", cite("000-hint-raw"))
async def _(t: TestContext) -> None:
    not_in(t.secret("ref"), t.agent_text(await t.call("nested_secrets")), "the agent view")


@FIELDS.subtest(
    "x-sensitive without sensitiveHint is redacted, and the catalog warns",
    cite("000-hint-raw"),
    seed("000 §3", 'The browser sees "x-sensitive": true on the secret field.'),
)
async def _(t: TestContext) -> None:
    not_in(t.secret("undeclared"), t.agent_text(await t.call("undeclared")), "the agent view")
    warned = [w.tool for w in t.session.warnings if w.code == "undeclared-sensitive"]
    is_in("undeclared", warned, "tools warned about")


@FIELDS.subtest(
    "an x-sensitive value used as an object key elsewhere is redacted", cite("000-hint-raw")
)
async def _(t: TestContext) -> None:
    not_in(t.secret("askey"), t.agent_text(await t.call("secret_as_key")), "the agent view")


@FIELDS.subtest("keys marked x-sensitive through propertyNames are redacted", cite("000-hint-raw"))
async def _(t: TestContext) -> None:
    not_in(t.secret("keyname"), t.agent_text(await t.call("secret_keys")), "the agent view")


@FIELDS.subtest("the user can reveal a withheld field", cite("000-hint-provide"))
async def _(t: TestContext) -> None:
    outcome = await t.call("generate_key")
    [attempt] = await t.session.reveal_all(outcome)
    check(
        attempt.revealed is not None and attempt.revealed.value == t.secret("key"),
        f"the field was not revealed to the user ({attempt.error})",
    )


# -- secret_reference -------------------------------------------------------------------------


@REFERENCES.subtest(
    "a secret_reference's id and redeemUrl never reach the agent", cite("000-reference-fields")
)
async def _(t: TestContext) -> None:
    outcome = await t.call("make_reference", {"kind": "good"})
    text = t.agent_text(outcome)
    check("/redeem/" not in text, "the redeemUrl reached the agent")
    check("refid-" not in text, "the reference id reached the agent")


@REFERENCES.subtest(
    "the reference's label reaches the agent with a handle",
    cite("000-reference-fields"),
    seed("000 §4", "label: Human-readable label for user-facing clients"),
)
async def _(t: TestContext) -> None:
    outcome = await t.call("make_reference", {"kind": "good"})
    items = withheld_items(outcome.result)
    equal(
        [(i.label, i.kind) for i in items], [("good secret", "secret_reference")], "withheld items"
    )


@REFERENCES.subtest(
    "non-sensitive text siblings reach the agent",
    seed("000 §4b", "User agents MAY expose non-sensitive text siblings in the same tool result."),
)
async def _(t: TestContext) -> None:
    outcome = await t.call("make_reference", {"kind": "good"})
    is_in("Made a good reference.", " ".join(t.text_blocks(outcome)), "the text blocks")


# -- redemption ---------------------------------------------------------------------------------


async def _redeem(t: TestContext, kind: str, **extra: int) -> object:
    """Make a reference of ``kind`` and reveal it; the value revealed or the error."""
    outcome = await t.call("make_reference", {"kind": kind, **extra})
    [item] = withheld_items(outcome.result)
    try:
        return await t.session.reveal(item.handle)
    except Exception as exc:
        return exc


def _redeem_requests(t: TestContext, kind: str) -> list[dict[str, object]]:
    return t.fixtures.requests(f"/redeem/{kind}/")


@REDEMPTION.subtest(
    "redeeming sends a GET with the page's cookies",
    cite("000-redeem-cookies"),
    seed("000 §4a", "Method: GET only"),
)
async def _(t: TestContext) -> None:
    before = len(_redeem_requests(t, "good"))
    revealed = await _redeem(t, "good")
    check(not isinstance(revealed, Exception), f"redemption failed: {revealed}")
    [request] = _redeem_requests(t, "good")[before:]
    equal((request["method"], request["cookie"]), ("GET", True), "(method, login cookie sent)")


@REDEMPTION.subtest(
    "the redeemed value goes to the user",
    cite("000-hint-provide"),
    seed("000 §4a", 'Success response: 200 with JSON body { "value": string }'),
)
async def _(t: TestContext) -> None:
    revealed = await _redeem(t, "good")
    check(
        getattr(revealed, "value", None) == t.secret("redeemed-good"),
        f"the user did not get the value ({revealed if isinstance(revealed, Exception) else ''})",
    )


@REDEMPTION.subtest(
    "a redeemUrl on another origin is refused before any request", cite("000-redeem-origin")
)
async def _(t: TestContext) -> None:
    before = len(_redeem_requests(t, "good"))
    revealed = await _redeem(t, "good", origin=1)
    check(isinstance(revealed, RedemptionRefused), f"not refused: {revealed!r}")
    equal(len(_redeem_requests(t, "good")) - before, 0, "requests sent")


@REDEMPTION.subtest(
    "a reference already redeemed answers 410, and the user is told it is gone",
    seed("000 §4a", "Expired/used: 410 Gone"),
)
async def _(t: TestContext) -> None:
    outcome = await t.call("make_reference", {"kind": "good"})
    [item] = withheld_items(outcome.result)
    await t.session.reveal(item.handle)
    try:
        again = await t.session.reveal(item.handle)
    except ReferenceGone:
        return
    except Exception as exc:
        raise AssertionError(f"the second redemption raised {type(exc).__name__}") from exc
    raise AssertionError(f"the second redemption gave a value ({type(again).__name__})")


@REDEMPTION.subtest("410 Gone is reported as gone", seed("000 §4a", "Expired/used: 410 Gone"))
async def _(t: TestContext) -> None:
    revealed = await _redeem(t, "gone")
    check(isinstance(revealed, ReferenceGone), f"got {type(revealed).__name__}")


@REDEMPTION.subtest(
    "401 is reported as not authorized", seed("000 §4a", "Auth failure: 401 or 403")
)
async def _(t: TestContext) -> None:
    revealed = await _redeem(t, "unauthorized")
    check(isinstance(revealed, RedemptionUnauthorized), f"got {type(revealed).__name__}")


@REDEMPTION.subtest(
    "403 is reported as not authorized", seed("000 §4a", "Auth failure: 401 or 403")
)
async def _(t: TestContext) -> None:
    revealed = await _redeem(t, "forbidden")
    check(isinstance(revealed, RedemptionUnauthorized), f"got {type(revealed).__name__}")


@REDEMPTION.subtest("404 is reported as not found", seed("000 §4a", "Not found: 404"))
async def _(t: TestContext) -> None:
    revealed = await _redeem(t, "missing")
    check(isinstance(revealed, ReferenceNotFound), f"got {type(revealed).__name__}")


@REDEMPTION.subtest(
    "429 is reported as rate limited, with Retry-After", seed("000 §4a", "Rate limit: 429")
)
async def _(t: TestContext) -> None:
    revealed = await _redeem(t, "limited")
    check(isinstance(revealed, RedemptionRateLimited), f"got {type(revealed).__name__}")
    equal(getattr(revealed, "retry_after", None), 30.0, "retry_after")


@REDEMPTION.subtest(
    "a 200 without Cache-Control: no-store is flagged as a site defect",
    seed("000 §4a", "Caching: Cache-Control: no-store"),
)
async def _(t: TestContext) -> None:
    revealed = await _redeem(t, "cacheable")
    check(not isinstance(revealed, Exception), f"redemption failed: {revealed}")
    codes = [d.code for d in getattr(revealed, "defects", [])]
    check(codes, "no site defect was flagged")


@REDEMPTION.subtest(
    "a ttl above the cap is flagged as a site defect",
    seed("000 Open questions", "Should the spec define a cap for ttl values"),
)
async def _(t: TestContext) -> None:
    await t.call("make_reference", {"kind": "good", "ttl": 86400})
    check(t.session.vault.defects, "no site defect was flagged for a day-long ttl")


# -- audience -------------------------------------------------------------------------------------

AUDIENCE_RULE = seed(
    "000 Prior art", 'A ["user"] audience annotation already means "show to user, hide from model."'
)


@AUDIENCE.subtest(
    "content annotated for the user only never reaches the agent",
    AUDIENCE_RULE,
    cite("000-hint-raw"),
)
async def _(t: TestContext) -> None:
    outcome = await t.call("user_only")
    not_in(t.secret("useronly"), t.agent_text(outcome), "the agent view")
    is_in("A public line.", " ".join(t.text_blocks(outcome)), "the text blocks")


@AUDIENCE.subtest(
    "user-only content is not mirrored to the agent through structuredContent",
    AUDIENCE_RULE,
    cite("000-hint-raw"),
)
async def _(t: TestContext) -> None:
    outcome = await t.call("user_only_mirrored")
    not_in(t.secret("mirror"), t.agent_text(outcome), "the agent view")


@AUDIENCE.subtest("the user can reveal the withheld content", AUDIENCE_RULE)
async def _(t: TestContext) -> None:
    outcome = await t.call("user_only")
    attempts = await t.session.reveal_all(outcome)
    check(
        any(a.revealed and t.secret("useronly") in str(a.revealed.value) for a in attempts),
        "the user could not reveal the user-only content",
    )


FILES = [HINT, FIELDS, REFERENCES, REDEMPTION, AUDIENCE]
