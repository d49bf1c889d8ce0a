"""``/seeds/elicitation/``: seed 002 §8.1 — ``tool-elicit``, the user between agent and submit.

A field marked ``tool-elicit`` is shown to the user, prefilled with the agent's value,
before anything is submitted; the user's answer is what is sent; anything but an accept
sends nothing. The subtests answer as the user through a handler that also notes how many
requests the site had received when the question came.
"""

from __future__ import annotations

from typing import Any

from harness.conformance.ua.framework import (
    Fixtures,
    TestContext,
    TestFile,
    check,
    cite,
    equal,
    is_in,
    seed,
)
from harness.elicitation.base import ElicitationRequest, ElicitationResult

ELICIT = TestFile("/seeds/elicitation/tool-elicit.html", "elicit.html", "tool-elicit", fresh=True)

CANCEL_RULE = seed(
    "002 §8.1",
    "On cancellation, return an MCP result with isError: true and a suitable message; no "
    "submission occurs.",
)
MERGING = seed(
    "002 §8.1.1",
    "Final submitted values come from the elicitation UI for elicited fields (prefilled by "
    "agent/defaults); all other fields submit resolved values",
)
VISIBILITY = seed(
    "002 §8.1.1",
    "Ignore tool-elicit on non-interactive controls such as input[type=hidden], disabled, or readonly",
)


class User:
    """Answers as the user: ``action`` with ``values`` on top of what was shown."""

    def __init__(
        self, fixtures: Fixtures, action: str = "accept", values: dict[str, Any] | None = None
    ) -> None:
        self.fixtures = fixtures
        self.action = action
        self.values = values or {}
        self.asked: list[ElicitationRequest] = []
        self.sent_before_asking: list[int] = []

    async def elicit(self, request: ElicitationRequest) -> ElicitationResult:
        """Record the question, then answer it."""
        self.asked.append(request)
        self.sent_before_asking.append(len(self.fixtures.requests("/api/echo")))
        if self.action != "accept":
            return ElicitationResult.model_validate({"action": self.action})
        content = request.starting_values()
        content.update({k: v for k, v in self.values.items() if k in request.fields})
        return ElicitationResult(action="accept", content=content)


def _user(t: TestContext, action: str = "accept", **values: Any) -> User:
    user = User(t.fixtures, action, values)
    t.session.elicitation = user
    return user


def _sent(t: TestContext, before: int) -> list[dict[str, Any]]:
    return t.fixtures.requests("/api/echo")[before:]


@ELICIT.subtest(
    "the elicited field is shown to the user before anything is submitted",
    cite("002-elicit-present"),
    cite("002-elicit-attribute"),
)
async def _(t: TestContext) -> None:
    before = len(t.fixtures.requests("/api/echo"))
    user = _user(t)
    await t.call("add_task", {"description": "Buy oat milk"})
    equal(len(user.asked), 1, "questions asked")
    is_in("description", user.asked[0].fields, "the fields asked for")
    equal(user.sent_before_asking[0], before, "requests sent before the user answered")


@ELICIT.subtest(
    "only the elicited field is asked for",
    cite("002-elicit-present"),
    seed("002 §8.1.1", "the browser MUST present those fields"),
)
async def _(t: TestContext) -> None:
    user = _user(t)
    await t.call("add_task", {"description": "Buy oat milk", "priority": "high"})
    equal(list(user.asked[0].fields), ["description"], "the fields asked for")


@ELICIT.subtest(
    "the agent's value prefills the field",
    seed("002 §8.1.1", "Agent-provided values prefill as defaults; the user can edit or confirm."),
)
async def _(t: TestContext) -> None:
    user = _user(t)
    await t.call("add_task", {"description": "Buy oat milk"})
    equal(user.asked[0].prefilled.get("description"), "Buy oat milk", "the prefilled value")


@ELICIT.subtest("the user's edit is what is submitted", cite("002-elicit-confirm"), MERGING)
async def _(t: TestContext) -> None:
    before = len(t.fixtures.requests("/api/echo"))
    _user(t, description="Buy soy milk")
    outcome = await t.call("add_task", {"description": "Buy oat milk"})
    check(not outcome.is_error, f"isError: {t.text_blocks(outcome)}")
    [request] = _sent(t, before)
    is_in("description=Buy+soy+milk", request["body"], "the submitted body")


@ELICIT.subtest("fields that are not elicited submit the agent's values", MERGING)
async def _(t: TestContext) -> None:
    before = len(t.fixtures.requests("/api/echo"))
    _user(t)
    await t.call("add_task", {"description": "Buy oat milk", "priority": "high"})
    [request] = _sent(t, before)
    is_in("priority=high", request["body"], "the submitted body")


@ELICIT.subtest(
    "a cancel submits nothing and is an error result", CANCEL_RULE, cite("002-elicit-confirm")
)
async def _(t: TestContext) -> None:
    before = len(t.fixtures.requests("/api/echo"))
    _user(t, "cancel")
    outcome = await t.call("add_task", {"description": "Buy oat milk"})
    check(outcome.is_error, "the cancelled call is not isError")
    equal(len(_sent(t, before)), 0, "requests sent")


@ELICIT.subtest(
    "a decline submits nothing and is an error result", CANCEL_RULE, cite("002-elicit-confirm")
)
async def _(t: TestContext) -> None:
    before = len(t.fixtures.requests("/api/echo"))
    _user(t, "decline")
    outcome = await t.call("add_task", {"description": "Buy oat milk"})
    check(outcome.is_error, "the declined call is not isError")
    equal(len(_sent(t, before)), 0, "requests sent")


@ELICIT.subtest(
    "with nobody to ask, nothing is submitted", cite("002-elicit-attribute"), CANCEL_RULE
)
async def _(t: TestContext) -> None:
    before = len(t.fixtures.requests("/api/echo"))
    outcome = await t.call("add_task", {"description": "Buy oat milk"})
    check(outcome.is_error, "the unanswered call is not isError")
    equal(len(_sent(t, before)), 0, "requests sent")


@ELICIT.subtest("tool-elicit on hidden, read-only or disabled controls is ignored", VISIBILITY)
async def _(t: TestContext) -> None:
    user = _user(t)
    outcome = await t.call("ignored", {"free": "x"})
    check(not outcome.is_error, f"isError: {t.text_blocks(outcome)}")
    equal(len(user.asked), 0, "questions asked")


@ELICIT.subtest(
    "tool-elicit on one radio elicits the whole group",
    seed(
        "002 §8.1.1",
        "If any radio in a named group has tool-elicit, treat the entire group as elicited.",
    ),
)
async def _(t: TestContext) -> None:
    user = _user(t)
    await t.call("sized", {"size": "m", "note": "n"})
    equal(list(user.asked[0].fields), ["size"], "the fields asked for")
    is_in("l", str(user.asked[0].fields["size"]), "the choices shown")


@ELICIT.subtest(
    "tool-elicit does not change the schema",
    seed(
        "002 §0", "This is a UX hint only; it does not change validation or the synthesized schema."
    ),
)
async def _(t: TestContext) -> None:
    elicited = (await t.session.tool("add_task")).input_schema
    plain = (await t.session.tool("plain_task")).input_schema
    equal(elicited, plain, "the schema of the elicited form (against the same form without)")


@ELICIT.subtest(
    "an answer that breaks the field's HTML rules is not submitted",
    seed("002 §8.1", "Validation follows HTML rules; invalid inputs block submission"),
)
async def _(t: TestContext) -> None:
    before = len(t.fixtures.requests("/api/echo"))
    _user(t, description="no")
    outcome = await t.call("add_task", {"description": "Buy oat milk"})
    check(outcome.is_error, "a 2-character answer passed minlength=3")
    equal(len(_sent(t, before)), 0, "requests sent")


@ELICIT.subtest(
    "an answer before a date field's min is not submitted",
    seed("002 §8.1.1", "Validation: Standard HTML constraints gate submission."),
)
async def _(t: TestContext) -> None:
    before = len(t.fixtures.requests("/api/echo"))
    _user(t, due="2020-01-01")
    outcome = await t.call("dated", {"due": "2031-05-01"})
    check(outcome.is_error, "a date before min was submitted")
    equal(len(_sent(t, before)), 0, "requests sent")


@ELICIT.subtest(
    "the question shows the field's description",
    seed(
        "002 §8.1.1",
        "SHOULD display each elicited field's label or tool-param-title and (optionally) tool-param-description",
    ),
)
async def _(t: TestContext) -> None:
    user = _user(t)
    await t.call("add_task", {"description": "Buy oat milk"})
    field = user.asked[0].fields["description"]
    equal(field.get("description"), "What needs to be done?", "the field's description")


@ELICIT.subtest(
    "the question says which tool and origin ask",
    cite("002-elicit-present"),
    seed("004 Data Exfiltration", "asking for user confirmation when sharing critical information"),
)
async def _(t: TestContext) -> None:
    user = _user(t)
    await t.call("add_task", {"description": "Buy oat milk"})
    equal(
        (user.asked[0].tool, user.asked[0].origin),
        ("add_task", t.fixtures.origin(0)),
        "(tool, origin) in the question",
    )


FILES = [ELICIT]
