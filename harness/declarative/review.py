"""Form review: a filled ``<form toolname>`` without ``toolautosubmit`` waits for the user.

Chromium fills such a form, focuses its submit button and leaves the submission to the
person at the browser; the call ends with whatever that submission gives (or never).
The harness plays that person through this stage: when the page reports that a form
waits (the channel's ``review`` message, on both backends), the :class:`FormReviewer`
decides, and the backend either submits the form (with the values the user accepted)
or cancels the call.

``mode`` (``Harness(form_review=…)``): ``"submit"`` submits as filled, ``"cancel"``
cancels, ``"ask"`` (the default) asks the session's elicitation handler with an
:class:`~harness.elicitation.ElicitationRequest` of source ``form-review`` — whose
default answer is ``cancel``, the safe side. This module decides; it never touches the
browser.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, get_args

from harness.browser.backends.base import FormReviewDecision, FormReviewRequest
from harness.elicitation.base import ElicitationHandler, ElicitationRequest, Quoted, ask
from harness.elicitation.wording import FORM_REVIEW
from harness.errors import ConfigError

FormReviewMode = Literal["submit", "cancel", "ask"]
FORM_REVIEW_MODES: tuple[FormReviewMode, ...] = get_args(FormReviewMode)

_MISSING = object()


def elicitation_request(request: FormReviewRequest) -> ElicitationRequest:
    """The question the user is asked: the form's fields, filled as the page shows them."""
    tool = request.tool
    return ElicitationRequest(
        source="form-review",
        message=FORM_REVIEW,
        quoted=[Quoted(label="the form's title", text=tool.title)] if tool.title else [],
        origin=tool.origin,
        tool=tool.name,
        requested_schema=tool.input_schema,
        prefilled=request.values,
    )


class FormReviewer:
    """Decides what becomes of a form that waits for the user (see the module docstring).

    ``handler`` returns the handler to ask in ``ask`` mode (the session's, recorded in
    its ``elicitations``); it is read at each review, so a handler swapped between
    calls is the one asked.
    """

    def __init__(self, mode: FormReviewMode, handler: Callable[[], ElicitationHandler]) -> None:
        if mode not in FORM_REVIEW_MODES:
            raise ConfigError(
                f"form_review must be one of {', '.join(FORM_REVIEW_MODES)}, not {mode!r}"
            )
        self.mode: FormReviewMode = mode
        self._handler = handler

    async def review(self, request: FormReviewRequest) -> FormReviewDecision:
        """Submit, or cancel with the reason the call's result will carry."""
        if self.mode == "submit":
            return FormReviewDecision(submit=True, reason="form_review is 'submit'")
        if self.mode == "cancel":
            return FormReviewDecision(
                submit=False, reason="the form was not submitted: form_review is 'cancel'"
            )
        result = await ask(self._handler(), elicitation_request(request))
        if result.action == "accept":
            content = result.content or {}
            changed = {
                name: value
                for name, value in content.items()
                if request.values.get(name, _MISSING) != value
            }
            return FormReviewDecision(
                submit=True, values=changed or None, reason="the user submitted the form"
            )
        why = f" ({result.reason})" if result.reason else ""
        if result.action == "decline":
            return FormReviewDecision(
                submit=False, reason=f"the user declined to submit the form{why}"
            )
        return FormReviewDecision(
            submit=False, reason=f"the form was not submitted: the review was cancelled{why}"
        )
