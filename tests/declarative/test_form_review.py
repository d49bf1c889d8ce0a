"""The form-review stage: what becomes of a filled `<form toolname>` that waits for the user.

Plain Python, no browser: the stage decides, the backends (tests/test_declarative_spec.py,
tests/test_shop_site.py) carry the decision out.
"""

from __future__ import annotations

import pytest

from harness import Harness
from harness.declarative.review import FormReviewer, FormReviewRequest, elicitation_request
from harness.elicitation.answers import ScriptedAnswer, ScriptedHandler
from harness.elicitation.base import AutoHandler, ElicitationHandler
from harness.errors import ConfigError
from harness.models import Tool

CHECKOUT = Tool(
    name="checkout",
    title="Checkout",
    description="Place the order.",
    inputSchema={
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "shipping": {
                "type": "string",
                "anyOf": [
                    {"type": "string", "const": "standard"},
                    {"type": "string", "const": "express"},
                ],
                "enum": ["standard", "express"],
            },
        },
        "required": ["name", "shipping"],
    },
    source="declarative",
    origin="http://127.0.0.1:8123",
    frame="main",
)
FILLED = FormReviewRequest(tool=CHECKOUT, values={"name": "Ada", "shipping": "express"})


def reviewer(mode: str, handler: ElicitationHandler | None = None) -> FormReviewer:
    return FormReviewer(mode, lambda: handler or AutoHandler("cancel"))  # type: ignore[arg-type]


async def test_submit_and_cancel_decide_without_asking() -> None:
    submitted = await reviewer("submit").review(FILLED)
    assert submitted.submit and submitted.values is None
    cancelled = await reviewer("cancel").review(FILLED)
    assert not cancelled.submit
    assert cancelled.reason == "the form was not submitted: form_review is 'cancel'"


async def test_ask_uses_the_handler_and_cancels_by_default() -> None:
    decision = await reviewer("ask").review(FILLED)
    assert not decision.submit
    assert decision.reason == "the form was not submitted: the review was cancelled (auto-cancel)"
    declined = await reviewer("ask", AutoHandler("decline")).review(FILLED)
    assert declined.reason == "the user declined to submit the form (auto-decline)"


async def test_an_accept_submits_only_what_the_user_changed() -> None:
    unchanged = await reviewer("ask", AutoHandler("accept")).review(FILLED)
    assert unchanged.submit and unchanged.values is None
    scripted = ScriptedHandler(
        [ScriptedAnswer(tool="checkout", action="accept", values={"shipping": "standard"})]
    )
    changed = await reviewer("ask", scripted).review(FILLED)
    assert changed.submit and changed.values == {"shipping": "standard"}


async def test_an_answer_that_breaks_the_form_is_a_cancel() -> None:
    scripted = ScriptedHandler(
        [ScriptedAnswer(tool="checkout", action="accept", values={"shipping": "by mule"})]
    )
    decision = await reviewer("ask", scripted).review(FILLED)
    assert not decision.submit
    assert "the answer breaks the form's rules" in decision.reason


def test_the_user_is_asked_with_the_form_as_filled() -> None:
    request = elicitation_request(FILLED)
    assert request.source == "form-review"
    assert request.tool == "checkout" and request.origin == "http://127.0.0.1:8123"
    assert request.requested_schema == CHECKOUT.input_schema
    assert request.prefilled == {"name": "Ada", "shipping": "express"}
    assert [q.text for q in request.quoted] == ["Checkout"]  # the page's title, quoted apart


def test_an_unknown_mode_is_refused_at_once() -> None:
    with pytest.raises(ConfigError, match="form_review must be one of submit, cancel, ask"):
        reviewer("maybe")
    with pytest.raises(ConfigError, match="form_review must be one of"):
        Harness(form_review="always")  # type: ignore[arg-type]
